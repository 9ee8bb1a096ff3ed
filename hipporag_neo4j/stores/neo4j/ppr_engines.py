"""Personalized PageRank over a namespace's graph: with GDS in the server, or in process.

Three questions are asked of an engine, in the result shapes of
:class:`hipporag_neo4j.stores.base.GraphStore`:

* :meth:`PprEngine.run`: phrase id -> PPR score over the phrase graph (scores sum to 1, zeros left out);
* :meth:`PprEngine.passage_scores`: HippoRAG's passages, score = sum over mentions of PPR x count;
* :meth:`PprEngine.passage_node_scores`: HippoRAG 2's walk over phrases plus Passage nodes (MENTIONS
  edges of weight 1), passages ranked by their own PPR score.

Engines:

* ``gds-weighted`` (GDS 2.17+): one ``gds.pageRank.stream`` with ``sourceNodes: [[node, weight], ...]``.
* ``gds-linear`` (GDS 2.4-2.16, e.g. 2.13 on Neo4j 5.26 LTS): GDS takes only unweighted source lists.
  PPR is linear in its reset vector: with x_i the (unnormalised) GDS scores of a run from seed i alone,
  the run from weights w has scores sum_i w_i x_i. So one run per seed, summed with the seed weights in
  Cypher, then normalised: exact, at the cost of one GDS run per seed.
* ``local``: the store's in-process copy of the namespace (:class:`.client_copy.ClientCopy`, read once
  per graph version): the graph, PPR and the passage aggregation are the in-process engine's
  (:mod:`hipporag_neo4j.stores.memory`), the embedded store's (same answers; no phrase score leaves the
  process); the joined graph (``join``) too.
* ``aura``: the copy's graph, PageRank in an Aura Graph Analytics session.

For the GDS engines the passage rankings are one statement each (PageRank, normalisation and the
MENTIONS aggregation or the Passage-node ranking), so PPR scores never leave the server.

Agreement between engines: GDS computes x = (1 - d) b + d T x with ``dampingFactor`` d the probability
of following an edge (igraph's ``damping``), b the source biases, and T the weighted transition matrix;
a node without edges keeps its mass (sends nothing). :mod:`hipporag_neo4j.graph.ppr` sends the mass of such
nodes back to the reset distribution p, x = d T x + (d m + 1 - d) p, where m is a scalar, so its scores
are a multiple of GDS's for b = p: after division by their sum the two are equal.

GDS's ``tolerance`` is absolute: a node stops propagating once its change is at most ``tolerance`` on
the unnormalised scale, which starts at (1 - d) x bias. Seed weights of 1 / passage count (1e-3 and
less) would stop early and lose accuracy, so seeds are always normalised to sum 1 before the call (here
and again in Cypher over the seeds found).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol, TypeVar

import numpy as np
import scipy.sparse as sp

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.graph.joined import JoinEdges, JoinedMatrix, join_adjacency
from hipporag_neo4j.stores.base import GraphJoin, PassageScore, WalkParams
from hipporag_neo4j.stores.memory import queries
from hipporag_neo4j.stores.neo4j.aura import GdsSession, SessionError, SessionManager, session_graph_name
from hipporag_neo4j.stores.neo4j.client_copy import ClientCopy, Held, Reading
from hipporag_neo4j.stores.neo4j.projection import Projection, ProjectionCatalog, ProjectionKind, join_infix
from hipporag_neo4j.stores.neo4j.writer import CypherRunner, Record

T = TypeVar("T")

#: PageRank attempts on a projection that vanished (dropped by a newer process) or lacks a seed.
MAX_ATTEMPTS = 3
#: Reads of the local graph that may see a concurrent commit before one is used uncached.
MAX_GRAPH_READS = 3
#: Above this many seeds the linear fallback (one GDS run per seed) hands a query to the in-process
#: engine, which gives the same scores after one graph read per version (HippoRAG 2 may seed every
#: passage).
LINEAR_MAX_SEEDS = 64


class CatalogFactory(Protocol):
    """The store's projection catalogs: one per kind, and per join for the joined graph."""

    def __call__(self, kind: ProjectionKind, join: GraphJoin | None = None) -> ProjectionCatalog: ...


