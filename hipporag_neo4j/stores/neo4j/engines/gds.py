"""The ``gds-weighted`` and ``gds-linear`` engines: PageRank with GDS on the warm projection of the
current graph version (see the package doc)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.stores.base import GraphJoin, PassageScore, WalkParams
from hipporag_neo4j.stores.neo4j.client_copy import Reading
from hipporag_neo4j.stores.neo4j.engines.local import LocalPpr
from hipporag_neo4j.stores.neo4j.projection import Projection, ProjectionCatalog, ProjectionKind
from hipporag_neo4j.stores.neo4j.runner import CypherRunner, Record

#: PageRank attempts on a projection that vanished (dropped by a newer process) or lacks a seed.
MAX_ATTEMPTS = 3
#: Above this many seeds the linear fallback (one GDS run per seed) hands a query to the in-process
#: engine, which gives the same scores after one graph read per version (HippoRAG 2 may seed every
#: passage).
LINEAR_MAX_SEEDS = 64


class CatalogFactory(Protocol):
    """The store's projection catalogs: one per kind, and per join for the joined graph."""

    def __call__(self, kind: ProjectionKind, join: GraphJoin | None = None) -> ProjectionCatalog: ...


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


def phrase_rows(seeds: dict[str, float]) -> list[dict[str, Any]]:
    """The statements' ``$seeds`` of phrase seeds, sorted by id."""
    return [{"id": node_id, "weight": w} for node_id, w in sorted(seeds.items())]


