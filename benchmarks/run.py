"""Run one benchmark suite: ``python benchmarks/run.py SUITE [options]`` (``SUITE --help`` for its options).

Every suite writes one result file pair, ``benchmarks/results/<stem>.md`` and ``.json``, starting with the
command that made it, the date, commit, machine, CPU model and loads; comparisons follow the protocol of
``harness.py`` (at least 3 interleaved rounds, pairs at different loads dropped, median ratio and spread).
``benchmarks/README.md`` says which suite answers which question and which command made each figure.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: suite -> (module in benchmarks/, what it measures)
SUITES: dict[str, tuple[str, str]] = {
    "quality": ("bench_quality", "R@k / AR@k of every retrieval mode on MuSiQue or HotpotQA (no LLM)"),
    "speed": (
        "bench_speed",
        "index and query per stage and memory, against the torch path and a plain encode",
    ),
    "scale": (
        "bench_scale",
        "synthetic stores of 10k-1M phrases: writes, warm queries, first query after a write",
    ),
    "scale-suite": (
        "bench_scale_suite",
        "MuSiQue-shaped corpora XS/S/M/L indexed through index_openie, per store and engine",
    ),
    "neo4j": ("bench_neo4j_vs_embedded", "the Neo4j store against the embedded store on a live server"),
    "gds-pagerank": (
        "bench_gds_pagerank",
        "GDS PageRank on an indexed namespace: per-query threads, supersteps, against embedded and local",
    ),
    "vs_hipporag2": ("bench_vs_hipporag2", "side by side with the original HippoRAG 2 (its own venv)"),
    "rw_load": (
        "bench_rw_load",
        "one serve process: query latency with 10% one-passage writes against reads only (issue 36)",
    ),
    "trees": (
        "bench_trees",
        "two checkouts (before / after a refactor): same answers bit for bit, query time",
    ),
    "copy-read": (
        "bench_copy_read",
        "a new client's read of a Neo4j namespace into its copy: with and without the driver's data() walk",
    ),
    "ann": ("bench_ann", "nearest-neighbour indexes for the synonym step: build, add, query, recall"),
    # two quality add-ons that a figure in the docs comes from
    "quality-ablation": ("ablation_hipporag2", "each design choice of hipporag2 alone, on both data sets"),
    "quality-local-llm": (
        "bench_local_llm",
        "extraction by a small local LLM against spaCy (llama.cpp server)",
    ),
}


def usage() -> str:
    width = max(len(name) for name in SUITES)
    rows = "\n".join(f"  {name:<{width}}  {what}" for name, (_, what) in SUITES.items())
    return f"usage: python benchmarks/run.py SUITE [options]\n\nsuites:\n{rows}\n"


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in SUITES:
        print(usage(), file=sys.stderr if argv and argv[0] not in ("-h", "--help") else sys.stdout)
        sys.exit(0 if argv and argv[0] in ("-h", "--help") else 2)
    suite, rest = argv[0], argv[1:]
    sys.path.insert(0, str(HERE))
    import harness

    harness.SUITE = suite
    module = importlib.import_module(SUITES[suite][0])
    sys.argv = [str(HERE / f"{SUITES[suite][0]}.py"), *rest]  # the suite parses sys.argv[1:]
    module.main()


if __name__ == "__main__":
    main(sys.argv[1:])
