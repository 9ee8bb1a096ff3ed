"""``dense``: the cosine of the query's and the passages' embeddings; no entities, no graph."""

from __future__ import annotations

from hipporag_neo4j.models import RetrievalResult
from hipporag_neo4j.retrieval.retriever import Mode, Query, Retriever


class Dense(Mode):
    def retrieve(self, retriever: Retriever, q: Query) -> RetrievalResult:
        vector, _ = retriever.encode(q.text, [], q.timings)
        scores = retriever.dense(vector, q.top_k, q.timings)
        return retriever.ranked(q, scores, None, scores, used_dense=True)


MODE = Dense()
