"""Exact scans against the embedded store's IVF index (``stores/embedded/vector_index.py``), issue 19.

Three parts, each writing ``results/vector_index_<part>.{md,json}``:

* ``scans``: synthetic unit vectors (384-d float32, memory-mapped .npy files made once in ``--arrays``):
  1M phrases, 1M facts, 125k passages. Per query, exact and index alternated (who goes first rotates),
  one BLAS thread: linking (2 entity vectors, top 10: ``knn.nearest_rows`` as the store calls it, then
  the float64 re-score), facts (top 20), dense passages (top 200); index training and the cost of
  extending it by one write batch (2,048 rows); recall = |exact top k ∩ index top k| / k. Queries:
  uniform random vectors (the worst case for any IVF index: no structure, every list about as near) and
  planted near-duplicates (a stored row plus noise of norm 0.3 / 0.6).
* ``quality``: MuSiQue and HotpotQA stores (copied from ``--stores``, never written in place), the
  default mode (``hipporag2``, top 10, no LLM) with ``store.vector_search`` exact and approximate at 64
  (the default), 16 and 8 probes (8 of MuSiQue's ~130 lists: about the share 64 probes score at 1M rows),
  per question paired: R@2 / R@5 / AR@5 and how many questions' top 10 changed.
* ``recall``: MuSiQue's real vectors, the share of the exact top k the index finds by lists and probes.
* ``store``: see ``--store-1m``: a copy of a 1M-phrase synthetic store, the three searches and the default
  mode's retrieve, exact and index alternated per query.

    python benchmarks/bench_vector_index.py scans [--queries 30] [--arrays /tmp/p19v]
    python benchmarks/bench_vector_index.py quality [--stores /tmp/hipporag-bench/hot_path]
    python benchmarks/bench_vector_index.py recall [--stores /tmp/hipporag-bench/hot_path]
    python benchmarks/bench_vector_index.py store --store-1m /work/bench-1m/store-1000000 [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from harness import (
    MUSIQUE,
    RESULTS,
    latency_summary,
    load_average,
    md_header,
    md_table,
    run_header,
    write_results,
)
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from hipporag_neo4j.stores.embedded.knn import nearest_rows, top_positions
from hipporag_neo4j.stores.embedded.vector_index import DEFAULT_MIN_ROWS, DEFAULT_PROBES, IvfIndex, list_count

DIM = 384
SIZES = {"phrases": 1_000_000, "facts": 1_000_000, "passages": 125_000}
WRITE_BATCH_ROWS = 2_048


# --- scans -----------------------------------------------------------------------------------------------
def _arrays(directory: Path) -> dict[str, np.ndarray]:
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    out = {}
    for name, n in SIZES.items():
        path = directory / f"{name}.npy"
        if not path.exists():
            tmp = path.with_suffix(".tmp.npy")
            m = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(n, DIM))
            for s in range(0, n, 100_000):
                x = rng.standard_normal((min(100_000, n - s), DIM), dtype=np.float32)
                m[s : s + len(x)] = x / np.linalg.norm(x, axis=1, keepdims=True)
            m.flush()
            del m
            tmp.rename(path)
        out[name] = np.load(path, mmap_mode="r")
    return out


def _rescore(matrix: np.ndarray, rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    return (matrix[rows].astype(np.float64) * q.astype(np.float64)).sum(axis=1)


def _ranked(matrix: np.ndarray, rows: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    values = _rescore(matrix, rows, q)
    return rows[np.lexsort((rows, -values))][:k].tolist()


def _link_exact(matrix: np.ndarray, queries: np.ndarray, k: int) -> list[list[int]]:
    return [
        _ranked(matrix, c, q, k)
        for (c, _), q in zip(nearest_rows(queries, matrix, k, -1.0), queries, strict=True)
    ]


def _link_index(
    index: IvfIndex, matrix: np.ndarray, queries: np.ndarray, k: int, probes: int
) -> list[list[int]]:
    return [_ranked(matrix, index.search(matrix, q, k, probes), q, k) for q in queries]


def _top_exact(matrix: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    sims = matrix @ q
    return [int(i) for i in top_positions(sims, k)]


def _top_index(index: IvfIndex, matrix: np.ndarray, q: np.ndarray, k: int, probes: int) -> list[int]:
    return _ranked(matrix, index.search(matrix, q, k, probes), q, k)


def _one(fn: Any, *args: Any) -> list[list[int]]:
    return [fn(*args)]


def _overlap(a: list[int], b: list[int], k: int) -> float:
    return len(set(a[:k]) & set(b[:k])) / k


def run_scans(args: argparse.Namespace) -> dict[str, Any]:
    arrays = _arrays(args.arrays)
    rng = np.random.default_rng(1)
    probes = [int(x) for x in args.scan_probes.split(",")]
    out: dict[str, Any] = {"sizes": SIZES, "probes": probes, "queries": args.queries}
    with threadpool_limits(1, "blas"):
        for m in arrays.values():  # warm page cache
            float(np.asarray(m[::1]).sum(dtype=np.float64))
        indexes: dict[str, IvfIndex] = {}
        build: dict[str, Any] = {}
        for name, m in arrays.items():
            t = time.perf_counter()
            indexes[name] = IvfIndex.train(m)
            seconds = time.perf_counter() - t
            # a write batch: the index built on all but the last rows, extended by them
            part = IvfIndex(indexes[name].centroids, indexes[name].assignment[:-WRITE_BATCH_ROWS], "")
            t = time.perf_counter()
            part.extend(m)
            build[name] = {
                "train_s": round(seconds, 2),
                "lists": indexes[name].nlist,
                "extend_2048_rows_ms": round(1000 * (time.perf_counter() - t), 1),
            }
            print(name, build[name], flush=True)
        out["build"] = build
        for kind in ("random", "planted 0.3", "planted 0.6"):
            times: dict[str, list[float]] = {}
            recall: dict[str, list[float]] = {}
            for i in range(args.queries):
                if kind == "random":
                    qs = {n: rng.standard_normal((2, DIM)).astype(np.float32) for n in arrays}
                else:
                    noise = float(kind.split()[1])
                    qs, planted = {}, {}
                    for n, m in arrays.items():
                        planted[n] = np.sort(rng.choice(len(m), 2, replace=False))
                        rows = m[planted[n]]
                        qs[n] = rows + noise * rng.standard_normal((2, DIM)).astype(np.float32) / np.sqrt(DIM)
                qs = {
                    n: (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)
                    for n, q in qs.items()
                }
                P, F, D = arrays["phrases"], arrays["facts"], arrays["passages"]
                ip, i_f, i_d = indexes["phrases"], indexes["facts"], indexes["passages"]
                jobs: dict[str, list[tuple[str, Any]]] = {
                    "link (2 vectors, top 10)": [("exact", partial(_link_exact, P, qs["phrases"], 10))]
                    + [(f"index {n}", partial(_link_index, ip, P, qs["phrases"], 10, n)) for n in probes],
                    "facts (top 20)": [("exact", partial(_one, _top_exact, F, qs["facts"][0], 20))]
                    + [
                        (f"index {n}", partial(_one, _top_index, i_f, F, qs["facts"][0], 20, n))
                        for n in probes
                    ],
                    "dense passages (top 200)": [
                        ("exact", partial(_one, _top_exact, D, qs["passages"][0], 200))
                    ]
                    + [
                        (f"index {n}", partial(_one, _top_index, i_d, D, qs["passages"][0], 200, n))
                        for n in probes
                    ],
                }
                for job, variants in jobs.items():
                    found = {}
                    rotation = i % len(variants)
                    for label, fn in variants[rotation:] + variants[:rotation]:
                        t = time.perf_counter()
                        found[label] = fn()
                        times.setdefault(f"{job} | {label}", []).append(time.perf_counter() - t)
                    short = job.split(" (")[0]
                    for label, _ in variants:
                        if kind != "random":  # the planted row first, by each search
                            matrix = {"link": "phrases", "facts": "facts", "dense": "passages"}[
                                job.split()[0]
                            ]
                            for row, ranked in zip(planted[matrix], found[label], strict=False):
                                recall.setdefault(f"planted row first | {short} | {label}", []).append(
                                    float(ranked[0] == row)
                                )
                        if label == "exact":
                            continue
                        ks = {"link (2 vectors, top 10)": (5, 10), "facts (top 20)": (5, 20)}.get(job, (200,))
                        for k in ks:
                            for a, b in zip(found["exact"], found[label], strict=True):
                                recall.setdefault(f"top {k} | {short} | {label}", []).append(
                                    _overlap(a, b, k)
                                )
            out[kind] = {
                "latency": {k: latency_summary(v) for k, v in times.items()},
                "recall": {k: round(float(np.mean(v)), 4) for k, v in recall.items()},
            }
            print(kind, out[kind]["recall"], flush=True)
    return out


def scans_markdown(data: dict[str, Any]) -> str:
    d = data["result"]
    lines = [
        md_header("Exact scans vs the IVF index at 1M rows (synthetic vectors)", data),
        f"Memory-mapped 384-d float32 unit vectors: {d['sizes']}; one BLAS thread; probes {d['probes']}; "
        f"{d['queries']} queries per kind, exact and each index variant rotated per query. Recall = share "
        "of the exact top k the index returns (uniform random vectors: the worst case, no structure); "
        "planted = a stored row plus Gaussian noise of that norm, and whether each search ranks it first.",
        "",
        md_table(
            ["matrix", "lists", "train s", "extend by 2,048 rows ms"],
            [[n, b["lists"], b["train_s"], b["extend_2048_rows_ms"]] for n, b in d["build"].items()],
        ),
        "",
    ]
    for kind in ("random", "planted 0.3", "planted 0.6"):
        lat, rec = d[kind]["latency"], d[kind]["recall"]
        labels = list(dict.fromkeys(k.split(" | ")[1] for k in lat))
        jobs = list(dict.fromkeys(k.split(" | ")[0] for k in lat))
        lines += [
            f"## queries: {kind}",
            "",
            "p50 ms (p95):",
            "",
            md_table(
                ["search", *labels, *(f"{x} / exact" for x in labels[1:])],
                [
                    [
                        j,
                        *(
                            f"{lat[f'{j} | {x}']['p50_ms']:.1f} ({lat[f'{j} | {x}']['p95_ms']:.0f})"
                            for x in labels
                        ),
                        *(
                            round(lat[f"{j} | {x}"]["p50_ms"] / lat[f"{j} | exact"]["p50_ms"], 3)
                            for x in labels[1:]
                        ),
                    ]
                    for j in jobs
                ],
            ),
            "",
            md_table(
                ["recall (what, search, variant)", "value"],
                [[k.replace(" | ", ", "), v] for k, v in rec.items()],
            ),
            "",
        ]
    return "\n".join(lines)


# --- quality -----------------------------------------------------------------------------------------------
HOTPOTQA = MUSIQUE.parent / "hotpotqa"
DATASETS = {
    "musique": (MUSIQUE / "musique_corpus1890.json", MUSIQUE / "musique_dev70.json"),
    "hotpotqa": (HOTPOTQA / "hotpotqa_corpus994.json", HOTPOTQA / "hotpotqa_dev50.json"),
}
VARIANTS = {
    "exact": {"vector_search": "exact"},
    f"index, {DEFAULT_PROBES} probes": {"vector_search": "approximate"},
    "index, 16 probes": {"vector_search": "approximate", "vector_index_probes": 16},
    # about 1/16 of the lists, the share the default scores at 1M rows (64 of 1,024)
    "index, 8 probes": {"vector_search": "approximate", "vector_index_probes": 8},
}


def run_quality(args: argparse.Namespace) -> dict[str, Any]:
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
    from hipporag_neo4j.evaluation.runner import corpus_passage_ids, run_evaluation
    from hipporag_neo4j.settings import load_settings

    out: dict[str, Any] = {}
    work = Path(tempfile.mkdtemp(prefix="vector-index-quality-"))
    try:
        for name, (corpus_file, questions_file) in DATASETS.items():
            store = work / name
            shutil.copytree(args.stores / name, store)
            corpus, questions = load_corpus(corpus_file), load_questions(questions_file)
            ids = corpus_passage_ids(corpus)
            d: dict[str, Any] = {"questions": len(questions), "variants": {}}
            per: dict[str, list[Any]] = {}
            for v, s in VARIANTS.items():
                memory = HippoRAG(load_settings({"store": {"path": str(store), **s}}, env_file=None))
                try:
                    # offline extraction leaves a few passages out (scored as misses, alike in every variant)
                    d["corpus_passages_not_in_store"] = len(set(ids) - memory.store.existing_passages(ids))
                    t = time.perf_counter()
                    report = run_evaluation(
                        memory,
                        questions,
                        corpus,
                        ["hipporag2"],
                        passage_ids=ids,
                        graph_reach=False,
                        n_resamples=100,
                    )
                    seconds = time.perf_counter() - t
                    if v == "exact":
                        stats = memory.store.stats()
                        d["store"] = {
                            "phrases": stats.phrases,
                            "facts": stats.facts,
                            "passages": stats.passages,
                        }
                finally:
                    memory.close()
                per[v] = [q.modes["hipporag2"] for q in report.questions]
                means = report.tables["hipporag2"].means
                d["variants"][v] = {
                    "means_percent": {m: round(100 * means[m], 1) for m in ("R@2", "R@5", "AR@5")},
                    "seconds": round(seconds, 1),
                }
            for v in VARIANTS:
                pairs = list(zip(per[v], per["exact"], strict=True))
                d["variants"][v]["paired_vs_exact"] = {
                    m: {
                        "better": sum(a.metrics[m] > b.metrics[m] for a, b in pairs),
                        "worse": sum(a.metrics[m] < b.metrics[m] for a, b in pairs),
                    }
                    for m in ("R@2", "R@5", "AR@5")
                }
                d["variants"][v]["same_top10"] = sum(a.retrieved_ids == b.retrieved_ids for a, b in pairs)
                d["variants"][v]["same_top5_set"] = sum(
                    set(a.retrieved_ids[:5]) == set(b.retrieved_ids[:5]) for a, b in pairs
                )
                d["variants"][v]["same_links"] = sum(a.linked == b.linked for a, b in pairs)
                print(name, v, d["variants"][v], flush=True)
            out[name] = d
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def quality_markdown(data: dict[str, Any]) -> str:
    lines = [
        md_header("The IVF index forced on at small scale: retrieval quality, paired per question", data),
        "Default mode (`hipporag2`, top 10, no LLM) on copies of the stores in `--stores`; the variants "
        "alternate per question. `index` = `store.vector_search = approximate` (linking and fact search "
        "through the index; the default mode's dense scores ask for every passage, which stays exact).",
        "",
    ]
    for name, d in data["result"].items():
        lines += [
            f"## {name} ({d['questions']} questions; store {d['store']}; corpus passages not in the store "
            f"(offline extraction, misses in every variant): {d.get('corpus_passages_not_in_store', 0)})",
            "",
            md_table(
                [
                    "variant",
                    "R@2",
                    "R@5",
                    "AR@5",
                    "R@5 better / worse",
                    "same top 10",
                    "same top-5 set",
                    "same links",
                    "R@2 better / worse",
                ],
                [
                    [
                        v,
                        x["means_percent"]["R@2"],
                        x["means_percent"]["R@5"],
                        x["means_percent"]["AR@5"],
                        f"{x['paired_vs_exact']['R@5']['better']} / {x['paired_vs_exact']['R@5']['worse']}",
                        f"{x['same_top10']} / {d['questions']}",
                        f"{x['same_top5_set']} / {d['questions']}",
                        f"{x['same_links']} / {d['questions']}",
                        f"{x['paired_vs_exact']['R@2']['better']} / {x['paired_vs_exact']['R@2']['worse']}",
                    ]
                    for v, x in d["variants"].items()
                ],
            ),
            "",
        ]
    return "\n".join(lines)


# --- recall on real vectors ------------------------------------------------------------------------------
def run_recall(args: argparse.Namespace) -> dict[str, Any]:
    """MuSiQue's own vectors: facts against the 70 questions' vectors (the default mode's fact search),
    phrases against the vectors of the questions' NER names (linking); the share of the exact top k
    the index returns, per number of lists and share of lists scored."""
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.evaluation.loaders import load_questions
    from hipporag_neo4j.settings import load_settings

    work = Path(tempfile.mkdtemp(prefix="vector-index-recall-"))
    try:
        store = work / "musique"
        shutil.copytree(args.stores / "musique", store)
        memory = HippoRAG(
            load_settings({"store": {"path": str(store), "vector_search": "exact"}}, env_file=None)
        )
        questions = load_questions(DATASETS["musique"][1])
        encode = memory.retriever.embedder.encode
        names = [e for q in questions for e in memory.retriever.query_entities(q.question)[0]]
        question_vectors, name_vectors = encode([q.question for q in questions]), encode(names)
        facts = memory.store.nearest_facts(question_vectors[0], 1)  # loads the fact vectors
        del facts
        graph = memory.store._graph()
        assert graph.facts is not None
        matrices = {"facts": np.asarray(graph.facts.vectors), "phrases": np.asarray(graph.phrases.vectors)}
        memory.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out: dict[str, Any] = {"questions": len(questions), "names": len(names), "rows": {}, "recall": {}}
    shares = (0.03, 0.0625, 0.125, 0.25)
    cases = (("facts", question_vectors, 5), ("phrases", name_vectors, 1), ("phrases", name_vectors, 5))
    with threadpool_limits(1, "blas"):
        for name, queries, k in cases:
            m = matrices[name]
            out["rows"][name] = len(m)
            exact = [set(np.argpartition(-(m @ q), k - 1)[:k].tolist()) for q in queries]
            for nlist in (list_count(len(m)), 256, 512):
                index = IvfIndex.train(m, nlist=nlist)
                row = {}
                for share in shares:
                    probes = max(1, round(share * nlist))
                    found = [set(_ranked(m, index.search(m, q, k, probes), q, k)) for q in queries]
                    row[f"{share:g}"] = round(
                        float(np.mean([len(a & b) / k for a, b in zip(exact, found, strict=True)])), 3
                    )
                out["recall"][f"{name} top {k}, {nlist} lists"] = row
                print(name, k, nlist, row, flush=True)
    return out


def recall_markdown(data: dict[str, Any]) -> str:
    d = data["result"]
    rows = d["recall"]
    shares = list(next(iter(rows.values())))
    return "\n".join(
        [
            md_header("IVF recall on real vectors (MuSiQue), by lists and share of lists scored", data),
            f"Facts ({d['rows']['facts']:,}) searched with the {d['questions']} questions' vectors "
            "(the default mode's fact search); "
            f"phrases ({d['rows']['phrases']:,}) with the vectors of the questions' "
            f"{d['names']} NER names (linking). Cells: the share of the exact top k the index returns. The "
            "default at 1M rows is 1,024 lists, 64 probes = 0.0625 of the lists.",
            "",
            md_table(
                ["search, lists", *(f"{s} of lists" for s in shares)],
                [[k, *v.values()] for k, v in rows.items()],
            ),
            "",
        ]
    )


# --- store (1M phrases) ----------------------------------------------------------------------------------
def run_store(args: argparse.Namespace) -> dict[str, Any]:
    from bench_scale import MODEL, NamedEntities, RandomEmbedder, phrase_name, unit_vectors

    from hipporag_neo4j.retrieval.retriever import Retriever, blas_threads
    from hipporag_neo4j.settings import RetrievalSettings
    from hipporag_neo4j.stores.embedded import EmbeddedStore
    from hipporag_neo4j.stores.embedded.vector_index import VectorSearch

    source: Path = args.store_1m
    copy = args.work / source.name
    out: dict[str, Any] = {"source": str(source), "copy": str(copy)}
    if not (copy / "graph.sqlite").is_file():
        if copy.exists():
            shutil.rmtree(copy)
        args.work.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        shutil.copytree(source, copy)
        out["copy_s"] = round(time.perf_counter() - t, 1)
    modes = {"exact": VectorSearch("exact"), "index": VectorSearch("auto", args.min_rows, args.probes)}
    out["index_min_rows"], out["probes"] = args.min_rows, args.probes
    store = EmbeddedStore(copy, vector_search=modes["exact"])
    store.open(MODEL, DIM)
    conn = store._connect()  # counts only: stats() also counts relation edges, minutes at 1M
    counts = [
        int(conn.execute(sql).fetchone()[0])
        for sql in (
            "SELECT COUNT(*) FROM phrases",
            "SELECT COUNT(*) FROM passages",
            "SELECT COUNT(*) FROM facts WHERE embedding IS NOT NULL",
        )
    ]
    n_phrases, n_passages = counts[0], counts[1]
    out["store"] = {"phrases": n_phrases, "passages": n_passages, "facts with vectors": counts[2]}
    print("store", out["store"], flush=True)
    rng = np.random.default_rng(3)
    settings = RetrievalSettings(passage_seed_top_n=args.passage_seed_top_n)
    queries: dict[str, list[str]] = {}
    for _ in range(args.queries):
        a, b = (int(x) for x in rng.choice(n_phrases, 2, replace=False))
        queries[f"How is {phrase_name(a)} related to {phrase_name(b)}?"] = [phrase_name(a), phrase_name(b)]
    retriever = Retriever(store, RandomEmbedder(DIM), settings, NamedEntities(queries))  # type: ignore[arg-type]
    warm: dict[str, float] = {}
    with blas_threads(1):
        for label, search in (("exact", modes["exact"]), ("index", modes["index"])):
            store.vector_search = search
            q = unit_vectors(rng, 2, DIM)
            for name, fn in (
                ("nearest_phrases", lambda: store.nearest_phrases(q, 1, -1.0)),  # noqa: B023
                ("nearest_facts", lambda: store.nearest_facts(q[0], 5)),  # noqa: B023
                ("dense_passage_scores", lambda: store.dense_passage_scores(q[0], 200)),  # noqa: B023
            ):
                t = time.perf_counter()
                fn()
                warm[f"first {name} ({label})"] = round(time.perf_counter() - t, 2)
                print(label, name, warm[f"first {name} ({label})"], flush=True)
        out["first_call_s"] = warm
        out["index_builds"] = store.index_builds
        times: dict[str, list[float]] = {}
        stages: dict[str, dict[str, list[float]]] = {}
        order = list(modes)
        for i, query in enumerate(queries):
            vectors = unit_vectors(rng, 3, DIM)
            for label in order[i % 2 :] + order[: i % 2]:
                store.vector_search = modes[label]
                for name, fn in (
                    (
                        "nearest_phrases (2 vectors, top 1)",
                        lambda: store.nearest_phrases(vectors[:2], 1, -1.0),  # noqa: B023
                    ),
                    ("nearest_facts (top 5)", lambda: store.nearest_facts(vectors[2], 5)),  # noqa: B023
                    ("dense_passage_scores (top 200)", lambda: store.dense_passage_scores(vectors[2], 200)),  # noqa: B023
                ):
                    t = time.perf_counter()
                    fn()
                    times.setdefault(f"{name} {label}", []).append(time.perf_counter() - t)
                t = time.perf_counter()
                result = retriever.retrieve(query, "hipporag2")
                times.setdefault(f"retrieve hipporag2 {label}", []).append(time.perf_counter() - t)
                for stage, value in result.timings.items():
                    stages.setdefault(label, {}).setdefault(stage, []).append(value)
            print(i, {k: round(v[-1] * 1000, 1) for k, v in times.items()}, flush=True)
    out["latency"] = {k: latency_summary(v) for k, v in times.items()}
    out["stage_p50_ms"] = {
        label: {k: round(1000 * float(np.percentile(v, 50)), 2) for k, v in by.items()}
        for label, by in stages.items()
    }
    out["passage_seed_top_n"] = args.passage_seed_top_n
    out["n_passages"] = n_passages
    store.close()
    return out


def store_markdown(data: dict[str, Any]) -> str:
    d = data["result"]
    lat = d["latency"]
    jobs = sorted({k.rsplit(" ", 1)[0] for k in lat})
    return "\n".join(
        [
            md_header("Exact scans vs the IVF index on the 1M-phrase synthetic store", data),
            f"Copy of `{d['source']}` ({d['store']}); one BLAS thread (`blas_threads(1)`, as the retriever); "
            f"{len(lat[jobs[0] + ' exact']) and lat[jobs[0] + ' exact']['n']} queries, exact and index "
            "(`store.vector_search` exact / auto) alternated per query on one store object. Default mode "
            f"with `retrieval.passage_seed_top_n = {d['passage_seed_top_n']}`, random-vector encoder and a "
            "fixed query NER (two graph phrases per query), as `bench_scale.py`.",
            "",
            f"First calls (index training or loading, fact vectors read from SQL): {d['first_call_s']}; "
            f"indexes trained: {d['index_builds']}.",
            "",
            md_table(
                ["call", "exact p50 ms", "index p50 ms", "index / exact", "exact p95", "index p95"],
                [
                    [
                        j,
                        lat[f"{j} exact"]["p50_ms"],
                        lat[f"{j} index"]["p50_ms"],
                        round(lat[f"{j} index"]["p50_ms"] / lat[f"{j} exact"]["p50_ms"], 3),
                        lat[f"{j} exact"]["p95_ms"],
                        lat[f"{j} index"]["p95_ms"],
                    ]
                    for j in jobs
                ],
            ),
            "",
            "Default mode, stage p50 (ms):",
            "",
            md_table(
                ["search", *sorted(d["stage_p50_ms"]["exact"])],
                [
                    [label, *(by.get(k, "-") for k in sorted(d["stage_p50_ms"]["exact"]))]
                    for label, by in d["stage_p50_ms"].items()
                ],
            ),
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("part", choices=["scans", "quality", "recall", "store"])
    parser.add_argument("--arrays", type=Path, default=Path("/tmp/p19v"))
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--probes", type=int, default=DEFAULT_PROBES, help="store part")
    parser.add_argument("--scan-probes", default="16,64,128", help="scans part: probe counts compared")
    parser.add_argument("--stores", type=Path, default=Path("/tmp/hipporag-bench/hot_path"))
    parser.add_argument("--store-1m", type=Path, default=Path("/work/bench-1m/store-1000000"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/p19v-store"))
    parser.add_argument("--passage-seed-top-n", type=int, default=2_000)
    parser.add_argument(
        "--min-rows", type=int, default=DEFAULT_MIN_ROWS, help="store part: vector_index_min_rows"
    )
    parser.add_argument("--render", action="store_true", help="re-write the .md from the part's .json")
    args = parser.parse_args()
    renderers = {
        "scans": scans_markdown,
        "quality": quality_markdown,
        "recall": recall_markdown,
        "store": store_markdown,
    }
    if args.render:
        stem = f"vector_index_{args.part}"
        data = json.loads((RESULTS / f"{stem}.json").read_text())
        write_results(stem, data, renderers[args.part](data))
        return
    data = run_header()
    if args.part == "scans":
        data["result"] = run_scans(args)
        render = scans_markdown
    elif args.part == "quality":
        data["result"] = run_quality(args)
        render = quality_markdown
    elif args.part == "recall":
        data["result"] = run_recall(args)
        render = recall_markdown
    else:
        data["result"] = run_store(args)
        render = store_markdown
    data["load_after"] = load_average()
    json_path, md_path = write_results(f"vector_index_{args.part}", data, render(data))
    print(f"wrote {json_path} and {md_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
