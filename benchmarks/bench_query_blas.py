"""The default mode's queries with numpy's BLAS left alone and limited to 1 thread, side by side (issue 19).

Two servers (``vs_hipporag2_ours.py serve``) on the same kept store of ``bench_default_install.py``
(``--keep-dir DIR``, its ``ours-default`` build): today's defaults, and the same with
``HIPPORAG_RETRIEVAL__QUERY_BLAS_THREADS=1``. The questions with gold passages in the store are alternated
per question (rotating who goes first), ``--passes`` times; reported: p50 / p95 of one retrieve, p50 of
each stage, the ratio, and how many top-10 lists are identical.

    python benchmarks/bench_query_blas.py --keep-dir DIR [--passages 300] [--passes 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
from bench_vs_hipporag2 import Server, load_gold
from harness import latency_summary, load_average, md_header, md_table, run_header, write_results

SYSTEMS = ("ours-default", "ours-default-blas1")
STAGES = ("encode", "query_ner", "fact_search", "link", "dense_search", "ppr_and_aggregation", "total")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keep-dir", type=Path, required=True)
    parser.add_argument("--passages", type=int, default=300)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--stem", default="query_blas")
    args = parser.parse_args()
    args.threads = args.query_threads = 1
    args.hipporag2_python = None
    header = run_header()
    questions, _gold = load_gold(args.passages)
    seconds: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    stages: dict[str, dict[str, list[float]]] = {s: {} for s in SYSTEMS}
    ranked: dict[str, list[list[int]]] = {s: [] for s in SYSTEMS}
    with (args.keep_dir / "workers.log").open("a") as log:
        servers = {s: Server(s, args, args.keep_dir, log) for s in SYSTEMS}
        try:
            load_start = load_average()
            for pass_no in range(args.passes):
                for i, question in enumerate(questions):
                    first = (i + pass_no) % 2
                    for system in SYSTEMS[first:] + SYSTEMS[:first]:
                        answer = servers[system].ask({"q": question})
                        seconds[system].append(answer["s"])
                        ranked[system].append(answer["ranked"])
                        for k, v in answer["timings"].items():
                            stages[system].setdefault(k, []).append(v)
            load_end = load_average()
        finally:
            for server in servers.values():
                server.close()
    latency = {s: latency_summary(v) for s, v in seconds.items()}
    stage_p50 = {
        s: {k: round(1000 * float(np.percentile(v, 50)), 2) for k, v in by.items()}
        for s, by in stages.items()
    }
    same = sum(a == b for a, b in zip(*ranked.values(), strict=True))
    data: dict[str, Any] = {
        **header,
        "questions": len(questions),
        "passes": args.passes,
        "load_start": load_start,
        "load_end": load_end,
        "latency": latency,
        "stage_p50_ms": stage_p50,
        "same_top10": same,
        "per_query_s": seconds,
    }
    base = latency["ours-default"]["p50_ms"]
    markdown = "\n".join(
        [
            md_header("Queries with numpy's BLAS on 1 thread (retrieval.query_blas_threads)", data),
            f"Store: the `ours-default` build of `{args.keep_dir}` ({args.passages} MuSiQue passages); "
            f"{len(questions)} questions × {args.passes} passes alternated; load {load_start} → {load_end}. "
            f"Identical top-10 lists: {same} of {len(ranked['ours-default'])}.",
            "",
            md_table(
                ["system", "p50 ms", "p95 ms", "p50 / default", *STAGES],
                [
                    [
                        s,
                        latency[s]["p50_ms"],
                        latency[s]["p95_ms"],
                        round(latency[s]["p50_ms"] / base, 2),
                        *(stage_p50[s].get(k, "-") for k in STAGES),
                    ]
                    for s in SYSTEMS
                ],
            ),
        ]
    )
    json_path, md_path = write_results(args.stem, data, markdown)
    print(md_path.read_text())
    print(f"wrote {json_path} and {md_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
