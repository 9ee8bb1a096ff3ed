"""The ``gds-weighted`` and ``gds-linear`` engines: PageRank with GDS on the warm projection of the
current graph version (see the package doc)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.stores.base import GraphJoin, PassageScore, WalkParams
from hipporag_neo4j.stores.neo4j.client_copy import Reading
from hipporag_neo4j.stores.neo4j.engines.local import LocalPpr
from hipporag_neo4j.stores.neo4j.projection import Projection, ProjectionCatalog, ProjectionKind
from hipporag_neo4j.stores.neo4j.runner import CypherRunner, Record

T = TypeVar("T")

#: PageRank attempts on a projection that vanished (dropped by a newer process) or lacks a seed.
MAX_ATTEMPTS = 3
#: Above this many seeds the linear fallback (one GDS run per seed) hands a query to the in-process
#: engine, which gives the same scores after one graph read per version (HippoRAG 2 may seed every
#: passage).
LINEAR_MAX_SEEDS = 64


class CatalogFactory(Protocol):
    """The store's projection catalogs: one per kind, and per join for the joined graph."""

    def __call__(self, kind: ProjectionKind, join: GraphJoin | None = None) -> ProjectionCatalog: ...


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
        many_seeds: LocalPpr | None = None,
    ) -> None:
        self.runner = runner
        self.catalogs = catalogs
        self.namespace = namespace
        self.weighted = weighted
        self.name = "gds-weighted" if weighted else "gds-linear"
        self.many_seeds = None if weighted else many_seeds

    def _delegate(self, n_seeds: int) -> LocalPpr | None:
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
