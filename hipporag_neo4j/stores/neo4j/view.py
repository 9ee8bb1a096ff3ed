"""One query's reads on the Neo4j store, all at one graph version (:class:`GraphView`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import FactHit, GraphJoin, Matrix, PassageScore, PhraseHit, Vector, WalkParams
from hipporag_neo4j.stores.memory.view import MemoryView
from hipporag_neo4j.stores.neo4j.client_copy import ClientCopy, CopyParts, Reading
from hipporag_neo4j.stores.neo4j.engines import PprEngine


class ServerSearch(Protocol):
    """What the view asks of the Neo4j store (``Neo4jStore``): its settings, its copy, its PPR engine, and
    the searches its vector indexes answer (``neo4j.vector_search = index``)."""

    settings: Neo4jSettings

    @property
    def copy(self) -> ClientCopy: ...

    def ppr_engine(self) -> PprEngine: ...

    def nearest_phrases(
        self, vectors: Matrix, top_k: int, min_similarity: float, exclude_ids: Sequence[str] | None = None
    ) -> list[list[PhraseHit]]: ...

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]: ...

    def index_nearest_facts(self, vector: Vector, top_k: int) -> list[FactHit]: ...

    def index_dense_passage_scores(self, vector: Vector, limit: int) -> list[PassageScore]: ...

    def passage_count(self) -> int: ...


class Neo4jView(MemoryView):
    """The reads of one query: the version and model are read once, on the view's first read (one round
    trip), and every read goes through that :class:`~.client_copy.Reading` of the in-process copy (the
    in-process engine's answers, :class:`MemoryView`); the PPR engine's walks too (a GDS projection of
    that version or a newer one). With ``neo4j.vector_search = index`` the vector searches are the
    server's (its vector indexes at the server's current state)."""

    def __init__(self, store: ServerSearch, reading: Reading) -> None:
        super().__init__(CopyParts(store.copy, reading))
        self.store = store
        self.reading = reading

    def _index(self) -> bool:
        return self.store.settings.vector_search != "client"

    def nearest_phrases(
        self, vectors: Matrix, top_k: int, min_similarity: float, exclude_ids: Sequence[str] | None = None
    ) -> list[list[PhraseHit]]:
        if self._index():
            return self.store.nearest_phrases(vectors, top_k, min_similarity, exclude_ids)
        return super().nearest_phrases(vectors, top_k, min_similarity, exclude_ids)

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]:
        return self.store.phrases_by_name(names) if self._index() else super().phrases_by_name(names)

    def nearest_facts(self, vector: Vector, top_k: int) -> list[FactHit]:
        if self._index():
            return self.store.index_nearest_facts(vector, top_k)
        return super().nearest_facts(vector, top_k)

    def dense_passage_scores(self, vector: Vector, limit: int) -> Sequence[PassageScore]:
        if self._index():
            return self.store.index_dense_passage_scores(vector, limit)
        return super().dense_passage_scores(vector, limit)

    def passage_count(self) -> int:
        return self.store.passage_count() if self._index() else super().passage_count()

    def personalized_pagerank(self, seeds: dict[str, float], walk: WalkParams) -> dict[str, float]:
        return self.store.ppr_engine().run(seeds, walk, self.reading)

    def graph_passage_scores(
        self,
        seeds: dict[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> list[PassageScore]:
        return self.store.ppr_engine().passage_scores(seeds, walk, limit, explain_phrases, join, self.reading)

    def passage_node_scores(
        self,
        phrase_seeds: dict[str, float],
        passage_seeds: Mapping[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> list[PassageScore]:
        engine = self.store.ppr_engine()
        return engine.passage_node_scores(
            phrase_seeds, passage_seeds, walk, limit, explain_phrases, join, self.reading
        )
