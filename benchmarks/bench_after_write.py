"""Warm ``hipporag2`` p50 and the first query after one-passage writes, on an embedded store the scale
suite built (``python benchmarks/run.py scale-suite --size SIZE --store embedded --keep --workdir DIR``),
with no walk result kept (``harness.TIMED_RETRIEVAL``: every pass times the walk a new question takes).

Prints, one line each: the open + first query, the p50 of each of ``--passes`` passes over ``--questions``
questions, and for each of ``--writes`` one-passage writes (deleted again at the end) the write's seconds
and the first ``hipporag2`` query's after it (``--pause``: seconds idle before each write); then three more
queries. ``--profile`` prints cProfile's cumulative top 40 of the second write's first query. Side by side
with another checkout:
``benchmarks/ab_after_write.sh`` (used for benchmarks/results/walk_cache_and_carry.md)::

    python benchmarks/bench_after_write.py --size L --workdir /work/scaleL [--questions 10] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import time
from pathlib import Path

from bench_scale import NamedEntities
from bench_scale_suite import one_passage_doc, questions, settings_for
from scale_corpus import HashEmbedder

from hipporag_neo4j import HippoRAG


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", required=True)
    parser.add_argument("--workdir", type=Path, required=True, help="the scale suite's --workdir")
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--writes", type=int, default=3)
    parser.add_argument(
        "--pause", type=float, default=0.0, help="seconds idle before each write (a user's writes are spaced)"
    )
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    suite = argparse.Namespace(store="embedded", size=args.size, workdir=args.workdir)
    qs = questions(args.workdir / f"openie_{args.size}_seed0.json", args.questions, 0)
    ner = NamedEntities({q: e for q, e in qs})
    start = time.perf_counter()
    memory = HippoRAG(settings_for(suite, None), embedder=HashEmbedder(), query_ner=ner)
    memory.retrieve(qs[0][0], mode="hipporag2")
    print("open+first", round(time.perf_counter() - start, 2), flush=True)
    for p in range(args.passes):
        seconds = []
        for q, _ in qs:
            start = time.perf_counter()
            memory.retrieve(q, mode="hipporag2")
            seconds.append(time.perf_counter() - start)
        print("warm pass", p, "p50 ms", round(statistics.median(seconds) * 1000, 1), flush=True)
    written: list[str] = []
    for n in range(args.writes):
        doc = args.workdir / f"after_write_{args.size}_{n}.json"
        doc.write_text(json.dumps({"docs": [one_passage_doc(200 + n, 0)]}))
        time.sleep(args.pause)
        start = time.perf_counter()
        written += memory.index_openie(doc).indexed
        write_s = time.perf_counter() - start
        profile = cProfile.Profile() if args.profile and n == 1 else None
        start = time.perf_counter()
        if profile is not None:
            profile.enable()
        memory.retrieve(qs[n % len(qs)][0], mode="hipporag2")
        if profile is not None:
            profile.disable()
        after = round(time.perf_counter() - start, 3)
        print("write", round(write_s, 3), "first query after", after, flush=True)
        if profile is not None:
            pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
    for k in range(3):
        start = time.perf_counter()
        memory.retrieve(qs[(args.writes + k) % len(qs)][0], mode="hipporag2")
        print("next", round(time.perf_counter() - start, 3))
    memory.delete(written)
    memory.close()


if __name__ == "__main__":
    main()
