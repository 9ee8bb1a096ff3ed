"""The ``local`` engine: PageRank in process over the store's copy of the namespace
(:mod:`..client_copy`), by the in-process engine's walks (:class:`~..memory.view.MemoryView`): the
embedded store's graph, PPR and passage aggregation (same answers; no phrase score leaves the process),
the joined graph (``join``) too."""

from __future__ import annotations

from collections.abc import Mapping

from hipporag_neo4j.stores.base import GraphJoin, PassageScore, WalkParams
from hipporag_neo4j.stores.memory.view import IN_PROCESS, MemoryView, Walker
from hipporag_neo4j.stores.neo4j.client_copy import ClientCopy, CopyParts, Reading


class LocalPpr:
    """PPR over the copy's graph of the query's version (``reading``; without one, the version the
    server holds now), computed by ``walker``."""

    name = "local"

    def __init__(self, copy: ClientCopy, walker: Walker = IN_PROCESS) -> None:
        self.copy = copy
        self.walker = walker

    def view(self, reading: Reading | None = None) -> MemoryView:
        return MemoryView(CopyParts(self.copy, reading or self.copy.reading()), self.walker)

    def run(
        self, seeds: dict[str, float], walk: WalkParams, reading: Reading | None = None
    ) -> dict[str, float]:
        return self.view(reading).personalized_pagerank(seeds, walk)

    def passage_scores(
        self,
        seeds: dict[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
        reading: Reading | None = None,
    ) -> list[PassageScore]:
        return list(self.view(reading).graph_passage_scores(seeds, walk, limit, explain_phrases, join))

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
        view = self.view(reading)
        return list(view.passage_node_scores(phrase_seeds, passage_seeds, walk, limit, explain_phrases, join))
