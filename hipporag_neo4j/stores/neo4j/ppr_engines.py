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
* ``local``: the graph is read from Neo4j once per graph version and PPR runs in
  :mod:`hipporag_neo4j.graph.ppr` (igraph semantics). Given the store's :class:`.client_copy.ClientCopy`, the
  graph, PPR and the passage aggregation are the embedded store's, in process (same answers; no phrase
  score leaves the process); the joined graph (``join``) keeps the engine's own read.

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
from hipporag_neo4j.graph import ppr
from hipporag_neo4j.graph.joined import JoinEdges, join_adjacency
from hipporag_neo4j.stores.base import GraphJoin, PassageScore
from hipporag_neo4j.stores.neo4j.aura import GdsSession, SessionError, SessionManager, session_graph_name
from hipporag_neo4j.stores.neo4j.client_copy import ClientCopy
from hipporag_neo4j.stores.neo4j.projection import Projection, ProjectionCatalog, ProjectionKind, join_infix
from hipporag_neo4j.stores.neo4j.writer import CypherRunner, CypherTransaction, Record

T = TypeVar("T")

#: PageRank attempts on a projection that vanished (dropped by a newer process) or lacks a seed.
MAX_ATTEMPTS = 3
#: Reads of the local graph that may see a concurrent commit before one is used uncached.
MAX_GRAPH_READS = 3
#: Above this many seeds the linear fallback (one GDS run per seed) hands a query to the in-process
#: engine, which gives the same scores after one graph read per version (HippoRAG 2 may seed every
#: passage).
LINEAR_MAX_SEEDS = 64


class VersionSource(Protocol):
    """The graph version an engine runs on, and whether it is a query pin's (``Neo4jStore.graph_version``):
    the pinned query's unless ``fresh``, else read from the server."""

    def __call__(self, fresh: bool = False) -> tuple[int, bool]: ...


class CatalogFactory(Protocol):
    """The store's projection catalogs: one per kind, and per join for the joined graph."""

    def __call__(self, kind: ProjectionKind, join: GraphJoin | None = None) -> ProjectionCatalog: ...


