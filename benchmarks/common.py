"""Shared helpers of the speed / memory / scale benchmarks: machine facts, load, memory, timing, output.

Benchmarks are scripts, not tests. Each one records, next to its numbers, the command, date, commit,
machine (CPU model, cores, RAM, library versions) and the load average before and after, because on a
2-core machine shared with other work the absolute figures move a lot: compare ratios from one run.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import resource
import shlex
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
MUSIQUE = REPO.parent / "shared" / "data" / "musique"
OPENIE_FILE = MUSIQUE / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json"
QUESTIONS_FILE = MUSIQUE / "musique_dev70.json"

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def require_files(*paths: Path) -> None:
    """Exit with a clear message (status 2) when benchmark data is absent."""
    missing = [p for p in paths if not p.is_file()]
    if missing:
        names = "\n  ".join(str(p) for p in missing)
        sys.exit(
            f"benchmark data not found:\n  {names}\n"
            f"Put the MuSiQue files of HippoRAG (corpus, openie_musique_corpus1890_gpt-3.5-turbo-1106.json, "
            f"musique_dev70.json) in {MUSIQUE} (../shared/data/musique from the repository root)."
        )


# --- machine and run facts -----------------------------------------------------------------------
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine_info() -> dict[str, Any]:
    """CPU, cores, RAM and library versions (read from package metadata: nothing heavy is imported)."""
    info: dict[str, Any] = {
        "cpu_model": cpu_model(),
        "logical_cores": os.cpu_count(),
        "physical_cores": psutil.cpu_count(logical=False),
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
    }
    for package in ("numpy", "scipy", "torch", "sentence-transformers", "spacy"):
        info[package] = _version(package)
    threads = {
        k: os.environ[k]
        for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
        if k in os.environ
    }
    if threads:
        info["thread_env"] = threads
    if "torch" in sys.modules:  # only when the benchmark uses torch anyway
        info["torch_threads"] = sys.modules["torch"].get_num_threads()
    return info


def git_commit() -> dict[str, Any]:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    dirty = git("status", "--porcelain", "--", "hipporag_neo4j")
    return {"commit": git("rev-parse", "HEAD"), "package_dirty": bool(dirty)}


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_header() -> dict[str, Any]:
    """What every result file starts with; call at the start of the run."""
    return {
        "command": "python " + " ".join(shlex.quote(a) for a in sys.argv),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        **git_commit(),
        "machine": machine_info(),
        "load_before": load_average(),
    }


# --- memory ---------------------------------------------------------------------------------------
def rss_mib() -> float:
    return float(psutil.Process().memory_info().rss) / 2**20


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class RssSampler:
    """Samples this process's RSS in a thread; ``peak_mib`` is the highest seen inside the block."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak_mib = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        process = psutil.Process()
        while not self._stop.is_set():
            self.peak_mib = max(self.peak_mib, process.memory_info().rss / 2**20)
            self._stop.wait(self.interval)

    def __enter__(self) -> RssSampler:
        self.peak_mib = rss_mib()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_mib = max(self.peak_mib, rss_mib())


def dir_size_mib(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


# --- timing ---------------------------------------------------------------------------------------
@contextmanager
def timed(into: dict[str, float], key: str) -> Iterator[None]:
    """Add the seconds spent in the block to ``into[key]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        into[key] = into.get(key, 0.0) + time.perf_counter() - start


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    """n, p50, p95, mean, min, max in milliseconds."""
    if not seconds:
        return {"n": 0}
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    return {
        "n": len(ms),
        "p50_ms": round(float(np.percentile(ms, 50)), 3),
        "p95_ms": round(float(np.percentile(ms, 95)), 3),
        "mean_ms": round(float(ms.mean()), 3),
        "min_ms": round(float(ms.min()), 3),
        "max_ms": round(float(ms.max()), 3),
    }


# --- output ---------------------------------------------------------------------------------------
def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
        if isinstance(value, int):
            return f"{value:,}"
        return "" if value is None else str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def md_header(title: str, header: dict[str, Any]) -> str:
    m = header["machine"]
    versions = ", ".join(
        f"{name} {m[name]}"
        for name in ("python", "numpy", "scipy", "torch", "sentence-transformers", "sqlite")
        if m.get(name)
    )
    threads = f", torch threads {m['torch_threads']}" if "torch_threads" in m else ""
    dirty = " (package files modified)" if header.get("package_dirty") else ""
    return "\n".join(
        [
            f"# {title}",
            "",
            f"- command: `{header['command']}`",
            f"- date (UTC): {header['date']}",
            f"- commit: `{header['commit'][:12]}`{dirty}",
            f"- machine: {m['cpu_model']}, {m['logical_cores']} logical cores, "
            f"{m['ram_gib']} GiB RAM{threads}",
            f"- versions: {versions}",
            f"- load average (1/5/15 min) before: {header['load_before']}, after: {header.get('load_after')}",
            "",
        ]
    )


def write_results(stem: str, data: dict[str, Any], markdown: str) -> tuple[Path, Path]:
    """Write ``results/<stem>.json`` and ``results/<stem>.md``; returns both paths."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    json_path, md_path = RESULTS / f"{stem}.json", RESULTS / f"{stem}.md"
    json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    md_path.write_text(markdown.rstrip() + "\n")
    return json_path, md_path
