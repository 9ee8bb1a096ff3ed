from __future__ import annotations

import math

import numpy as np
import pytest

from hipporag_neo4j.evaluation.metrics import (
    aggregate,
    all_recall_at_k,
    exact_match,
    f1_score,
    metric_values,
    normalize_answer,
    recall_at_k,
    score_question,
)
from hipporag_neo4j.evaluation.stats import paired_bootstrap

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ retrieval metrics


@pytest.mark.parametrize(("k", "expected"), [(1, 0.5), (2, 0.5), (3, 1.0), (10, 1.0)])
def test_recall_at_k_and_k_beyond_the_list(k: int, expected: float) -> None:
    assert recall_at_k(["a", "b", "c"], {"a", "c"}, k) == expected


def test_recall_with_three_gold_counts_fractions() -> None:
    assert recall_at_k([5, 9, 1, 2], [1, 2, 3], 3) == pytest.approx(1 / 3)
    assert recall_at_k([5, 9, 1, 2], [1, 2, 3], 4) == pytest.approx(2 / 3)


def test_duplicates_count_once_and_keep_their_slot() -> None:
    assert recall_at_k(["a", "a"], {"a"}, 2) == 1.0
    assert recall_at_k(["a", "a", "b"], {"a", "b"}, 2) == 0.5
    assert recall_at_k(["a", "a", "b"], {"a", "b"}, 3) == 1.0
    assert all_recall_at_k(["a", "a", "b"], {"a", "b"}, 2) == 0.0


def test_duplicate_gold_ids_are_one_gold_item() -> None:
    assert recall_at_k(["a"], ["a", "a", "b"], 1) == 0.5


def test_retrieved_order_is_taken_as_given() -> None:
    # a tie in score is whatever order the retriever returned
    assert recall_at_k(["b", "a"], {"a"}, 1) == 0.0
    assert recall_at_k(["a", "b"], {"a"}, 1) == 1.0


@pytest.mark.parametrize(("k", "expected"), [(1, 0.0), (2, 0.0), (3, 1.0), (50, 1.0)])
def test_all_recall_at_k(k: int, expected: float) -> None:
    assert all_recall_at_k([3, 7, 1], [1, 3], k) == expected


def test_empty_retrieved_list() -> None:
    assert recall_at_k([], {"a"}, 5) == 0.0
    assert all_recall_at_k([], {"a"}, 5) == 0.0


def test_empty_gold_and_bad_k_raise() -> None:
    with pytest.raises(ValueError, match="without gold"):
        recall_at_k(["a"], set(), 1)
    with pytest.raises(ValueError, match="without gold"):
        all_recall_at_k(["a"], [], 1)
    with pytest.raises(ValueError, match="at least 1"):
        recall_at_k(["a"], {"a"}, 0)


def test_numpy_ids_compare_with_python_ints() -> None:
    assert recall_at_k(np.array([4, 2]), [2], 2) == 1.0


# ------------------------------------------------------------------ answer metrics


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("The  Quick, Brown fox!", "quick brown fox"),
        ("an apple a day", "apple day"),
        ("Theatre of the Absurd", "theatre of absurd"),
        ("G. Stanley Hall", "g stanley hall"),
        ("  ", ""),
    ],
)
def test_normalize_answer(text: str, normalised: str) -> None:
    assert normalize_answer(text) == normalised


def test_exact_match_over_aliases() -> None:
    assert exact_match("stanley hall", ["G. Stanley Hall", "Stanley Hall"]) == 1.0
    assert exact_match("The G. Stanley Hall", ["G Stanley Hall"]) == 1.0
    assert exact_match("Hall", ["G. Stanley Hall", "Stanley Hall"]) == 0.0


def test_f1_takes_the_best_alias() -> None:
    # vs "g stanley hall": 2 common of 3/3 tokens -> 2/3; vs "stanley hall": p=2/3, r=1 -> 0.8
    assert f1_score("Stanley Hall Jr", ["G. Stanley Hall"]) == pytest.approx(2 / 3)
    assert f1_score("Stanley Hall Jr", ["G. Stanley Hall", "Stanley Hall"]) == pytest.approx(0.8)
    assert f1_score("Paris", ["London"]) == 0.0


def test_f1_counts_repeated_tokens_by_multiplicity() -> None:
    # prediction "new new york": common with "new york" is {new: 1, york: 1}: p = 2/3, r = 1
    assert f1_score("new new york", ["New York"]) == pytest.approx(0.8)


def test_f1_with_answers_that_normalise_to_nothing() -> None:
    assert f1_score("the", ["a"]) == 1.0
    assert f1_score("", ["Paris"]) == 0.0
    assert f1_score("Paris", ["the"]) == 0.0


def test_answer_metrics_reject_missing_answers() -> None:
    with pytest.raises(ValueError, match="no gold answers"):
        exact_match("x", [])
    with pytest.raises(TypeError):
        f1_score("x", "x")


# ------------------------------------------------------------------ per question and aggregate


def test_score_question_keys_and_values() -> None:
    scores = score_question("q", ["a", "x", "b"], ["a", "b"], prediction="Delta", answers=["delta"])
    assert scores.n_gold == 2
    assert scores.metrics == {
        "R@1": 0.5,
        "R@2": 0.5,
        "R@5": 1.0,
        "R@10": 1.0,
        "AR@2": 0.0,
        "AR@5": 1.0,
        "EM": 1.0,
        "F1": 1.0,
    }


