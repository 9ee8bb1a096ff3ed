"""Structured output as each server spells it, the looping-output guards, and which repairs an answer needed.

Requests go through the real ``openai`` client to the local replay server, which records their bodies.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from hipporag_neo4j.errors import ConfigError, LLMOutputError
from hipporag_neo4j.extraction.llm_extractor import LLMExtractor, LLMQueryNER
from hipporag_neo4j.llm import jsonparse
from hipporag_neo4j.llm.client import LLMClient
from hipporag_neo4j.llm.jsonparse import parse_json_report
from hipporag_neo4j.llm.structured import CLUES, FACTS, NAMED_ENTITIES, TRIPLES, response_format
from hipporag_neo4j.models import Extraction, Passage
from hipporag_neo4j.retrieval.clues import draft_clues
from hipporag_neo4j.retrieval.recognition import LLMFactFilter
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.base import FactHit
from tests.support.llm_replay import ReplayServer, Reply, llm_settings

pytestmark = pytest.mark.unit


NER = "extract named entities from the given paragraph"
OPENIE = "RDF (Resource Description Framework) graph"
PASSAGE = Passage(id="p1", title="Vienna", text="Vienna is the capital of Austria.")


def _extract_once(server: ReplayServer, **settings: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run one passage through LLM extraction; the NER and OpenIE request bodies the server received."""
    server.script(Reply.completion('{"named_entities": ["Vienna", "Austria"]}'), system=NER)
    server.script(Reply.completion('{"triples": [["Vienna", "capital of", "Austria"]]}'), system=OPENIE)
    client = LLMClient(llm_settings(server, **settings))
    json_mode = client.settings.json_mode
    (result,) = LLMExtractor(client, json_mode=json_mode).extract([PASSAGE])
    assert isinstance(result, Extraction) and result.triples
    (ner,) = server.requests_to(NER)
    (openie,) = server.requests_to(OPENIE)
    return ner.body, openie.body


def test_response_format_spellings() -> None:
    assert response_format("none", TRIPLES) is None
    assert response_format("json_object", TRIPLES) == {"type": "json_object"}
    assert response_format("json_object_schema", TRIPLES) == {"type": "json_object", "schema": TRIPLES.schema}
    assert response_format("json_schema", TRIPLES) == {
        "type": "json_schema",
        "json_schema": {"name": "triples", "schema": TRIPLES.schema, "strict": True},
    }
    # a prompt without a schema still gets JSON mode
    assert response_format("json_schema", None) == {"type": "json_object"}


def test_schemas_describe_what_the_parsers_read() -> None:
    ner, triples = NAMED_ENTITIES.schema, TRIPLES.schema
    assert ner["required"] == ["named_entities"] and ner["additionalProperties"] is False
    triple = triples["properties"]["triples"]["items"]
    assert triple["minItems"] == triple["maxItems"] == 3


def test_default_is_plain_json_mode(llm_server: ReplayServer) -> None:
    ner, openie = _extract_once(llm_server)
    assert ner["response_format"] == openie["response_format"] == {"type": "json_object"}


def test_llama_cpp_spelling_sends_each_prompts_schema(llm_server: ReplayServer) -> None:
    ner, openie = _extract_once(llm_server, structured_output="json_object_schema")
    assert ner["response_format"] == {"type": "json_object", "schema": NAMED_ENTITIES.schema}
    assert openie["response_format"] == {"type": "json_object", "schema": TRIPLES.schema}


def test_openai_spelling_sends_named_strict_schemas(llm_server: ReplayServer) -> None:
    ner, openie = _extract_once(llm_server, structured_output="json_schema")
    assert ner["response_format"]["json_schema"]["name"] == "named_entities"
    assert openie["response_format"]["json_schema"] == {
        "name": "triples",
        "schema": TRIPLES.schema,
        "strict": True,
    }


@pytest.mark.parametrize("settings", [{"structured_output": "none"}, {"json_mode": False}])
def test_none_sends_no_response_format(llm_server: ReplayServer, settings: dict[str, Any]) -> None:
    ner, openie = _extract_once(llm_server, **settings)
    assert "response_format" not in ner and "response_format" not in openie


def test_query_ner_uses_the_entities_schema(llm_server: ReplayServer) -> None:
    llm_server.script(Reply.completion('{"named_entities": ["Austria"]}'))
    client = LLMClient(llm_settings(llm_server, structured_output="json_object_schema"))
    assert LLMQueryNER(client).query_entities("What is the capital of Austria?") == ["Austria"]
    assert llm_server.requests[0].body["response_format"]["schema"] == NAMED_ENTITIES.schema


