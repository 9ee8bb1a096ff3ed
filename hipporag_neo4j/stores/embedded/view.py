"""One query's reads on the embedded store: the snapshot of one graph version (:class:`GraphView`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from hipporag_neo4j.graph.joined import JoinedMatrix
from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import FactHit, GraphJoin, Matrix, PhraseHit, Vector, WalkParams
from hipporag_neo4j.stores.memory import queries
from hipporag_neo4j.stores.memory.graph import FactIndex, GraphSnapshot
from hipporag_neo4j.stores.memory.scores import PassageScores


class SnapshotSource(Protocol):
    """What a view asks of the embedded store beside its snapshot (``EmbeddedStore``)."""

    @property
    def cache_lock(self) -> AbstractContextManager[Any]:
        """Guards the snapshot's caches (PPR, factorisations, joined graphs)."""
        ...

    def candidates(self, kind: str, matrix: Matrix) -> queries.Candidates | None: ...

    def fact_index(self, graph: GraphSnapshot) -> FactIndex: ...

    def joined(self, graph: GraphSnapshot, join: GraphJoin, with_passages: bool) -> JoinedMatrix: ...

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]: ...

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]: ...

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]: ...


class EmbeddedView:
    """The reads of one query over ``graph``, the store's snapshot of graph ``version``: phrase, fact and
    passage searches and the walks answered by the in-process engine (:mod:`.memory.queries`); passage
    rows and exact names read from SQLite."""

    def __init__(self, store: SnapshotSource, graph: GraphSnapshot, version: int) -> None:
        self.store = store
        self.graph = graph
        self._version = version

    @property
    def version(self) -> int:
        return self._version

    def _counts(self, phrase_ids: set[str]) -> dict[str, int]:
        graph = self.graph
        found = {pid: graph.phrases.position(pid) for pid in phrase_ids}
        return {pid: int(graph.passage_counts[i]) for pid, i in found.items() if i is not None}

    def nearest_phrases(
        self, vectors: Matrix, top_k: int, min_similarity: float, exclude_ids: Sequence[str] | None = None
    ) -> list[list[PhraseHit]]:
        phrases = self.graph.phrases
        candidates = self.store.candidates("phrase", phrases.vectors)
        return queries.nearest_phrases(
            phrases, vectors, top_k, min_similarity, exclude_ids, self._counts, candidates
        )

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]:
        return self.store.phrases_by_name(names)

    def nearest_facts(self, vector: Vector, top_k: int) -> list[FactHit]:
        facts = self.store.fact_index(self.graph)
        if not len(facts.ids) or top_k <= 0:
            return []
        candidates = self.store.candidates("fact", facts.vectors)
        return queries.nearest_facts(facts, self.graph.phrases, vector, top_k, candidates)

    def dense_passage_scores(self, vector: Vector, limit: int) -> PassageScores:
        graph = self.graph
        candidates = None
        if len(graph.passage_ids) and limit * 16 <= len(graph.passage_ids):
            candidates = self.store.candidates("passage", graph.passage_vectors)
        return queries.dense_passage_scores(
            graph.passage_ids, graph.passage_vectors, vector, limit, candidates
        )

    def personalized_pagerank(self, seeds: dict[str, float], walk: WalkParams) -> dict[str, float]:
        return queries.personalized_pagerank(self.graph, self.store.cache_lock, seeds, walk)

    def graph_passage_scores(
        self,
        seeds: dict[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> PassageScores:
        joined = self.store.joined(self.graph, join, with_passages=False) if join is not None else None
        return queries.graph_passage_scores(
            self.graph, self.store.cache_lock, seeds, walk, limit, explain_phrases, joined
        )

    def passage_node_scores(
        self,
        phrase_seeds: dict[str, float],
        passage_seeds: Mapping[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> PassageScores | list[Any]:
        joined = self.store.joined(self.graph, join, with_passages=True) if join is not None else None
        return queries.passage_node_scores(
            self.graph,
            self.store.cache_lock,
            phrase_seeds,
            passage_seeds,
            walk,
            limit,
            explain_phrases,
            joined,
        )

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        return self.store.get_passages(ids)

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]:
        return self.store.passage_titles(ids)

    def passage_count(self) -> int:
        return len(self.graph.passage_ids)