def test_score_question_without_gold_or_answers() -> None:
    scores = score_question("q", ["a"], [], prediction="x", answers=[])
    assert scores.n_gold == 0
    assert scores.metrics == {}


def test_aggregate_excludes_empty_gold_and_counts_it() -> None:
    scores = [
        score_question("q1", ["a", "b"], ["a"], ks=(1, 2), ar_ks=(2,), prediction="x", answers=["x"]),
        score_question("q2", ["b", "a"], ["a", "c"], ks=(1, 2), ar_ks=(2,), prediction="y", answers=["x"]),
        score_question("q3", ["a"], [], ks=(1, 2), ar_ks=(2,), prediction="x", answers=["x"]),
    ]
    table = aggregate(scores)
    assert table.n_questions == 3
    assert table.n_empty_gold == 1
    assert list(table.means) == ["R@1", "R@2", "AR@2", "EM", "F1"]
    assert table.means["R@1"] == pytest.approx((1.0 + 0.0) / 2)
    assert table.means["R@2"] == pytest.approx((1.0 + 0.5) / 2)
    assert table.means["AR@2"] == pytest.approx((1.0 + 0.0) / 2)
    assert table.means["EM"] == pytest.approx(2 / 3)
    assert table.counts == {"R@1": 2, "R@2": 2, "AR@2": 2, "EM": 3, "F1": 3}


def test_aggregate_orders_ks_numerically() -> None:
    table = aggregate([score_question("q", ["a"], ["a"], ks=(10, 2, 1), ar_ks=(5, 2))])
    assert list(table.means) == ["R@1", "R@2", "R@10", "AR@2", "AR@5"]


def test_aggregate_of_nothing() -> None:
    table = aggregate([])
    assert table.means == {}
    assert table.n_questions == 0


def test_metric_values_for_the_bootstrap() -> None:
    scores = [score_question("q1", ["a"], ["a"], ks=(1,)), score_question("q2", ["a"], [], ks=(1,))]
    assert metric_values(scores, "R@1") == {"q1": 1.0}


# ------------------------------------------------------------------ paired bootstrap


def test_bootstrap_identical_inputs() -> None:
    values = [0.0, 0.5, 1.0, 1.0, 0.25]
    result = paired_bootstrap(values, values, n_resamples=2_000)
    assert (result.mean_diff, result.low, result.high) == (0.0, 0.0, 0.0)
    assert result.p_value_two_sided == 1.0


def test_bootstrap_clearly_better_mode_excludes_zero() -> None:
    better = [1.0, 1.0, 1.0, 0.0] * 10
    worse = [0.0, 0.0, 1.0, 0.0] * 10
    result = paired_bootstrap(better, worse, n_resamples=5_000, seed=1)
    assert result.mean_diff == pytest.approx(0.5)
    assert 0.0 < result.low < 0.5 < result.high
    assert result.p_value_two_sided < 0.01
    reverse = paired_bootstrap(worse, better, n_resamples=5_000, seed=1)
    assert reverse.mean_diff == pytest.approx(-0.5)
    assert reverse.high < 0.0


def test_bootstrap_no_difference_is_not_significant() -> None:
    a = [1.0, 0.0] * 20
    b = [0.0, 1.0] * 20  # same mean, differences +1/-1
    result = paired_bootstrap(a, b, n_resamples=5_000)
    assert result.mean_diff == 0.0
    assert result.low < 0.0 < result.high
    assert result.p_value_two_sided > 0.5


def test_bootstrap_interval_matches_the_normal_approximation() -> None:
    rng = np.random.default_rng(123)
    a = rng.normal(0.3, 1.0, size=400)
    b = rng.normal(0.0, 1.0, size=400)
    result = paired_bootstrap(a.tolist(), b.tolist(), n_resamples=20_000, seed=7)
    diffs = a - b
    half_width = 1.96 * diffs.std(ddof=1) / math.sqrt(len(diffs))
    assert result.low == pytest.approx(diffs.mean() - half_width, abs=0.02)
    assert result.high == pytest.approx(diffs.mean() + half_width, abs=0.02)


def test_bootstrap_is_deterministic_per_seed() -> None:
    a = [0.2, 0.9, 0.4, 0.7, 0.1, 0.8]
    b = [0.1, 0.5, 0.6, 0.3, 0.1, 0.2]
    first = paired_bootstrap(a, b, n_resamples=3_000, seed=5)
    assert paired_bootstrap(a, b, n_resamples=3_000, seed=5) == first
    assert paired_bootstrap(a, b, n_resamples=3_000, seed=6) != first


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="same length"):
        paired_bootstrap([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least one"):
        paired_bootstrap([], [])
    with pytest.raises(ValueError, match="finite"):
        paired_bootstrap([float("nan")], [0.0])
    with pytest.raises(ValueError, match="ci"):
        paired_bootstrap([1.0], [0.0], ci=1.0)
    with pytest.raises(ValueError, match="n_resamples"):
        paired_bootstrap([1.0], [0.0], n_resamples=0)
