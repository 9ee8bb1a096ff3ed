"""API keys scoped to namespaces, on every route of the REST app (the explorer's data calls included) and
on the MCP server's HTTP transport.

The routes are found by enumerating the app, so a route added without the key check fails here: every
route is either in :data:`PUBLIC` (no data: liveness, readiness, the docs, the explorer's page and
files) or answers 401 without a key and 403 -- with a body naming the namespace and nothing else -- to a
key for another namespace, and changes nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.routing import Route

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.server.app import create_app
from hipporag_neo4j.service import KnowledgeService
from hipporag_neo4j.settings import Settings, load_settings
from tests.support.fakes import FixedQueryNER, HashEmbedder, TableExtractor
from tests.support.server_support import ServerProcess
from tests.support.tenant_serve import mcp_stats

pytestmark = pytest.mark.integration

K_ALICE = "k-alice-3f9a0c1d2e4b5a6978"
K_BOB = "k-bob-7c1e2d3f4a5b6c7d8e"
K_BOTH = "k-both-0a1b2c3d4e5f6a7b8c"
K_EVERY = "k-every-9d8c7b6a5f4e3d2c1b"
K_ADMIN = "k-admin-1122334455667788"
ALL_KEYS = (K_ALICE, K_BOB, K_BOTH, K_EVERY, K_ADMIN)
SCOPES = {K_ALICE: ["alice"], K_BOB: ["bob"], K_BOTH: ["alice", "bob"], K_EVERY: ["*"]}

TABLE = {
    "Alice's secret: the vault code is 4711.": [["vault", "has code", "4711"]],
    "Bob's secret: the boat is named Marlin.": [["boat", "is named", "marlin"]],
}
QUERIES = {"vault code?": ["vault"], "boat name?": ["boat"]}

#: Routes that need no key: they hold no data of any namespace.
PUBLIC = {
    ("GET", "/health"),
    ("GET", "/ready"),
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/redoc"),
    ("GET", "/"),
    ("GET", "/explorer"),
    ("GET", "/explorer/"),
    ("GET", "/explorer/static/{name}"),
    ("GET", "/explorer/lib/{name}"),
}

#: A valid request for each route that takes one (a route missing here is still sent, with ``{}``).
BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/passages"): {"passages": [{"id": "intruder", "text": "Mallory was here."}]},
    ("DELETE", "/passages"): {"ids": ["alice-1"]},
    ("POST", "/query"): {"query": "vault code?"},
    ("POST", "/answer"): {"query": "vault code?"},
    ("POST", "/explorer/api/answer-graph"): {"phrases": ["vault"], "passage_ids": ["alice-1"]},
}
PARAMS: dict[str, dict[str, str]] = {
    "/explorer/api/search": {"q": "vault"},
    "/explorer/api/neighbourhood": {"kind": "passage", "id": "alice-1"},
    "/explorer/api/passage": {"id": "alice-1"},
}


def _settings(root: Path, namespace: str, **server: Any) -> Settings:
    return load_settings(
        {
            "store": {"path": str(root)},
            "neo4j": {"namespace": namespace},
            "retrieval": {"mode": "hipporag"},
            "server": server,
        }
    )


def _fill(root: Path) -> None:
    for namespace, pid, text in [
        ("alice", "alice-1", "Alice's secret: the vault code is 4711."),
        ("bob", "bob-1", "Bob's secret: the boat is named Marlin."),
    ]:
        with _memory(_settings(root, namespace)) as memory:
            assert memory.index([{"id": pid, "text": text}]).indexed == [pid]


def _memory(settings: Settings) -> HippoRAG:
    return HippoRAG(
        settings, embedder=HashEmbedder(), extractor=TableExtractor(TABLE), query_ner=FixedQueryNER(QUERIES)
    )


def _app(root: Path, namespace: str) -> Any:
    settings = _settings(root, namespace, api_key=K_ADMIN, api_keys=json.dumps(SCOPES), sync_limit=100)

    def service() -> KnowledgeService:
        return KnowledgeService(
            settings,
            embedder=HashEmbedder(),
            extractor=TableExtractor(TABLE),
            query_ner=FixedQueryNER(QUERIES),
        )

    return create_app(settings, service)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tenants") / "kb"
    _fill(path)
    return path


@pytest.fixture
def alice(root: Path) -> Iterator[TestClient]:
    """The server of namespace alice (bob's data is beside it, in the same store root)."""
    with TestClient(_app(root, "alice")) as client:
        yield client


def _routes(routes: list[Any], prefix: str = "") -> list[tuple[str, str]]:
    """(method, path) of every route, into included routers (FastAPI 0.165+ keeps them as
    ``_IncludedRouter`` entries holding the router and the prefix it was included under)."""
    found = []
    for route in routes:
        if hasattr(route, "original_router"):
            found += _routes(route.original_router.routes, prefix + route.include_context.prefix)
            continue
        assert isinstance(route, Route), f"{route!r}: a mount or other kind of route this test cannot check"
        methods = sorted((route.methods or set()) - {"HEAD"})
        found += [(method, prefix + route.path) for method in methods]
    return found


def _request(client: TestClient, method: str, path: str, key: str | None) -> httpx.Response:
    url = re.sub(r"\{[^}]+\}", "x", path)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = BODIES.get((method, path), {} if method in ("POST", "PUT", "PATCH", "DELETE") else None)
    return client.request(
        method, url, headers=headers, params=PARAMS.get(path), json=body, follow_redirects=False
    )


def _counts(client: TestClient) -> dict[str, int]:
    stats = client.get("/stats", headers={"X-API-Key": K_ALICE}).json()
    return {k: stats[k] for k in ("passages", "phrases", "facts")}


def test_every_route_refuses_a_key_for_another_namespace(alice: TestClient) -> None:
    routes = _routes(alice.app.routes)
    spec = alice.get("/openapi.json").json()["paths"]
    documented = {(method.upper(), path) for path, item in spec.items() for method in item}
    assert documented <= set(routes), "the walk missed routes the OpenAPI document lists"
    guarded = [r for r in routes if r not in PUBLIC]
    assert ("POST", "/passages") in guarded and ("GET", "/explorer/api/overview") in guarded
    assert not [r for r in PUBLIC if r not in routes], "PUBLIC names a route the app no longer has"
    before = _counts(alice)
    for method, path in guarded:
        missing = _request(alice, method, path, None)
        assert missing.status_code == 401, (method, path, missing.text)
        for key in (K_BOB, "k-unknown-0000000000"):
            refused = _request(alice, method, path, key)
            if key == K_BOB:
                assert refused.status_code == 403, (method, path, refused.text)
                assert refused.json() == {"detail": "this API key is not allowed on namespace 'alice'"}
            else:
                assert refused.status_code == 401, (method, path, refused.text)
            assert "vault" not in refused.text and "4711" not in refused.text
    assert _counts(alice) == before  # the refused POST and DELETE changed nothing
    for key in (K_ALICE, K_BOTH, K_EVERY, K_ADMIN):
        for method, path in guarded:
            if (method, path) in {("POST", "/passages"), ("DELETE", "/passages")}:
                continue  # the writes are checked below, once
            allowed = _request(alice, method, path, key)
            assert allowed.status_code not in (401, 403), (key[:6], method, path, allowed.text)


def test_a_key_for_the_namespace_reads_and_writes_it_and_sees_only_its_namespaces(alice: TestClient) -> None:
    mine = {"X-API-Key": K_ALICE}
    found = alice.post("/query", json={"query": "vault code?"}, headers=mine).json()
    assert [p["passage"]["id"] for p in found["passages"]][:1] == ["alice-1"]
    assert all(not p["passage"]["id"].startswith("bob") for p in found["passages"])
    overview = alice.get("/explorer/api/overview", headers=mine).json()
    assert overview["namespace"] == "alice" and overview["namespaces"] == ["alice"]  # bob's is not listed
    both = alice.get("/explorer/api/overview", headers={"X-API-Key": K_BOTH}).json()
    assert both["namespaces"] == ["alice", "bob"]
    every = alice.get("/explorer/api/overview", headers={"X-API-Key": K_ADMIN}).json()
    assert every["namespaces"] == ["alice", "bob", "default"]
    # bob's passage is not there for alice's server, whatever the id says
    assert alice.get("/explorer/api/passage", params={"id": "bob-1"}, headers=mine).status_code == 404
    added = alice.post(
        "/passages", json={"passages": [{"id": "alice-2", "text": "Mallory was here."}]}, headers=mine
    )
    assert added.status_code == 200 and added.json()["failed"]  # not in the table: a failure, not a 401
    gone = alice.request("DELETE", "/passages", json={"ids": ["bob-1"]}, headers=mine).json()
    assert gone["missing"] == ["bob-1"] and gone["passages"] == []


def test_bob_is_untouched_by_requests_to_alice(root: Path) -> None:
    with TestClient(_app(root, "bob")) as bob:
        theirs = {"X-API-Key": K_BOB}
        before = bob.get("/stats", headers=theirs).json()
        refused = bob.post("/query", json={"query": "boat name?"}, headers={"X-API-Key": K_ALICE})
        assert refused.status_code == 403 and refused.json()["detail"].endswith("namespace 'bob'")
        found = bob.post("/query", json={"query": "boat name?"}, headers=theirs).json()
        assert found["passages"][0]["passage"]["id"] == "bob-1"
        assert bob.get("/stats", headers=theirs).json()["passages"] == before["passages"] == 1


def test_keys_are_never_logged(root: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with TestClient(_app(root, "alice")) as client:
        for key in (*ALL_KEYS, "k-unknown-0000000000"):
            client.get("/stats", headers={"X-API-Key": key})
            client.post("/query", json={"query": "vault code?"}, headers={"Authorization": f"Bearer {key}"})
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert logged  # the app did log (requests, the service starting)
    assert not [key for key in (*ALL_KEYS, "k-unknown-0000000000") if key in logged]


def test_the_mcp_http_transport_checks_the_namespace(tmp_path: Path) -> None:
    """``mcp --transport streamable-http`` on namespace alice: bob's key gets 403, alice's key works."""
    keys = tmp_path / "keys.toml"
    keys.write_text(f'"{K_ALICE}" = ["alice"]\n"{K_BOB}" = ["bob"]\n', encoding="utf-8")
    server = ServerProcess(
        ["-m", "hipporag_neo4j", "--store", str(tmp_path / "kb"), "--namespace", "alice", "mcp", "--create",
         "--transport", "streamable-http", "--port", "{port}"],
        env={"HIPPORAG_SERVER__API_KEYS_FILE": str(keys), "HF_HUB_OFFLINE": "1"},
        cwd=tmp_path,
    )  # fmt: skip
    try:
        server.wait_until_up("/mcp", 401)
        refused = httpx.post(f"{server.url}/mcp", json={}, headers={"Authorization": f"Bearer {K_BOB}"})
        assert refused.status_code == 403
        assert refused.json() == {"detail": "this API key is not allowed on namespace 'alice'"}
        unknown = httpx.post(f"{server.url}/mcp", json={}, headers={"Authorization": "Bearer nope"})
        assert unknown.status_code == 401
        stats = asyncio.run(mcp_stats(f"{server.url}/mcp", K_ALICE))
        assert stats["passages"] == 0 and stats["location"].endswith("namespaces/alice")
        assert not [key for key in (K_ALICE, K_BOB) if key in server.log]
    finally:
        server.kill()
