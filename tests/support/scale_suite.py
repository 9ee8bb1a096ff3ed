"""Run the benchmark ``scale-suite`` at size XS as a smoke test (tests/slow, tests/neo4j)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"


def openie_or_skip() -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from scale_corpus import OPENIE_FILE
    finally:
        sys.path.remove(str(BENCHMARKS))
    if not OPENIE_FILE.is_file():
        pytest.skip(f"MuSiQue's OpenIE not found: {OPENIE_FILE} (read-only shared data, not in the repo)")


def run_smoke(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``run.py scale-suite --size XS`` with few questions into ``tmp_path``; its result JSON."""
    openie_or_skip()
    out = tmp_path / "results"
    command = [
        sys.executable,
        str(BENCHMARKS / "run.py"),
        "scale-suite",
        "--size",
        "XS",
        "--workdir",
        str(tmp_path / "work"),
        "--out-dir",
        str(out),
        "--stem",
        "smoke",
        "--questions",
        "3",
        "--query-rounds",
        "1",
        "--writes",
        "1",
        *args,
    ]
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    done = subprocess.run(command, capture_output=True, text=True, env=full_env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (out / "smoke.md").is_file()
    data: dict[str, Any] = json.loads((out / "smoke.json").read_text())
    return data


def check_smoke(data: dict[str, Any], engines: list[str]) -> None:
    """The namespace holds the whole corpus, with synonym edges; every mode and stage was timed."""
    stats = data["index"]["stats"]
    assert data["index"]["reused"] is False
    assert data["index"]["indexed"] == data["corpus"]["passages"] == stats["passages"] == 200
    assert data["index"]["failed"] == 0
    assert stats["phrases"] > 1000 and stats["relation_edges"] > 1000
    assert stats["synonym_edges"] > 0  # the generator's name variants give the synonym step work
    assert data["index"]["store_calls"]["write_synonyms"]["calls"] >= 1
    assert sorted(data["queries"]) == sorted(engines)
    for engine in engines:
        q = data["queries"][engine]
        assert all(summary["n"] == 3 for summary in q["modes"].values())
        assert len(q["after_write"]) == 1
        assert data["cold_start"][engine]["open_and_first_query_s"] > 0
