"""Personalized PageRank over a namespace's graph: with GDS in the server, or in process; one engine a
module (:mod:`.gds`, :mod:`.local`, :mod:`.aura`).

Three questions are asked of an engine (by the store's view, ``stores/neo4j/view.py``), in the result
shapes of :class:`hipporag_neo4j.stores.base.GraphView`:

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

from collections.abc import Callable, Mapping
from typing import Protocol

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.stores.base import GraphJoin, PassageScore, WalkParams
from hipporag_neo4j.stores.neo4j.client_copy import ClientCopy, Reading
from hipporag_neo4j.stores.neo4j.engines.aura import AuraPpr
from hipporag_neo4j.stores.neo4j.engines.gds import CatalogFactory, GdsPpr, read_graph_version
from hipporag_neo4j.stores.neo4j.engines.local import LocalPpr
from hipporag_neo4j.stores.neo4j.runner import CypherRunner

__all__ = ["AuraPpr", "GdsPpr", "LocalPpr", "PprEngine", "make_engine", "read_graph_version"]


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


def make_engine(
    name: str,
    runner: CypherRunner,
    catalogs: CatalogFactory,
    namespace: str,
    copy: ClientCopy,
    aura: Callable[[], AuraPpr] | None = None,
    concurrency: int = 1,
    top_nodes: int | None = None,
) -> PprEngine:
    """The engine ``name`` (``copy``: the store's in-process copy, for the in-process engines;
    ``concurrency``: the threads of each GDS PageRank call; ``top_nodes``: ``neo4j.gds_top_nodes``)."""
    if name == "local":
        return LocalPpr(copy)
    if name == "aura":
        if aura is None:
            raise StoreError("the aura PPR engine needs an Aura Graph Analytics session manager")
        return aura()
    if name == "gds-weighted":
        return GdsPpr(
            runner, catalogs, namespace, weighted=True, concurrency=concurrency, top_nodes=top_nodes
        )
    if name == "gds-linear":
        return GdsPpr(
            runner, catalogs, namespace, weighted=False, many_seeds=LocalPpr(copy), concurrency=concurrency
        )
    raise StoreError(f"unknown PPR engine {name!r}")
