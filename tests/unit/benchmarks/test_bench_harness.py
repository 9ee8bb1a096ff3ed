"""The benchmark harness's comparison protocol (issue 29, item 1) on made-up runs: nothing is timed.

Interleaved rounds, each run's 1-minute load recorded; a pair whose loads differ by more than 1.0 is
dropped; fewer than two pairs left and no ratio is reported; otherwise the median of the per-pair ratios
with their spread.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import harness  # noqa: E402  (benchmarks/ is not a package)

pytestmark = pytest.mark.unit


def _run(system: str, round_no: int, seconds: float, load: float) -> dict[str, Any]:
    return {"system": system, "round": round_no, "wall_s": seconds, "load_start": [load, 0.5, 0.5]}


def test_rounds_alternate_who_goes_first() -> None:
    assert harness.interleaved(["a", "b"], 4) == [["a", "b"], ["b", "a"], ["a", "b"], ["b", "a"]]
    assert harness.interleaved(["a", "b", "c"], 3) == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]


def test_median_of_per_pair_ratios_with_spread() -> None:
    runs = [
        _run("a", 1, 10.0, 1.0),
        _run("b", 1, 5.0, 1.2),
        _run("a", 2, 20.0, 1.5),
        _run("b", 2, 8.0, 1.1),
        _run("a", 3, 10.0, 1.3),
        _run("b", 3, 7.0, 1.4),
    ]
    result = harness.compare(runs, "a", "b", "wall_s")
    assert result["ratios"] == [0.5, 0.4, 0.7]
    assert result["ratio_median"] == 0.5
    assert (result["ratio_min"], result["ratio_max"]) == (0.4, 0.7)
    assert result["dropped"] == []


def test_a_pair_at_mismatched_loads_is_dropped() -> None:
    runs = [
        _run("a", 1, 10.0, 1.0),
        _run("b", 1, 5.0, 1.5),
        _run("a", 2, 10.0, 1.0),
        _run("b", 2, 1.0, 2.5),  # loads 1.0 against 2.5: this pair is dropped
        _run("a", 3, 10.0, 2.0),
        _run("b", 3, 6.0, 2.9),
    ]
    result = harness.compare(runs, "a", "b", "wall_s")
    assert result["ratios"] == [0.5, 0.6]
    assert [d["round"] for d in result["dropped"]] == [2]
    assert result["dropped"][0]["loads"] == [1.0, 2.5]
    assert result["ratio_median"] == pytest.approx(0.55)


def test_fewer_than_two_pairs_left_is_refused() -> None:
    runs = [
        _run("a", 1, 10.0, 1.0),
        _run("b", 1, 5.0, 1.2),
        _run("a", 2, 10.0, 1.0),
        _run("b", 2, 5.0, 3.0),  # dropped
        _run("a", 3, 10.0, 4.0),
        _run("b", 3, 5.0, 1.0),  # dropped
    ]
    with pytest.raises(harness.ProtocolError, match="1 comparable pair"):
        harness.compare(runs, "a", "b", "wall_s")
    refusal = harness.compare_or_refusal(runs, "a", "b", "wall_s")
    assert "refused" in refusal and "ratio_median" not in refusal
    assert harness.ratio_cell(refusal).startswith("refused")


def test_load_is_the_mean_of_start_and_end_or_given() -> None:
    assert harness.run_load({"load_start": [1.0, 9.0, 9.0], "load_end": [2.0, 9.0, 9.0]}) == 1.5
    assert harness.run_load({"load_1m": 3.0}) == 3.0
    with pytest.raises(harness.ProtocolError):
        harness.run_load({})


def test_fewer_than_three_rounds_is_refused() -> None:
    harness.require_rounds(3)
    with pytest.raises(SystemExit):
        harness.require_rounds(2)
