"""The ``ann`` suite: which approximate nearest-neighbour index the synonym step uses at scale (issue 35).

The synonym step searches each new phrase's vector against every stored phrase (cosine >= tau = 0.8,
at most ``top_k`` = 100 each). At 1M phrases the exact scan costs ~20 s per 512 new phrases. This suite
measures the candidates on the same vectors, one library at a time, single-threaded (a shared 2-core
machine; the product runs the step in the writing process):

* ``ivf``: the store's own IVF (``hipporag_neo4j.stores.memory.vector_index``, numpy), batched;
* ``faiss-ivf`` (IndexIVFFlat), ``faiss-hnsw`` (IndexHNSWFlat), ``hnswlib``, ``usearch-f32``, ``usearch-i8``.

Per candidate: build time over all but the last ``--add`` rows, add time for those rows (a write),
query time for ``--queries`` new phrases (k = top_k + 1), the index's size (its own serialised bytes) and
**recall of the synonym edges**: the share of the exact scan's edges (cosine >= tau, top_k per phrase,
self excluded) that the index finds once its candidates are re-scored exactly, as the store does.

Vectors (``--data``): ``musique`` = the all-MiniLM-L6-v2 vectors of MuSiQue's 1,890-passage OpenIE phrases
(real; ~20k rows); ``jittered`` = ``--rows`` vectors made from those: each row a real phrase's vector plus
Gaussian noise of norm s ~ U(0.3, 1.0) (cosine to its parent 0.71-0.96), so rows of one parent are each
other's neighbours around tau and the large set keeps the real vectors' coarse geometry (uniform random
vectors, as ``bench_scale`` writes, have no neighbour at cosine 0.8 at all). Queries are rows made the
same way, not in the index (new phrases).

    python benchmarks/run.py ann --data musique,jittered --rows 1000000 [--only ivf,faiss-hnsw]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from harness import (
    OPENIE_FILE,
    load_average,
    md_header,
    md_table,
    require_files,
    rss_mib,
    run_header,
    write_results,
)

from hipporag_neo4j.stores.memory.knn import exact_scores, nearest_rows

CACHE = Path(os.environ.get("HIPPORAG_BENCH_CACHE", tempfile.gettempdir())) / "hipporag-bench-ann"
Matrix = np.ndarray


def musique_vectors() -> np.ndarray:
    """The MuSiQue OpenIE phrases (entities, triple subjects and objects) encoded once, cached."""
    require_files(OPENIE_FILE)
    cached = CACHE / "musique_phrases.npy"
    if cached.is_file():
        return np.load(cached)
    from hipporag_neo4j.embedding.encoder import create_embedder
    from hipporag_neo4j.settings import EmbeddingSettings

    docs = json.loads(OPENIE_FILE.read_text())["docs"]
    names = sorted(
        {e for d in docs for e in d["extracted_entities"]}
        | {t[i] for d in docs for t in d["extracted_triples"] if len(t) == 3 for i in (0, 2)}
    )
    vectors = np.asarray(create_embedder(EmbeddingSettings()).encode(names), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(cached, vectors)
    return vectors


def jittered(parents: np.ndarray, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dim = parents.shape[1]
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 65_536):
        m = min(65_536, n - start)
        noise = rng.standard_normal((m, dim), dtype=np.float32)
        noise *= (rng.uniform(0.3, 1.0, m).astype(np.float32) / np.linalg.norm(noise, axis=1))[:, None]
        block = parents[rng.integers(0, len(parents), m)] + noise
        out[start : start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def dataset(name: str, rows: int, queries: int, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    real = musique_vectors()
    if name == "musique":
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(real))  # queries: phrases left out of the index (new phrases)
        return real[order[queries:]], real[order[:queries]], f"MuSiQue phrases ({len(real):,} real vectors)"
    if name == "jittered":
        both = jittered(real, rows + queries, seed)
        return both[:rows], both[rows:], f"{rows:,} jittered copies of {len(real):,} MuSiQue phrase vectors"
    raise SystemExit(f"unknown --data {name!r}")


def edges(
    hits: list[np.ndarray], base: np.ndarray, queries: np.ndarray, top_k: int, tau: float
) -> set[tuple[int, int]]:
    """The synonym edges the store would keep from these candidate rows: re-scored exactly, >= tau, top_k."""
    out: set[tuple[int, int]] = set()
    for q, rows in enumerate(hits):
        rows = np.asarray(rows, dtype=np.intp)
        rows = rows[rows >= 0]
        if not len(rows):
            continue
        scores = exact_scores(base, rows, queries[q])
        keep = scores >= tau
        pairs = sorted(
            zip(scores[keep].tolist(), rows[keep].tolist(), strict=True), key=lambda p: (-p[0], p[1])
        )
        out.update((q, int(r)) for _, r in pairs[:top_k])
    return out


# --- candidates: build(base) -> index; add(index, rows, first_id); search(index, queries, k) -> rows ---
class Candidate:
    def __init__(self, name: str, params: dict[str, Any]) -> None:
        self.name, self.params = name, params

    def build(self, base: np.ndarray) -> Any:
        raise NotImplementedError

    def add(self, index: Any, rows: np.ndarray, first: int) -> Any:
        raise NotImplementedError

    def search(
        self, index: Any, base: np.ndarray, queries: np.ndarray, k: int, tau: float
    ) -> list[np.ndarray]:
        raise NotImplementedError

    def size_bytes(self, index: Any) -> int:
        raise NotImplementedError


class Ivf(Candidate):
    def build(self, base: np.ndarray) -> Any:
        from hipporag_neo4j.stores.memory.vector_index import IvfIndex

        return IvfIndex.train(base, nlist=self.params.get("nlist"))

    def add(self, index: Any, rows: np.ndarray, first: int) -> Any:
        return index  # appended rows are the tail, searched exactly until extended (below)

    def search(
        self, index: Any, base: np.ndarray, queries: np.ndarray, k: int, tau: float
    ) -> list[np.ndarray]:
        return index.search_many(base, queries, k, tau, self.params["probes"])

    def size_bytes(self, index: Any) -> int:
        return int(index.centroids.nbytes + index.assignment.nbytes)


class Faiss(Candidate):
    def build(self, base: np.ndarray) -> Any:
        import faiss

        faiss.omp_set_num_threads(1)
        dim = base.shape[1]
        if self.name == "faiss-ivf":
            quantizer = faiss.IndexFlatIP(dim)
            index = faiss.IndexIVFFlat(quantizer, dim, self.params["nlist"], faiss.METRIC_INNER_PRODUCT)
            rng = np.random.default_rng(0)
            sample = base[
                np.sort(rng.choice(len(base), min(len(base), 48 * self.params["nlist"]), replace=False))
            ]
            index.train(np.ascontiguousarray(sample))
            index.nprobe = self.params["nprobe"]
        else:
            index = faiss.IndexHNSWFlat(dim, self.params["M"], faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = self.params["ef_construction"]
            index.hnsw.efSearch = self.params["ef_search"]
        index.add(np.ascontiguousarray(base))
        return index

    def add(self, index: Any, rows: np.ndarray, first: int) -> Any:
        index.add(np.ascontiguousarray(rows))
        return index

    def search(
        self, index: Any, base: np.ndarray, queries: np.ndarray, k: int, tau: float
    ) -> list[np.ndarray]:
        _, found = index.search(np.ascontiguousarray(queries), k)
        return list(found)

    def size_bytes(self, index: Any) -> int:
        import faiss

        return len(faiss.serialize_index(index))


class Hnswlib(Candidate):
    def build(self, base: np.ndarray) -> Any:
        import hnswlib

        index = hnswlib.Index(space="ip", dim=base.shape[1])
        index.init_index(
            max_elements=len(base) + 65_536,
            M=self.params["M"],
            ef_construction=self.params["ef_construction"],
        )
        index.add_items(base, np.arange(len(base)), num_threads=1)
        index.set_ef(self.params["ef_search"])
        return index

    def add(self, index: Any, rows: np.ndarray, first: int) -> Any:
        index.add_items(rows, np.arange(first, first + len(rows)), num_threads=1)
        return index

    def search(
        self, index: Any, base: np.ndarray, queries: np.ndarray, k: int, tau: float
    ) -> list[np.ndarray]:
        index.set_ef(max(self.params["ef_search"], k))
        labels, _ = index.knn_query(queries, k=k, num_threads=1)
        return list(labels.astype(np.intp))

    def size_bytes(self, index: Any) -> int:
        with tempfile.NamedTemporaryFile(dir=CACHE) as f:
            index.save_index(f.name)
            return os.path.getsize(f.name)


class Usearch(Candidate):
    def build(self, base: np.ndarray) -> Any:
        from usearch.index import Index

        index = Index(
            ndim=base.shape[1],
            metric="ip",
            dtype=self.params["dtype"],
            connectivity=self.params["M"],
            expansion_add=self.params["ef_construction"],
            expansion_search=self.params["ef_search"],
        )
        index.add(np.arange(len(base)), base, threads=1)
        return index

    def add(self, index: Any, rows: np.ndarray, first: int) -> Any:
        index.add(np.arange(first, first + len(rows)), rows, threads=1)
        return index

    def search(
        self, index: Any, base: np.ndarray, queries: np.ndarray, k: int, tau: float
    ) -> list[np.ndarray]:
        found = index.search(queries, k, threads=1)
        keys = np.asarray(found.keys, dtype=np.int64)
        counts = np.asarray(found.counts)
        return [keys[i, : counts[i]].astype(np.intp) for i in range(len(queries))]

    def size_bytes(self, index: Any) -> int:
        return int(index.memory_usage)


def candidates(rows: int) -> list[Candidate]:
    nlist = int(min(4096, max(16, round(np.sqrt(rows)))))
    return [
        Ivf("ivf", {"nlist": min(nlist, 1024), "probes": 16}),
        Ivf("ivf", {"nlist": min(nlist, 1024), "probes": 32}),
        Faiss("faiss-ivf", {"nlist": nlist, "nprobe": 16}),
        Faiss("faiss-ivf", {"nlist": nlist, "nprobe": 32}),
        Faiss("faiss-hnsw", {"M": 16, "ef_construction": 100, "ef_search": 128}),
        Hnswlib("hnswlib", {"M": 16, "ef_construction": 100, "ef_search": 128}),
        Usearch("usearch-f32", {"dtype": "f32", "M": 16, "ef_construction": 100, "ef_search": 128}),
        Usearch("usearch-i8", {"dtype": "i8", "M": 16, "ef_construction": 100, "ef_search": 128}),
    ]


def measure(
    cand: Candidate,
    base: np.ndarray,
    queries: np.ndarray,
    exact: set[tuple[int, int]],
    args: argparse.Namespace,
) -> dict[str, Any]:
    n_add = min(args.add, len(base) // 10)
    first = len(base) - n_add
    rss0 = rss_mib()
    load = load_average()
    t0, c0 = time.perf_counter(), time.process_time()
    index = cand.build(base[:first])
    build_s, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    index = cand.add(index, base[first:], first)
    add_s, add_cpu = time.perf_counter() - t0, time.process_time() - c0
    k = args.top_k + 1
    times, cpu = [], []
    found: list[np.ndarray] = []
    for _ in range(args.repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        found = cand.search(index, base, queries, k, args.threshold)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    got = edges(found, base, queries, args.top_k, args.threshold)
    out = {
        "candidate": cand.name,
        "params": cand.params,
        "build_s": round(build_s, 2),
        "build_cpu_s": round(build_cpu, 2),
        "build_rows": first,
        "add_s": round(add_s, 4),
        "add_cpu_s": round(add_cpu, 4),
        "add_rows": n_add,
        "query_s": round(float(np.median(times)), 4),
        "query_s_all": [round(t, 4) for t in times],
        "query_cpu_s": round(float(np.median(cpu)), 4),
        "index_mib": round(cand.size_bytes(index) / 2**20, 1),
        "rss_growth_mib": round(rss_mib() - rss0, 1),
        "edges_exact": len(exact),
        "edges_found": len(got & exact),
        "edges_extra": len(got - exact),
        "recall": round(len(got & exact) / len(exact), 5) if exact else None,
        "load": [load, load_average()],
    }
    del index
    gc.collect()
    return out


def run_data(name: str, args: argparse.Namespace) -> dict[str, Any]:
    base, queries, about = dataset(name, args.rows, args.queries, args.seed)
    print(f"{name}: {about}; exact scan ...", flush=True)
    t0, c0 = time.perf_counter(), time.process_time()
    exact_rows = [rows for rows, _ in nearest_rows(queries, base, args.top_k + 1, args.threshold)]
    exact_s, exact_cpu = time.perf_counter() - t0, time.process_time() - c0
    exact = edges(exact_rows, base, queries, args.top_k, args.threshold)
    result: dict[str, Any] = {
        "data": name,
        "about": about,
        "rows": len(base),
        "queries": len(queries),
        "exact_scan_s": round(exact_s, 3),
        "exact_scan_cpu_s": round(exact_cpu, 3),
        "edges_exact": len(exact),
        "runs": [],
    }
    only = set(args.only.split(",")) if args.only else None
    for cand in candidates(len(base)):
        if only and cand.name not in only:
            continue
        print(f"  {cand.name} {cand.params} ...", flush=True)
        r = measure(cand, base, queries, exact, args)
        print(f"    {json.dumps(r)}", flush=True)
        result["runs"].append(r)
    return result


def markdown(data: dict[str, Any]) -> str:
    out = [md_header("Approximate nearest neighbours for the synonym step (issue 35)", data)]
    for d in data["datasets"]:
        out.append(
            f"\n## {d['data']}: {d['about']}\n\n{d['queries']} new phrases, "
            f"tau {data['parameters']['threshold']}, "
            f"top_k {data['parameters']['top_k']}: the exact scan found {d['edges_exact']:,} edges in "
            f"{d['exact_scan_cpu_s']} CPU s ({d['exact_scan_s']} s wall). Everything single-threaded; CPU "
            "seconds are the comparable figure on a loaded machine.\n"
        )
        rows = [
            [
                r["candidate"],
                ", ".join(f"{k}={v}" for k, v in r["params"].items()),
                f"{r['build_cpu_s']} ({r['build_s']})",
                f"{r['add_cpu_s']} ({r['add_s']}; {r['add_rows']} rows)",
                f"{r['query_cpu_s']} ({r['query_s']})",
                r["index_mib"],
                r["recall"],
                r["edges_extra"],
                f"{r['load'][0]}-{r['load'][1]}",
            ]
            for r in d["runs"]
        ]
        headers = [
            "index",
            "params",
            "build CPU s (wall)",
            "add CPU s (wall)",
            f"{d['queries']} queries CPU s (wall)",
        ]
        headers.append("index MiB")
        out.append(md_table([*headers, "edge recall", "extra edges", "load"], rows))
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="musique,jittered")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the jittered set")
    parser.add_argument("--queries", type=int, default=512)
    parser.add_argument("--add", type=int, default=512, help="rows added after the build (a write)")
    parser.add_argument("--top-k", type=int, default=100)
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", help="comma-separated candidate names")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stem", default="ann")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    data = run_header()
    data["parameters"] = {k: v for k, v in vars(args).items()}
    data["datasets"] = [run_data(name, args) for name in args.data.split(",")]
    data["load_after"] = load_average()
    write_results(args.stem, data, markdown(data))


if __name__ == "__main__":
    main()