def test_recognition_filter_and_clues_send_their_schemas(llm_server: ReplayServer) -> None:
    llm_server.script(Reply.completion('{"fact": [["vienna", "capital of", "austria"]]}'))
    llm_server.script(Reply.completion('{"clues": ["Austria capital"]}'))
    client = LLMClient(llm_settings(llm_server, structured_output="json_object_schema"))
    fact = FactHit("f1", "s1", "vienna", "capital of", "o1", "austria", 0.9)
    assert LLMFactFilter(client)("What is the capital of Austria?", [fact]) == [fact]
    assert draft_clues(client, "What is the capital of Austria?", 2, None, True) == ["Austria capital"]
    filter_request, clue_request = (r.body["response_format"] for r in llm_server.requests)
    assert filter_request == {"type": "json_object", "schema": FACTS.schema}
    assert clue_request == {"type": "json_object", "schema": CLUES.schema}


def test_looping_guards_reach_the_server(llm_server: ReplayServer) -> None:
    llm_server.script(Reply.completion("hi"), Reply.completion("hi"))
    LLMClient(llm_settings(llm_server)).chat([{"role": "user", "content": "hello"}])
    guarded = LLMClient(
        llm_settings(llm_server, frequency_penalty=0.3, extra_body={"repeat_penalty": 1.15}, max_tokens=300)
    )
    guarded.chat([{"role": "user", "content": "hello"}])
    default, tuned = (r.body for r in llm_server.requests)
    assert default["max_tokens"] == 2048  # the default cap
    assert "frequency_penalty" not in default and "repeat_penalty" not in default
    # extra_body fields travel as top-level JSON fields, as servers expect them
    assert (tuned["max_tokens"], tuned["frequency_penalty"], tuned["repeat_penalty"]) == (300, 0.3, 1.15)


def test_an_answer_cut_at_max_tokens_is_flagged(
    llm_server: ReplayServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.script("openie_danube_truncated", Reply.completion('{"ok": 1}'))
    client = LLMClient(llm_settings(llm_server))
    with caplog.at_level(logging.WARNING, logger="hipporag_neo4j.llm.client"):
        cut = client.chat([{"role": "user", "content": "one"}])
        whole = client.chat([{"role": "user", "content": "two"}])
    assert cut.truncated and cut.finish_reason == "length"
    assert not whole.truncated and whole.finish_reason == "stop"
    assert [r.message for r in caplog.records if "max_tokens" in r.message] != []


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPORAG_LLM__STRUCTURED_OUTPUT", "json_object_schema")
    monkeypatch.setenv("HIPPORAG_LLM__EXTRA_BODY", '{"repeat_penalty": 1.1}')
    monkeypatch.setenv("HIPPORAG_LLM__FREQUENCY_PENALTY", "0.2")
    llm = load_settings(env_file=None).llm
    assert llm.json_output == "json_object_schema"
    assert llm.extra_body == {"repeat_penalty": 1.1}
    assert llm.frequency_penalty == 0.2


def test_an_unknown_spelling_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPORAG_LLM__STRUCTURED_OUTPUT", "grammar")
    with pytest.raises(ConfigError, match=r"llm\.structured_output \(HIPPORAG_LLM__STRUCTURED_OUTPUT\)"):
        load_settings(env_file=None)


# -- which repairs an answer needed --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "repairs"),
    [
        ('{"named_entities": ["A"]}', ()),
        ('  \n{"named_entities": ["A"]}\n', ()),
        ('```json\n{"a": 1}\n```', (jsonparse.FENCE,)),
        ('Here you go:\n```json\n{"a": 1}\n```\nDone.', (jsonparse.FENCE, jsonparse.SURROUNDING_TEXT)),
        ('```json\n{"a": 1}', (jsonparse.UNCLOSED_FENCE,)),
        ('Sure! {"a": 1}', (jsonparse.SURROUNDING_TEXT,)),
        ('{"a": [1]}\n{"b": [2]}', (jsonparse.MERGED,)),
        ('{"a": [1,],}', (jsonparse.TRAILING_COMMAS,)),
        ("{'a': 'b'}", (jsonparse.PYTHON_LITERAL,)),
        ('{"broken": [} then {"good": 1}', (jsonparse.SURROUNDING_TEXT, jsonparse.SKIPPED_BROKEN)),
    ],
)
def test_repairs_are_reported(text: str, repairs: tuple[str, ...]) -> None:
    parsed = parse_json_report(text)
    assert set(parsed.repairs) == set(repairs)
    assert parsed.value == jsonparse.parse_json_object(text)


def test_unrepairable_answers_still_raise() -> None:
    with pytest.raises(LLMOutputError, match="malformed JSON"):
        parse_json_report('{"triples": [["Danube", "flows thr')
