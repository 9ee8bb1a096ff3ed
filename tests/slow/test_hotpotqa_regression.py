"""Retrieval quality regression on HotpotQA: 50 questions over 994 passages, extracted offline with spaCy
(no published extraction: the path a new user without an LLM takes), the default mode against dense.

Indexing runs spaCy extraction and embeds ~29k texts: several minutes on 2 cores. Run with ``-s`` to see
the table.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.evaluation.runner import EvalReport
from tests.support.pipeline_support import data_set_report

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

HOTPOTQA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "hotpotqa"
CORPUS_FILE = HOTPOTQA / "hotpotqa_corpus994.json"
QUESTIONS_FILE = HOTPOTQA / "hotpotqa_dev50.json"
MODES = ("dense", "hipporag2")

# Measured 2026-11-26 with title seeds and the issue-28 extractor (benchmarks/results/quality_topk.md),
# percent, R@2 / R@5 / AR@5:
#   dense     59.0 / 76.0 / 54.0
#   hipporag2 68.0 / 85.0 / 74.0
# (without title seeds, as measured 2026-11-25 with the issue-21 extractor: hipporag2 64.0 / 82.0 / 68.0;
# the issue-28 extractor alone changes none of the three).
# Floors: the measurement minus ~3 points (one question is 2 points here).
FLOORS = {"dense": {"R@2": 56.0, "R@5": 73.0}, "hipporag2": {"R@2": 65.0, "R@5": 82.0, "AR@5": 71.0}}
#: issue 21's goal on this development set: the default mode ahead of dense by this many points
GOAL_MARGIN = 3.0


@pytest.fixture(scope="module")
def hotpotqa_report(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> Iterator[EvalReport]:
    if not (CORPUS_FILE.is_file() and QUESTIONS_FILE.is_file()):
        pytest.skip(f"HotpotQA data not found at {HOTPOTQA} (shared/ is not beside the checkout)")
    report = data_set_report(
        tmp_path_factory.mktemp("hotpotqa") / "store", minilm, CORPUS_FILE, QUESTIONS_FILE, MODES
    )
    yield report


def test_every_gold_passage_is_in_the_store_even_when_chunked(hotpotqa_report: EvalReport) -> None:
    assert hotpotqa_report.n_questions == 50
    assert hotpotqa_report.gold_not_in_store == []


@pytest.mark.parametrize("mode", MODES)
def test_recall_stays_above_the_floor(hotpotqa_report: EvalReport, mode: str) -> None:
    means = hotpotqa_report.tables[mode].means
    for metric, floor in FLOORS[mode].items():
        assert 100 * means[metric] >= floor, f"{mode} {metric} {100 * means[metric]:.1f} < {floor}"


def test_the_default_mode_beats_dense_by_the_goal_margin(hotpotqa_report: EvalReport) -> None:
    ours, dense = hotpotqa_report.tables["hipporag2"].means, hotpotqa_report.tables["dense"].means
    for metric in ("R@2", "R@5", "AR@5"):
        assert 100 * (ours[metric] - dense[metric]) >= GOAL_MARGIN, (metric, ours[metric], dense[metric])