def rank_passage_seeds(passage_reset: dict[str, float], limit: int) -> list[PassageScore]:
    """HippoRAG 2's ranking when the graph has no edge: PPR is the reset vector itself."""
    ranked = sorted(passage_reset.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [PassageScore(pid, score) for pid, score in ranked]


def supersteps(walk: WalkParams) -> int:
    """GDS's ``maxIterations`` for ``walk``: the supersteps after which no node can still move by more than
    the tolerance, capped by ``walk.max_iterations``.

    GDS's PageRank (``PageRankComputation`` on Pregel) propagates changes: superstep 0 sends each node's
    initial value, (1 - d) x its bias (biases sum to 1 here, or 1 per run in the linear form); a node adds
    d x what it receives and passes that change on only while it is more than ``tolerance`` (absolute),
    else it votes to halt; the run ends when no message is left. The weighted transition never creates
    mass, so the changes of superstep k sum to at most (1 - d) d^k: once that is at most the tolerance,
    every node halts there and the run ends. So ``k + 1`` supersteps give the scores of an uncapped run
    (one more is kept against rounding): at d = 0.5 and tolerance 1e-6 that is 21, not 100."""
    damping, tolerance = walk.damping, walk.tolerance
    if not 0.0 < damping < 1.0 or tolerance <= 0.0:
        return walk.max_iterations
    k = max(0, math.ceil(math.log(tolerance / (1.0 - damping)) / math.log(damping)))
    return max(1, min(walk.max_iterations, k + 2))


@dataclass(frozen=True)
class _Ranking:
    """One of the three questions asked of the engine, as the GDS statement answers it."""

    kind: ProjectionKind  # the projection it walks
    stem: str  # the statement, without its _weighted / _linear suffix
    seeds: list[dict[str, Any]]  # the statement's $seeds
    params: dict[str, Any]  # its other parameters besides the walk's
    parse: Callable[[list[Record]], Any]
    edgeless: Callable[[Projection], Any]  # the answer on a projection without relationships
    statement: str = ""  # the statement's full name when it is not one of a _weighted / _linear pair


class GdsPpr:
    """PPR with GDS on the warm projections of the current graph version. The linear form hands a query
    with more than :data:`LINEAR_MAX_SEEDS` seeds to ``many_seeds`` (the in-process engine) when given.
    ``concurrency``: the threads of each ``gds.pageRank.stream`` call (``neo4j.gds_concurrency``).
    ``top_nodes`` (``neo4j.gds_top_nodes``, weighted form only): HippoRAG's passage scores aggregate only
    the walk's ``top_nodes`` best phrases (``gds_passage_scores_top``); unset, every phrase reached."""

    def __init__(
        self,
        runner: CypherRunner,
        catalogs: CatalogFactory,
        namespace: str,
        *,
        weighted: bool,
        many_seeds: LocalPpr | None = None,
        concurrency: int = 1,
        top_nodes: int | None = None,
    ) -> None:
        self.runner = runner
        self.catalogs = catalogs
        self.namespace = namespace
        self.weighted = weighted
        self.name = "gds-weighted" if weighted else "gds-linear"
        self.many_seeds = None if weighted else many_seeds
        self.concurrency = max(1, int(concurrency))
        self.top_nodes = int(top_nodes) if weighted and top_nodes is not None else None

    def _delegate(self, n_seeds: int) -> LocalPpr | None:
        return self.many_seeds if n_seeds > LINEAR_MAX_SEEDS else None

    @property
    def catalog(self) -> ProjectionCatalog:
        return self.catalogs("phrases")

    def _known(self, query: str, seeds: dict[str, float]) -> dict[str, float]:
        if not seeds:
            return {}
        rows = self.runner.read(query, ids=list(seeds), namespace=self.namespace)
        known = {row["id"] for row in rows}
        return {node_id: w for node_id, w in seeds.items() if node_id in known}

    def _on_projection(
        self,
        ranking: _Ranking,
        walk: WalkParams,
        join: GraphJoin | None = None,
        reading: Reading | None = None,
    ) -> Any:
        """The ranking's statement on the projection of the current graph version; its ``edgeless``
        answer when that has no edge (GDS would not know the weight property of a graph without
        relationships, and PPR is then the reset vector itself). A vanished projection or a seed newer
        than it: look again, a few times, at the version read afresh. A query's ``reading`` uses the warm
        projection when it is of its version or a newer one (an older version is never projected again,
        so concurrent queries never make the catalog go back and forth); a projection is only ever made
        of the version the server holds then."""
        catalog = self.catalogs(ranking.kind) if join is None else self.catalogs(ranking.kind, join)
        statement = ranking.statement or f"{ranking.stem}_{'weighted' if self.weighted else 'linear'}"
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
                return ranking.edgeless(projection)
            try:
                rows = self.runner.read(
                    statement,
                    leader=True,
                    seeds=ranking.seeds,
                    graph_name=projection.name,
                    namespace=self.namespace,
                    damping=walk.damping,
                    max_iterations=supersteps(walk),
                    tolerance=walk.tolerance,
                    concurrency=self.concurrency,
                    **ranking.params,
                )
            except StoreError:
                catalog.forget()
                if attempt == MAX_ATTEMPTS:
                    raise
                continue
            return ranking.parse(rows)
        raise AssertionError("unreachable")

    def run(
        self, seeds: dict[str, float], walk: WalkParams, reading: Reading | None = None
    ) -> dict[str, float]:
        seeds = normalised(seeds)
        if not seeds:
            return {}
        if delegate := self._delegate(len(seeds)):
            return delegate.run(seeds, walk, reading)

        def edgeless(projection: Projection) -> dict[str, float]:
            return {} if projection.empty else normalised(self._known("read_existing_phrases", seeds))

        ranking = _Ranking(
            "phrases",
            "gds_ppr",
            phrase_rows(seeds),
            {},
            lambda rows: normalised({str(r["id"]): float(r["score"]) for r in rows if r["id"] is not None}),
            edgeless,
        )
        result: dict[str, float] = self._on_projection(ranking, walk, reading=reading)
        return result

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

        def edgeless(projection: Projection) -> list[PassageScore]:
            if projection.empty:
                return []
            scores = normalised(self._known("read_existing_phrases", seeds))
            return aggregate_passage_scores(self.runner, self.namespace, scores, limit, explain_phrases)

        params: dict[str, Any] = {"limit": limit, "explain_phrases": max(0, explain_phrases)}
        if self.top_nodes is not None:
            params["top_nodes"] = self.top_nodes
        ranking = _Ranking(
            "phrases",
            "gds_passage_scores",
            phrase_rows(seeds),
            params,
            lambda rows: passage_score_rows(rows, "contribution"),
            edgeless,
            "" if self.top_nodes is None else "gds_passage_scores_top",
        )
        result: list[PassageScore] = self._on_projection(ranking, walk, join, reading)
        return result

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

        ranking = _Ranking(
            "passages",
            "gds_passage_nodes",
            [{"id": seed.id, "weight": seed.weight, "kind": seed.kind} for seed in reset],
            {"limit": limit, "explain_phrases": max(0, explain_phrases)},
            lambda rows: passage_score_rows(rows, "score"),
            edgeless,
        )
        result: list[PassageScore] = self._on_projection(ranking, walk, join, reading)
        return result
