"""`hipporag-neo4j mcp` as MCP clients use it, through the SDK's own client: over stdio (the client starts
the server) and over streamable HTTP with the API key. Real models, tiny corpora."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.support.server_support import ServerProcess

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def server_params(store: Path, cwd: Path) -> StdioServerParameters:
    env = {
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "HF_HUB_OFFLINE": "1",
    }
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "hipporag_neo4j", "--store", str(store), "mcp", "--create"],
        env=env,
        cwd=cwd,
    )


async def _session(store: Path, cwd: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with Client(server_params(store, cwd), read_timeout_seconds=300) as client:
        tools = await client.list_tools()
        seen["tools"] = {tool.name: tool for tool in tools.tools}
        for passage_id, text in [
            ("thomas", "Thomas Müller is a professor at Stanford University."),
            ("lab", "Thomas Müller studies Alzheimer's disease."),
            ("violin", "Maria plays the violin in Vienna."),
        ]:
            result = await client.call_tool("remember", {"text": text, "passage_id": passage_id})
            assert not result.is_error, result.content
            seen.setdefault("remembered", []).append(result.structured_content)
        again = await client.call_tool(
            "remember", {"text": "Thomas Müller studies Alzheimer's disease.", "passage_id": "lab"}
        )
        seen["again"] = again.structured_content
        recall = await client.call_tool(
            "recall", {"query": "Which Stanford professor studies Alzheimer's?", "top_k": 2}
        )
        seen["recall"] = recall.structured_content
        seen["bad_recall"] = await client.call_tool("recall", {"query": "   "})
        seen["bad_top_k"] = await client.call_tool("recall", {"query": "x", "top_k": 0})
        forget = await client.call_tool("forget", {"passage_ids": ["violin", "nope"]})
        seen["forget"] = forget.structured_content
        stats = await client.call_tool("stats", {})
        seen["stats"] = stats.structured_content
    return seen


def test_remember_recall_forget_stats_over_stdio(tmp_path: Path) -> None:
    seen = asyncio.run(_session(tmp_path / "kb", tmp_path))

    assert set(seen["tools"]) == {"remember", "recall", "forget", "stats"}
    assert "query" in seen["tools"]["recall"].input_schema["properties"]
    assert [r["passage_ids"] for r in seen["remembered"]] == [["thomas"], ["lab"], ["violin"]]
    assert seen["again"]["passage_ids"] == [] and seen["again"]["already_stored"] == ["lab"]

    recall = seen["recall"]
    assert {m["passage_id"] for m in recall["memories"]} == {"thomas", "lab"}
    assert recall["mode"] == "hipporag2" and recall["facts"]  # the default mode starts from matched facts
    assert all(m["why"] for m in recall["memories"])  # each memory says which phrases led to it

    assert seen["bad_recall"].is_error and "empty query" in seen["bad_recall"].content[0].text
    assert seen["bad_top_k"].is_error

    assert seen["forget"]["deleted"] == ["violin"] and seen["forget"]["not_found"] == ["nope"]
    assert seen["stats"]["passages"] == 2 and seen["stats"]["backend"] == "embedded"


async def _http_session(url: str, key: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=300) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        remembered = await client.call_tool("remember", {"text": "Ada Lovelace wrote the first program."})
        seen["remembered"] = remembered.structured_content
        recall = await client.call_tool("recall", {"query": "Who wrote the first program?", "top_k": 1})
        seen["recall"] = recall.structured_content
    return seen


def test_streamable_http_transport_requires_the_key(tmp_path: Path) -> None:
    server = ServerProcess(
        ["-m", "hipporag_neo4j", "--store", str(tmp_path / "kb"), "mcp", "--create",
         "--transport", "streamable-http", "--port", "{port}"],
        env={"HIPPORAG_SERVER__API_KEY": "mcp-key", "HF_HUB_OFFLINE": "1"},
        cwd=tmp_path,
    )  # fmt: skip
    try:
        server.wait_until_up("/mcp", 401)  # up, and refusing requests without the key
        refused = httpx.post(f"{server.url}/mcp", json={}, headers={"Authorization": "Bearer wrong"})
        assert refused.status_code == 401 and "API key" in refused.json()["detail"]
        seen = asyncio.run(_http_session(f"{server.url}/mcp", "mcp-key"))
        assert seen["remembered"]["passage_ids"] and not seen["remembered"]["failed"]
        assert seen["recall"]["memories"][0]["text"] == "Ada Lovelace wrote the first program."
    finally:
        server.kill()


async def _recall_your_graph(store: Path, cwd: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    question = "Who founded the parent company of Kestrel Enzymes?"
    async with Client(server_params(store, cwd), read_timeout_seconds=300) as client:
        for name, args in {
            "plain": {"query": question, "mode": "hipporag"},
            "joined": {"query": question, "mode": "hipporag", "via": ["SUBSIDIARY_OF"]},
            "seeded": {"query": "", "mode": "hipporag", "seed_nodes": ["acct-1001"], "top_k": 3},
        }.items():
            result = await client.call_tool("recall", args)
            assert not result.is_error, result.content
            seen[name] = result.structured_content
    return seen


def test_recall_starts_from_your_nodes_and_walks_your_relationships(tmp_path: Path) -> None:
    """The link demo's store (an imported account graph, linked by name), recalled over MCP: `via` lets
    the walk reach the parent company, `seed_nodes` start from an account with no question, and each
    memory lists the accounts linked to it."""
    from hipporag_neo4j.demo.link import run_link_demo
    from hipporag_neo4j.settings import load_settings

    store = tmp_path / "kb"
    demo = run_link_demo(load_settings(env_file=None), keep=store, echo=None)
    # the demo shows the walk's own reach (no passages filled from dense): the server in this folder too
    (tmp_path / "hipporag.toml").write_text("[retrieval]\nfill_from_dense = false\n", encoding="utf-8")
    seen = asyncio.run(_recall_your_graph(store, tmp_path))

    def titles(name: str) -> list[str]:
        return [m["title"] for m in seen[name]["memories"]]

    assert titles("plain") == demo["plain"] and titles("joined") == demo["joined"]
    assert "Lumora Biotics" in titles("joined") and "Lumora Biotics" not in titles("plain")
    assert titles("seeded")[0] == "Lumora Biotics"
    lumora = next(m for m in seen["seeded"]["memories"] if m["title"] == "Lumora Biotics")
    assert lumora["linked_nodes"] == ["acct-1001 (Lumora Biotics)"]
    assert all(not m["linked_nodes"] for m in seen["plain"]["memories"])  # no join asked: none computed
