"""``hipporag``: the paper's single-step multi-hop retrieval (section 2.3).

Query entities -> nearest phrase each -> reset probabilities = node specificity -> PPR -> passage score =
sum(PPR x occurrences). Dense scores only when no query entity links to the graph (noted).
"""

from __future__ import annotations

from hipporag_neo4j.models import RetrievalResult
from hipporag_neo4j.retrieval.retriever import WALK_ALONE, Mode, Query, Retriever


class HippoRAG(Mode):
    graph = True

    def retrieve(self, retriever: Retriever, q: Query) -> RetrievalResult:
        # the question's vector only if the walk reaches too few passages: encoded then
        return retriever.walk_and_mix(q, q.top_k, lambda run: WALK_ALONE, dense_likely=False)


MODE = HippoRAG()
