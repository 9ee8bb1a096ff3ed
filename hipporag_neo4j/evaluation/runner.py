"""Run a retrieval (and optionally QA) evaluation over a HippoRAG memory: every mode on every question.

Corpus passages are identified as indexing identifies them (:func:`corpus_passage_ids`), or through the
mapping :func:`index_corpus` returns. Retrieved chunks of a long passage count as their parent passage.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.common.text import make_passage_id
from hipporag_neo4j.errors import ConfigError, InputError
from hipporag_neo4j.evaluation.loaders import CorpusPassage, EvalQuestion, UnmatchedGold, locate_gold
from hipporag_neo4j.evaluation.metrics import (
    DEFAULT_ALL_RECALL_KS,
    DEFAULT_RECALL_KS,
    MetricTable,
    QuestionScores,
    aggregate,
    metric_values,
    score_question,
)
from hipporag_neo4j.evaluation.stats import BootstrapResult, paired_bootstrap
from hipporag_neo4j.models import RETRIEVAL_MODES, IndexReport, RetrievalMode, RetrievalResult
from hipporag_neo4j.stores.base import WalkParams

BASELINE_MODE: RetrievalMode = "dense"
COMPARED_METRICS: tuple[str, ...] = ("R@2", "R@5", "AR@5")
#: Every registered mode but the baseline: each is compared with it.
GRAPH_MODES: frozenset[str] = frozenset(RETRIEVAL_MODES) - {BASELINE_MODE}
#: Modes that link query entities to phrases: the walk's reach is measured from their links.
LINKING_MODES: frozenset[str] = GRAPH_MODES - {"hipporag2"}

#: (questions done, questions in all) -> None
EvalProgress = Callable[[int, int], None]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LinkedEntity(_Model):
    query_entity: str
    phrase: str
    similarity: float


class ModeResult(_Model):
    """One mode's answer to one question."""

    retrieved_ids: list[str]
    """Corpus passage ids in rank order (a chunk counts as its parent; repeats dropped)."""
    gold_ranks: dict[str, int | None]
    """Gold passage id -> its 1-based rank in ``retrieved_ids``, None when not retrieved."""
    metrics: dict[str, float]
    query_entities: list[str]
    linked: list[LinkedEntity]
    used_dense_fallback: bool
    prediction: str | None = None
    seconds: float
    """Wall time of the retrieve (or answer) call."""
    timings: dict[str, float]
    """The retriever's own stage timings."""


class QuestionResult(_Model):
    question_id: str
    question: str
    answers: list[str]
    gold_ids: list[str]
    gold_titles: list[str | None]
    """Title of each gold passage (aligned with ``gold_ids``)."""
    graph_reached_gold: dict[str, bool] | None = None
    """Gold passage id -> whether PPR from the question's linked phrases gives it a score > 0 (with any
    graph mode evaluated; None otherwise): a gold passage it does not reach cannot rank by the graph."""
    modes: dict[str, ModeResult]


class ModeComparison(_Model):
    mode: str
    baseline: str
    metric: str
    bootstrap: BootstrapResult


class EvalReport(_Model):
    modes: list[str]
    top_k: int
    answered: bool
    n_questions: int
    n_corpus: int
    tables: dict[str, MetricTable]
    """Mode -> aggregated metrics (fractions)."""
    comparisons: list[ModeComparison]
    """Paired bootstrap of each mode against dense on :data:`COMPARED_METRICS`."""
    questions: list[QuestionResult]
    whitespace_gold_matches: int
    gold_not_in_store: list[str] = Field(default_factory=list)
    """Gold passage ids the store does not hold (not indexed): misses that retrieval could not avoid."""
    seconds: dict[str, float]
    """Mode -> total wall time over the questions."""


class IndexedCorpus(_Model):
    """How a corpus went into the store: the id each passage has there, and what could not be indexed."""

    passage_ids: list[str]
    """Stored passage id of each corpus passage, by corpus position."""
    missing: list[int]
    """Corpus positions not indexed: extraction failed (wholly or for a chunk), or the OpenIE file has no
    record of the passage."""
    report: IndexReport


def corpus_passage_ids(corpus: Sequence[CorpusPassage]) -> list[str]:
    """The id :meth:`HippoRAG.index` gives each passage: its own id, else the hash of title and text."""
    return [p.id or make_passage_id(p.text.strip(), p.title) for p in corpus]


