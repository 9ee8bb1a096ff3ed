"""The side-by-side benchmark's argument parsing, ratios and report on a tiny synthetic result.

Nothing is run and no time is asserted: the benchmark itself needs HippoRAG 2's venv and the MuSiQue data.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import bench_vs_hipporag2 as bench  # noqa: E402  (benchmarks/ is not a package)


def _build(system: str, round_no: int, wall: float, cpu: float) -> dict[str, Any]:
    return {
        "system": system,
        "round": round_no,
        "index_wall_s": wall,
        "index_cpu_s": cpu,
        "process_wall_s": wall + 10,
        "process_cpu_s": cpu + 10,
        "load_start": [1.0, 1.0, 1.0],
        "load_end": [2.0, 1.0, 1.0],
        "stages_s": {"embedding": wall - 1},
        "counts": {"passages": 3},
    }


def _data() -> dict[str, Any]:
    data: dict[str, Any] = {
        "command": "python benchmarks/bench_vs_hipporag2.py --rounds 2",
        "date": "2026-11-23T00:00:00+00:00",
        "commit": "0" * 40,
        "package_dirty": False,
        "machine": {"cpu_model": "test CPU", "logical_cores": 2, "ram_gib": 1.0, "python": "3.11"},
        "load_before": [1.0, 1.0, 1.0],
        "load_after": [2.0, 1.0, 1.0],
        "systems": ["theirs", "ours-torch"],
        "threads": 2,
        "passages": 3,
        "builds": [
            _build("theirs", 1, 100.0, 200.0),
            _build("ours-torch", 1, 50.0, 80.0),
            _build("theirs", 2, 200.0, 220.0),
            _build("ours-torch", 2, 60.0, 110.0),
        ],
        "query": {
            "questions": 2,
            "passes": 1,
            "torch_threads": 1,
            "load_start": [1.0, 1.0, 1.0],
            "load_end": [1.0, 1.0, 1.0],
            "systems": {
                "theirs": {
                    "latency": {"p50_ms": 100.0, "p95_ms": 150.0, "mean_ms": 110.0},
                    "recall_percent": {"R@2": 50.0, "R@5": 75.0},
                    "stage_p50_ms": {},
                },
                "ours-torch": {
                    "latency": {"p50_ms": 40.0, "p95_ms": 60.0, "mean_ms": 45.0},
                    "recall_percent": {"R@2": 50.0, "R@5": 80.0},
                    "stage_p50_ms": {"encode": 20.0},
                },
            },
            "cosine_onnx_vs_torch": None,
        },
    }
    data["summary"] = bench.summarise(data)
    return data


def test_ratios_are_per_round_pairs() -> None:
    summary = _data()["summary"]
    assert summary["index"]["ours-torch"]["ratio_index_wall_s"] == [0.5, 0.3]
    assert summary["index"]["ours-torch"]["ratio_index_cpu_s"] == [0.4, 0.5]
    assert summary["query"]["ours-torch"]["ratio_p50"] == 0.4
    # the harness's protocol: the median of the per-round ratios, both rounds at comparable loads
    assert summary["index"]["ours-torch"]["protocol"]["index_wall_s"]["ratio_median"] == 0.4


def test_report_shows_every_build_and_both_systems_quality() -> None:
    text = bench.markdown(_data())
    assert text.count("| HippoRAG 2 (2.0.0a4) |") == 4  # two builds, stages, query
    assert "| ours, torch | 0.50, 0.30 | 0.40, 0.50 |" in text
    assert "| ours, torch | 40.0 | 60.0 | 45.0 | 0.400 | 50.0 | 80.0 |" in text
    assert "encode 20.0" in text


def test_arguments() -> None:
    args = bench.parse_args(["--systems", "theirs,ours-onnx", "--rounds", "3"])
    assert args.systems == ["theirs", "ours-onnx"] and args.rounds == 3
    with pytest.raises(SystemExit):
        bench.parse_args(["--systems", "theirs,nobody"])
    with pytest.raises(SystemExit):
        bench.parse_args(["--skip-index"])


def test_recall_counts_gold_in_the_top_k() -> None:
    assert bench.recall([1, 2], [2, 9, 1], 2) == 0.5
    assert bench.recall([1, 2], [2, 9, 1], 5) == 1.0
