"""HippoRAG 2's passage walk at scale: forward push time and top-10 by push epsilon (issue 19 profile).

On a store kept by ``bench_open.py`` (its persisted snapshot mapped), for ``--queries`` random query
vectors: the reset of the default mode on a large store (two phrase seeds, the best ``--seeds`` passages
by dense score normalised over the best ``--seeds`` + 1, x 0.05), then ``ppr.forward_push`` on the
phrase + passage graph at each epsilon. Per run: time, whether the top 10 passages are in the same order
as at the first epsilon, and whether the push certifies the top 10 (set / order) from its error bound
``epsilon x strength / (1 - damping)``.

    python benchmarks/bench_walk_epsilon.py --store DIR [--queries 5] [--epsilons 1e-8,1e-7,1e-6]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_scale import MODEL, unit_vectors
from common import load_average, md_header, md_table, run_header, write_results

from hipporag_neo4j.graph.ppr import forward_push
from hipporag_neo4j.stores.embedded import EmbeddedStore


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", required=True)
    parser.add_argument("--queries", type=int, default=5)
    parser.add_argument("--seeds", default="2000", help="passages seeded, comma-separated (all: every one)")
    parser.add_argument("--epsilons", default="1e-8,1e-7,1e-6")
    parser.add_argument("--stem", default="walk_epsilon")
    args = parser.parse_args()
    data: dict[str, Any] = {**run_header(), "store": args.store, "runs": []}
    store = EmbeddedStore(Path(args.store))
    store.open(MODEL, 384)
    graph = store._graph()
    transition, _ = graph.passage_graph()
    strength = np.asarray(graph.passage_strength())
    n_ph, n_pa = len(graph.phrases.ids), len(graph.passage_ids)
    data["walk_nnz"], data["phrases"], data["passages"] = int(transition.nnz), n_ph, n_pa
    rng = np.random.default_rng(0)
    damping = 0.5
    seed_counts = [n_pa if x == "all" else int(x) for x in args.seeds.split(",")]
    for query in range(args.queries):
        sims = np.asarray(graph.passage_vectors @ unit_vectors(rng, 1, 384)[0])
        order = np.argsort(-sims)
        phrases = rng.choice(n_ph, 2, replace=False)
        for seeds in seed_counts:
            reset = np.zeros(n_ph + n_pa)
            reset[phrases] = [1 / 10, 1 / 12]
            if seeds:
                top = order[:seeds]
                low = sims[order[seeds]] if seeds < n_pa else sims.min()
                reset[n_ph + top] = np.maximum((sims[top] - low) / (sims[order[0]] - low), 0) * 0.05
            first = None
            for eps in (float(e) for e in args.epsilons.split(",")):
                t = time.perf_counter()
                scores = forward_push(transition, strength, reset, damping, eps)[n_ph:]
                ms = 1000 * (time.perf_counter() - t)
                best = np.argsort(-scores, kind="stable")[:10]
                slack = eps * strength[n_ph:] / (1 - damping)
                rest = np.delete(scores + slack, best)
                certified_set = bool(scores[best].min() > rest.max())
                certified_order = certified_set and all(
                    scores[best[i]] > scores[best[i + 1]] + slack[best[i + 1]] for i in range(9)
                )
                first = best if first is None else first
                run = {
                    "query": query,
                    "seeds": seeds,
                    "epsilon": eps,
                    "ms": round(ms, 1),
                    "same_top10_order": bool((best == first).all()),
                    "certified_set": certified_set,
                    "certified_order": certified_order,
                    "load": load_average(),
                }
                data["runs"].append(run)
                print(run, flush=True)
    store.close()
    data["load_after"] = load_average()
    lines = [md_header("HippoRAG 2's passage walk at scale: push time by epsilon", data)]
    lines += [
        "",
        f"{n_ph:,} phrases, {n_pa:,} passages, walk non-zeros {data['walk_nnz']:,}; reset: 2 phrase seeds + "
        f"the best n passages (random query vectors). Same top 10: in the order of the "
        "first epsilon.",
        "",
        md_table(
            [
                "query",
                "passages seeded",
                "epsilon",
                "push ms",
                "same top 10",
                "top 10 set certified",
                "order certified",
                "load",
            ],
            [
                [
                    r["query"],
                    r["epsilon"],
                    r["ms"],
                    r["same_top10_order"],
                    r["certified_set"],
                    r["certified_order"],
                    r["load"][0],
                ]
                for r in data["runs"]
            ],
        ),
    ]
    write_results(args.stem, data, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
