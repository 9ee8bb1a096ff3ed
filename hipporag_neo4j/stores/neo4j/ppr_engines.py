"""Personalized PageRank over a namespace's phrase graph: with GDS in the server, or in process.

All engines return phrase id -> score over the namespace's phrases, scores summing to 1, zeros left out.

* ``gds-weighted`` (GDS 2.17+): one ``gds.pageRank.stream`` with ``sourceNodes: [[node, weight], ...]``.
* ``gds-linear`` (GDS 2.4-2.16, e.g. 2.13 on Neo4j 5.26 LTS): GDS takes only unweighted source lists.
  PPR is linear in its reset vector: with x_i the (unnormalised) GDS scores of a run from seed i alone,
  the run from weights w has scores sum_i w_i x_i. So one run per seed, summed with the seed weights in
  Cypher, then normalised: exact, at the cost of one GDS run per seed.
* ``local``: the phrase graph (ids, RELATION weights, SYNONYM scores) is read from Neo4j once per graph
  version and PPR runs in :mod:`hipporag_neo4j.ppr` (igraph semantics).

GDS scores are divided by their sum. GDS lets the mass of a dangling node (an isolated phrase) leak
away, where :mod:`hipporag_neo4j.ppr` returns it to the seeds; on graphs without isolated phrases the
normalised scores agree, otherwise an isolated seed keeps a smaller share under GDS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from hipporag_neo4j import ppr
from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.stores.neo4j.projection import Projection, ProjectionCatalog
from hipporag_neo4j.stores.neo4j.writer import CypherRunner, CypherTransaction


class PprEngine(Protocol):
    name: str

    def run(
        self, seeds: dict[str, float], damping: float, max_iterations: int, tolerance: float
    ) -> dict[str, float]: ...


def positive_seeds(seeds: dict[str, float]) -> dict[str, float]:
    return {phrase_id: float(w) for phrase_id, w in seeds.items() if w > 0}


def normalised(scores: dict[str, float]) -> dict[str, float]:
    total = sum(scores.values())
    if total <= 0:
        return {}
    return {phrase_id: s / total for phrase_id, s in scores.items() if s > 0}


def read_graph_version(runner: CypherRunner, namespace: str) -> int:
    rows = runner.read("meta_graph_version", namespace=namespace)
    if not rows:
        raise StoreError(f"namespace {namespace!r} has no metadata node: open() the store first")
    return int(rows[0]["graph_version"])


class GdsPpr:
    """PPR with GDS on the warm projection of the current graph version."""

    def __init__(
        self, runner: CypherRunner, catalog: ProjectionCatalog, namespace: str, *, weighted: bool
    ) -> None:
        self.runner = runner
        self.catalog = catalog
        self.namespace = namespace
        self.weighted = weighted
        self.name = "gds-weighted" if weighted else "gds-linear"

    def _known(self, seeds: dict[str, float]) -> dict[str, float]:
        if not seeds:
            return {}
        rows = self.runner.read("read_existing_phrases", ids=list(seeds), namespace=self.namespace)
        known = {row["id"] for row in rows}
        return {phrase_id: w for phrase_id, w in seeds.items() if phrase_id in known}

    def _stream(
        self, projection: Projection, seeds: dict[str, float], damping: float, iters: int, tol: float
    ) -> dict[str, float]:
        rows = self.runner.read(
            "gds_ppr_weighted" if self.weighted else "gds_ppr_linear",
            leader=True,
            graph_name=projection.name,
            namespace=self.namespace,
            seeds=[{"id": phrase_id, "weight": w} for phrase_id, w in sorted(seeds.items())],
            damping=damping,
            max_iterations=iters,
            tolerance=tol,
        )
        return {str(row["id"]): float(row["score"]) for row in rows}

    def run(
        self, seeds: dict[str, float], damping: float, max_iterations: int, tolerance: float
    ) -> dict[str, float]:
        # every source node must exist in the projection, and an empty source list would run a plain
        # PageRank: keep the seeds that are phrases of the namespace, stop when none is
        seeds = self._known(positive_seeds(seeds))
        if not seeds:
            return {}
        for attempt in (1, 2):
            projection = self.catalog.ensure(read_graph_version(self.runner, self.namespace))
            if projection.relationship_count == 0:
                # no edges: every walk restarts at once, PPR is the reset distribution itself (and GDS
                # would not know the weight property of an edgeless projection)
                return normalised(seeds)
            try:
                return normalised(self._stream(projection, seeds, damping, max_iterations, tolerance))
            except StoreError:
                # dropped by another process, or a seed newer than the projection: look again, once
                self.catalog.forget()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


@dataclass(frozen=True)
class PhraseGraph:
    """The phrase graph of one graph version, ready for :func:`hipporag_neo4j.ppr.personalized_pagerank`."""

    version: int
    ids: list[str]
    index: dict[str, int]
    transition: sp.csr_matrix
    dangling: np.ndarray


def read_phrase_graph(tx: CypherTransaction, namespace: str) -> PhraseGraph:
    """Ids, edges and version read in one transaction, so they belong together."""
    version_rows = tx.run("meta_graph_version", namespace=namespace)
    if not version_rows:
        raise StoreError(f"namespace {namespace!r} has no metadata node: open() the store first")
    ids = [str(row["id"]) for row in tx.run("local_phrase_ids", namespace=namespace)]
    index = {phrase_id: i for i, phrase_id in enumerate(ids)}
    edges = tx.run("local_phrase_edges", namespace=namespace)
    sources = np.array([index[e["source"]] for e in edges], dtype=np.int64)
    targets = np.array([index[e["target"]] for e in edges], dtype=np.int64)
    weights = np.array([float(e["weight"]) for e in edges], dtype=np.float64)
    adjacency = ppr.symmetric_adjacency(sources, targets, weights, len(ids))
    transition, dangling = ppr.transition_matrix(adjacency)
    return PhraseGraph(int(version_rows[0]["graph_version"]), ids, index, transition, dangling)


class LocalPpr:
    """PPR in process (:mod:`hipporag_neo4j.ppr`) over the phrase graph read from Neo4j."""

    name = "local"

    def __init__(self, runner: CypherRunner, namespace: str) -> None:
        self.runner = runner
        self.namespace = namespace
        self.graph: PhraseGraph | None = None
        self.graph_reads = 0

    def current_graph(self) -> PhraseGraph:
        version = read_graph_version(self.runner, self.namespace)
        if self.graph is None or self.graph.version != version:
            self.graph = self.runner.transaction(
                lambda tx: read_phrase_graph(tx, self.namespace), write=False
            )
            self.graph_reads += 1
        return self.graph

    def run(
        self, seeds: dict[str, float], damping: float, max_iterations: int, tolerance: float
    ) -> dict[str, float]:
        graph = self.current_graph()
        reset = np.zeros(len(graph.ids), dtype=np.float64)
        for phrase_id, weight in positive_seeds(seeds).items():
            if phrase_id in graph.index:
                reset[graph.index[phrase_id]] += weight
        if reset.sum() <= 0:
            return {}
        scores = ppr.personalized_pagerank(
            graph.transition, graph.dangling, reset, damping, max_iterations, tolerance
        )
        return {graph.ids[i]: float(scores[i]) for i in np.flatnonzero(scores > 0)}


def make_engine(
    name: str, runner: CypherRunner, catalog_factory: Callable[[], ProjectionCatalog], namespace: str
) -> PprEngine:
    if name == "local":
        return LocalPpr(runner, namespace)
    if name in ("gds-weighted", "gds-linear"):
        return GdsPpr(runner, catalog_factory(), namespace, weighted=name == "gds-weighted")
    raise StoreError(f"unknown PPR engine {name!r}")
