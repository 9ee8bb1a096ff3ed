"""One big text file through ``hipporag-neo4j index`` as a user runs it unattended (issue 37 item 4, and
item 3's progress and SIGTERM): offline (spaCy extraction, the default ONNX encoder, embedded store).

The text is real prose, the MuSiQue and HotpotQA passages from ../shared/data repeated to the size asked
(``bench_long_text.write_text``). Indexing 50 MB offline takes hours, so the script measures what a user
meets before and around that, in two runs of the real CLI in a subprocess, stderr not a terminal:

1. the first run: peak resident memory (VmHWM, sampled every 0.5 s, and the child's ru_maxrss), how long
   until the plan line (chunks counted: chunking done) and the estimate, the gaps between progress lines,
   then SIGTERM once ``--batches`` batches are written: the exit code and the message, and ``list`` to
   check that the store holds exactly the passages the message says;
2. the resumed run: how long until it starts indexing again (the stored chunks are not cut again), then
   SIGTERM after one more batch, and ``list`` again (no passage twice).

    python benchmarks/bench_big_file.py --out /tmp/big --mb 50

It prints a JSON object per phase as it ends; the machine is shared, so it samples the 1-minute load
average too.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench_long_text import write_text

ROOT = Path(__file__).resolve().parents[1]
WRITTEN = re.compile(r"indexing passages: ([\d,]+)/([\d,]+)")


def _kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_until(command: list[str], env: dict[str, str], batches: int, timeout: float) -> dict[str, Any]:
    """Run ``command``; SIGTERM once ``batches`` more batches are written (or at ``timeout``)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.monotonic()
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []
    peak = {"hwm_kb": 0}
    loads: list[float] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak["hwm_kb"] = max(peak["hwm_kb"], _kb(child.pid, "VmHWM"))
            if "plan_kb" not in peak and any("to index:" in x for _, x in lines):
                peak["plan_kb"] = peak["hwm_kb"]  # the peak until the plan: chunking done, spaCy loaded
            if not loads or len(loads) * 30 < time.monotonic() - started:
                loads.append(os.getloadavg()[0])
            done.wait(0.5)

    def read() -> None:
        assert child.stderr is not None
        for line in child.stderr:
            lines.append((round(time.monotonic() - started, 1), line.rstrip("\n")))

    threading.Thread(target=sample, daemon=True).start()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    signalled = None
    while child.poll() is None and time.monotonic() - started < timeout:
        written = {int(m[1].replace(",", "")) for _, text in lines if (m := WRITTEN.search(text))}
        if len(written - {0}) >= batches:  # the counts after each batch written, 0 before the first
            break
        time.sleep(1)
    if child.poll() is None:
        signalled = round(time.monotonic() - started, 1)
        child.send_signal(signal.SIGTERM)
    child.wait(timeout=1800)  # stderr is the reader thread's alone (communicate would take lines from it)
    reader.join(timeout=10)
    assert child.stdout is not None
    out = child.stdout.read()
    done.set()
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    plan = next(((t, x) for t, x in lines if "to index:" in x), None)
    estimate = next(((t, x) for t, x in lines if "estimate:" in x), None)
    stamped = [t for t, x in lines if x.startswith("[") and ("passages:" in x)]
    return {
        "exit": child.returncode,
        "seconds": round(time.monotonic() - started, 1),
        "sigterm_at": signalled,
        "peak_rss_mb": round(max(peak["hwm_kb"], after if after > before else 0) / 1024),
        "peak_rss_mb_until_plan": round(peak["plan_kb"] / 1024) if "plan_kb" in peak else None,
        "plan_at": plan[0] if plan else None,
        "plan": plan[1] if plan else None,
        "estimate": estimate[1] if estimate else None,
        "progress_lines": len(stamped),
        "first_progress_line_at": stamped[0] if stamped else None,
        "largest_gap_between_progress_lines": max(
            (b - a for a, b in itertools.pairwise(stamped)), default=None
        ),
        "message": next((x for _, x in lines if "interrupted" in x), None),
        "stderr_tail": [x for _, x in lines[-8:]],
        "stdout": out[-500:],
        "load_1min": {"min": min(loads), "max": max(loads), "mean": round(sum(loads) / len(loads), 1)}
        if loads
        else None,
    }