def index_corpus(
    memory: HippoRAG,
    corpus: Sequence[CorpusPassage],
    openie_path: Path | None,
    progress: Callable[[str, int, int], None] | None = None,
) -> IndexedCorpus:
    """Index ``corpus`` into ``memory``: from a recorded OpenIE file when given, else by extraction
    (LLM or spaCy, per settings). Re-running on the same store indexes nothing new.

    With an OpenIE file, each corpus passage is mapped to its recorded passage by id, else by content
    (whitespace-insensitive, with or without title), and only those recorded passages are indexed, under
    the ids the file gives them; corpus passages the file lacks are listed in ``missing``.
    """
    if openie_path is None:
        inputs = [{"text": p.text, "title": p.title, "id": p.id} for p in corpus]
        report = memory.index(inputs, progress=progress)
        ids = corpus_passage_ids(corpus)
        failed = {f.passage_id.split("#", 1)[0] for f in report.failed if f.passage_id}
        failed_at = [i for i, pid in enumerate(ids) if pid in failed]
        return IndexedCorpus(passage_ids=ids, missing=failed_at, report=report)

    from hipporag_neo4j.extraction.recorded import content_key, load_recorded_extraction

    recorded = load_recorded_extraction(openie_path)
    recorded_ids = {p.id for p in recorded.passages}
    if not recorded_ids:
        raise InputError(f"{openie_path}: no record carries its passage text, so nothing can be indexed")
    passage_ids: list[str] = []
    missing: list[int] = []
    for i, passage in enumerate(corpus):
        found = passage.id if passage.id in recorded_ids else None
        for key in (content_key(passage.text, passage.title), content_key(passage.text)):
            found = found or recorded.by_content.get(key)
        if found is None:
            missing.append(i)
            found = corpus_passage_ids([passage])[0]
        passage_ids.append(found)
    # only the corpus' passages: the file may hold many more (MuSiQue's extraction has 1,890)
    absent = set(missing)
    wanted = [pid for i, pid in enumerate(passage_ids) if i not in absent]
    report = memory.index_openie(openie_path, progress=progress, only=wanted)
    return IndexedCorpus(passage_ids=passage_ids, missing=missing, report=report)


def _stored_ids(result: RetrievalResult) -> list[str]:
    ids: list[str] = []
    for item in result.passages:
        parent = item.passage.metadata.get("parent_id")
        ids.append(parent if isinstance(parent, str) else item.passage.id)
    return list(dict.fromkeys(ids))


def _stored_or_chunked(memory: HippoRAG, ids: Sequence[str]) -> set[str]:
    """Which of these passage ids are stored, whole or as the chunks a long passage was split into."""
    stored = memory.store.existing_passages(ids)
    missing = [i for i in ids if i not in stored]
    return stored | set(memory.store.passages_by_parent(missing))


def _graph_reach(memory: HippoRAG, result: RetrievalResult, gold_ids: Sequence[str]) -> dict[str, bool]:
    """Which gold passages PPR seeded from the retrieval's linked phrases scores above zero."""
    seeds: dict[str, float] = {}
    for item in result.linked:
        seeds[item.phrase_id] = seeds.get(item.phrase_id, 0.0) + item.weight
    if not seeds:
        return dict.fromkeys(gold_ids, False)
    s = memory.settings.retrieval
    store = memory.store
    view = store.view()
    scores = view.graph_passage_scores(seeds, WalkParams.of(s), view.passage_count(), 0)
    reached: set[str] = set()
    for score in scores:
        if score.score > 0:
            reached.add(score.passage_id)
    if any("#" in pid for pid in reached):  # chunks reach their parent
        parents = store.get_passages([pid for pid in reached if "#" in pid])
        for passage in parents.values():
            parent = passage.metadata.get("parent_id")
            if isinstance(parent, str):
                reached.add(parent)
    return {gid: gid in reached for gid in gold_ids}


def _run_mode(
    memory: HippoRAG,
    question: EvalQuestion,
    gold_ids: list[str],
    mode: RetrievalMode,
    top_k: int,
    answer: bool,
) -> tuple[ModeResult, RetrievalResult]:
    started = time.perf_counter()
    prediction: str | None = None
    if answer:
        answered = memory.answer(question.question, mode=mode, top_k=top_k)
        result, prediction = answered.retrieval, answered.answer
    else:
        result = memory.retrieve(question.question, mode=mode, top_k=top_k)
    seconds = time.perf_counter() - started
    retrieved = _stored_ids(result)
    rank = {pid: r for r, pid in enumerate(retrieved, start=1)}
    scores = score_question(
        question.id,
        retrieved,
        gold_ids,
        prediction=prediction,
        answers=question.answers,
        ks=[k for k in DEFAULT_RECALL_KS if k <= top_k],  # R@k beyond top_k would just repeat R@top_k
        ar_ks=[k for k in DEFAULT_ALL_RECALL_KS if k <= top_k],
    )
    mode_result = ModeResult(
        retrieved_ids=retrieved,
        gold_ranks={gid: rank.get(gid) for gid in gold_ids},
        metrics=scores.metrics,
        query_entities=list(result.query_entities),
        linked=[
            LinkedEntity(query_entity=x.query_entity, phrase=x.phrase, similarity=x.similarity)
            for x in result.linked
        ],
        used_dense_fallback=result.used_dense_fallback,
        prediction=prediction,
        seconds=seconds,
        timings=dict(result.timings),
    )
    return mode_result, result


def _check_gold(unmatched: list[UnmatchedGold], n_questions: int) -> None:
    if unmatched:
        first = unmatched[0]
        n_affected = len({u.question_id for u in unmatched})
        raise InputError(
            f"{len(unmatched)} gold passages of {n_affected} of {n_questions} questions are not in the corpus"
            f" (an unmatched gold passage would silently lower recall); first: question {first.question_id}"
            f" ({first.reason}): {first.gold[:80]!r}"
        )


