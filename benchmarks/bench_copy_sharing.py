"""What each client process of one Neo4j namespace costs in memory when they start from the copy on disk
(``neo4j.copy_cache``): ``--workers`` processes (as ``serve`` workers or CLI calls on one machine) each
open the store, answer one question in process and report their resident memory, split as Linux counts it
(``/proc/self/smaps_rollup``): private (this process's own) and shared (pages of files mapped by several).
Run with package trees given by ``--tree LABEL=PATH`` (put first on ``sys.path``), rounds interleaved
(A B A B), so two versions of the package compare side by side.

    source neo4j.env   # HIPPORAG_NEO4J_URI, HIPPORAG_NEO4J_PASSWORD of a server holding the namespace
    python benchmarks/bench_copy_sharing.py --namespace scale_M --copy-cache-dir DIR \\
        --tree before=/path/to/old/checkout --tree after=. --workers 2 --rounds 2

The namespace's copy must be in ``DIR`` at the namespace's current graph version (a run of the scale suite
with ``--keep`` leaves it there); a process that reads the namespace over Bolt instead says so
(``restored`` false) and its figures are not comparable.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CHILD = r"""
import json, os, sys, time
import numpy as np
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.neo4j import Neo4jStore
settings = load_settings({"store": {"backend": "neo4j"}, "neo4j": {
    "uri": os.environ["HIPPORAG_NEO4J_URI"], "password": os.environ["HIPPORAG_NEO4J_PASSWORD"],
    "namespace": sys.argv[1], "ppr_engine": "local", "copy_cache_dir": sys.argv[2]}}, env_file=None)
store = Neo4jStore(settings.neo4j)
meta = store.open(store.meta().embedding_model, store.meta().embedding_dim)
start = time.perf_counter()
view = store.view()
rng = np.random.default_rng(0)
q = rng.standard_normal(meta.embedding_dim).astype(np.float32)
q /= np.linalg.norm(q)
hits = view.nearest_phrases(np.stack([q]), 5, -1.0)[0]
view.nearest_facts(q, 5)
view.dense_passage_scores(q, 5)
view.graph_passage_scores({hits[0].id: 1.0}, WalkParams(), 5, 2)
seconds = time.perf_counter() - start
print(json.dumps({"restored": store.copy.reads.get("restored", 0) == 1, "reads": store.copy.reads,
                  "first_query_s": round(seconds, 2)}), flush=True)
sys.stdin.readline()  # every worker has answered: now measure, all of them holding their copies
fields = {}
with open("/proc/self/smaps_rollup") as f:
    for line in f:
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
            fields[parts[0][:-1]] = int(parts[1])
print(json.dumps({"rss_mib": round(fields["Rss"] / 1024, 1), "pss_mib": round(fields["Pss"] / 1024, 1),
                  "private_mib": round((fields["Private_Clean"] + fields["Private_Dirty"]) / 1024, 1),
                  "shared_mib": round((fields["Shared_Clean"] + fields["Shared_Dirty"]) / 1024, 1)}),
      flush=True)
sys.stdin.readline()  # hold the memory until every worker has been measured
"""


def run_round(tree: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, args.namespace, str(args.copy_cache_dir)],
            env=env,
            cwd="/",  # not the checkout this script runs from: `python -c` puts the cwd first on sys.path
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(args.workers)
    ]
    found = []
    for p in procs:
        assert p.stdout is not None
        found.append(json.loads(p.stdout.readline()))
    for p, worker in zip(procs, found, strict=True):
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write("\n")
        p.stdin.flush()
        worker.update(json.loads(p.stdout.readline()))
    for p in procs:
        p.communicate("\n", timeout=120)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--copy-cache-dir", type=Path, required=True)
    parser.add_argument("--tree", action="append", required=True, help="LABEL=PATH of a package checkout")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    trees = [(label, Path(path).resolve()) for label, path in (t.split("=", 1) for t in args.tree)]
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores; {time.strftime('%F %T')}")
    for r in range(1, args.rounds + 1):
        for label, tree in trees:
            load = os.getloadavg()[0]
            workers = run_round(tree, args)
            print(
                json.dumps({"round": r, "tree": label, "load": round(load, 2), "workers": workers}),
                flush=True,
            )


if __name__ == "__main__":
    main()
