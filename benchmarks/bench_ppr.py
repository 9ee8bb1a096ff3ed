"""PPR kernels side by side: the previous power iteration, today's power iteration, forward push, and
(graphs up to 100k nodes) the exact factorised solve (``ppr.FactorisedPpr``; its one-off factorisation
is timed apart).

Graphs: synthetic ones of N phrases built straight as arrays with the scale benchmark's distribution
(4 relation edges per phrase to a uniformly drawn earlier phrase, so old phrases become hubs, plus one
synonym edge of weight 0.8-1 to an earlier phrase: ~5 edges per phrase, N/8 passages mentioning 8 phrases
each), and, with ``--store``, the phrase graph of an embedded store (e.g. the MuSiQue one of
``bench_query.py``) and its phrase + passage graph (HippoRAG 2's walk; seeds from all its nodes).
Queries: 2 random seed nodes, damping 0.5, tolerance 1e-8 (the retrieval defaults), kernels interleaved
per query in alternating order so load drifts hit all of them alike.

Accuracy against the exact solution (power iteration to 1e-13): max absolute error, whether forward
push stays inside its stated bound ``0 <= exact - push <= tol * strength / (1 - d)``, and whether the top
phrases and the top passages (passage score = mentions x PPR, as the retriever ranks them) are the same.

    python benchmarks/bench_ppr.py --sizes 19000,1000000 [--store DIR] [--queries 30]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from common import latency_summary, load_average, md_header, md_table, run_header, write_results

from hipporag_neo4j.graph import ppr

DAMPING = 0.5
TOLERANCE = 1e-8


FACTORISE_MAX_NODES = 100_000  # the factorised kernel on graphs up to this size


def previous_power_iteration(
    transition: sp.csr_matrix,
    dangling: npt.NDArray[np.bool_],
    reset: npt.NDArray[np.float64],
    damping: float,
    max_iterations: int,
    tolerance: float,
) -> npt.NDArray[np.float64]:
    """The kernel before this change (commit c2309a8), verbatim, as the baseline."""
    p = reset.astype(np.float64) / float(reset.sum())
    scores = p.copy()
    for _ in range(max_iterations):
        dangling_mass = float(scores[dangling].sum())
        updated = damping * (transition @ scores) + (damping * dangling_mass + (1.0 - damping)) * p
        change = float(np.abs(updated - scores).sum())
        scores = updated
        if change < tolerance:
            break
    result: npt.NDArray[np.float64] = scores / scores.sum()
    return result


def synthetic_graph(n: int, seed: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Adjacency and passage x phrase mentions with the scale benchmark's distribution."""
    rng = np.random.default_rng(seed)
    per, relations = 8, 4
    subjects = np.repeat(np.arange(n), relations)
    home_stop = np.minimum((subjects // per + 1) * per, n)  # objects: any phrase written so far
    objects = (rng.random(len(subjects)) * home_stop).astype(np.int64)
    newer = np.arange(1, n)
    older = (rng.random(n - 1) * newer).astype(np.int64)
    sources = np.concatenate([subjects, newer])
    targets = np.concatenate([objects, older])
    weights = np.concatenate([np.ones(len(subjects)), 0.8 + 0.2 * rng.random(n - 1)])
    adjacency = ppr.symmetric_adjacency(sources, targets, weights, n)
    passages = np.arange(n) // per
    mentions = sp.csr_matrix((np.ones(n), (passages, np.arange(n))), shape=(int(passages[-1]) + 1, n))
    return adjacency, mentions


def store_graph(path: Path) -> tuple[sp.csr_matrix, npt.NDArray[np.float64], sp.csr_matrix, Any]:
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    store = EmbeddedStore(path)
    meta = store.meta()
    if meta is None:
        raise SystemExit(f"{path} is not an embedded store")
    store.open(meta.embedding_model, meta.embedding_dim)
    graph = store._graph()  # the snapshot the store searches
    return graph.transition, graph.strength, graph.mentions, store


def top(scores: npt.NDArray[np.float64], k: int) -> set[int]:
    return set(np.argsort(-scores, kind="stable")[:k].tolist())


def run_graph(
    name: str,
    transition: sp.csr_matrix,
    strength: npt.NDArray[np.float64],
    mentions: sp.csr_matrix,
    queries: int,
    seed: int,
) -> dict[str, Any]:
    n = transition.shape[0]
    dangling = strength == 0
    connected = np.flatnonzero(~dangling)
    rng = np.random.default_rng(seed)
    kernels = {
        "previous power iteration": lambda r: previous_power_iteration(
            transition, dangling, r, DAMPING, 100, TOLERANCE
        ),
        "power iteration": lambda r: ppr.personalized_pagerank(
            transition, dangling, r, DAMPING, 100, TOLERANCE
        ),
        "forward push": lambda r: ppr.forward_push(transition, strength, r, DAMPING, TOLERANCE, 100),
    }
    factorisation: dict[str, Any] = {}
    if n <= FACTORISE_MAX_NODES:
        adjacency = (transition @ sp.diags(strength)).tocsr()  # T = A D^-1
        start = time.perf_counter()
        solver = ppr.FactorisedPpr(adjacency, DAMPING)
        factorisation = {
            "factorise_ms": round(1000 * (time.perf_counter() - start), 1),
            "factor_fill": round(solver.factor_nonzeros / max(transition.nnz, 1), 1),
        }
        kernels["factorised (exact)"] = solver.scores
    times: dict[str, list[float]] = {k: [] for k in kernels}
    accuracy: dict[str, dict[str, Any]] = {
        k: {"max_abs_error": 0.0, "within_bound": True, "same_top20_phrases": 0, "same_top5_passages": 0}
        for k in kernels
    }
    load_before = load_average()
    for q in range(queries):
        reset = np.zeros(n)
        reset[rng.choice(connected, 2, replace=False)] = 1.0
        names = list(kernels) if q % 2 == 0 else list(reversed(kernels))
        out = {}
        for k in names:
            start = time.perf_counter()
            out[k] = kernels[k](reset)
            times[k].append(time.perf_counter() - start)
        exact = ppr.personalized_pagerank(transition, dangling, reset, DAMPING, 500, 1e-13)
        exact_passages = mentions @ exact
        for k, scores in out.items():
            a = accuracy[k]
            under = exact - scores
            a["max_abs_error"] = max(a["max_abs_error"], float(np.abs(under).max()))
            if k == "forward push":
                bound = TOLERANCE * strength / (1 - DAMPING)
                a["within_bound"] &= bool(under.min() >= -1e-12 and (under <= bound + 1e-12).all())
            a["same_top20_phrases"] += top(scores, 20) == top(exact, 20)
            a["same_top5_passages"] += top(mentions @ scores, 5) == top(exact_passages, 5)
    summary = {k: latency_summary(v) for k, v in times.items()}
    base = summary["previous power iteration"]["p50_ms"]
    for k in kernels:
        summary[k]["ratio_to_previous_p50"] = round(summary[k]["p50_ms"] / base, 3)
        # ratio per query (same load), then the median: steadier than a ratio of medians
        per_query = np.array(times[k]) / np.array(times["previous power iteration"])
        summary[k]["median_per_query_ratio"] = round(float(np.median(per_query)), 3)
        to_push = np.array(times[k]) / np.array(times["forward push"])
        summary[k]["median_per_query_ratio_to_push"] = round(float(np.median(to_push)), 3)
        summary[k].update(accuracy[k])
    return {
        "graph": name,
        "phrases": n,
        "nonzeros": int(transition.nnz),
        "passages": int(mentions.shape[0]),
        "queries": queries,
        "load_before": load_before,
        "load_after": load_average(),
        "kernels": summary,
        **factorisation,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="19000,1000000", help="synthetic graph sizes (phrases)")
    parser.add_argument("--store", type=Path, help="also the phrase graph of this embedded store")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stem", default="ppr")
    args = parser.parse_args()
    header = run_header()
    runs = []
    if args.store:
        transition, strength, mentions, store = store_graph(args.store)
        # HippoRAG 2's walk: phrases + one node per passage; a passage's score is its own node's
        graph = store._graph()
        joint, _ = graph.passage_graph()
        own = sp.hstack(
            [
                sp.csr_matrix((mentions.shape[0], mentions.shape[1])),
                sp.identity(mentions.shape[0], format="csr"),
            ]
        ).tocsr()
        runs.append(
            run_graph(
                f"store {args.store.name}, phrases + passages (hipporag2 walk)",
                joint,
                graph.passage_strength(),
                own,
                args.queries,
                args.seed,
            )
        )
        print(runs[-1])
        runs.append(
            run_graph(f"store {args.store.name}", transition, strength, mentions, args.queries, args.seed)
        )
        store.close()
        print(runs[-1])
    for size in [int(s) for s in args.sizes.split(",") if s]:
        adjacency, mentions = synthetic_graph(size, args.seed)
        transition, _ = ppr.transition_matrix(adjacency)
        strength = ppr.node_strengths(adjacency)
        runs.append(run_graph(f"synthetic {size:,}", transition, strength, mentions, args.queries, args.seed))
        print(runs[-1])
    header["load_after"] = load_average()
    rows = []
    for run in runs:
        for k, s in run["kernels"].items():
            rows.append(
                [
                    run["graph"],
                    f"{run['phrases']:,} / {run['nonzeros']:,}",
                    k,
                    s["p50_ms"],
                    s["p95_ms"],
                    s["median_per_query_ratio"],
                    s["median_per_query_ratio_to_push"],
                    f"{s['max_abs_error']:.1e}",
                    "yes" if s["within_bound"] else "NO",
                    f"{s['same_top20_phrases']}/{run['queries']}",
                    f"{s['same_top5_passages']}/{run['queries']}",
                    f"{run['load_before'][0]} → {run['load_after'][0]}",
                ]
            )
    markdown = "\n".join(
        [
            md_header("PPR kernels", header),
            f"Damping {DAMPING}, tolerance {TOLERANCE:g} (forward push: epsilon = tolerance), 2 random seed "
            "phrases per query, kernels interleaved. Ratio: median over queries of kernel time / previous "
            "kernel time in the same query. Errors against power iteration to 1e-13; bound: "
            "0 <= exact - push <= tol x strength / (1 - d). Same top: the set of the top 20 phrases / "
            "top 5 passages (mentions x PPR) equals the exact one.",
            "",
            md_table(
                [
                    "graph",
                    "phrases / nonzeros",
                    "kernel",
                    "p50 ms",
                    "p95 ms",
                    "ratio to previous",
                    "ratio to push",
                    "max abs error",
                    "within bound",
                    "same top 20 phrases",
                    "same top 5 passages",
                    "load 1-min",
                ],
                rows,
            ),
            "",
            *[
                f"- {run['graph']}: factorised once in {run['factorise_ms']} ms, factors holding "
                f"{run['factor_fill']}x the graph's non-zeros"
                for run in runs
                if "factorise_ms" in run
            ],
        ]
    )
    write_results(args.stem, {**header, "runs": runs}, markdown)
    print(markdown)


if __name__ == "__main__":
    main()
