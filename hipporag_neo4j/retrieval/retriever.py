"""The retriever: the steps every retrieval mode shares, over any GraphStore.

Query entities (NER), one encoding pass for the query and its entities, linking entities to phrases, the
walk from linked phrases (PPR), dense scores, and the ranked result. Each mode is a module of
:mod:`hipporag_neo4j.retrieval.modes` that puts these steps together; :meth:`Retriever.retrieve` picks it
by name from the registry (:data:`hipporag_neo4j.models.RETRIEVAL_MODES`).
"""

from __future__ import annotations

import copy
import importlib
import logging
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, Literal

import numpy as np

from hipporag_neo4j.common.text import normalize_phrase
from hipporag_neo4j.embedding.encoder import Embedder
from hipporag_neo4j.errors import HippoRAGError, InputError
from hipporag_neo4j.extraction.base import QueryEntityExtractor
from hipporag_neo4j.models import (
    RETRIEVAL_MODES,
    Explanation,
    LinkedPhrase,
    PhraseScore,
    RetrievalMode,
    RetrievalResult,
    RetrievedPassage,
)
from hipporag_neo4j.retrieval.fusion import NO_SCORES, ScoreMap, floor_below, min_max, mix
from hipporag_neo4j.retrieval.hipporag2_walk import FactFilter
from hipporag_neo4j.retrieval.query_phrases import phrases_in_query
from hipporag_neo4j.settings import RetrievalSettings
from hipporag_neo4j.stores.base import (
    GraphJoin,
    GraphStore,
    GraphView,
    Matrix,
    PhraseHit,
    Vector,
    WalkParams,
)

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


_pool_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None


