"""``hybrid``: the walk and dense scores always mixed, ``retrieval.hybrid_weight`` on the walk."""

from __future__ import annotations

from hipporag_neo4j.models import RetrievalResult
from hipporag_neo4j.retrieval.retriever import Mix, Mode, Query, Retriever


class Hybrid(Mode):
    def retrieve(self, retriever: Retriever, q: Query) -> RetrievalResult:
        mixing = Mix(retriever.settings.hybrid_weight)
        return retriever.walk_and_mix(q, q.pool, lambda run: mixing)


MODE = Hybrid()
