"""The speed suite's query ratios per mode against one encode of the same question, on synthetic passes.

Nothing is run and no time is asserted: the suite itself needs the MuSiQue data and the models.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import bench_speed as bench  # noqa: E402  (benchmarks/ is not a package)

pytestmark = pytest.mark.unit


def _rounds(loads: list[float]) -> list[dict[str, Any]]:
    systems = ["ours-default", "ours-default dense", "plain-encode", "ort-encode"]
    return [
        {"system": s, "round": r, "p50_ms": 1.0, "load_start": [load, 0, 0], "load_end": [load, 0, 0]}
        for r, load in enumerate(loads, start=1)
        for s in systems
    ]


def test_each_mode_is_the_median_over_questions_of_its_ratio_to_the_same_question_encode() -> None:
    # three passes of three questions; the yardstick's times differ per question, so a ratio of p50s
    # would differ from the median of per-question ratios
    encode = [[10.0, 20.0, 40.0]] * 3
    per_question = {
        "ours-default": [[15.0, 20.0, 100.0], [12.0, 30.0, 48.0], [30.0, 22.0, 44.0]],
        "ours-default dense": [[11.0, 22.0, 44.0]] * 3,
        "plain-encode": encode,
        "ort-encode": [[5.0, 10.0, 20.0]] * 3,
    }
    out = bench.question_ratios(
        _rounds([1.0, 1.2, 1.1]), per_question, ["ours-default", "ours-default dense"]
    )
    default = out["ours-default / plain-encode"]
    assert default["ratios"] == [1.5, 1.2, 1.1]  # medians of (1.5, 1.0, 2.5), (1.2, 1.5, 1.2), (3, 1.1, 1.1)
    assert default["ratio_median"] == 1.2
    assert out["ours-default dense / plain-encode"]["ratios"] == [1.1, 1.1, 1.1]
    assert out["ours-default dense / ort-encode"]["ratio_median"] == 2.2


def test_fewer_than_two_passes_is_a_refusal_not_a_ratio() -> None:
    per_question = {name: [[1.0], [1.0]] for name in ("ours-default", "plain-encode", "ort-encode")}
    out = bench.question_ratios(_rounds([1.0, 5.0]), per_question, ["ours-default"])
    assert "ratio_median" in out["ours-default / plain-encode"]  # one pass: both systems at its load
    out = bench.question_ratios(_rounds([1.0]), {k: v[:1] for k, v in per_question.items()}, ["ours-default"])
    assert "refused" in out["ours-default / plain-encode"]


def test_query_modes_are_checked_and_hipporag2_always_comes_first() -> None:
    assert bench.parse_args(["--query-modes", "dense,hipporag"]).query_modes == [
        "hipporag2",
        "dense",
        "hipporag",
    ]
    assert bench.parse_args([]).query_modes == list(bench.MODES)
    with pytest.raises(SystemExit):
        bench.parse_args(["--query-modes", "dense,nobody"])
    assert bench.mode_key("hipporag2") == "ours-default" and bench.mode_key("dense") == "ours-default dense"
