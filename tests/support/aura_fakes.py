"""Shared test helpers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from hipporag_neo4j.stores.neo4j.aura import (
    SessionError,
    SessionSummary,
)
from tests.support.neo4j_emulation import pregel_pagerank


class FakeSession:
    """A session: graphs constructed in it, PageRank as GDS runs it (the fake server's Pregel model)."""

    def __init__(self, manager: FakeSessions) -> None:
        self.manager = manager
        self.graphs: dict[str, tuple[int, list[tuple[int, int, float]]]] = {}
        self.closed = False

    def construct(
        self,
        graph_name: str,
        node_count: int,
        sources: Sequence[int],
        targets: Sequence[int],
        weights: Sequence[float],
    ) -> None:
        self.manager.constructed.append(graph_name)
        self.graphs[graph_name] = (node_count, list(zip(sources, targets, weights, strict=True)))

    def page_rank(
        self,
        graph_name: str,
        source_nodes: list[tuple[int, float]],
        damping: float,
        max_iterations: int,
        tolerance: float,
    ) -> dict[int, float]:
        if self.manager.expired:
            raise SessionError(f"GDS session {self.manager.names[-1]}: PageRank failed: session expired")
        self.manager.sources.append(source_nodes)
        n, rels = self.graphs[graph_name]
        scores = pregel_pagerank(n, rels, dict(source_nodes), damping, max_iterations, tolerance)
        return {i: s for i, s in enumerate(scores) if s > 0}

    def drop(self, graph_name: str) -> None:
        self.graphs.pop(graph_name, None)
        self.manager.dropped.append(graph_name)

    def close(self) -> None:
        self.closed = True


class FakeSessions:
    def __init__(self) -> None:
        self.names: list[str] = []
        self.memories: list[str] = []
        self.ttls: list[timedelta] = []
        self.estimates: list[tuple[int, int]] = []
        self.constructed: list[str] = []
        self.dropped: list[str] = []
        self.sources: list[list[tuple[int, float]]] = []
        self.deleted: list[str] = []
        self.expired = False

    def estimate(self, node_count: int, relationship_count: int) -> str:
        self.estimates.append((node_count, relationship_count))
        return "2GB"

    def get_or_create(self, name: str, memory: str, ttl: timedelta) -> FakeSession:
        self.names.append(name)
        self.memories.append(memory)
        self.ttls.append(ttl)
        self.expired = False
        return FakeSession(self)

    def list(self) -> list[SessionSummary]:
        return [SessionSummary(n, m, "Ready", None) for n, m in zip(self.names, self.memories, strict=True)]

    def delete(self, name: str) -> bool:
        self.deleted.append(name)
        return True
