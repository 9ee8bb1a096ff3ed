"""Retrieval and QA metrics as in the HippoRAG paper, as fractions in [0, 1] (the CLI formats percents).

Conventions, shared by every function here:

* **Ranks** are the retrieved order as given; ties in score are not re-broken, whatever order the retriever
  returned is the order scored.
* **Top k** is the first ``k`` entries of the retrieved list; when the list is shorter, all of it.
* **Duplicate retrieved ids** count once, at their first rank: a later repeat is never a second hit, and it
  still occupies its slot (a retriever gains nothing by repeating itself).
* **Empty gold**: recall is undefined, so :func:`recall_at_k` / :func:`all_recall_at_k` raise ``ValueError``;
  :func:`score_question` leaves the retrieval metrics out and :func:`aggregate` counts such questions in
  ``n_empty_gold`` and averages each metric only over questions where it is defined.
* Answers are compared after SQuAD normalisation (:func:`normalize_answer`); EM and F1 take the best over
  the gold answer and its aliases.

Metric keys: ``"R@k"`` (recall), ``"AR@k"`` (all-recall), ``"EM"``, ``"F1"``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Collection, Hashable, Sequence

from pydantic import BaseModel, ConfigDict

DEFAULT_RECALL_KS: tuple[int, ...] = (1, 2, 5, 10)
DEFAULT_ALL_RECALL_KS: tuple[int, ...] = (2, 5)

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def recall_key(k: int) -> str:
    return f"R@{k}"


def all_recall_key(k: int) -> str:
    return f"AR@{k}"


def _top_k_hits(retrieved_ids: Sequence[Hashable], gold_ids: Collection[Hashable], k: int) -> tuple[int, int]:
    """(gold items found in the top k, number of distinct gold items)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    gold = set(gold_ids)
    if not gold:
        raise ValueError("recall is undefined for a question without gold passages")
    return len(gold.intersection(retrieved_ids[:k])), len(gold)


def recall_at_k(retrieved_ids: Sequence[Hashable], gold_ids: Collection[Hashable], k: int) -> float:
    """|gold ∩ top k| / |gold| (distinct gold ids)."""
    hits, n_gold = _top_k_hits(retrieved_ids, gold_ids, k)
    return hits / n_gold


def all_recall_at_k(retrieved_ids: Sequence[Hashable], gold_ids: Collection[Hashable], k: int) -> float:
    """1.0 when every gold id is in the top k, else 0.0."""
    hits, n_gold = _top_k_hits(retrieved_ids, gold_ids, k)
    return 1.0 if hits == n_gold else 0.0


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles (a/an/the), single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _require_answers(answers: Sequence[str]) -> None:
    if isinstance(answers, str):
        raise TypeError("answers must be a sequence of strings, not a single string")
    if not answers:
        raise ValueError("no gold answers to compare with")


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    """1.0 when the normalised prediction equals any normalised answer, else 0.0."""
    _require_answers(answers)
    predicted = normalize_answer(prediction)
    return 1.0 if any(predicted == normalize_answer(answer) for answer in answers) else 0.0


def _token_f1(predicted: list[str], gold: list[str]) -> float:
    if not predicted or not gold:  # SQuAD v2: an empty side scores 1 only against another empty side
        return float(predicted == gold)
    common = sum((Counter(predicted) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def f1_score(prediction: str, answers: Sequence[str]) -> float:
    """SQuAD token F1 between the normalised prediction and each answer; the best one."""
    _require_answers(answers)
    predicted = normalize_answer(prediction).split()
    return max(_token_f1(predicted, normalize_answer(answer).split()) for answer in answers)


class QuestionScores(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    n_gold: int
    metrics: dict[str, float]
    """Metric key -> value for the metrics defined for this question."""


class MetricTable(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    means: dict[str, float]
    """Metric key -> mean over the questions where it is defined, in the order R@, AR@, EM, F1."""
    counts: dict[str, int]
    """Metric key -> how many questions that mean is over."""
    n_questions: int
    n_empty_gold: int
    """Questions without gold passages, left out of every retrieval metric."""


def score_question(
    question_id: str,
    retrieved_ids: Sequence[Hashable],
    gold_ids: Collection[Hashable],
    *,
    prediction: str | None = None,
    answers: Sequence[str] = (),
    ks: Sequence[int] = DEFAULT_RECALL_KS,
    ar_ks: Sequence[int] = DEFAULT_ALL_RECALL_KS,
) -> QuestionScores:
    """Every metric defined for one question: R@k and AR@k when it has gold passages, EM and F1 when it has
    both a prediction and gold answers."""
    metrics: dict[str, float] = {}
    n_gold = len(set(gold_ids))
    if n_gold:
        for k in ks:
            metrics[recall_key(k)] = recall_at_k(retrieved_ids, gold_ids, k)
        for k in ar_ks:
            metrics[all_recall_key(k)] = all_recall_at_k(retrieved_ids, gold_ids, k)
    if prediction is not None and answers:
        metrics["EM"] = exact_match(prediction, answers)
        metrics["F1"] = f1_score(prediction, answers)
    return QuestionScores(question_id=question_id, n_gold=n_gold, metrics=metrics)


def _column_order(key: str) -> tuple[int, int, str]:
    for rank, prefix in enumerate(("R@", "AR@")):
        if key.startswith(prefix) and key[len(prefix) :].isdigit():
            return (rank, int(key[len(prefix) :]), key)
    return (2, 0, key) if key in ("EM", "F1") else (3, 0, key)


def aggregate(scores: Sequence[QuestionScores]) -> MetricTable:
    """Average per-question scores into one table (fractions); each metric over the questions defining it."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for score in scores:
        for key, value in score.metrics.items():
            sums[key] = sums.get(key, 0.0) + value
            counts[key] = counts.get(key, 0) + 1
    keys = sorted(sums, key=_column_order)
    return MetricTable(
        means={key: sums[key] / counts[key] for key in keys},
        counts={key: counts[key] for key in keys},
        n_questions=len(scores),
        n_empty_gold=sum(score.n_gold == 0 for score in scores),
    )


def metric_values(scores: Sequence[QuestionScores], key: str) -> dict[str, float]:
    """Question id -> value of one metric, for the questions defining it (input of the paired bootstrap)."""
    return {score.question_id: score.metrics[key] for score in scores if key in score.metrics}
