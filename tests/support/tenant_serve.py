"""Clients of a server under test for the tenant tests: batches of REST writes from several clients at
once, and an MCP session over streamable HTTP with a key."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

BATCH = 4


def post_all(url: str, key: str, passages: list[dict[str, str]]) -> list[dict[str, Any] | None]:
    """Every batch of BATCH passages as its own POST /passages, four clients at once; None where the
    connection broke (the server was killed)."""
    batches = [passages[i : i + BATCH] for i in range(0, len(passages), BATCH)]

    def post(batch: list[dict[str, str]]) -> dict[str, Any] | None:
        try:
            answer = httpx.post(
                f"{url}/passages", json={"passages": batch}, headers={"X-API-Key": key}, timeout=300
            )
        except httpx.TransportError:
            return None
        assert answer.status_code == 200, answer.text
        report: dict[str, Any] = answer.json()
        return report

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(post, batches))


async def mcp_stats(url: str, key: str) -> dict[str, Any]:
    """The ``stats`` tool's answer over streamable HTTP, the key sent as a Bearer token."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=300) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        result = await client.call_tool("stats", {})
        assert not result.is_error, result.content
        stats: dict[str, Any] = result.structured_content or {}
        return stats
