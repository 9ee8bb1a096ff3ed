"""Synonym search at scale: the previous one-chunk kNN against the byte-budgeted blocks of ``knn.py``.

N stored phrase vectors (random unit vectors, dim 384, of which 5 % are near-duplicates of others, cosine
~0.9, so that the 0.8 threshold finds something) and 512 new phrases (half near-duplicates of stored ones),
top 101 (the indexer's 100 + the excluded self), cosine >= 0.8: what one indexing batch asks
``EmbeddedStore.nearest_phrases``. Both searches run on the same data, alternating A B A B. Memory: peak
bytes allocated by the search (tracemalloc, which numpy reports to) and the process RSS peak during it
(sampled every 50 ms) above the RSS before it. Also a 2-vector linking search (no threshold).

    python benchmarks/bench_synonyms.py --phrases 1000000 [--repeats 2]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from typing import Any

import numpy as np
import numpy.typing as npt
from harness import RssSampler, load_average, md_header, md_table, rss_mib, run_header, write_results

from hipporag_neo4j.stores.embedded.knn import DEFAULT_BUDGET_BYTES, nearest_rows

Hits = list[tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]]


def previous_search(queries: np.ndarray, matrix: np.ndarray, top_k: int, min_similarity: float) -> Hits:
    """The store's search before this change (commit c2309a8): 512 query rows x all phrases at once."""
    n = len(matrix)
    k = min(top_k, n)
    found: Hits = []
    for start in range(0, len(queries), 512):
        sims = queries[start : start + 512] @ matrix.T
        best = (
            np.argpartition(-sims, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (len(sims), 1))
        )
        for row, candidates in enumerate(best):
            values = sims[row, candidates]
            keep = values >= min_similarity
            order = np.argsort(-values[keep], kind="stable")
            found.append((candidates[keep][order], values[keep][order]))
    return found


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim), dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def near(rng: np.random.Generator, rows: np.ndarray) -> np.ndarray:
    v = rows + 0.45 * unit(rng, len(rows), rows.shape[1])
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def measure(fn: Any, *args: Any) -> tuple[Hits, dict[str, float]]:
    before = rss_mib()
    tracemalloc.start()
    with RssSampler() as sampler:
        start = time.perf_counter()
        hits = fn(*args)
        seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return hits, {
        "seconds": round(seconds, 3),
        "allocated_peak_mib": round(peak / 2**20, 1),
        "rss_peak_above_before_mib": round(sampler.peak_mib - before, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--phrases", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--stem", default="synonyms")
    args = parser.parse_args()
    header = run_header()
    rng = np.random.default_rng(0)
    matrix = unit(rng, args.phrases, args.dim)
    dup = rng.choice(args.phrases, args.phrases // 20, replace=False)
    matrix[dup] = near(rng, matrix[rng.choice(args.phrases, len(dup))])
    queries = np.vstack([near(rng, matrix[rng.choice(args.phrases, 256)]), unit(rng, 256, args.dim)])
    link = unit(rng, 2, args.dim)
    runs: dict[str, list[dict[str, float]]] = {
        "previous": [],
        "budgeted": [],
        "link_previous": [],
        "link_budgeted": [],
    }
    same = True
    for rep in range(args.repeats):
        order = ["previous", "budgeted"] if rep % 2 == 0 else ["budgeted", "previous"]
        out = {}
        for name in order:
            fn = previous_search if name == "previous" else nearest_rows
            out[name], stats = measure(fn, queries, matrix, 101, 0.8)
            runs[name].append(stats)
            print(name, stats, flush=True)
        for (_, a), (_, b) in zip(out["previous"], out["budgeted"], strict=True):
            same &= np.allclose(a, b, atol=1e-6)
        for name in order:
            fn = previous_search if name == "previous" else nearest_rows
            _, stats = measure(fn, link, matrix, 5, -1.0)
            runs[f"link_{name}"].append(stats)
    edges = sum(len(a) for a, _ in out["budgeted"])
    header["load_after"] = load_average()
    summary = {
        name: {key: float(np.median([r[key] for r in rs])) for key in rs[0]} for name, rs in runs.items()
    }
    rows = [
        [name, s["seconds"], s["allocated_peak_mib"], s["rss_peak_above_before_mib"]]
        for name, s in summary.items()
    ]
    markdown = "\n".join(
        [
            md_header("Synonym search memory", header),
            f"{args.phrases:,} stored phrases (dim {args.dim}, phrase matrix "
            f"{matrix.nbytes / 2**20:,.0f} MiB, not counted), 512 new phrases, top 101, cosine >= 0.8; "
            f"budget {DEFAULT_BUDGET_BYTES / 2**20:.0f} MiB. Medians of {args.repeats} alternating runs. "
            f"Same hits (similarities) from both: {same}; synonym candidates found: {edges:,}. "
            "`link_*`: 2 query vectors, top 5, no threshold.",
            "",
            md_table(["search", "s", "peak allocated MiB", "peak RSS above before MiB"], rows),
        ]
    )
    write_results(args.stem, {**header, "phrases": args.phrases, "same_hits": same, "runs": runs}, markdown)
    print(markdown)


if __name__ == "__main__":
    main()
