"""The one harness of every benchmark suite: machine, load, memory, timing, the comparison protocol, output.

Benchmarks are scripts, not tests. Each result file records, next to its numbers, the command that made
it, the date, commit, machine (CPU model, cores, RAM, library versions) and the load average before and
after, because on a 2-core machine shared with other work absolute figures move a lot.

**The comparison protocol** (issue 29, item 1), used by every suite that compares two things (A against
B: another system, another store, another backend, a plain encode):

1. at least ``MIN_ROUNDS`` (3) rounds, interleaved A B, B A, A B ... (``interleaved``: who goes first
   rotates), each run recording the 1-minute load average when it starts and when it ends;
2. a round's pair is dropped when the two runs' loads differ by more than ``MAX_LOAD_GAP`` (1.0);
3. fewer than ``MIN_PAIRS`` (2) pairs left: no ratio is reported (``ProtocolError``);
4. otherwise the figure is the median of the per-pair ratios B / A, with their min and max (the spread),
   the ratios themselves and the pairs dropped (``compare``).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import resource
import shlex
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
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


#: set by ``run.py`` to its suite name, so that a result file names the command a user types
SUITE: str | None = None


def command() -> str:
    """The command line of this run, as ``python benchmarks/run.py SUITE ...`` when run.py started it."""
    args = " ".join(shlex.quote(a) for a in sys.argv[1:])
    if SUITE is not None:
        return f"python benchmarks/run.py {SUITE} {args}".rstrip()
    script = Path(sys.argv[0])
    shown = f"benchmarks/{script.name}" if script.parent.resolve() == REPO / "benchmarks" else sys.argv[0]
    return f"python {shown} {args}".rstrip()


def run_header() -> dict[str, Any]:
    """What every result file starts with; call at the start of the run."""
    return {
        "command": command(),
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


# --- the comparison protocol ------------------------------------------------------------------------
#: Retrieval settings of every timed query: the in-process engine keeps a graph version's walk results
#: for repeated questions (``retrieval.ppr_cache_mib``), so a second pass over the same questions would
#: time a lookup; with none kept, every pass times the walk a new question takes (GDS keeps none either).
TIMED_RETRIEVAL: dict[str, Any] = {"ppr_cache_mib": 0}
MIN_ROUNDS = 3  # interleaved rounds of every comparison
MAX_LOAD_GAP = 1.0  # a pair whose two runs' 1-minute loads differ by more than this is dropped
MIN_PAIRS = 2  # fewer pairs left: no ratio


class ProtocolError(RuntimeError):
    """Too few comparable pairs (or rounds) to report a ratio."""


def require_rounds(rounds: int, what: str = "--rounds") -> None:
    """Exit (status 2) when a comparison is asked with fewer rounds than the protocol needs."""
    if rounds < MIN_ROUNDS:
        sys.exit(f"{what} {rounds}: a comparison runs at least {MIN_ROUNDS} interleaved rounds")


def interleaved(systems: Sequence[str], rounds: int) -> list[list[str]]:
    """The order of each round: A B, B A, A B ... (for more systems the first one rotates)."""
    order = list(systems)
    return [order[r % len(order) :] + order[: r % len(order)] for r in range(rounds)]


def run_load(run: Mapping[str, Any]) -> float:
    """A run's 1-minute load: ``load_1m`` if given, else the mean of its start and end 1-minute loads."""
    if "load_1m" in run:
        return float(run["load_1m"])
    ends = [run[k][0] for k in ("load_start", "load_end") if run.get(k)]
    if not ends:
        raise ProtocolError(f"a run without its load: {dict(run)}")
    return float(statistics.fmean(ends))


