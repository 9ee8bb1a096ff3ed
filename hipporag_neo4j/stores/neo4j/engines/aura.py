"""The ``aura`` engine: PageRank in an Aura Graph Analytics session over the graph the ``local`` engine
holds (see :class:`AuraPpr`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import timedelta
from typing import Any

import numpy as np
import scipy.sparse as sp

from hipporag_neo4j.graph.joined import JoinedMatrix
from hipporag_neo4j.stores.base import GraphJoin, WalkParams
from hipporag_neo4j.stores.memory.graph import GraphSnapshot
from hipporag_neo4j.stores.memory.view import IN_PROCESS, Scores
from hipporag_neo4j.stores.neo4j.aura import GdsSession, SessionError, SessionManager, session_graph_name
from hipporag_neo4j.stores.neo4j.client_copy import ClientCopy
from hipporag_neo4j.stores.neo4j.engines.local import LocalPpr
from hipporag_neo4j.stores.neo4j.projection import join_infix


class AuraPpr(LocalPpr):
    """PPR in an Aura Graph Analytics session (:mod:`hipporag_neo4j.stores.neo4j.aura`): the graph the
    in-process engine holds (the copy's, per graph version) is constructed in the session once per graph
    version and kind, PageRank runs there with weighted source nodes, and the scores come back in the
    in-process engine's shapes, so every retrieval mode works unchanged. A session that fails or expires
    mid-query raises :class:`~hipporag_neo4j.stores.neo4j.aura.SessionError`, or, with
    ``fallback_local``, the query is answered in process (the same scores)."""

    name = "aura"

    def __init__(
        self,
        copy: ClientCopy,
        sessions: SessionManager,
        *,
        session: str,
        memory: str | None,
        ttl: timedelta,
        fallback_local: bool = False,
    ) -> None:
        super().__init__(copy)
        self.walker = self
        self.sessions = sessions
        self.session_name = session
        self.memory = memory
        self.ttl = ttl
        self.fallback_local = fallback_local
        self.session: GdsSession | None = None
        self.constructed: dict[str, str] = {}  # kind -> graph name in the session
        self.fallbacks = 0

    def _session(self, adjacency: sp.csr_matrix) -> GdsSession:
        if self.session is None:
            memory = self.memory or self.sessions.estimate(adjacency.shape[0], int(adjacency.nnz))
            self.session = self.sessions.get_or_create(self.session_name, memory, self.ttl)
        return self.session

    def _in_session(
        self, kind: str, version: int, adjacency: sp.csr_matrix, reset: Scores, walk: WalkParams
    ) -> Scores:
        """PageRank in the session over ``adjacency`` (constructed there once per version and kind) from
        ``reset`` over its first rows; normalised scores of those rows."""
        name = session_graph_name(kind, version)
        session = self._session(adjacency)
        if self.constructed.get(kind) != name:
            coo = adjacency.tocoo()
            session.construct(name, adjacency.shape[0], coo.row.tolist(), coo.col.tolist(), coo.data.tolist())
            old, self.constructed[kind] = self.constructed.get(kind), name
            if old and old != name:
                session.drop(old)
        total = float(reset[reset > 0].sum())
        sources = [(int(i), float(reset[i]) / total) for i in np.flatnonzero(reset > 0)]  # sum 1: module doc
        raw = session.page_rank(name, sources, walk.damping, walk.max_iterations, walk.tolerance)
        scores = np.zeros(adjacency.shape[0], dtype=np.float64)
        for node, score in raw.items():
            if 0 <= node < len(scores) and score > 0:
                scores[node] = score
        scores = scores[: len(reset)]
        found = float(scores.sum())
        if found <= 0:
            raise SessionError(f"GDS session {self.session_name}: PageRank on {name} returned no score")
        normalised_scores: np.ndarray = scores / found
        return normalised_scores

    def phrase_scores(
        self,
        graph: GraphSnapshot,
        lock: AbstractContextManager[Any],
        seeds: dict[str, float],
        walk: WalkParams,
        joined: JoinedMatrix | None,
        join: GraphJoin | None,
        version: int,
    ) -> Scores:
        reset = graph.phrase_reset(seeds)
        if reset.sum() <= 0:
            return np.zeros_like(reset)
        kind = "phrases" + (f".{join_infix(join)[:-1]}" if join is not None else "")
        adjacency = joined.adjacency if joined is not None else graph.adjacency
        return self._or_local(
            lambda: self._in_session(kind, version, adjacency, reset, walk),
            lambda: IN_PROCESS.phrase_scores(graph, lock, seeds, walk, joined, join, version),
        )

    def walk_scores(
        self,
        graph: GraphSnapshot,
        lock: AbstractContextManager[Any],
        reset: Scores,
        walk: WalkParams,
        joined: JoinedMatrix | None,
        join: GraphJoin | None,
        version: int,
    ) -> Scores:
        kind = "passages" + (f".{join_infix(join)[:-1]}" if join is not None else "")
        adjacency = joined.adjacency if joined is not None else graph.passage_graph()
        return self._or_local(
            lambda: self._in_session(kind, version, adjacency, reset, walk),
            lambda: IN_PROCESS.walk_scores(graph, lock, reset, walk, joined, join, version),
        )

    def _or_local(self, in_session: Callable[[], Scores], local: Callable[[], Scores]) -> Scores:
        try:
            return in_session()
        except SessionError:
            self._forget_session()  # expired or failed: the next query gets (or creates) it again
            if not self.fallback_local:
                raise
            self.fallbacks += 1
            return local()

    def _forget_session(self) -> None:
        """Drop this engine's graphs and close the client, as far as a failed session still allows (an
        expired one holds nothing any more), then forget both. Without the drop a graph constructed
        before a refused PageRank call stayed in the session's (or a self-managed GDS's) catalog."""
        if self.session is not None:
            for name in self.constructed.values():
                with contextlib.suppress(SessionError):
                    self.session.drop(name)
            with contextlib.suppress(Exception):  # the client's own errors, whatever the session's state
                self.session.close()
        self.session = None
        self.constructed.clear()

    def close(self) -> None:
        """Drop this process's graphs from the session (the session itself expires by its TTL)."""
        if self.session is not None:
            for name in self.constructed.values():
                self.session.drop(name)
            self.session.close()
        self.session = None
        self.constructed.clear()
