"""Retrieval modes over any GraphStore.

* ``hipporag``: the paper's single-step multi-hop retrieval (section 2.3): query entities -> nearest phrase
  each -> reset probabilities = node specificity -> PPR -> passage score = sum(PPR x occurrences).
* ``hipporag2``: HippoRAG 2 (facts -> recognition memory -> phrase and passage seeds -> PPR over phrases
  and passages), in :mod:`.hipporag2`; the default.
* ``dense``: cosine of query and passage embeddings.
* ``ensemble``: the uncertainty-based ensemble of appendix F.2: when a query entity links to its phrase with
  cosine below ``ensemble_threshold``, the min-max-normalised graph and dense scores are averaged.
* ``hybrid``: always mix the two, ``hybrid_weight`` on the graph.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from hipporag_neo4j.embedding import Embedder
from hipporag_neo4j.errors import HippoRAGError, InputError
from hipporag_neo4j.extraction.base import QueryEntityExtractor
from hipporag_neo4j.models import (
    Explanation,
    LinkedPhrase,
    PhraseScore,
    RetrievalMode,
    RetrievalResult,
    RetrievedPassage,
)
from hipporag_neo4j.retrieval.fusion import min_max, mix
from hipporag_neo4j.retrieval.hipporag2 import FactFilter, HippoRAG2Run, retrieve_hipporag2
from hipporag_neo4j.retrieval.query_phrases import phrases_in_query
from hipporag_neo4j.settings import RetrievalSettings
from hipporag_neo4j.stores.base import GraphJoin, GraphStore, Matrix, PassageScore, PhraseHit, Vector
from hipporag_neo4j.text import normalize_phrase

log = logging.getLogger(__name__)

_blas_lock = threading.Lock()
_blas_controller: Any = None


@contextmanager
def blas_threads(threads: int | None) -> Iterator[None]:
    """numpy's BLAS limited to ``threads`` for the block (process-wide, as BLAS pools are); None: as is."""
    global _blas_controller
    if threads is None:
        yield
        return
    with _blas_lock:
        if _blas_controller is None:
            import scipy.linalg  # noqa: F401  (loads scipy's own BLAS, which the walk uses, first)
            from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

            _blas_controller = ThreadpoolController()  # inspects the loaded libraries once
    with _blas_controller.limit(limits=threads, user_api="blas"):
        yield


def check_graph_mode(mode: RetrievalMode) -> None:
    """Seed nodes, the joined graph and empty queries are for the PPR modes only."""
    if mode not in ("hipporag", "hipporag2"):
        raise InputError(f"seed nodes, the joined graph and empty queries need a graph mode, not {mode}")


@dataclass
class _GraphRun:
    entities: list[str]
    linked: list[LinkedPhrase]
    scores: list[PassageScore]
    note: str | None


