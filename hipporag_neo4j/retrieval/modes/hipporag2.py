"""``hipporag2``, the default: HippoRAG 2's retrieval.

The query's facts (query-to-triple matching, then the recognition filter) seed phrases; dense scores seed
passages; PPR runs over phrases and passages (:mod:`hipporag_neo4j.retrieval.hipporag2_walk`). With
``retrieval.entity_seeds`` the query's entities (or the graph phrases found in it) seed phrases too.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from hipporag_neo4j.models import (
    Explanation,
    LinkedPhrase,
    PhraseScore,
    RetrievalResult,
    RetrievedPassage,
)
from hipporag_neo4j.retrieval.hipporag2_walk import HippoRAG2Run, question_scores, retrieve_hipporag2
from hipporag_neo4j.retrieval.retriever import Mode, Query, Retriever
from hipporag_neo4j.stores.base import FactHit, PassageScore, Vector


class HippoRAG2(Mode):
    graph = True

    def retrieve(self, retriever: Retriever, q: Query) -> RetrievalResult:
        settings = retriever.settings
        entities: list[str] = []
        note = None
        if not q.text:  # seed nodes alone: no facts, no dense scores, the walk from their phrases
            run = retrieve_hipporag2(
                retriever.view, q.text, None, settings, q.top_k, 0, None, q.timings, q.node_links, q.join
            )
            return _result(retriever, q, run, [], [], note)
        from_phrases = settings.entity_seeds and settings.entity_seed_source == "query_phrases"
        ner = settings.entity_seeds and not from_phrases
        # Mixing with dense normalises over every passage, so it needs the whole pool of walk scores.
        limit = q.top_k if settings.combine_alpha is None else q.pool

        def scored(vector: Vector) -> tuple[list[FactHit], Sequence[PassageScore]]:
            return question_scores(retriever.view, vector, settings, limit, q.n_passages, q.timings)

        # the question is encoded, and its facts and dense scores found, on a worker thread while this
        # one finds, encodes and links the entities
        question, entities, entity_vectors, note = retriever.question_and_entities(
            q.text, q.timings, ner=ner, start=ner or from_phrases, then=scored
        )
        if from_phrases:
            linked = retriever.query_phrase_links(q.text, q.timings)
            entities = [item.query_entity for item in linked]
        else:
            linked = retriever.link(q.text, entities, entity_vectors, q.timings) if entities else []
        query_vector = question.get()
        use_filter = retriever.fact_filter if settings.recognition_filter else None
        run = retrieve_hipporag2(
            retriever.view,
            q.text,
            query_vector,
            settings,
            limit,
            q.n_passages,
            use_filter,
            q.timings,
            [*linked, *q.node_links],
            q.join,
            question.then_result(),
        )
        return _result(retriever, q, run, entities, linked, note)


def _result(
    retriever: Retriever,
    q: Query,
    run: HippoRAG2Run,
    entities: list[str],
    linked: list[LinkedPhrase],
    note: str | None,
) -> RetrievalResult:
    if note:
        run.notes.insert(0, note)
    ranked = run.scores.top(q.top_k)
    passages = retriever.view.get_passages([pid for pid, _ in ranked])
    ranked = [(pid, score) for pid, score in ranked if pid in passages]  # deleted since it was scored
    note = "; ".join(run.notes) or None
    graph_by_id = run.graph_scores.rows([pid for pid, _ in ranked])
    results = []
    for rank, (pid, score) in enumerate(ranked, start=1):
        walked = graph_by_id.get(pid)
        explanation = Explanation(
            query_entities=entities,
            linked=linked,
            top_phrases=[PhraseScore(phrase=n, score=c) for n, c in walked.top_phrases] if walked else [],
            graph_score=walked.score if walked else (None if run.used_dense_only else 0.0),
            dense_score=run.dense_scores.get(pid),
            facts=[f for f in run.facts if f.kept],
            seeds=run.seeds,
            passage_seeds=run.passage_seeds,
            note=note,
        )
        results.append(
            RetrievedPassage(rank=rank, passage=passages[pid], score=score, explanation=explanation)
        )
    q.timings["total"] = time.perf_counter() - q.started
    return RetrievalResult(
        query=q.text,
        mode="hipporag2",
        passages=results,
        query_entities=entities,
        linked=linked,
        used_dense_fallback=run.used_dense_only,
        facts=run.facts,
        seeds=run.seeds,
        note=note,
        timings=q.timings,
    )


MODE = HippoRAG2()