class PprEngine(Protocol):
    name: str

    def run(
        self, seeds: dict[str, float], damping: float, max_iterations: int, tolerance: float
    ) -> dict[str, float]: ...

    def passage_scores(
        self,
        seeds: dict[str, float],
        damping: float,
        max_iterations: int,
        tolerance: float,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> list[PassageScore]: ...

    def passage_node_scores(
        self,
        phrase_seeds: dict[str, float],
        passage_seeds: Mapping[str, float],
        damping: float,
        max_iterations: int,
        tolerance: float,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
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


def server_version(runner: CypherRunner, namespace: str) -> VersionSource:
    """The version read from the server on every call (an engine without a store's query pins)."""

    def version(fresh: bool = False) -> tuple[int, bool]:
        return read_graph_version(runner, namespace), False

    return version


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
        version: VersionSource | None = None,
    ) -> None:
        self.runner = runner
        self.catalogs = catalogs
        self.namespace = namespace
        self.version = version or server_version(runner, namespace)
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
    ) -> T:
        """``work`` on the projection of the current graph version; ``edgeless`` when it has no edge (GDS
        would not know the weight property of a graph without relationships, and PPR is then the reset
        vector itself). A vanished projection or a seed newer than it: look again, a few times, at the
        version read afresh. A pinned query uses the warm projection when it is of its version or a newer
        one (an older version is never projected again, so concurrent queries never make the catalog go
        back and forth); a projection is only ever made of the version the server holds then."""
        catalog = self.catalogs(kind) if join is None else self.catalogs(kind, join)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            version, pinned = self.version(fresh=attempt > 1)
            current = catalog.current
            if pinned and current is not None and current.version >= version:
                projection = current
            else:
                if pinned:  # none warm for the pinned version: project the server's version now
                    version, _ = self.version(fresh=True)
                projection = catalog.ensure(version)
            if projection.relationship_count == 0:
                return edgeless(projection)
            try:
                return work(projection)
            except StoreError:
                catalog.forget()
                if attempt == MAX_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    def _params(self, projection: Projection, damping: float, iters: int, tol: float) -> dict[str, Any]:
        return {
            "graph_name": projection.name,
            "namespace": self.namespace,
            "damping": damping,
            "max_iterations": iters,
            "tolerance": tol,
        }

    def run(
        self, seeds: dict[str, float], damping: float, max_iterations: int, tolerance: float
    ) -> dict[str, float]:
        seeds = normalised(seeds)
        if not seeds:
            return {}
        if delegate := self._delegate(len(seeds)):
            return delegate.run(seeds, damping, max_iterations, tolerance)
        rows = [{"id": node_id, "weight": w} for node_id, w in sorted(seeds.items())]

        def work(projection: Projection) -> dict[str, float]:
            found = self.runner.read(
                self._statement("gds_ppr"),
                leader=True,
                seeds=rows,
                **self._params(projection, damping, max_iterations, tolerance),
            )
            return normalised({str(r["id"]): float(r["score"]) for r in found if r["id"] is not None})

        def edgeless(projection: Projection) -> dict[str, float]:
            return {} if projection.empty else normalised(self._known("read_existing_phrases", seeds))

        return self._on_projection("phrases", work, edgeless)

    def passage_scores(
        self,
        seeds: dict[str, float],
        damping: float,
        max_iterations: int,
        tolerance: float,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> list[PassageScore]:
        seeds = normalised(seeds)
        if not seeds or limit <= 0:
            return []
        if delegate := self._delegate(len(seeds)):
            return delegate.passage_scores(
                seeds, damping, max_iterations, tolerance, limit, explain_phrases, join
            )
        rows = [{"id": node_id, "weight": w} for node_id, w in sorted(seeds.items())]

        def work(projection: Projection) -> list[PassageScore]:
            found = self.runner.read(
                self._statement("gds_passage_scores"),
                leader=True,
                seeds=rows,
                limit=limit,
                explain_phrases=max(0, explain_phrases),
                **self._params(projection, damping, max_iterations, tolerance),
            )
            return passage_score_rows(found, "contribution")

        def edgeless(projection: Projection) -> list[PassageScore]:
            if projection.empty:
                return []
            scores = normalised(self._known("read_existing_phrases", seeds))
            return aggregate_passage_scores(self.runner, self.namespace, scores, limit, explain_phrases)

        return self._on_projection("phrases", work, edgeless, join)

    def passage_node_scores(
        self,
        phrase_seeds: dict[str, float],
        passage_seeds: Mapping[str, float],
        damping: float,
        max_iterations: int,
        tolerance: float,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> list[PassageScore]:
        reset = normalised_reset(phrase_seeds, passage_seeds)
        if not reset or limit <= 0:
            return []
        if delegate := self._delegate(len(reset)):
            return delegate.passage_node_scores(
                phrase_seeds, passage_seeds, damping, max_iterations, tolerance, limit, explain_phrases, join
            )
        rows = [{"id": seed.id, "weight": seed.weight, "kind": seed.kind} for seed in reset]

        def work(projection: Projection) -> list[PassageScore]:
            found = self.runner.read(
                self._statement("gds_passage_nodes"),
                leader=True,
                seeds=rows,
                limit=limit,
                explain_phrases=max(0, explain_phrases),
                **self._params(projection, damping, max_iterations, tolerance),
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

        return self._on_projection("passages", work, edgeless, join)


# --- in process ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LocalGraph:
    """A namespace's graph of one graph version, ready for
    :func:`hipporag_neo4j.graph.ppr.personalized_pagerank`.

    Nodes are the phrases (``ids[:n_phrases]``) and, for HippoRAG 2's walk, then the passages.
    ``version`` is None for a graph read while writers kept committing (used once, never cached)."""

    version: int | None
    ids: list[str]
    index: dict[str, int]
    n_phrases: int
    transition: sp.csr_matrix
    dangling: np.ndarray
    mentions: dict[str, list[str]]  # passage id -> phrase ids (HippoRAG 2's graph only)
    adjacency: sp.csr_matrix  # symmetric, weighted (what a GDS session is given)
    with_passages: bool = False
    n_enterprise: int = 0  # joined graph: your nodes, the last rows (walked through, never ranked)
    kind: str = ""  # joined graph: the join's infix in the names a GDS session gives it

    @property
    def n_ranked(self) -> int:
        """Rows of phrases and passages (the enterprise nodes come after them)."""
        return len(self.ids) - self.n_enterprise


def build_local_graph(
    version: int | None,
    phrase_rows: list[Record],
    passage_rows: list[Record] | None,
    join_rows: list[Record] | None = None,
    kind: str = "",
) -> LocalGraph:
    """Ids and edges read by local_phrase_graph (and local_passage_graph, and for the joined graph
    local_joined_edges); an edge to a node missing from the read (a concurrent write) is left out rather
    than failing."""
    ids = [str(row["id"]) for row in phrase_rows]
    n_phrases = len(ids)
    phrase_index = {phrase_id: i for i, phrase_id in enumerate(ids)}
    sources: list[int] = []
    targets: list[int] = []
    weights: list[float] = []
    for row in phrase_rows:
        s = phrase_index[str(row["id"])]
        for edge in row["edges"]:
            t = phrase_index.get(str(edge["target"]))
            if t is not None and edge["weight"] is not None:
                sources.append(s)
                targets.append(t)
                weights.append(float(edge["weight"]))
    mentions: dict[str, list[str]] = {}
    index = dict(phrase_index)
    for row in passage_rows or []:
        pid = str(row["id"])
        if pid in index:  # a passage id equal to a phrase id: keep the two nodes apart
            continue
        index[pid] = len(ids)
        ids.append(pid)
        mentioned = [str(p) for p in row["phrases"] if str(p) in phrase_index]
        mentions[pid] = mentioned
        for phrase_id in mentioned:
            sources.append(index[pid])
            targets.append(phrase_index[phrase_id])
            weights.append(1.0)
    adjacency = ppr.symmetric_adjacency(
        np.array(sources, dtype=np.int64),
        np.array(targets, dtype=np.int64),
        np.array(weights, dtype=np.float64),
        len(ids),
    )
    with_passages = passage_rows is not None
    if join_rows is None:
        transition, dangling = ppr.transition_matrix(adjacency)
        return LocalGraph(
            version, ids, index, n_phrases, transition, dangling, mentions, adjacency, with_passages
        )
    edges = JoinEdges(
        version,
        [(str(r["phrase_id"]), str(r["source"]), float(r["score"])) for r in join_rows if r["phrase_id"]],
        [(str(r["source"]), str(r["target"])) for r in join_rows if not r["phrase_id"]],
    )
    joined = join_adjacency(adjacency, phrase_index, edges)
    return LocalGraph(
        version,
        ids + joined.node_ids,
        index,  # your nodes are never looked up by id (an elementId could equal a phrase id)
        n_phrases,
        joined.transition,
        joined.dangling,
        mentions,
        joined.adjacency,
        with_passages,
        len(joined.node_ids),
        kind,
    )


def read_phrase_graph(
    tx: CypherTransaction, namespace: str, with_passages: bool = False, join: GraphJoin | None = None
) -> LocalGraph:
    """The graph read in one transaction between two reads of the graph version. Neo4j reads at READ
    COMMITTED, so statements of one transaction may see different commits; writers of a namespace bump
    its version in the same transaction, so equal versions before and after mean no commit in between
    and the graph is that version's. Otherwise the graph is returned without a version (not cached)."""

    def version() -> int:
        rows = tx.run("meta_graph_version", namespace=namespace)
        if not rows:
            raise StoreError(f"namespace {namespace!r} has no metadata node: open() the store first")
        return int(rows[0]["graph_version"])

    before = version()
    phrase_rows = tx.run("local_phrase_graph", namespace=namespace)
    passage_rows = tx.run("local_passage_graph", namespace=namespace) if with_passages else None
    join_rows = None
    if join is not None:
        join_rows = tx.run("local_joined_edges", namespace=namespace, types=list(join.rel_types))
    after = version()
    return build_local_graph(
        before if before == after else None, phrase_rows, passage_rows, join_rows, join_infix(join)
    )


class LocalPpr:
    """PPR in process (:mod:`hipporag_neo4j.graph.ppr`) over the graph read from Neo4j, cached per version."""

    name = "local"

    def __init__(
        self,
        runner: CypherRunner,
        namespace: str,
        copy: ClientCopy | None = None,
        version: VersionSource | None = None,
    ) -> None:
        self.runner = runner
        self.namespace = namespace
        self.copy = copy
        self.version = version or server_version(runner, namespace)
        self.graphs: dict[tuple[bool, GraphJoin | None], LocalGraph] = {}  # (with passages, join) -> graph
        self.graph_reads = 0

    @property
    def graph(self) -> LocalGraph | None:
        return self.graphs.get((False, None))

    def current_graph(self, with_passages: bool = False, join: GraphJoin | None = None) -> LocalGraph:
        """The graph of the current version (a pinned query's, or a newer one already read), read when
        not held."""
        version, pinned = self.version()
        cached = self.graphs.get((with_passages, join))
        if (
            cached is not None
            and cached.version is not None
            and (cached.version == version or (pinned and cached.version > version))
        ):
            return cached
        graph: LocalGraph | None = None
        for _ in range(MAX_GRAPH_READS):
            graph = self.runner.transaction(
                lambda tx: read_phrase_graph(tx, self.namespace, with_passages, join), write=False
            )
            self.graph_reads += 1
            if graph.version is not None:
                self.graphs[with_passages, join] = graph
                return graph
        assert graph is not None
        return graph  # writers kept committing: use this read once

    def _scores(
        self, graph: LocalGraph, reset_by_id: dict[int, float], damping: float, iters: int, tol: float
    ) -> np.ndarray | None:
        reset = np.zeros(len(graph.ids), dtype=np.float64)
        for i, weight in reset_by_id.items():
            reset[i] += weight
        if reset.sum() <= 0:
            return None
        if self.copy is not None:  # the joined graph: forward push, as the embedded store walks it
            strength = ppr.node_strengths(graph.adjacency)
            return ppr.forward_push(graph.transition, strength, reset, damping, tol, iters)
        return ppr.personalized_pagerank(graph.transition, graph.dangling, reset, damping, iters, tol)

    def run(
        self,
        seeds: dict[str, float],
        damping: float,
        max_iterations: int,
        tolerance: float,
        join: GraphJoin | None = None,
    ) -> dict[str, float]:
        if self.copy is not None and join is None:
            return self.copy.personalized_pagerank(seeds, damping, max_iterations, tolerance)
        graph = self.current_graph(join=join)
        reset = {graph.index[k]: w for k, w in positive_seeds(seeds).items() if k in graph.index}
        scores = self._scores(graph, reset, damping, max_iterations, tolerance)
        if scores is None:
            return {}
        return {graph.ids[i]: float(scores[i]) for i in np.flatnonzero(scores[: graph.n_ranked] > 0)}

    def passage_scores(
        self,
        seeds: dict[str, float],
        damping: float,
        max_iterations: int,
        tolerance: float,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> list[PassageScore]:
        if limit <= 0:
            return []
        if self.copy is not None and join is None:
            return self.copy.graph_passage_scores(
                seeds, damping, max_iterations, tolerance, limit, explain_phrases
            )
        scores = self.run(seeds, damping, max_iterations, tolerance, join)
        return aggregate_passage_scores(self.runner, self.namespace, scores, limit, explain_phrases)

    def passage_node_scores(
        self,
        phrase_seeds: dict[str, float],
        passage_seeds: Mapping[str, float],
        damping: float,
        max_iterations: int,
        tolerance: float,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> list[PassageScore]:
        if limit <= 0:
            return []
        if self.copy is not None and join is None:
            return self.copy.passage_node_scores(
                phrase_seeds, passage_seeds, damping, max_iterations, tolerance, limit, explain_phrases
            )
        graph = self.current_graph(with_passages=True, join=join)
        reset: dict[int, float] = {}
        for k, w in positive_seeds(phrase_seeds).items():
            i = graph.index.get(k)
            if i is not None and i < graph.n_phrases:
                reset[i] = reset.get(i, 0.0) + w
        for k, w in positive_seeds(passage_seeds).items():
            i = graph.index.get(k)
            if i is not None and i >= graph.n_phrases:
                reset[i] = reset.get(i, 0.0) + w
        scores = self._scores(graph, reset, damping, max_iterations, tolerance)
        if scores is None:
            return []
        passages = [(graph.ids[i], float(scores[i])) for i in range(graph.n_phrases, graph.n_ranked)]
        ranked = sorted(((p, s) for p, s in passages if s > 0), key=lambda ps: (-ps[1], ps[0]))[:limit]
        wanted = sorted({phrase_id for p, _ in ranked for phrase_id in graph.mentions.get(p, [])})
        names: dict[str, str] = {}
        if wanted and explain_phrases > 0:
            rows = self.runner.read_batched("read_phrase_names", "ids", wanted, namespace=self.namespace)
            names = {str(r["id"]): str(r["name"]) for r in rows}
        results = []
        for pid, score in ranked:
            mentioned = [
                (names[phrase_id], float(scores[graph.index[phrase_id]]))
                for phrase_id in graph.mentions.get(pid, [])
                if phrase_id in names and scores[graph.index[phrase_id]] > 0
            ]
            mentioned.sort(key=lambda ns: (-ns[1], ns[0]))
            results.append(PassageScore(pid, score, mentioned[: max(0, explain_phrases)]))
        return results


class AuraPpr(LocalPpr):
    """PPR in an Aura Graph Analytics session (:mod:`.aura`): the graph the in-process engine reads
    (version-checked, cached per version) is constructed in the session once per graph version and kind,
    PageRank runs there with weighted source nodes, and the scores come back in the in-process engine's
    shapes, so every retrieval mode works unchanged. A session that fails or expires mid-query raises
    :class:`~hipporag_neo4j.stores.neo4j.aura.SessionError`, or, with ``fallback_local``, the query is
    answered in process (the same scores)."""

    name = "aura"

    def __init__(
        self,
        runner: CypherRunner,
        namespace: str,
        sessions: SessionManager,
        *,
        session: str,
        memory: str | None,
        ttl: timedelta,
        fallback_local: bool = False,
    ) -> None:
        super().__init__(runner, namespace)
        self.sessions = sessions
        self.session_name = session
        self.memory = memory
        self.ttl = ttl
        self.fallback_local = fallback_local
        self.session: GdsSession | None = None
        self.constructed: dict[str, str] = {}  # kind -> graph name in the session
        self.fallbacks = 0

    def _session(self, graph: LocalGraph) -> GdsSession:
        if self.session is None:
            memory = self.memory or self.sessions.estimate(len(graph.ids), int(graph.adjacency.nnz))
            self.session = self.sessions.get_or_create(self.session_name, memory, self.ttl)
        return self.session

    def _in_session(
        self, graph: LocalGraph, sources: list[tuple[int, float]], d: float, it: int, tol: float
    ) -> np.ndarray:
        kind = ("passages" if graph.with_passages else "phrases") + (
            f".{graph.kind[:-1]}" if graph.kind else ""
        )
        name = session_graph_name(kind, graph.version if graph.version is not None else -1)
        session = self._session(graph)
        if self.constructed.get(kind) != name or graph.version is None:
            coo = graph.adjacency.tocoo()
            session.construct(name, len(graph.ids), coo.row.tolist(), coo.col.tolist(), coo.data.tolist())
            old, self.constructed[kind] = self.constructed.get(kind), name
            if old and old != name:
                session.drop(old)
        raw = session.page_rank(name, sources, d, it, tol)
        scores = np.zeros(len(graph.ids), dtype=np.float64)
        for node, score in raw.items():
            if 0 <= node < len(scores) and score > 0:
                scores[node] = score
        total = float(scores.sum())
        if total <= 0:
            raise SessionError(f"GDS session {self.session_name}: PageRank on {name} returned no score")
        normalised_scores: np.ndarray = scores / total
        return normalised_scores

    def _scores(
        self, graph: LocalGraph, reset_by_id: dict[int, float], damping: float, iters: int, tol: float
    ) -> np.ndarray | None:
        total = sum(w for w in reset_by_id.values() if w > 0)
        if total <= 0:
            return None
        sources = sorted((i, w / total) for i, w in reset_by_id.items() if w > 0)  # sum 1: see the module doc
        try:
            return self._in_session(graph, sources, damping, iters, tol)
        except SessionError:
            self._forget_session()  # expired or failed: the next query gets (or creates) it again
            if not self.fallback_local:
                raise
            self.fallbacks += 1
            return super()._scores(graph, reset_by_id, damping, iters, tol)

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
    aura: Callable[[], AuraPpr] | None = None,
    copy: ClientCopy | None = None,
    version: VersionSource | None = None,
) -> PprEngine:
    """The engine ``name``; ``version``: where it reads the graph version (the store's, pinned per query;
    default: from the server on every call)."""
    if name == "local":
        return LocalPpr(runner, namespace, copy, version)
    if name == "aura":
        if aura is None:
            raise StoreError("the aura PPR engine needs an Aura Graph Analytics session manager")
        engine = aura()
        if version is not None:
            engine.version = version
        return engine
    if name == "gds-weighted":
        return GdsPpr(runner, catalogs, namespace, weighted=True, version=version)
    if name == "gds-linear":
        return GdsPpr(
            runner,
            catalogs,
            namespace,
            weighted=False,
            many_seeds=LocalPpr(runner, namespace, copy, version),
            version=version,
        )
    raise StoreError(f"unknown PPR engine {name!r}")
