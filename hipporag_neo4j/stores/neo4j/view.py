"""One query's reads on the Neo4j store, all at one graph version (:class:`GraphView`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import FactHit, GraphJoin, Matrix, PassageScore, PhraseHit, Vector, WalkParams
from hipporag_neo4j.stores.neo4j.client_copy import ClientCopy, Reading
from hipporag_neo4j.stores.neo4j.ppr_engines import PprEngine


class ServerSource(Protocol):
    """What a view asks of the Neo4j store (``Neo4jStore``): its settings, its in-process copy, its PPR
    engine and the reads it answers from the server."""

    settings: Neo4jSettings

    @property
    def copy(self) -> ClientCopy: ...

    def ppr_engine(self) -> PprEngine: ...

    def nearest_phrases(
        self, vectors: Matrix, top_k: int, min_similarity: float, exclude_ids: Sequence[str] | None = None
    ) -> list[list[PhraseHit]]: ...

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]: ...

    def nearest_facts(self, vector: Vector, top_k: int) -> list[FactHit]: ...

    def dense_passage_scores(self, vector: Vector, limit: int) -> Sequence[PassageScore]: ...

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]: ...

    def passage_count(self) -> int: ...


class Neo4jView:
    """The reads of one query: the version and model are read once, when the view is made (one round
    trip), and every read goes through that :class:`~.client_copy.Reading` of the in-process copy, the
    PPR engines' projections included; the passage rows the query returns come from those held for its
    version (read once, kept for the next queries at that version). With ``neo4j.vector_search =
    index`` the vector searches are the server's (its vector indexes at the server's current state)."""

    def __init__(self, store: ServerSource, reading: Reading) -> None:
        self.store = store
        self.reading = reading

    @property
    def version(self) -> int:
        return self.reading.state.version

    def _client(self) -> bool:
        return self.store.settings.vector_search == "client"

    def nearest_phrases(
        self, vectors: Matrix, top_k: int, min_similarity: float, exclude_ids: Sequence[str] | None = None
    ) -> list[list[PhraseHit]]:
        if self._client():
            return self.store.copy.nearest_phrases(vectors, top_k, min_similarity, exclude_ids, self.reading)
        return self.store.nearest_phrases(vectors, top_k, min_similarity, exclude_ids)

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]:
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return {}
        if self._client():
            return self.store.copy.phrases_by_name(wanted, self.reading)
        return self.store.phrases_by_name(wanted)

    def nearest_facts(self, vector: Vector, top_k: int) -> list[FactHit]:
        if self._client():
            return self.store.copy.nearest_facts(vector, top_k, self.reading)
        return self.store.nearest_facts(vector, top_k)

    def dense_passage_scores(self, vector: Vector, limit: int) -> Sequence[PassageScore]:
        if self._client():
            return self.store.copy.dense_passage_scores(vector, limit, self.reading)
        return self.store.dense_passage_scores(vector, limit)

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

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        """The rows held for this query's version and one read of the others (kept for the next queries
        at that version)."""
        if not ids:
            return {}
        wanted = list(dict.fromkeys(ids))
        held = self.reading.rows()
        if held is None:
            return self.store.get_passages(wanted)
        found = held.get(wanted)
        missing = [i for i in wanted if i not in found]
        if missing:
            read = self.store.get_passages(missing)
            held.add(read)
            found.update(read)
        return {i: found[i] for i in wanted if i in found}

    def passage_count(self) -> int:
        if self._client():
            return self.store.copy.passage_count(self.reading)
        return self.store.passage_count()
