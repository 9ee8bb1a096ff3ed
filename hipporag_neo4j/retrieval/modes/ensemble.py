"""``ensemble``: the uncertainty-based ensemble of the paper's appendix F.2.

When a query entity links to its phrase with cosine below ``retrieval.ensemble_threshold``, the
min-max-normalised walk and dense scores are averaged; otherwise the walk alone ranks.
"""

from __future__ import annotations

from hipporag_neo4j.models import RetrievalResult
from hipporag_neo4j.retrieval.retriever import GraphRun, Mode, Query, Retriever


class Ensemble(Mode):
    def retrieve(self, retriever: Retriever, q: Query) -> RetrievalResult:
        threshold = retriever.settings.ensemble_threshold

        def weight(run: GraphRun) -> float | None:
            return 0.5 if any(item.similarity < threshold for item in run.linked) else None

        return retriever.walk_and_mix(q, q.pool, weight)


MODE = Ensemble()