def compare(
    runs: Sequence[Mapping[str, Any]],
    base: str,
    other: str,
    key: str,
    *,
    system_key: str = "system",
    round_key: str = "round",
    max_load_gap: float = MAX_LOAD_GAP,
    min_pairs: int = MIN_PAIRS,
) -> dict[str, Any]:
    """``other`` / ``base`` of ``runs[key]`` under the protocol: per-round pairs, loads checked.

    ``runs`` are dicts with the system, the round, the measured value and the load (``run_load``).
    Returns the median ratio, its spread (min, max), every kept ratio and every dropped pair with its
    loads; raises ``ProtocolError`` when fewer than ``min_pairs`` pairs remain.
    """
    by_round: dict[Any, dict[str, Mapping[str, Any]]] = {}
    for run in runs:
        if run.get(key) is not None:
            by_round.setdefault(run[round_key], {})[run[system_key]] = run
    kept: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    for round_no in sorted(by_round):
        pair = by_round[round_no]
        if base not in pair or other not in pair:
            continue
        loads = [round(run_load(pair[base]), 2), round(run_load(pair[other]), 2)]
        entry = {"round": round_no, "loads": loads, "ratio": round(pair[other][key] / pair[base][key], 4)}
        if abs(loads[0] - loads[1]) > max_load_gap:
            dropped.append({**entry, "reason": f"loads differ by more than {max_load_gap}"})
        else:
            kept.append(entry)
    if len(kept) < min_pairs:
        raise ProtocolError(
            f"{other} / {base} of {key}: {len(kept)} comparable pair(s) of {len(kept) + len(dropped)}, "
            f"at least {min_pairs} needed (dropped: {dropped}); run more rounds on a quieter machine"
        )
    ratios = [e["ratio"] for e in kept]
    return {
        "base": base,
        "other": other,
        "key": key,
        "ratio_median": round(statistics.median(ratios), 4),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "ratios": ratios,
        "pairs": kept,
        "dropped": dropped,
    }


def compare_or_refusal(runs: Sequence[Mapping[str, Any]], base: str, other: str, key: str) -> dict[str, Any]:
    """``compare``, or ``{"refused": reason}`` when the protocol refuses (a result file still records why)."""
    try:
        return compare(runs, base, other, key)
    except ProtocolError as refusal:
        return {"base": base, "other": other, "key": key, "refused": str(refusal)}


def ratio_cell(comparison: Mapping[str, Any]) -> str:
    """``0.65 (0.61-0.70, 3 pairs)`` or ``refused: ...`` for a markdown table."""
    if "refused" in comparison:
        return "refused (too few pairs at comparable load)"
    pairs, dropped = len(comparison["ratios"]), len(comparison["dropped"])
    note = f", {dropped} dropped" if dropped else ""
    return (
        f"{comparison['ratio_median']:.3f} ({comparison['ratio_min']:.3f}-{comparison['ratio_max']:.3f}, "
        f"{pairs} pairs{note})"
    )


# --- a Neo4j server of a benchmark's own (the neo4j and trees suites) --------------------------------
SERVER_SCRIPT = REPO / "scripts" / "neo4j_server.py"
_DROP = "MATCH (n {namespace: $namespace}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS"


def start_server(pair: str, home: Path, heap: str, transaction_memory: str) -> tuple[str, str]:
    """Start ``pair`` with scripts/neo4j_server.py on free loopback ports; (uri, password)."""
    subprocess.run(
        [
            sys.executable,
            str(SERVER_SCRIPT),
            "start",
            "--pair",
            pair,
            "--home",
            str(home),
            "--bolt-port",
            "0",
            "--http-port",
            "0",
            "--heap",
            heap,
            "--transaction-memory",
            transaction_memory,
        ],
        check=True,
    )
    env = dict(
        line.removeprefix("export ").split("=", 1)
        for line in (home / "neo4j.env").read_text().splitlines()
        if line.startswith("export ")
    )
    return env["HIPPORAG_NEO4J_URI"], env["HIPPORAG_NEO4J_PASSWORD"]


def stop_server(pair: str, home: Path) -> None:
    subprocess.run(
        [sys.executable, str(SERVER_SCRIPT), "stop", "--pair", pair, "--home", str(home)], check=False
    )


def drop_namespace_plain(uri: str, password: str, namespace: str) -> None:
    """Delete every node of ``namespace`` (in batches) on the server at ``uri``."""
    import neo4j

    with neo4j.GraphDatabase.driver(uri, auth=("neo4j", password)) as driver, driver.session() as session:
        session.run(_DROP, namespace=namespace).consume()
