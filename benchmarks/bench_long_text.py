"""Indexing one 10 MB text file through the CLI, offline (spaCy extraction, the default ONNX encoder,
embedded store): issue 27's "any length" figure.

The text is real prose: the MuSiQue (1,890) and HotpotQA (994) corpora's passages from ../shared/data,
joined by blank lines and repeated until the file is 10,000,000 bytes (about 7 times each passage: the
1.4 MB of distinct text, so after the first pass phrases and facts are mostly stored already and the
later chunks cost extraction and a passage embedding each; 10 MB of distinct text would cost more).

    python benchmarks/bench_long_text.py --out /tmp/long10mb      # writes the text, indexes it, times it

It prints the wall time, the chunk, phrase and fact counts, and the machine's load average sampled
every 30 s while it ran (the machine is shared: say the load with the figure).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SIZE = 10_000_000


def write_text(path: Path, size_bytes: int = SIZE) -> int:
    passages = [p["text"].strip() for p in json.loads((DATA / "musique/musique_corpus1890.json").read_text())]
    hotpot = json.loads((DATA / "hotpotqa/hotpotqa_corpus994.json").read_text())
    items = hotpot.items() if isinstance(hotpot, dict) else ((p["title"], p["text"]) for p in hotpot)
    passages += [("".join(t) if isinstance(t, list) else t).strip() for _, t in items]
    out: list[str] = []
    size = 0
    while size < size_bytes:
        out.append(passages[len(out) % len(passages)])
        size += len(out[-1].encode()) + 2
    path.write_text("\n\n".join(out), encoding="utf-8")
    return len(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="Folder for the text and the store.")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    text = args.out / "long10mb.txt"
    pieces = write_text(text)
    loads: list[tuple[str, float]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            loads.append((time.strftime("%H:%M:%S"), os.getloadavg()[0]))
            done.wait(30)

    threading.Thread(target=sample, daemon=True).start()
    started = time.perf_counter()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "hipporag_neo4j",
            "--store",
            str(args.out / "store"),
            "--json",
            "index",
            str(text),
            "--progress-every",
            "60",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    seconds = time.perf_counter() - started
    done.set()
    report = json.loads(run.stdout) if run.returncode in (0, 3) else {}
    one = [v for _, v in loads]
    print(
        json.dumps(
            {
                "bytes": text.stat().st_size,
                "passages_joined": pieces,
                "exit": run.returncode,
                "seconds": round(seconds, 1),
                "chunks": len(report.get("indexed", [])),
                "new_phrases": report.get("new_phrases"),
                "new_facts": report.get("new_facts"),
                "timings": report.get("timings"),
                "load_1min": {"min": min(one), "max": max(one), "mean": round(sum(one) / len(one), 1)},
                "cpus": os.cpu_count(),
                "stderr_tail": run.stderr[-2000:],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