def _encode_pool() -> ThreadPoolExecutor:
    """The threads that encode a question while the query's other steps run (per process: a pool
    inherited through fork has no threads, so a child makes its own)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(max_workers=2, thread_name_prefix="hipporag-encode"))
        return _pool[1]


class QuestionVector:
    """The question's embedding, encoded on a worker thread from the moment it is asked for (``start``)
    while the caller runs the query NER and encodes the entities (ONNX Runtime and torch release the GIL
    while they compute), or on first use (:meth:`get`) when nothing was started: a mode that needs the
    vector only for a fallback never pays for it otherwise. ``then(vector)``, if given, runs right after
    on the same thread (what needs only the question's vector: fact search, dense scores); its result
    is :meth:`then_result`. ``timings["encode"]`` gets the encode time and ``timings["overlap"]`` the
    part of the worker's time the caller did not wait for."""

    def __init__(
        self,
        embedder: Embedder,
        query: str,
        timings: dict[str, float],
        start: bool,
        then: Callable[[Vector], Any] | None = None,
    ) -> None:
        self.embedder = embedder
        self.query = query
        self.timings = timings
        self._then = then
        self._seconds = 0.0
        self._busy = 0.0
        self._future: Future[tuple[Vector, Any]] | None = None
        if start:
            self._future = _encode_pool().submit(self._work)
        self._value: tuple[Vector, Any] | None = None

    def _work(self) -> tuple[Vector, Any]:
        t = time.perf_counter()
        vector: Vector = self.embedder.encode([self.query])[0]
        self._seconds = time.perf_counter() - t
        extra = self._then(vector) if self._then is not None else None
        self._busy = time.perf_counter() - t
        return vector, extra

    def _result(self) -> tuple[Vector, Any]:
        if self._value is None:
            t = time.perf_counter()
            self._value = self._future.result() if self._future is not None else self._work()
            waited = time.perf_counter() - t
            self.timings["encode"] = self.timings.get("encode", 0.0) + self._seconds
            if self._future is not None:
                self.timings["overlap"] = max(self._busy - waited, 0.0)
        return self._value

    def get(self) -> Vector:
        return self._result()[0]

    def then_result(self) -> Any:
        return self._result()[1]


@dataclass
class Query:
    """One query as a mode sees it: the text, how many passages, and where timings go."""

    text: str
    mode: RetrievalMode
    top_k: int
    pool: int  # how many scores a mode that normalises over every passage asks for
    n_passages: int
    timings: dict[str, float]
    started: float
    join: GraphJoin | None
    node_links: list[LinkedPhrase]


class Mode(ABC):
    """A retrieval mode: one module of :mod:`hipporag_neo4j.retrieval.modes` named as in
    :data:`~hipporag_neo4j.models.RETRIEVAL_MODES`, whose ``MODE`` is an instance of this class."""

    #: answers seed nodes, a joined graph and empty queries (it walks from seeds)
    graph: ClassVar[bool] = False

    @abstractmethod
    def retrieve(self, retriever: Retriever, q: Query) -> RetrievalResult:
        """The ranked passages for ``q``, put together from the retriever's shared steps."""


@cache
def get_mode(name: str) -> Mode:
    """The registered mode ``name`` (its module ``hipporag_neo4j.retrieval.modes.<name>``)."""
    if name not in RETRIEVAL_MODES:
        raise InputError(f"unknown retrieval mode {name!r}: use one of {', '.join(RETRIEVAL_MODES)}")
    mode = importlib.import_module(f"hipporag_neo4j.retrieval.modes.{name}").MODE
    if not isinstance(mode, Mode):
        raise TypeError(f"hipporag_neo4j.retrieval.modes.{name}.MODE is not a Mode")
    return mode


def check_graph_mode(mode: RetrievalMode) -> None:
    """Seed nodes, the joined graph and empty queries are for the modes that walk from seeds only."""
    if not get_mode(mode).graph:
        graph = ", ".join(name for name in RETRIEVAL_MODES if get_mode(name).graph)
        raise InputError(
            f"seed nodes, the joined graph and empty queries need a graph mode ({graph}), not {mode}"
        )


@dataclass
class GraphRun:
    """What the walk from the query's linked phrases gave: the entities, their links, passage scores."""

    entities: list[str]
    linked: list[LinkedPhrase]
    scores: ScoreMap
    note: str | None


@dataclass(frozen=True)
class Mix:
    """How a mode ranks the walk of a query (:meth:`Retriever.walk_and_mix`): mixed with dense scores with
    ``graph_weight`` on the walk, or the walk alone (None); ``note`` says why, if the mode says."""

    graph_weight: float | None
    note: str | None = None


WALK_ALONE = Mix(None)
#: a phrase mentioned by this many passages or fewer is a seed whatever its share of a small store
GENERIC_SEED_MIN_PASSAGES = 20


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
        self._graph: GraphView | None = None
        self.embedder = embedder
        self.settings = settings
        self.query_ner = query_ner
        self.fallback_ner = fallback_ner
        self.match_graph_phrases = match_graph_phrases
        self.candidate_pool = candidate_pool
        self.fact_filter = fact_filter

    @property
    def view(self) -> GraphView:
        """The view of the query under way (:meth:`at`): every read of a query goes through it."""
        if self._graph is None:
            raise RuntimeError("the retriever reads the graph only inside retrieve()")
        return self._graph

    def at(self, view: GraphView) -> Retriever:
        """This retriever with its reads going to ``view``, one graph version (a copy: concurrent
        queries each have their own)."""
        bound = copy.copy(self)
        bound._graph = view
        return bound

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
        self,
        query: str,
        names: list[str],
        vectors: Matrix,
        timings: dict[str, float],
        generic_above: int | None = None,
    ) -> list[LinkedPhrase]:
        """Each query entity to its nearest phrase(s), then graph phrases found verbatim in the query.
        ``generic_above``: a nearest phrase mentioned by more passages than this is not linked."""
        t = time.perf_counter()
        linked: list[LinkedPhrase] = []
        if names:
            hits = self.view.nearest_phrases(vectors, self.settings.link_top_k, min_similarity=-1.0)
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
                    if generic_above is None or hit.passage_count <= generic_above
                )
        if self.match_graph_phrases:
            linked_ids = {item.phrase_id for item in linked}
            seen_entities = {normalize_phrase(n) for n in names}
            linked.extend(
                self._verbatim_link(hit)
                for hit in phrases_in_query(self.view, query, names_only=self.match_graph_phrases == "names")
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

    def query_phrase_links(self, query: str, timings: dict[str, float]) -> list[LinkedPhrase]:
        """The graph phrases found verbatim in the query, as links (no NER, no encoding)."""
        t = time.perf_counter()
        linked = [self._verbatim_link(hit) for hit in phrases_in_query(self.view, query)]
        timings["link"] = time.perf_counter() - t
        return linked

    def generic_above(self, n_passages: int | None) -> int | None:
        """The passage count above which a linked phrase is no seed of the walk (None: no limit)."""
        share = self.settings.seed_max_passage_share
        if n_passages is None or share is None:
            return None
        return max(GENERIC_SEED_MIN_PASSAGES, int(share * n_passages))

    def _weight(self, passage_count: int) -> float:
        if self.settings.use_specificity and passage_count > 0:
            return 1.0 / passage_count
        return 1.0

    # --- the steps the modes share -----------------------------------------------------------
    def entities(self, query: str, timings: dict[str, float]) -> tuple[list[str], str | None]:
        """The query's entities (NER), distinct and non-empty once normalised, and a note on fallbacks."""
        t = time.perf_counter()
        found, note = self.query_entities(query)
        entities = [e for e in dict.fromkeys(found) if normalize_phrase(e)]
        timings["query_ner"] = time.perf_counter() - t
        return entities, note

    def graph(
        self,
        query: str,
        entities: list[str],
        vectors: Matrix,
        note: str | None,
        limit: int,
        timings: dict[str, float],
        join: GraphJoin | None = None,
        node_links: Sequence[LinkedPhrase] = (),
        n_passages: int | None = None,
    ) -> GraphRun:
        """Link ``entities``, seed their phrases (weights summed) and walk: the best ``limit`` passages.
        With ``n_passages`` (the store's), a phrase mentioned by more than ``seed_max_passage_share`` of
        them (and more than :data:`GENERIC_SEED_MIN_PASSAGES`) is no seed: it says nothing about which
        passage is meant (a ticket archive's product name, a field value), and the walk from it alone
        spreads over that share of the store."""
        linked = self.link(query, entities, vectors, timings, self.generic_above(n_passages))
        seeds: dict[str, float] = {}
        for item in [*linked, *node_links]:
            seeds[item.phrase_id] = seeds.get(item.phrase_id, 0.0) + item.weight
        t = time.perf_counter()
        s = self.settings
        scores = ScoreMap.of(
            self.view.graph_passage_scores(seeds, WalkParams.of(s), limit, s.explain_phrases, join)
            if seeds
            else []
        )
        timings["ppr_and_aggregation"] = time.perf_counter() - t
        if not seeds:
            note = (note + "; " if note else "") + "no query entity linked to the graph"
        return GraphRun(entities, linked, scores, note)

    def encode(self, query: str, entities: list[str], timings: dict[str, float]) -> tuple[Vector, Matrix]:
        """The query, then its entities in one batch of their own: a batch is padded to its longest text,
        so the few words of each entity padded to the question's length cost about as much as the
        question itself (on MuSiQue the query and two entities in one batch took 2.4x the question
        alone; apart, the entities' batch is a fraction of it)."""
        t = time.perf_counter()
        vector = self.embedder.encode([query])[0]
        vectors = self.embedder.encode(entities) if entities else np.zeros((0, len(vector)), dtype=np.float32)
        timings["encode"] = time.perf_counter() - t
        return vector, vectors

    def question_and_entities(
        self,
        query: str,
        timings: dict[str, float],
        *,
        ner: bool = True,
        start: bool = True,
        then: Callable[[Vector], Any] | None = None,
    ) -> tuple[QuestionVector, list[str], Matrix, str | None]:
        """The question's vector (:class:`QuestionVector`: encoded on a worker thread from now with
        ``start``, else on first use, followed there by ``then``), and meanwhile, on this thread, the
        query's entities (with ``ner``) and their vectors, in a batch of their own (see :meth:`encode`).
        Same vectors as :meth:`encode`."""
        question = QuestionVector(self.embedder, query, timings, start, then)
        entities: list[str] = []
        note = None
        if ner:
            entities, note = self.entities(query, timings)
        vectors = np.zeros((0, 0), dtype=np.float32)  # (the encoder's dimension costs an encode)
        if entities:
            t = time.perf_counter()
            vectors = self.embedder.encode(entities)
            timings["encode_entities"] = time.perf_counter() - t
        return question, entities, vectors, note

    def dense(self, vector: Vector, limit: int, timings: dict[str, float]) -> ScoreMap:
        """The ``limit`` passages nearest to ``vector`` by cosine, best first."""
        t = time.perf_counter()
        scores = ScoreMap.of(self.view.dense_passage_scores(vector, limit))
        timings["dense_search"] = time.perf_counter() - t
        return scores

    def walk_and_mix(
        self, q: Query, limit: int, how: Callable[[GraphRun], Mix], dense_likely: bool = True
    ) -> RetrievalResult:
        """The walk from the query's entities, ranked as ``how(run)`` says: mixed with dense scores with
        its ``graph_weight`` on the walk, or the walk alone (None), and its note, if any, added to the
        result's. With no linked entity there is nothing to walk from: the result is dense's (noted). When
        the walk reaches fewer than ``top_k`` passages of a store that holds more, the rest come from dense
        scores, after the walk's and noted as such. ``limit``: how many walk scores (a mix normalises over
        the pool). ``dense_likely``: the question's vector is encoded beside the entities (a mode that
        mixes); otherwise only if a fallback needs it."""
        entities: list[str] = []
        note = None
        if q.text:
            question, entities, entity_vectors, note = self.question_and_entities(
                q.text, q.timings, start=dense_likely
            )
        else:  # seed nodes alone: nothing to encode, no dense fallback
            entity_vectors = np.zeros((0, self.embedder.dimension), dtype=np.float32)
        run = self.graph(
            q.text, entities, entity_vectors, note, limit, q.timings, q.join, q.node_links, q.n_passages
        )
        no_graph = not run.scores and bool(q.text)
        mixing = WALK_ALONE if no_graph else how(run)
        dense_scores = NO_SCORES
        combined = run.scores
        notes = [run.note] if run.note else []
        if no_graph:
            dense_scores = self.dense(question.get(), q.top_k, q.timings)
            combined = dense_scores
            notes.append("ranked by dense retrieval (cosine of question and passage)")
        elif mixing.graph_weight is not None:
            dense_scores = self.dense(question.get(), q.pool, q.timings)
            t = time.perf_counter()
            dense_floor = floor_below(dense_scores, q.n_passages)
            combined = mix(
                min_max(run.scores, floor=0.0), min_max(dense_scores, dense_floor), mixing.graph_weight
            )
            q.timings["mix"] = time.perf_counter() - t
        if mixing.note:
            notes.append(mixing.note)
        fill = NO_SCORES
        wanted = min(q.top_k, q.n_passages)
        if q.text and len(combined) < wanted and self.settings.fill_from_dense:
            more = self.dense(question.get(), wanted + len(combined), q.timings)
            rows = [i for i, pid in enumerate(more.ids()) if pid not in combined][: wanted - len(combined)]
            fill = more.take(np.array(rows, dtype=np.intp))
            if fill:
                rest = "the other passage comes" if len(fill) == 1 else f"the other {len(fill)} come"
                notes.append(
                    f"the graph reached {len(combined)} of the {q.top_k} passages asked for: {rest} from "
                    "dense retrieval (score 0, after the graph's)"
                )
        used_dense = no_graph or mixing.graph_weight is not None or bool(fill)
        note = "; ".join(notes) or None
        return self.ranked(q, combined, run, dense_scores, used_dense, fill=fill, note=note)

    def ranked(
        self,
        q: Query,
        combined: ScoreMap,
        run: GraphRun | None,
        dense_scores: ScoreMap,
        used_dense: bool,
        *,
        fill: ScoreMap = NO_SCORES,
        note: str | None = None,
    ) -> RetrievalResult:
        """The best ``q.top_k`` of ``combined`` as a result, each passage with what its score is made of;
        then the ``fill`` passages (dense scores for a graph that reached fewer), in their order, score 0."""
        ranked = combined.top(q.top_k)
        ranked.extend((pid, 0.0) for pid in fill.ids() if pid not in combined)
        ranked = ranked[: q.top_k]
        passages = self.view.get_passages([pid for pid, _ in ranked])
        ranked = [(pid, score) for pid, score in ranked if pid in passages]  # deleted since it was scored
        shown = [pid for pid, _ in ranked]
        graph_by_id = run.scores.rows(shown) if run else {}
        dense_by_id = {pid: p.score for pid, p in dense_scores.rows(shown).items()}
        for pid, p in fill.rows(shown).items():  # a dense score of the fill: where the pool has none
            dense_by_id.setdefault(pid, p.score)
        results = []
        for rank, (pid, score) in enumerate(ranked, start=1):
            graph_score = graph_by_id.get(pid)
            explanation = Explanation(
                query_entities=run.entities if run else [],
                linked=run.linked if run else [],
                top_phrases=[PhraseScore(phrase=n, score=c) for n, c in graph_score.top_phrases]
                if graph_score
                else [],
                graph_score=graph_score.score if graph_score else (0.0 if run else None),
                dense_score=dense_by_id.get(pid),
                note=run.note if run else None,
            )
            results.append(
                RetrievedPassage(rank=rank, passage=passages[pid], score=score, explanation=explanation)
            )
        q.timings["total"] = time.perf_counter() - q.started
        return RetrievalResult(
            query=q.text,
            mode=q.mode,
            passages=results,
            query_entities=run.entities if run else [],
            linked=run.linked if run else [],
            used_dense_fallback=used_dense,
            note=note,
            timings=q.timings,
        )

    # --- one query ------------------------------------------------------------------------------
    def retrieve(
        self,
        query: str,
        mode: RetrievalMode | None = None,
        top_k: int | None = None,
        *,
        join: GraphJoin | None = None,
        node_links: Sequence[LinkedPhrase] = (),
    ) -> RetrievalResult:
        """Passages for ``query`` by ``mode`` (default: the settings'); ``node_links`` (phrases linked to
        seed nodes) are seeded with the query's entities, and ``join`` runs PPR over the joined graph
        (graph modes only). An empty query is answered from ``node_links`` alone (graph modes). Every read
        of the query goes through one view of the store (:meth:`GraphStore.view`: one graph version)."""
        with blas_threads(self.settings.query_blas_threads):
            on = self.at(self.store.view())  # every read of the query at one graph version
            mode = mode or self.settings.mode
            top_k = top_k or self.settings.top_k
            if join is not None or node_links or not query:
                check_graph_mode(mode)
            started = time.perf_counter()
            n_passages = on.view.passage_count()
            pool = min(self.candidate_pool, max(n_passages, top_k))
            q = Query(query, mode, top_k, pool, n_passages, {}, started, join, list(node_links))
            result = get_mode(mode).retrieve(on, q)
            if join is not None or node_links:
                result.seed_links = list(node_links)
                result.joined = None if join is None else list(join.rel_types)
            return result