def stored(base: list[str], env: dict[str, str]) -> dict[str, int]:
    listed = subprocess.run([*base, "--json", "list"], env=env, capture_output=True, text=True, check=True)
    ids = [p["id"] for p in json.loads(listed.stdout)]
    return {"passages": len(ids), "distinct": len(set(ids))}


#: One chunking run in its own process: the text, then ``prepare_sources`` of this checkout or of the
#: pipeline module at ``--ab-base`` (the code before issue 37), printing seconds and peak memory.
AB_CHILD = """
import importlib.util, json, resource, sys, time
from hipporag_neo4j.embedding.encoder import create_embedder
from hipporag_neo4j.models import IndexReport, PassageInput
from hipporag_neo4j.settings import load_settings
module, path = sys.argv[1], sys.argv[2]
if module == "base":
    spec = importlib.util.spec_from_file_location("base_pipeline", sys.argv[3])
    pipeline = importlib.util.module_from_spec(spec)
    sys.modules["base_pipeline"] = pipeline
    spec.loader.exec_module(pipeline)
else:
    from hipporag_neo4j.indexing import pipeline
text = open(path, encoding="utf-8").read()
embedder = create_embedder(load_settings().embedding)
embedder.token_count("warm up")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
report = IndexReport()
pipeline.prepare_sources([PassageInput(id="big", text=text)], embedder, pipeline.IndexingOptions(), report)
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": round(seconds, 1), "chunks": len(report.chunked["big"]),
                  "rss_before_mb": before // 1024, "peak_rss_mb": peak // 1024}))
"""


def ab_chunking(out: Path, mb: float, base: str, rounds: int) -> None:
    """Chunking alone, the code at ``base`` against this checkout's, interleaved in fresh processes."""
    text = out / f"ab{mb:g}.txt"
    write_text(text, int(mb * 1e6))
    old = out / "base_pipeline.py"
    shown = subprocess.run(
        ["git", "show", f"{base}:hipporag_neo4j/indexing/pipeline.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    old.write_text(shown.stdout, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows = []
    for round_ in range(rounds):
        for which in ("base", "this"):
            load = os.getloadavg()[0]
            run = subprocess.run(
                [sys.executable, "-c", AB_CHILD, which, str(text), str(old)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            rows.append(
                {"round": round_, "code": which, "load_1min": load, **json.loads(run.stdout.splitlines()[-1])}
            )
            print(json.dumps(rows[-1]), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="Folder for the text and the store.")
    parser.add_argument("--mb", type=float, default=50.0, help="Size of the text in MB (10^6 bytes).")
    parser.add_argument("--batches", type=int, default=1, help="Batches to write before SIGTERM.")
    parser.add_argument("--progress-every", type=float, default=15.0)
    parser.add_argument("--timeout", type=float, default=3600.0, help="SIGTERM after this many seconds.")
    parser.add_argument(
        "--ab-base", help="Instead: chunking alone, the code at this commit against this checkout's."
    )
    parser.add_argument("--rounds", type=int, default=2, help="With --ab-base: interleaved rounds.")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.ab_base:
        ab_chunking(args.out, args.mb, args.ab_base, args.rounds)
        return
    text = args.out / "big.txt"
    if not text.exists() or abs(text.stat().st_size - args.mb * 1e6) > 1e5:
        write_text(text, int(args.mb * 1e6))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    base = [sys.executable, "-m", "hipporag_neo4j", "--store", str(args.out / "store")]
    command = [*base, "index", str(text), "--progress-every", str(args.progress_every)]
    result: dict[str, Any] = {
        "bytes": text.stat().st_size,
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": " ".join(command[1:]),
    }
    print(json.dumps(result), flush=True)  # a line per phase as it ends: a long run's figures come early
    first = run_until(command, env, args.batches, args.timeout)
    print(json.dumps({"first_run": first, "after_first_run": stored(base, env)}, indent=2), flush=True)
    resumed = run_until(command, env, 1, args.timeout)
    print(json.dumps({"resumed_run": resumed, "after_resumed_run": stored(base, env)}, indent=2), flush=True)


if __name__ == "__main__":
    main()