class Retriever:
    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        settings: RetrievalSettings,
        query_ner: QueryEntityExtractor | None,
        fallback_ner: QueryEntityExtractor | None = None,
        match_graph_phrases: bool | Literal["names"] = False,
        candidate_pool: int = 5000,
        fact_filter: FactFilter | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.query_ner = query_ner
        self.fallback_ner = fallback_ner
        self.match_graph_phrases = match_graph_phrases
        self.candidate_pool = candidate_pool
        self.fact_filter = fact_filter

    # --- query entities and linking ----------------------------------------------------------
    def query_entities(self, query: str) -> tuple[list[str], str | None]:
        note = None
        entities: list[str] = []
        if self.query_ner is not None:
            try:
                entities = self.query_ner.query_entities(query)
            except HippoRAGError as exc:
                if self.fallback_ner is None:
                    raise
                note = f"query NER with {self.query_ner.name} failed ({exc}); used {self.fallback_ner.name}"
                log.warning(note)
                entities = self.fallback_ner.query_entities(query)
        return entities, note

    def link(
        self, query: str, names: list[str], vectors: Matrix, timings: dict[str, float]
    ) -> list[LinkedPhrase]:
        """Each query entity to its nearest phrase(s), then graph phrases found verbatim in the query."""
        t = time.perf_counter()
        linked: list[LinkedPhrase] = []
        if names:
            hits = self.store.nearest_phrases(vectors, self.settings.link_top_k, min_similarity=-1.0)
            for entity, row in zip(names, hits, strict=True):
                linked.extend(
                    LinkedPhrase(
                        query_entity=entity,
                        phrase_id=hit.id,
                        phrase=hit.name,
                        similarity=hit.similarity,
                        weight=self._weight(hit.passage_count),
                    )
                    for hit in row
                )
        if self.match_graph_phrases:
            linked_ids = {item.phrase_id for item in linked}
            seen_entities = {normalize_phrase(n) for n in names}
            linked.extend(
                self._verbatim_link(hit)
                for hit in phrases_in_query(self.store, query, names_only=self.match_graph_phrases == "names")
                if hit.id not in linked_ids and hit.name not in seen_entities
            )
        timings["link"] = time.perf_counter() - t
        return linked

    def _verbatim_link(self, hit: PhraseHit) -> LinkedPhrase:
        """A graph phrase found verbatim in the query, as the link of itself (similarity 1)."""
        return LinkedPhrase(
            query_entity=hit.name,
            phrase_id=hit.id,
            phrase=hit.name,
            similarity=1.0,
            weight=self._weight(hit.passage_count),
        )

    def _query_phrase_links(self, query: str, timings: dict[str, float]) -> list[LinkedPhrase]:
        """The graph phrases found verbatim in the query, as links (no NER, no encoding)."""
        t = time.perf_counter()
        linked = [self._verbatim_link(hit) for hit in phrases_in_query(self.store, query)]
        timings["link"] = time.perf_counter() - t
        return linked

    def _weight(self, passage_count: int) -> float:
        if self.settings.use_specificity and passage_count > 0:
            return 1.0 / passage_count
        return 1.0

    # --- modes ---------------------------------------------------------------------------------
    def _graph(
        self,
        query: str,
        entities: list[str],
        vectors: Matrix,
        note: str | None,
        limit: int,
        timings: dict[str, float],
        join: GraphJoin | None = None,
        node_links: Sequence[LinkedPhrase] = (),
    ) -> _GraphRun:
        linked = self.link(query, entities, vectors, timings)
        seeds: dict[str, float] = {}
        for item in [*linked, *node_links]:
            seeds[item.phrase_id] = seeds.get(item.phrase_id, 0.0) + item.weight
        t = time.perf_counter()
        s = self.settings
        scores = (
            self.store.graph_passage_scores(
                seeds, s.damping, s.ppr_max_iterations, s.ppr_tolerance, limit, s.explain_phrases, join
            )
            if seeds
            else []
        )
        timings["ppr_and_aggregation"] = time.perf_counter() - t
        if not seeds:
            note = (note + "; " if note else "") + "no query entity linked to the graph"
        return _GraphRun(entities, linked, scores, note)

    def _encode(self, query: str, entities: list[str], timings: dict[str, float]) -> tuple[Vector, Matrix]:
        """The query and its entities in one forward pass (one batch is cheaper than two calls)."""
        t = time.perf_counter()
        vectors = self.embedder.encode([query, *entities])
        timings["encode"] = time.perf_counter() - t
        return vectors[0], vectors[1:]

    def _dense(self, vector: Vector, limit: int, timings: dict[str, float]) -> list[PassageScore]:
        t = time.perf_counter()
        scores = self.store.dense_passage_scores(vector, limit)
        timings["dense_search"] = time.perf_counter() - t
        return scores

    def retrieve(
        self,
        query: str,
        mode: RetrievalMode | None = None,
        top_k: int | None = None,
        *,
        join: GraphJoin | None = None,
        node_links: Sequence[LinkedPhrase] = (),
    ) -> RetrievalResult:
        """Passages for ``query``; ``node_links`` (phrases linked to seed nodes) are seeded with the query's
        entities, and ``join`` runs PPR over the joined graph (graph modes only). An empty query is
        answered from ``node_links`` alone (hipporag and hipporag2)."""
        with blas_threads(self.settings.query_blas_threads):
            return self._retrieve_any(query, mode, top_k, join, node_links)

    def _retrieve_any(
        self,
        query: str,
        mode: RetrievalMode | None,
        top_k: int | None,
        join: GraphJoin | None,
        node_links: Sequence[LinkedPhrase],
    ) -> RetrievalResult:
        mode = mode or self.settings.mode
        top_k = top_k or self.settings.top_k
        if join is not None or node_links or not query:
            check_graph_mode(mode)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        n_passages = self.store.passage_count()
        pool = min(self.candidate_pool, max(n_passages, top_k))
        if mode == "hipporag2":
            result = self._retrieve_hipporag2(
                query, top_k, pool, n_passages, timings, started, join, list(node_links)
            )
        else:
            result = self._retrieve(query, mode, top_k, pool, n_passages, timings, started, join, node_links)
        if join is not None or node_links:
            result.seed_links = list(node_links)
            result.joined = None if join is None else list(join.rel_types)
        return result

    def _retrieve(
        self,
        query: str,
        mode: RetrievalMode,
        top_k: int,
        pool: int,
        n_passages: int,
        timings: dict[str, float],
        started: float,
        join: GraphJoin | None,
        node_links: Sequence[LinkedPhrase],
    ) -> RetrievalResult:
        graph_run: _GraphRun | None = None
        dense_scores: list[PassageScore] = []
        combined: dict[str, float]
        entities: list[str] = []
        note = None
        if mode != "dense" and query:
            t = time.perf_counter()
            found, note = self.query_entities(query)
            entities = [e for e in dict.fromkeys(found) if normalize_phrase(e)]
            timings["query_ner"] = time.perf_counter() - t
        if query:
            query_vector, entity_vectors = self._encode(query, entities, timings)
        else:  # seed nodes alone (hipporag): nothing to encode, no dense fallback
            entity_vectors = np.zeros((0, self.embedder.dimension), dtype=np.float32)
        if mode == "dense":
            dense_scores = self._dense(query_vector, top_k, timings)
            combined = {p.passage_id: p.score for p in dense_scores}
            used_dense = True
        else:
            # Mixed modes normalise over every passage, so they need the whole pool of graph scores.
            limit = top_k if mode == "hipporag" else pool
            graph_run = self._graph(query, entities, entity_vectors, note, limit, timings, join, node_links)
            graph_raw = {p.passage_id: p.score for p in graph_run.scores}
            uncertain = any(item.similarity < self.settings.ensemble_threshold for item in graph_run.linked)
            no_graph = not graph_raw and bool(query)
            # With no linked entity PPR has nothing to start from: every mode falls back to dense (noted).
            used_dense = mode == "hybrid" or no_graph or (mode == "ensemble" and uncertain)
            if used_dense:
                dense_scores = self._dense(query_vector, top_k if no_graph else pool, timings)
                dense_raw = {p.passage_id: p.score for p in dense_scores}
                if no_graph:
                    combined = dense_raw
                else:
                    weight = self.settings.hybrid_weight if mode == "hybrid" else 0.5
                    # dense scores of passages outside the pool are below its minimum
                    dense_floor = None if len(dense_raw) >= n_passages else min(dense_raw.values())
                    combined = mix(min_max(graph_raw, floor=0.0), min_max(dense_raw, dense_floor), weight)
            else:
                combined = graph_raw

        ranked = sorted(combined.items(), key=lambda kv: (-kv[1], kv[0]))[:top_k]
        passages = self.store.get_passages([pid for pid, _ in ranked])
        ranked = [(pid, score) for pid, score in ranked if pid in passages]  # deleted since it was scored
        graph_by_id = {p.passage_id: p for p in graph_run.scores} if graph_run else {}
        dense_by_id = {p.passage_id: p.score for p in dense_scores}
        results = []
        for rank, (pid, score) in enumerate(ranked, start=1):
            graph_score = graph_by_id.get(pid)
            explanation = Explanation(
                query_entities=graph_run.entities if graph_run else [],
                linked=graph_run.linked if graph_run else [],
                top_phrases=[PhraseScore(phrase=n, score=c) for n, c in graph_score.top_phrases]
                if graph_score
                else [],
                graph_score=graph_score.score if graph_score else (0.0 if graph_run else None),
                dense_score=dense_by_id.get(pid),
                note=graph_run.note if graph_run else None,
            )
            results.append(
                RetrievedPassage(rank=rank, passage=passages[pid], score=score, explanation=explanation)
            )
        timings["total"] = time.perf_counter() - started
        return RetrievalResult(
            query=query,
            mode=mode,
            passages=results,
            query_entities=graph_run.entities if graph_run else [],
            linked=graph_run.linked if graph_run else [],
            used_dense_fallback=used_dense,
            timings=timings,
        )

    def _retrieve_hipporag2(
        self,
        query: str,
        top_k: int,
        pool: int,
        n_passages: int,
        timings: dict[str, float],
        started: float,
        join: GraphJoin | None,
        node_links: list[LinkedPhrase],
    ) -> RetrievalResult:
        entities: list[str] = []
        note = None
        if not query:  # seed nodes alone: no facts, no dense scores, the walk from their phrases
            run = retrieve_hipporag2(
                self.store, query, None, self.settings, top_k, 0, None, timings, node_links, join
            )
            return self._hipporag2_result(query, top_k, run, [], [], note, timings, started)
        from_phrases = self.settings.entity_seeds and self.settings.entity_seed_source == "query_phrases"
        if self.settings.entity_seeds and not from_phrases:
            t = time.perf_counter()
            found, note = self.query_entities(query)
            entities = [e for e in dict.fromkeys(found) if normalize_phrase(e)]
            timings["query_ner"] = time.perf_counter() - t
        query_vector, entity_vectors = self._encode(query, entities, timings)
        if from_phrases:
            linked = self._query_phrase_links(query, timings)
            entities = [item.query_entity for item in linked]
        else:
            linked = self.link(query, entities, entity_vectors, timings) if entities else []
        use_filter = self.fact_filter if self.settings.recognition_filter else None
        # Mixing with dense normalises over every passage, so it needs the whole pool of walk scores.
        limit = top_k if self.settings.combine_alpha is None else pool
        run = retrieve_hipporag2(
            self.store,
            query,
            query_vector,
            self.settings,
            limit,
            n_passages,
            use_filter,
            timings,
            [*linked, *node_links],
            join,
        )
        return self._hipporag2_result(query, top_k, run, entities, linked, note, timings, started)

    def _hipporag2_result(
        self,
        query: str,
        top_k: int,
        run: HippoRAG2Run,
        entities: list[str],
        linked: list[LinkedPhrase],
        note: str | None,
        timings: dict[str, float],
        started: float,
    ) -> RetrievalResult:
        if note:
            run.notes.insert(0, note)
        ranked = sorted(run.scores.items(), key=lambda kv: (-kv[1], kv[0]))[:top_k]
        passages = self.store.get_passages([pid for pid, _ in ranked])
        ranked = [(pid, score) for pid, score in ranked if pid in passages]  # deleted since it was scored
        note = "; ".join(run.notes) or None
        results = []
        for rank, (pid, score) in enumerate(ranked, start=1):
            walked = run.graph_scores.get(pid)
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
        timings["total"] = time.perf_counter() - started
        return RetrievalResult(
            query=query,
            mode="hipporag2",
            passages=results,
            query_entities=entities,
            linked=linked,
            used_dense_fallback=run.used_dense_only,
            facts=run.facts,
            seeds=run.seeds,
            note=note,
            timings=timings,
        )