class PprEngine(Protocol):
    """``reading``: the query's hold on the graph version (``Neo4jStore.view``); without it every call
    reads the version from the server."""

    name: str

    def run(
        self, seeds: dict[str, float], walk: WalkParams, reading: Reading | None = None
    ) -> dict[str, float]: ...

    def passage_scores(
        self,
        seeds: dict[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
        reading: Reading | None = None,
    ) -> list[PassageScore]: ...

    def passage_node_scores(
        self,
        phrase_seeds: dict[str, float],
        passage_seeds: Mapping[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
        reading: Reading | None = None,
    ) -> list[PassageScore]: ...


def positive_seeds(seeds: Mapping[str, float]) -> dict[str, float]:
    return {node_id: float(w) for node_id, w in seeds.items() if w > 0}


def normalised(scores: dict[str, float]) -> dict[str, float]:
    """Positive entries divided by their sum (empty when none is positive)."""
    total = sum(s for s in scores.values() if s > 0)
    if total <= 0:
        return {}
    return {node_id: s / total for node_id, s in scores.items() if s > 0}


@dataclass(frozen=True)
class Seed:
    id: str
    weight: float
    kind: str  # "phrase" | "passage"


def normalised_reset(phrase_seeds: dict[str, float], passage_seeds: Mapping[str, float]) -> list[Seed]:
    """HippoRAG 2's reset vector: positive phrase and passage weights together, summing to 1, sorted."""
    seeds = [Seed(k, float(w), "phrase") for k, w in phrase_seeds.items() if w > 0]
    seeds += [Seed(k, float(w), "passage") for k, w in passage_seeds.items() if w > 0]
    total = sum(seed.weight for seed in seeds)
    if total <= 0:
        return []
    return sorted(
        (Seed(seed.id, seed.weight / total, seed.kind) for seed in seeds), key=lambda s: (s.kind, s.id)
    )


def read_graph_version(runner: CypherRunner, namespace: str) -> int:
    rows = runner.read("meta_graph_version", namespace=namespace)
    if not rows:
        raise StoreError(f"namespace {namespace!r} has no metadata node: open() the store first")
    return int(rows[0]["graph_version"])


def passage_score_rows(rows: list[Record], key: str) -> list[PassageScore]:
    return [
        PassageScore(
            passage_id=str(r["passage_id"]),
            score=float(r["score"]),
            top_phrases=[(str(t["phrase"]), float(t[key])) for t in r["top_phrases"]],
        )
        for r in rows
    ]


def aggregate_passage_scores(
    runner: CypherRunner, namespace: str, scores: dict[str, float], limit: int, explain_phrases: int
) -> list[PassageScore]:
    """HippoRAG's MENTIONS aggregation of phrase scores computed outside the server (passage_scores)."""
    if not scores or limit <= 0:
        return []
    rows = runner.read(
        "passage_scores",
        namespace=namespace,
        scores=[{"id": phrase_id, "score": s} for phrase_id, s in scores.items()],
        limit=limit,
        explain_phrases=max(0, explain_phrases),
    )
    return passage_score_rows(rows, "contribution")


def rank_passage_seeds(passage_reset: dict[str, float], limit: int) -> list[PassageScore]:
    """HippoRAG 2's ranking when the graph has no edge: PPR is the reset vector itself."""
    ranked = sorted(passage_reset.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [PassageScore(pid, score) for pid, score in ranked]


class GdsPpr:
    """PPR with GDS on the warm projections of the current graph version. The linear form hands a query
    with more than :data:`LINEAR_MAX_SEEDS` seeds to ``many_seeds`` (the in-process engine) when given."""

    def __init__(
        self,
        runner: CypherRunner,
        catalogs: CatalogFactory,
        namespace: str,
        *,
        weighted: bool,
        many_seeds: PprEngine | None = None,
    ) -> None:
        self.runner = runner
        self.catalogs = catalogs
        self.namespace = namespace
        self.weighted = weighted
        self.name = "gds-weighted" if weighted else "gds-linear"
        self.many_seeds = None if weighted else many_seeds

    def _delegate(self, n_seeds: int) -> PprEngine | None:
        return self.many_seeds if n_seeds > LINEAR_MAX_SEEDS else None

    @property
    def catalog(self) -> ProjectionCatalog:
        return self.catalogs("phrases")

    def _statement(self, stem: str) -> str:
        return f"{stem}_{'weighted' if self.weighted else 'linear'}"

    def _known(self, query: str, seeds: dict[str, float]) -> dict[str, float]:
        if not seeds:
            return {}
        rows = self.runner.read(query, ids=list(seeds), namespace=self.namespace)
        known = {row["id"] for row in rows}
        return {node_id: w for node_id, w in seeds.items() if node_id in known}

    def _on_projection(
        self,
        kind: ProjectionKind,
        work: Callable[[Projection], T],
        edgeless: Callable[[Projection], T],
        join: GraphJoin | None = None,
        reading: Reading | None = None,
    ) -> T:
        """``work`` on the projection of the current graph version; ``edgeless`` when it has no edge (GDS
        would not know the weight property of a graph without relationships, and PPR is then the reset
        vector itself). A vanished projection or a seed newer than it: look again, a few times, at the
        version read afresh. A query's ``reading`` uses the warm projection when it is of its version or a
        newer one (an older version is never projected again, so concurrent queries never make the catalog
        go back and forth); a projection is only ever made of the version the server holds then."""
        catalog = self.catalogs(kind) if join is None else self.catalogs(kind, join)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            current = catalog.current
            if attempt == 1 and reading is not None and current is not None:
                held = current.version >= reading.state.version
            else:
                held = False
            projection = (
                current
                if held and current is not None
                else catalog.ensure(read_graph_version(self.runner, self.namespace))
            )
            if projection.relationship_count == 0:
                return edgeless(projection)
            try:
                return work(projection)
            except StoreError:
                catalog.forget()
                if attempt == MAX_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    def _params(self, projection: Projection, walk: WalkParams) -> dict[str, Any]:
        return {
            "graph_name": projection.name,
            "namespace": self.namespace,
            "damping": walk.damping,
            "max_iterations": walk.max_iterations,
            "tolerance": walk.tolerance,
        }

    def run(
        self, seeds: dict[str, float], walk: WalkParams, reading: Reading | None = None
    ) -> dict[str, float]:
        seeds = normalised(seeds)
        if not seeds:
            return {}
        if delegate := self._delegate(len(seeds)):
            return delegate.run(seeds, walk, reading)
        rows = [{"id": node_id, "weight": w} for node_id, w in sorted(seeds.items())]

        def work(projection: Projection) -> dict[str, float]:
            found = self.runner.read(
                self._statement("gds_ppr"),
                leader=True,
                seeds=rows,
                **self._params(projection, walk),
            )
            return normalised({str(r["id"]): float(r["score"]) for r in found if r["id"] is not None})

        def edgeless(projection: Projection) -> dict[str, float]:
            return {} if projection.empty else normalised(self._known("read_existing_phrases", seeds))

        return self._on_projection("phrases", work, edgeless, reading=reading)

    def passage_scores(
        self,
        seeds: dict[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
        reading: Reading | None = None,
    ) -> list[PassageScore]:
        seeds = normalised(seeds)
        if not seeds or limit <= 0:
            return []
        if delegate := self._delegate(len(seeds)):
            return delegate.passage_scores(seeds, walk, limit, explain_phrases, join, reading)
        rows = [{"id": node_id, "weight": w} for node_id, w in sorted(seeds.items())]

        def work(projection: Projection) -> list[PassageScore]:
            found = self.runner.read(
                self._statement("gds_passage_scores"),
                leader=True,
                seeds=rows,
                limit=limit,
                explain_phrases=max(0, explain_phrases),
                **self._params(projection, walk),
            )
            return passage_score_rows(found, "contribution")

        def edgeless(projection: Projection) -> list[PassageScore]:
            if projection.empty:
                return []
            scores = normalised(self._known("read_existing_phrases", seeds))
            return aggregate_passage_scores(self.runner, self.namespace, scores, limit, explain_phrases)

        return self._on_projection("phrases", work, edgeless, join, reading)

    def passage_node_scores(
        self,
        phrase_seeds: dict[str, float],
        passage_seeds: Mapping[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
        reading: Reading | None = None,
    ) -> list[PassageScore]:
        reset = normalised_reset(phrase_seeds, passage_seeds)
        if not reset or limit <= 0:
            return []
        if delegate := self._delegate(len(reset)):
            return delegate.passage_node_scores(
                phrase_seeds, passage_seeds, walk, limit, explain_phrases, join, reading
            )
        rows = [{"id": seed.id, "weight": seed.weight, "kind": seed.kind} for seed in reset]

        def work(projection: Projection) -> list[PassageScore]:
            found = self.runner.read(
                self._statement("gds_passage_nodes"),
                leader=True,
                seeds=rows,
                limit=limit,
                explain_phrases=max(0, explain_phrases),
                **self._params(projection, walk),
            )
            return passage_score_rows(found, "score")

        def edgeless(projection: Projection) -> list[PassageScore]:
            if projection.empty:
                return []
            known_passages = self._known(
                "read_existing_passages", {s.id: s.weight for s in reset if s.kind == "passage"}
            )
            known_phrases = self._known(
                "read_existing_phrases", {s.id: s.weight for s in reset if s.kind == "phrase"}
            )
            total = sum(known_passages.values()) + sum(known_phrases.values())
            if total <= 0:
                return []
            return rank_passage_seeds({k: w / total for k, w in known_passages.items()}, limit)

        return self._on_projection("passages", work, edgeless, join, reading)


# --- in process ------------------------------------------------------------------------------------


class LocalPpr:
    """PPR in process over the store's copy of the namespace (:mod:`.client_copy`): the graph, PPR and the
    passage aggregation are the in-process engine's (:mod:`hipporag_neo4j.stores.memory`), as on the
    embedded store (same answers; no phrase score leaves the process). The joined graph (``join``) is
    the copy's graph joined with your nodes and relationships (read with ``local_joined_edges``, once per
    graph version) by :func:`hipporag_neo4j.graph.joined.join_adjacency`, as the embedded store joins."""

    name = "local"

    def __init__(self, runner: CypherRunner, namespace: str, copy: ClientCopy) -> None:
        self.runner = runner
        self.namespace = namespace
        self.copy = copy
        self.joined: dict[tuple[int, GraphJoin, bool], JoinedMatrix] = {}
        self.graph_reads = 0  # reads of the joined edges (tests)

    def _joined(self, graph: Held, join: GraphJoin, with_passages: bool) -> JoinedMatrix:
        key = (graph.version, join, with_passages)
        cached = self.joined.get(key)
        if cached is not None:
            return cached
        rows = self.runner.read("local_joined_edges", namespace=self.namespace, types=list(join.rel_types))
        self.graph_reads += 1
        edges = JoinEdges(
            graph.version,
            [(str(r["phrase_id"]), str(r["source"]), float(r["score"])) for r in rows if r["phrase_id"]],
            [(str(r["source"]), str(r["target"])) for r in rows if not r["phrase_id"]],
        )
        g = graph.graph
        base = g.passage_adjacency() if with_passages else g.adjacency
        found = {p: g.phrases.position(p) for p in {p for p, _, _ in edges.same_as}}
        joined = join_adjacency(base, {p: i for p, i in found.items() if i is not None}, edges)
        self.joined = {k: v for k, v in self.joined.items() if k[0] == graph.version}  # one version held
        self.joined[key] = joined
        return joined

    def _phrase_scores(
        self,
        graph: Held,
        seeds: dict[str, float],
        walk: WalkParams,
        joined: JoinedMatrix | None,
        join: GraphJoin | None = None,
    ) -> np.ndarray:
        """PPR over the phrase graph (joined with your graph when ``joined`` is given)."""
        if joined is None:
            return graph.graph.phrase_ppr(graph.lock, seeds, walk)
        return queries.joined_ppr(joined, graph.graph.phrase_reset(seeds), walk)

    def _walk_scores(
        self,
        graph: Held,
        reset: np.ndarray,
        walk: WalkParams,
        joined: JoinedMatrix | None,
        join: GraphJoin | None = None,
    ) -> np.ndarray:
        """PPR over HippoRAG 2's phrase + passage graph (joined when ``joined`` is given)."""
        if joined is None:
            return graph.graph.passage_walk_ppr(graph.lock, reset, walk)
        return queries.joined_ppr(joined, reset, walk)

    def run(
        self, seeds: dict[str, float], walk: WalkParams, reading: Reading | None = None
    ) -> dict[str, float]:
        graph = self.copy.held_graph(reading)
        scores = self._phrase_scores(graph, seeds, walk, None)
        found = np.flatnonzero(scores)
        return dict(zip(graph.graph.phrases.ids.take(found), scores[found].tolist(), strict=True))

    def passage_scores(
        self,
        seeds: dict[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
        reading: Reading | None = None,
    ) -> list[PassageScore]:
        if limit <= 0:
            return []
        graph = self.copy.held_graph(reading)
        joined = self._joined(graph, join, with_passages=False) if join is not None else None
        ppr = self._phrase_scores(graph, seeds, walk, joined, join)
        return list(graph.graph.rank_by_mentions(ppr, limit, explain_phrases))

    def passage_node_scores(
        self,
        phrase_seeds: dict[str, float],
        passage_seeds: Mapping[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
        reading: Reading | None = None,
    ) -> list[PassageScore]:
        if limit <= 0:
            return []
        graph = self.copy.held_graph(reading)
        reset = graph.graph.passage_walk_reset(phrase_seeds, passage_seeds)
        if reset.sum() <= 0:
            return []
        joined = self._joined(graph, join, with_passages=True) if join is not None else None
        ppr = self._walk_scores(graph, reset, walk, joined, join)
        return list(graph.graph.rank_passage_nodes(ppr, limit, explain_phrases))


class AuraPpr(LocalPpr):
    """PPR in an Aura Graph Analytics session (:mod:`.aura`): the graph the in-process engine holds (the
    copy's, per graph version) is constructed in the session once per graph version and kind, PageRank
    runs there with weighted source nodes, and the scores come back in the in-process engine's shapes,
    so every retrieval mode works unchanged. A session that fails or expires mid-query raises
    :class:`~hipporag_neo4j.stores.neo4j.aura.SessionError`, or, with ``fallback_local``, the query is
    answered in process (the same scores)."""

    name = "aura"

    def __init__(
        self,
        runner: CypherRunner,
        namespace: str,
        copy: ClientCopy,
        sessions: SessionManager,
        *,
        session: str,
        memory: str | None,
        ttl: timedelta,
        fallback_local: bool = False,
    ) -> None:
        super().__init__(runner, namespace, copy)
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
        self, kind: str, version: int, adjacency: sp.csr_matrix, reset: np.ndarray, walk: WalkParams
    ) -> np.ndarray:
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

    def _or_local(self, in_session: Callable[[], np.ndarray], local: Callable[[], np.ndarray]) -> np.ndarray:
        try:
            return in_session()
        except SessionError:
            self._forget_session()  # expired or failed: the next query gets (or creates) it again
            if not self.fallback_local:
                raise
            self.fallbacks += 1
            return local()

    def _phrase_scores(
        self,
        graph: Held,
        seeds: dict[str, float],
        walk: WalkParams,
        joined: JoinedMatrix | None,
        join: GraphJoin | None = None,
    ) -> np.ndarray:
        reset = graph.graph.phrase_reset(seeds)
        if reset.sum() <= 0:
            return np.zeros_like(reset)
        kind = "phrases" + (f".{join_infix(join)[:-1]}" if join is not None else "")
        adjacency = joined.adjacency if joined is not None else graph.graph.adjacency
        return self._or_local(
            lambda: self._in_session(kind, graph.version, adjacency, reset, walk),
            lambda: super(AuraPpr, self)._phrase_scores(graph, seeds, walk, joined, join),
        )

    def _walk_scores(
        self,
        graph: Held,
        reset: np.ndarray,
        walk: WalkParams,
        joined: JoinedMatrix | None,
        join: GraphJoin | None = None,
    ) -> np.ndarray:
        kind = "passages" + (f".{join_infix(join)[:-1]}" if join is not None else "")
        adjacency = joined.adjacency if joined is not None else graph.graph.passage_adjacency()
        return self._or_local(
            lambda: self._in_session(kind, graph.version, adjacency, reset, walk),
            lambda: super(AuraPpr, self)._walk_scores(graph, reset, walk, joined, join),
        )

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


def make_engine(
    name: str,
    runner: CypherRunner,
    catalogs: CatalogFactory,
    namespace: str,
    copy: ClientCopy,
    aura: Callable[[], AuraPpr] | None = None,
) -> PprEngine:
    """The engine ``name`` (``copy``: the store's in-process copy, for the in-process engines)."""
    if name == "local":
        return LocalPpr(runner, namespace, copy)
    if name == "aura":
        if aura is None:
            raise StoreError("the aura PPR engine needs an Aura Graph Analytics session manager")
        return aura()
    if name == "gds-weighted":
        return GdsPpr(runner, catalogs, namespace, weighted=True)
    if name == "gds-linear":
        return GdsPpr(
            runner, catalogs, namespace, weighted=False, many_seeds=LocalPpr(runner, namespace, copy)
        )
    raise StoreError(f"unknown PPR engine {name!r}")
