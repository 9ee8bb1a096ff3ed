"""Reading keys scoped to namespaces: what each key opens, the errors for bad entries (naming the entry,
never the key), and the comparison (every key compared on every request)."""

from __future__ import annotations

import hmac
import json
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.server import auth as auth_module
from hipporag_neo4j.server.auth import ApiKeyAuth, ApiKeyMiddleware
from hipporag_neo4j.settings import ServerSettings, load_settings

pytestmark = pytest.mark.unit

SECRET = "k-s3cret-do-not-print-4711"


def _auth(**server: Any) -> ApiKeyAuth:
    return ApiKeyAuth(ServerSettings(**server))


def test_scoped_keys_open_their_namespaces_and_the_plain_key_opens_every_one() -> None:
    auth = _auth(
        api_key="admin-key",
        api_keys=json.dumps({"k-a": ["alice"], "k-ab": ["alice", "bob"], "k-all": ["*"]}),
    )
    assert auth.accepts("k-a", "alice") and not auth.accepts("k-a", "bob")
    assert auth.accepts("k-ab", "bob") and not auth.accepts("k-ab", "carol")
    assert auth.accepts("k-all", "carol") and auth.accepts("admin-key", "carol")
    assert auth.scope("k-unknown") is None and auth.scope(None) is None
    assert not auth.accepts("k-a ", "alice") and not auth.accepts("K-A", "alice")
    assert auth.scope("k-a") is not None and auth.scope("k-a").visible(["alice", "bob", "default"]) == [
        "alice"
    ]  # type: ignore[union-attr]


def test_the_single_key_alone_still_opens_every_namespace() -> None:
    auth = _auth(api_key="only-key")
    assert auth.accepts("only-key", "default") and auth.accepts("only-key", "anything")
    assert not auth.accepts("other", "default")


def test_a_keys_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "keys.toml"
    path.write_text('"k-a" = ["alice"]\nk-b = ["bob", "carol"]\n', encoding="utf-8")
    auth = _auth(api_keys_file=path)
    assert auth.accepts("k-b", "carol") and not auth.accepts("k-b", "alice") and auth.accepts("k-a", "alice")


@pytest.mark.parametrize(
    ("entries", "shown"),
    [
        ('{"k-a": ["alice"], "' + SECRET + '": ["bad-name"]}', "entry 2: 'bad-name' is not a namespace name"),
        ('{"' + SECRET + '": []}', "entry 1: the namespaces must be a non-empty list"),
        ('{"' + SECRET + '": "alice"}', "entry 1: the namespaces must be a non-empty list"),
        ('{"' + SECRET + '": ["alice\\n"]}', "is not a namespace name"),
        ('{"' + SECRET + '": ["al`ice"]}', "is not a namespace name"),
        ('{"' + SECRET + '": ["alice"], "' + SECRET + '": ["bob"]}', "entry 2: the same key is listed twice"),
        ('{" ' + SECRET + '": ["alice"]}', "without spaces"),
        ('["' + SECRET + '"]', "must be a JSON object"),
        ('{"' + SECRET + '": ["alice"]', "is not JSON (line 1"),
    ],
)
def test_bad_entries_are_named_by_position_never_by_their_key(entries: str, shown: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _auth(api_keys=entries)
    assert shown in str(caught.value) and SECRET not in str(caught.value)


def test_a_bad_keys_file_is_named_and_its_keys_are_not(tmp_path: Path) -> None:
    path = tmp_path / "keys.toml"
    path.write_text(f'"{SECRET}" = ["alice"]\n"{SECRET}" = ["bob"]\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        _auth(api_keys_file=path)
    assert str(path) in str(caught.value) and "not TOML" in str(caught.value)
    assert SECRET not in str(caught.value)
    with pytest.raises(ConfigError, match="cannot read the API keys file"):
        _auth(api_keys_file=tmp_path / "missing.toml")


def test_conflicting_key_settings_are_refused() -> None:
    with pytest.raises(ConfigError, match="no_auth are both set"):
        _auth(api_keys=json.dumps({"k": ["a"]}), no_auth=True)
    with pytest.raises(ConfigError, match="also listed among the scoped keys"):
        _auth(api_key="k", api_keys=json.dumps({"k": ["a"]}))
    with pytest.raises(ConfigError, match="HIPPORAG_SERVER__API_KEYS"):
        _auth()


def test_every_key_is_compared_whichever_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    """No early exit: the time taken does not tell which key (or whether any) matched."""
    calls: list[int] = []
    compare = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append(len(a))
        return compare(a, b)

    auth = _auth(api_keys=json.dumps({f"k-{i}": ["a"] for i in range(5)}))
    monkeypatch.setattr(auth_module.hmac, "compare_digest", counting)
    for presented in ("k-0", "k-4", "nope", "x" * 10_000):
        calls.clear()
        auth.scope(presented)
        assert calls == [32] * 5  # SHA-256 digests: the same length whatever was presented


def test_settings_never_show_the_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPORAG_SERVER__API_KEYS", json.dumps({SECRET: ["alice"]}))
    settings = load_settings()
    assert SECRET not in json.dumps(settings.redacted()) and SECRET not in repr(settings)
    assert settings.server.api_keys is not None and SECRET in settings.server.api_keys.get_secret_value()


@pytest.mark.parametrize("name", ["alice\n", "al ice", "ＡＬＩＣＥ", "аlice", "a" * 64, "x`y", "a'b"])
def test_namespace_names_are_plain_ascii_names(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A trailing newline (which ``$`` lets through), full-width and Cyrillic look-alikes, quotes,
    backticks and over-long names are refused before anything is opened."""
    monkeypatch.setenv("HIPPORAG_NAMESPACE", name)
    with pytest.raises(ConfigError, match="not a plain name"):
        load_settings()


def test_the_mcp_middleware_answers_401_then_403() -> None:
    import asyncio

    auth = _auth(api_keys=json.dumps({"k-a": ["alice"], "k-b": ["bob"]}))
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    def call(key: str | None) -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        headers = [(b"authorization", f"Bearer {key}".encode())] if key else []
        scope = {"type": "http", "path": "/mcp", "headers": headers}
        asyncio.run(ApiKeyMiddleware(app, auth, "alice")(scope, None, send))  # type: ignore[arg-type]
        return sent

    assert call(None)[0]["status"] == 401
    refused = call("k-b")
    assert refused[0]["status"] == 403
    assert json.loads(refused[1]["body"]) == {"detail": "this API key is not allowed on namespace 'alice'"}
    assert reached == []
    assert call("k-a") == [] and reached == ["/mcp"]
