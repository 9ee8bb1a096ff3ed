"""``ensemble``: the uncertainty-based ensemble of the paper's appendix F.2.

When a query entity links to its phrase with cosine below ``retrieval.ensemble_threshold``, the
min-max-normalised walk and dense scores are averaged; otherwise the walk alone ranks. The result's note
says which.
"""

from __future__ import annotations

from hipporag_neo4j.models import RetrievalResult
from hipporag_neo4j.retrieval.retriever import GraphRun, Mix, Mode, Query, Retriever

#: the walk's weight when a link is uncertain (the average of the two)
GRAPH_WEIGHT = 0.5


class Ensemble(Mode):
    def retrieve(self, retriever: Retriever, q: Query) -> RetrievalResult:
        threshold = retriever.settings.ensemble_threshold

        def how(run: GraphRun) -> Mix:
            if any(item.similarity < threshold for item in run.linked):
                return Mix(
                    GRAPH_WEIGHT,
                    f"a query entity links below cosine {threshold}: walk and dense scores mixed, "
                    f"{GRAPH_WEIGHT:g} on the walk",
                )
            if run.linked:
                return Mix(
                    None,
                    f"every query entity links at cosine {threshold} or more: the walk alone ranks (as "
                    "hipporag does)",
                )
            return Mix(None)

        return retriever.walk_and_mix(q, q.pool, how)


MODE = Ensemble()
