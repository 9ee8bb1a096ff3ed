"""LLMClient against the local replay server: retries, errors, cache, usage, concurrency, secrets."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest

from hipporag_neo4j.errors import ConfigError, LLMError, LLMOutputError
from hipporag_neo4j.llm.cache import ResponseCache
from hipporag_neo4j.llm.client import PLACEHOLDER_API_KEY, ChatResult, LLMClient, retry_after_seconds
from hipporag_neo4j.settings import LLMSettings
from tests.support.llm_replay import ReplayServer, Reply, llm_settings

pytestmark = pytest.mark.unit


HELLO = [{"role": "user", "content": "Say hello"}]


def _messages(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_constructor_opens_nothing(llm_server: ReplayServer, tmp_path: Path) -> None:
    cache_file = tmp_path / "cache" / "llm.sqlite"
    client = LLMClient(llm_settings(llm_server, cache_path=cache_file))
    assert not cache_file.exists()
    assert llm_server.requests == []
    llm_server.script("ner_danube")
    client.chat(HELLO)
    assert cache_file.exists()
    assert len(llm_server.requests) == 1


def test_model_must_be_configured() -> None:
    with pytest.raises(ConfigError, match=r"llm\.model"):
        LLMClient(LLMSettings())


def test_request_carries_settings_and_json_mode(llm_server: ReplayServer) -> None:
    llm_server.script("ner_danube", "ner_danube")
    client = LLMClient(llm_settings(llm_server, temperature=0.3, max_tokens=64))
    client.chat(HELLO, json_mode=True)
    client.chat(HELLO, temperature=0.9)
    first, second = (r.body for r in llm_server.requests)
    assert first["model"] == "gpt-3.5-turbo-1106"
    assert first["messages"] == HELLO
    assert first["temperature"] == 0.3
    assert first["max_tokens"] == 64
    assert first["response_format"] == {"type": "json_object"}
    assert second["temperature"] == 0.9
    assert "response_format" not in second
    assert llm_server.requests[0].path == "/v1/chat/completions"


def test_retries_429_500_and_timeout_then_succeeds(llm_server: ReplayServer) -> None:
    llm_server.script(
        "rate_limit_429",
        "server_error_500",
        Reply.completion("too late", delay=10.0),
        "query_ner_vienna_budapest",
    )
    waits: list[float] = []
    client = LLMClient(llm_settings(llm_server, timeout=0.5, max_retries=3), sleep=waits.append)
    result = client.chat(HELLO)
    assert result.text == '{"named_entities": ["Vienna", "Budapest"]}'
    assert result.cached is False
    assert len(llm_server.requests) == 4
    assert len(waits) == 3
    assert result.usage.requests == 1 and result.usage.retries == 3
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (118, 14)
    assert client.usage == result.usage


def test_retry_after_is_honoured_but_capped(llm_server: ReplayServer) -> None:
    llm_server.script(
        "rate_limit_429",  # retry-after: 20 seconds
        Reply.error(429, "slow down", retry_after="0.004"),
        Reply(status=429, body={"error": {"message": "slow down"}}, headers={"retry-after-ms": "7"}),
        "ner_danube",
    )
    waits: list[float] = []
    client = LLMClient(llm_settings(llm_server, backoff_base=0.0, backoff_max=0.05), sleep=waits.append)
    client.chat(HELLO)
    assert waits == [0.05, 0.004, 0.007]


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_doubles_with_jitter_and_is_capped(llm_server: ReplayServer) -> None:
    client = LLMClient(llm_settings(llm_server, backoff_base=1.0, backoff_max=30.0))
    for retry in range(4):
        delays = {client.retry_delay(retry) for _ in range(50)}
        assert all(2**retry * 0.5 <= d <= 2**retry for d in delays)
        assert len(delays) > 1  # jittered
    assert client.retry_delay(10) == 30.0


@pytest.mark.parametrize(
    ("recorded", "status"), [("bad_request_400", 400), ("model_not_found_404", 404), (None, 401)]
)
def test_client_errors_are_not_retried(llm_server: ReplayServer, recorded: str | None, status: int) -> None:
    llm_server.script(
        recorded or Reply.error(401, "Incorrect API key provided.", error_type="invalid_api_key")
    )
    waits: list[float] = []
    client = LLMClient(llm_settings(llm_server), sleep=waits.append)
    with pytest.raises(LLMError, match=rf"LLM error {status} \(model 'gpt-3.5-turbo-1106', not retried\)"):
        client.chat(HELLO)
    assert len(llm_server.requests) == 1
    assert waits == []
    assert client.usage.requests == 1 and client.usage.retries == 0


def test_gives_up_after_max_retries(llm_server: ReplayServer) -> None:
    llm_server.script("server_error_500", repeat=True)
    client = LLMClient(llm_settings(llm_server, max_retries=2))
    with pytest.raises(LLMError, match=r"LLM error 500 after 2 retries \(model 'gpt-3.5-turbo-1106'\)"):
        client.chat(HELLO)
    assert len(llm_server.requests) == 3
    assert client.usage.requests == 1 and client.usage.retries == 2


def test_connection_errors_are_retried() -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = LLMSettings(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=2, backoff_base=0.0, cache_path=None
    )
    waits: list[float] = []
    client = LLMClient(settings, sleep=waits.append)
    with pytest.raises(LLMError, match="LLM connection error after 2 retries"):
        client.chat(HELLO)
    assert len(waits) == 2


def test_empty_answer_is_an_output_error(llm_server: ReplayServer, tmp_path: Path) -> None:
    llm_server.script(Reply.completion(None, finish_reason="content_filter"))
    client = LLMClient(llm_settings(llm_server, cache_path=tmp_path / "c.sqlite"))
    with pytest.raises(LLMOutputError, match="content_filter"):
        client.chat(HELLO)
    assert len(ResponseCache(tmp_path / "c.sqlite")) == 0


def test_cache_hit_makes_no_request_and_survives_a_new_client(
    llm_server: ReplayServer, tmp_path: Path
) -> None:
    llm_server.script("ner_marie_curie", "ner_danube")
    settings = llm_settings(llm_server, cache_path=tmp_path / "llm.sqlite")
    first = LLMClient(settings)
    answer = first.chat(HELLO, json_mode=True)
    again = first.chat(HELLO, json_mode=True)
    assert len(llm_server.requests) == 1
    assert again == ChatResult(text=answer.text, usage=again.usage, cached=True)
    assert again.usage.cached == 1 and again.usage.requests == 0
    first.close()

    second = LLMClient(settings)
    assert second.chat(HELLO, json_mode=True).text == answer.text
    assert len(llm_server.requests) == 1
    assert second.usage.cached == 1 and second.usage.requests == 0 and second.usage.total_tokens == 0

    # Any parameter change is another request.
    other = second.chat(HELLO, json_mode=False)
    assert other.cached is False and "Danube" in other.text
    assert len(llm_server.requests) == 2


def test_failed_responses_are_not_cached(llm_server: ReplayServer, tmp_path: Path) -> None:
    llm_server.script("bad_request_400", "ner_danube")
    client = LLMClient(llm_settings(llm_server, cache_path=tmp_path / "llm.sqlite"))
    with pytest.raises(LLMError):
        client.chat(HELLO)
    assert client.chat(HELLO).cached is False
    assert len(llm_server.requests) == 2


def test_unreadable_cache_file_is_a_config_error(llm_server: ReplayServer, tmp_path: Path) -> None:
    bad = tmp_path / "not-a-db.sqlite"
    bad.write_bytes(b"this is not an sqlite database" * 100)
    client = LLMClient(llm_settings(llm_server, cache_path=bad))
    with pytest.raises(ConfigError, match=r"llm\.cache_path"):
        client.chat(HELLO)


def test_usage_accumulates_over_calls(llm_server: ReplayServer) -> None:
    llm_server.script("ner_marie_curie", "ner_danube", "server_error_500", "ner_eiffel_tower")
    client = LLMClient(llm_settings(llm_server, concurrency=1))
    results = client.chat_many([_messages("a"), _messages("b"), _messages("c")])
    assert all(isinstance(r, ChatResult) for r in results)
    usage = client.usage
    assert usage.requests == 3 and usage.retries == 1 and usage.cached == 0
    assert usage.prompt_tokens == 268 + 251 + 259
    assert usage.completion_tokens == 46 + 29 + 22


def test_chat_many_keeps_order_and_bounds_concurrency(llm_server: ReplayServer) -> None:
    count = 9
    for i in range(count):  # later requests answer sooner, so completion order differs from request order
        llm_server.script(Reply.completion(f"answer {i}", delay=0.05 * (count - i)), match=f"question {i}")
    finished: list[int] = []
    client = LLMClient(llm_settings(llm_server, concurrency=3))
    results = client.chat_many([_messages(f"question {i}") for i in range(count)], progress=finished.append)
    assert [r.text for r in results if isinstance(r, ChatResult)] == [f"answer {i}" for i in range(count)]
    assert sum(finished) == count
    assert 2 <= llm_server.max_in_flight <= 3


def test_chat_many_one_failure_loses_nothing_else(llm_server: ReplayServer) -> None:
    llm_server.script("bad_request_400", match="question 1")
    llm_server.script("ner_danube", repeat=True)
    client = LLMClient(llm_settings(llm_server))
    results = client.chat_many([_messages(f"question {i}") for i in range(4)])
    assert isinstance(results[1], LLMError) and "400" in str(results[1])
    assert [isinstance(r, ChatResult) for r in results] == [True, False, True, True]
    assert client.chat_many([]) == []


def test_secrets_stay_out_of_reprs_errors_and_logs(
    llm_server: ReplayServer, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-live-SECRET-0123456789abcdef"
    llm_server.script(Reply.error(500, f"upstream failed for key {secret}"))
    llm_server.script(
        Reply.error(401, f"Incorrect API key provided: {secret}.", error_type="invalid_api_key")
    )
    client = LLMClient(llm_settings(llm_server, api_key=secret))
    with caplog.at_level(logging.DEBUG), pytest.raises(LLMError) as raised:
        client.chat(HELLO)
    assert llm_server.requests[0].headers["authorization"] == f"Bearer {secret}"
    message = str(raised.value)
    assert "401" in message and "***" in message
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    for text in (message, repr(client), repr(client.settings), caplog.text):
        assert secret not in text


def test_repr_hides_credentials_in_the_url() -> None:
    settings = LLMSettings(base_url="https://admin:hunter2@llm.example.com:8443/v1?key=abc", model="m")
    text = repr(LLMClient(settings))
    assert "https://llm.example.com:8443/v1" in text
    assert "hunter2" not in text and "abc" not in text


def test_api_key_falls_back_to_env_then_placeholder(
    llm_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_server.script("ner_danube", repeat=True)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    LLMClient(llm_settings(llm_server, api_key=None)).chat(HELLO)
    monkeypatch.delenv("OPENAI_API_KEY")
    LLMClient(llm_settings(llm_server, api_key=None)).chat(HELLO)
    sent = [r.headers["authorization"] for r in llm_server.requests]
    assert sent == ["Bearer sk-from-env", f"Bearer {PLACEHOLDER_API_KEY}"]