def _scores(result: QuestionResult, mode: str) -> QuestionScores:
    return QuestionScores(
        question_id=result.question_id, n_gold=len(result.gold_ids), metrics=result.modes[mode].metrics
    )


def compare_modes(
    results: Sequence[QuestionResult],
    modes: Sequence[str],
    baseline: str = BASELINE_MODE,
    metrics: Sequence[str] = COMPARED_METRICS,
    n_resamples: int = 10_000,
) -> list[ModeComparison]:
    """Paired bootstrap (seed 0) of each mode minus ``baseline`` over the questions defining the metric;
    empty when ``baseline`` was not evaluated."""
    if baseline not in modes:
        return []
    comparisons = []
    for mode in modes:
        if mode == baseline:
            continue
        for metric in metrics:
            ours = metric_values([_scores(r, mode) for r in results], metric)
            theirs = metric_values([_scores(r, baseline) for r in results], metric)
            shared = [qid for qid in ours if qid in theirs]
            if not shared:
                continue
            result = paired_bootstrap(
                [ours[q] for q in shared], [theirs[q] for q in shared], n_resamples=n_resamples
            )
            comparisons.append(ModeComparison(mode=mode, baseline=baseline, metric=metric, bootstrap=result))
    return comparisons


def run_evaluation(
    memory: HippoRAG,
    questions: list[EvalQuestion],
    corpus: list[CorpusPassage],
    modes: Sequence[str],
    top_k: int = 10,
    answer: bool = False,
    progress: EvalProgress | None = None,
    *,
    passage_ids: Sequence[str] | None = None,
    n_resamples: int = 10_000,
    graph_reach: bool = True,
) -> EvalReport:
    """Run every mode on every question and score them (R@1/2/5/10, AR@2/5 up to ``top_k``; EM/F1 with
    ``answer``).

    ``passage_ids`` gives the stored id of each corpus passage (from :func:`index_corpus`); by default
    the ids indexing gives them (:func:`corpus_passage_ids`). ``graph_reach`` runs one more PPR per
    question to record which gold passages the walk reaches (for the error analysis).

    Raises :class:`InputError` when a gold passage is not in the corpus or a mode is unknown, and
    :class:`ConfigError` for ``answer`` without an LLM.
    """
    known = set(GRAPH_MODES) | {BASELINE_MODE}
    unknown = [m for m in modes if m not in known]
    if unknown or not modes:
        raise InputError(f"unknown or no retrieval modes {unknown}: choose from {sorted(known)}")
    if top_k < 1:
        raise InputError(f"top_k must be at least 1, got {top_k}")
    if answer and not memory.settings.llm.configured:
        raise ConfigError("answer=True needs an LLM: set HIPPORAG_LLM_MODEL (and base URL / key)")
    ids = list(passage_ids) if passage_ids is not None else corpus_passage_ids(corpus)
    if len(ids) != len(corpus):
        raise InputError(f"passage_ids has {len(ids)} ids for a corpus of {len(corpus)} passages")

    located = locate_gold(questions, corpus)
    _check_gold(located.unmatched, len(questions))
    gold_by_question: dict[str, list[str]] = {}
    title_by_id: dict[str, str | None] = {}
    for q in questions:
        gold_by_question[q.id] = list(dict.fromkeys(ids[i] for i in located.gold_ids[q.id]))
        title_by_id.update((ids[i], corpus[i].title) for i in located.gold_ids[q.id])
    all_gold = sorted({g for gold in gold_by_question.values() for g in gold})
    stored = _stored_or_chunked(memory, all_gold)

    mode_list: list[RetrievalMode] = list(dict.fromkeys(modes))
    seconds = dict.fromkeys(mode_list, 0.0)
    results: list[QuestionResult] = []
    for done, question in enumerate(questions, start=1):
        gold = gold_by_question[question.id]
        per_mode: dict[str, ModeResult] = {}
        reach: dict[str, bool] | None = None
        for mode in mode_list:
            mode_result, retrieval = _run_mode(memory, question, gold, mode, top_k, answer)
            per_mode[mode] = mode_result
            seconds[mode] += mode_result.seconds
            if graph_reach and reach is None and mode in LINKING_MODES:
                reach = _graph_reach(memory, retrieval, gold)
        results.append(
            QuestionResult(
                question_id=question.id,
                question=question.question,
                answers=question.answers,
                gold_ids=gold,
                gold_titles=[title_by_id[g] for g in gold],
                graph_reached_gold=reach,
                modes=per_mode,
            )
        )
        if progress is not None:
            progress(done, len(questions))

    tables = {mode: aggregate([_scores(r, mode) for r in results]) for mode in mode_list}
    return EvalReport(
        modes=list(mode_list),
        top_k=top_k,
        answered=answer,
        n_questions=len(questions),
        n_corpus=len(corpus),
        tables=tables,
        comparisons=compare_modes(results, mode_list, n_resamples=n_resamples),
        questions=results,
        whitespace_gold_matches=located.whitespace_matches,
        gold_not_in_store=[g for g in all_gold if g not in stored],
        seconds=seconds,
    )
