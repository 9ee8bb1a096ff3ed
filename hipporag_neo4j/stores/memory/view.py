"""One query's reads at one graph version, answered in process: the view both stores hand retrieval.

A store supplies the parts of its version (:class:`Parts`: the embedded store from its snapshot, the Neo4j
store from its in-process copy, each read or built on first use) and :class:`MemoryView` answers every
read of :class:`~hipporag_neo4j.stores.base.GraphView` over them with the engine's one implementation
(:mod:`.queries`). How PageRank is computed is a :class:`Walker`: in process (:data:`IN_PROCESS`) or, on
Neo4j, in an Aura Graph Analytics session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from hipporag_neo4j.graph.joined import JoinedMatrix
from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import FactHit, GraphJoin, Matrix, PassageScore, PhraseHit, Vector, WalkParams
from hipporag_neo4j.stores.memory import queries
from hipporag_neo4j.stores.memory.graph import FactIndex, GraphSnapshot, PhraseIndex
from hipporag_neo4j.stores.memory.strings import StringTable

Scores = npt.NDArray[np.float64]


class Parts(Protocol):
    """The parts of one graph version, as a store holds them."""

    @property
    def version(self) -> int: ...

    def phrases(self) -> tuple[PhraseIndex, Callable[[set[str]], Mapping[str, int]]]:
        """The phrase index with its vectors, and the passage counts of given phrase ids."""
        ...

    def graph(self) -> tuple[GraphSnapshot, AbstractContextManager[Any]]:
        """The graph, and the lock guarding its caches (PPR, factorisations, joined graphs)."""
        ...

    def facts(self) -> tuple[FactIndex, PhraseIndex]:
        """The fact index, and the phrases that name its subjects and objects."""
        ...

    def dense(self) -> tuple[StringTable, Matrix]:
        """Passage ids and their vectors."""
        ...

    def candidates(self, kind: str, matrix: Matrix) -> queries.Candidates | None:
        """An approximate index's candidates over ``matrix`` (phrase, fact or passage), or None: exact."""
        ...

    def batch_candidates(self, kind: str, matrix: Matrix) -> queries.BatchCandidates | None:
        """The same for a batch searched with a similarity floor (the synonym step), or None: exact."""
        ...

    def joined(self, graph: GraphSnapshot, join: GraphJoin, with_passages: bool) -> JoinedMatrix:
        """``graph`` joined with the user's graph (``hipporag-neo4j link``)."""
        ...

    def phrases_by_name(self, names: Sequence[str]) -> dict[str, PhraseHit]: ...

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]: ...

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]: ...

    def passage_count(self) -> int: ...


class Walker(Protocol):
    """Personalized PageRank over a graph version held in process (the phrase graph, HippoRAG 2's phrase +
    passage graph, or either joined with the user's graph): scores of the reset vector's nodes."""

    def phrase_scores(
        self,
        graph: GraphSnapshot,
        lock: AbstractContextManager[Any],
        seeds: dict[str, float],
        walk: WalkParams,
        joined: JoinedMatrix | None,
        join: GraphJoin | None,
        version: int,
    ) -> Scores: ...

    def walk_scores(
        self,
        graph: GraphSnapshot,
        lock: AbstractContextManager[Any],
        reset: Scores,
        walk: WalkParams,
        joined: JoinedMatrix | None,
        join: GraphJoin | None,
        version: int,
    ) -> Scores: ...


class InProcess:
    """PageRank in process: forward push, or the exact factorised solve once a version serves several
    queries (:class:`GraphSnapshot`); forward push on the joined graph."""

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
        if joined is None:
            return graph.phrase_ppr(lock, seeds, walk)
        return queries.joined_ppr(joined, graph.phrase_reset(seeds), walk)

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
        if joined is None:
            return graph.passage_walk_ppr(lock, reset, walk)
        return queries.joined_ppr(joined, reset, walk)


IN_PROCESS = InProcess()


class MemoryView:
    """The reads of one query over ``parts`` (one graph version): see the module doc."""

    def __init__(self, parts: Parts, walker: Walker = IN_PROCESS) -> None:
        self.parts = parts
        self.walker = walker

    @property
    def version(self) -> int:
        return self.parts.version

    # --- searches -------------------------------------------------------------------------------
    def nearest_phrases(
        self, vectors: Matrix, top_k: int, min_similarity: float, exclude_ids: Sequence[str] | None = None
    ) -> list[list[PhraseHit]]:
        phrases, counts = self.parts.phrases()
        candidates = self.parts.candidates("phrase", phrases.vectors)
        batch = self.parts.batch_candidates("phrase", phrases.vectors) if exclude_ids else None
        return queries.nearest_phrases(
            phrases, vectors, top_k, min_similarity, exclude_ids, counts, candidates, batch
        )

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]:
        wanted = list(dict.fromkeys(names))
        return self.parts.phrases_by_name(wanted) if wanted else {}

    def nearest_facts(self, vector: Vector, top_k: int) -> list[FactHit]:
        facts, phrases = self.parts.facts()
        if not len(facts.ids) or top_k <= 0:
            return []
        candidates = self.parts.candidates("fact", facts.vectors)
        return queries.nearest_facts(facts, phrases, np.asarray(vector, dtype=np.float32), top_k, candidates)

    def dense_passage_scores(self, vector: Vector, limit: int) -> Sequence[PassageScore]:
        ids, vectors = self.parts.dense()
        candidates = None
        if len(ids) and limit * 16 <= len(ids):
            candidates = self.parts.candidates("passage", vectors)
        return queries.dense_passage_scores(ids, vectors, vector, limit, candidates)

    # --- walks ----------------------------------------------------------------------------------
    def personalized_pagerank(self, seeds: dict[str, float], walk: WalkParams) -> dict[str, float]:
        graph, lock = self.parts.graph()
        scores = self.walker.phrase_scores(graph, lock, seeds, walk, None, None, self.version)
        found = np.flatnonzero(scores)
        return dict(zip(graph.phrases.ids.take(found), scores[found].tolist(), strict=True))

    def graph_passage_scores(
        self,
        seeds: dict[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> Sequence[PassageScore]:
        """HippoRAG's passage score: occurrences x phrase PPR (over the joined graph with ``join``)."""
        if limit <= 0:
            return []
        graph, lock = self.parts.graph()
        joined = self.parts.joined(graph, join, with_passages=False) if join is not None else None
        ppr = self.walker.phrase_scores(graph, lock, seeds, walk, joined, join, self.version)
        return graph.rank_by_mentions(ppr, limit, explain_phrases)

    def passage_node_scores(
        self,
        phrase_seeds: dict[str, float],
        passage_seeds: Mapping[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> Sequence[PassageScore]:
        """HippoRAG 2's walk over phrases and passage nodes: passages by their own PPR score."""
        if limit <= 0:
            return []
        graph, lock = self.parts.graph()
        reset = graph.passage_walk_reset(phrase_seeds, passage_seeds)
        if reset.sum() <= 0:
            return []
        joined = self.parts.joined(graph, join, with_passages=True) if join is not None else None
        ppr = self.walker.walk_scores(graph, lock, reset, walk, joined, join, self.version)
        return graph.rank_passage_nodes(ppr, limit, explain_phrases)

    # --- rows -----------------------------------------------------------------------------------
    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        return self.parts.get_passages(list(dict.fromkeys(ids))) if ids else {}

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]:
        return self.parts.passage_titles(ids)

    def passage_count(self) -> int:
        return self.parts.passage_count()
