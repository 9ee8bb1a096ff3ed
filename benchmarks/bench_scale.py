"""The ``scale`` suite: the embedded store on synthetic graphs of 10k, 100k, 1M phrases.

The graphs are written straight through the store protocol (``EmbeddedStore.write_passages`` with
``PhraseRecord`` / ``PassageRecord`` / ``FactRecord``, then ``write_synonyms``), with random unit vectors,
so the figures are the store's, not the embedder's. Each size runs in its own child process, so its peak
memory (``ru_maxrss``) is its own.

Synthetic graph for N phrases (defaults; all are options):

* N / 8 passages (MuSiQue has ~8.6 phrases per passage), written in batches of 256 like the indexer;
  passage p introduces phrases 8p .. 8p+7 ("home" phrases, each mentioned once as an entity);
* 4 N facts (relation edges), 32 per passage: subject = a home phrase of the passage, object = a phrase
  drawn uniformly from the phrases written so far (so older phrases become hubs, as in a growing corpus);
  each slot is a mention of its phrase in the passage;
* N synonym edges: each new phrase to a random older one, cosine drawn from [0.8, 1);
  so ~5 edges per phrase (4 relation + 1 synonym), mean undirected degree ~10;
* vectors: random unit vectors of dimension 384 (all-MiniLM-L6-v2's) for phrases and passages;
  ``--fact-vectors-per-phrase R`` (default 1) gives the first ``round(R × 8)`` facts of each passage a
  random unit vector too (R = 1: N embedded facts of the 4 N, about MuSiQue's 17,033 embedded facts for
  19,102 phrases), so the default ``hipporag2`` mode's fact search has a fact matrix to scan; the vectors
  come from their own random stream, so the rest of the graph is the same for any R and the same seed
  (R = 0 is the graph of ``results/scale.md``).

Measured per size: build (record generation apart from store time), snapshot load (phrase index and CSR
graph, cold, in a fresh store object), memory, and per query: ``personalized_pagerank``, the raw scipy
kernel (``hipporag_neo4j.graph.ppr``), one sparse mat-vec, ``graph_passage_scores`` (with the retriever's
candidate pool and with top 5), ``nearest_phrases`` (linking: 2 vectors; synonym search: 512 vectors),
``dense_passage_scores`` and ``Retriever.retrieve`` end to end in every mode (random-vector embedder,
query NER that names two graph phrases, so no model time is included); then, ``--writes`` times, one
more ``write_passages`` call of ``--write-batch`` passages (default 1: an agent writing one memory) and
the first default-mode query after it (reads right after writes), in the writing process.

    python benchmarks/run.py scale --sizes 10000,100000,1000000 [--writes 3] [--write-batch 1]
        [--keep --workdir DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from harness import (
    REPO,
    RESULTS,
    latency_summary,
    load_average,
    md_header,
    md_table,
    peak_rss_mib,
    rss_mib,
    run_header,
    timed,
    write_results,
)

from hipporag_neo4j.common.text import fact_text, make_fact_id, make_passage_id, make_phrase_id
from hipporag_neo4j.graph import ppr
from hipporag_neo4j.models import Passage
from hipporag_neo4j.retrieval.retriever import Retriever
from hipporag_neo4j.settings import RetrievalSettings
from hipporag_neo4j.stores.base import FactRecord, Matrix, PassageRecord, PhraseRecord, SynonymEdge
from hipporag_neo4j.stores.embedded import EmbeddedStore
from hipporag_neo4j.stores.memory.vector_index import VectorSearch

MODEL = "random-unit-vectors"


def unit_vectors(rng: np.random.Generator, n: int, dim: int) -> Matrix:
    v = rng.standard_normal((n, dim), dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def phrase_name(i: int) -> str:
    return f"entity {i}"


class RandomEmbedder:
    """Random unit vectors, seeded by the text: the scale benchmark measures the store, not a model."""

    model_name = MODEL

    def __init__(self, dim: int) -> None:
        self.dimension = dim
        self.max_tokens = None

    def token_count(self, text: str) -> int:
        return len(text.split())

    def encode(self, texts: list[str]) -> Matrix:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = unit_vectors(np.random.default_rng(zlib.crc32(text.encode())), 1, self.dimension)[0]
        return out


class NamedEntities:
    """Query NER that returns the graph phrases named in the benchmark query."""

    name = "bench-fixed"

    def __init__(self, entities: dict[str, list[str]]) -> None:
        self.entities = entities

    def query_entities(self, query: str) -> list[str]:
        return self.entities[query]


def write_batch(
    store: EmbeddedStore,
    args: argparse.Namespace,
    rng: np.random.Generator,
    fact_rng: np.random.Generator,
    ids: list[str],
    start: int,
    stop: int,
    times: dict[str, float],
) -> float:
    """Write passages ``start`` .. ``stop`` (their home phrases, facts, mentions, synonym edges) as one
    ``write_passages`` call and one ``write_synonyms`` call; returns the seconds of ``write_passages``.
    ``ids`` holds the phrase ids of every phrase up to the last one of the batch."""
    n, per, dim = len(ids), args.phrases_per_passage, args.dim
    facts_per_passage = round(args.relations_per_phrase * per)
    embedded_facts = round(per * getattr(args, "fact_vectors_per_phrase", 0.0))
    t = time.perf_counter()
    first, last = start * per, min(stop * per, n)
    vectors = unit_vectors(rng, last - first, dim)
    phrases = [PhraseRecord(ids[i], phrase_name(i), vectors[i - first]) for i in range(first, last)]
    passage_vectors = unit_vectors(rng, stop - start, dim)
    records = []
    for p in range(start, stop):
        home = range(p * per, min((p + 1) * per, n))
        subjects = rng.integers(home.start, home.stop, facts_per_passage)
        objects = rng.integers(0, home.stop, facts_per_passage)
        predicates = rng.integers(0, 50, facts_per_passage)
        mentions: Counter[str] = Counter(ids[i] for i in home)
        facts = {}
        for s, o, k in zip(subjects.tolist(), objects.tolist(), predicates.tolist(), strict=True):
            sn, on, pred = phrase_name(s), phrase_name(o), f"relation {k}"
            mentions[ids[s]] += 1
            mentions[ids[o]] += 1
            fid = make_fact_id(sn, pred, on)
            facts[fid] = FactRecord(fid, ids[s], pred, ids[o], fact_text(sn, pred, on))
        if embedded_facts:
            fact_vectors = unit_vectors(fact_rng, min(embedded_facts, len(facts)), dim)
            for j, fid in enumerate(list(facts)[:embedded_facts]):
                facts[fid] = dataclasses.replace(facts[fid], embedding=fact_vectors[j])
        text = f"Passage {p} is about " + ", ".join(phrase_name(i) for i in home) + "."
        passage = Passage(id=make_passage_id(text, f"title {p}"), text=text, title=f"title {p}")
        records.append(
            PassageRecord(passage, passage_vectors[p - start], dict(mentions), list(facts.values()))
        )
    new = np.repeat(np.arange(max(first, 1), last), args.synonyms_per_phrase)
    older = (rng.random(len(new)) * new).astype(np.int64)
    scores = rng.uniform(args.synonym_threshold, 1.0, len(new))
    edges = [
        SynonymEdge(ids[a], ids[b], float(c))
        for a, b, c in zip(new.tolist(), older.tolist(), scores.tolist(), strict=True)
    ]
    times["generate_records"] = times.get("generate_records", 0.0) + time.perf_counter() - t
    before = times.get("write_passages", 0.0)
    with timed(times, "write_passages"):
        store.write_passages(phrases, records)
    with timed(times, "write_synonyms"):
        store.write_synonyms(edges)
    return times["write_passages"] - before


def build(
    store: EmbeddedStore, args: argparse.Namespace, rng: np.random.Generator
) -> tuple[dict[str, float], list[float]]:
    """Write the graph batch by batch; returns seconds per step and per write_passages call."""
    n = args.phrases
    n_passages = math.ceil(n / args.phrases_per_passage)
    times: dict[str, float] = {}
    ids = [make_phrase_id(phrase_name(i)) for i in range(n)]
    fact_rng = np.random.default_rng((getattr(args, "seed", 0), 1))  # apart: the graph stays the same
    per_batch: list[float] = []
    for start in range(0, n_passages, args.batch):
        stop = min(start + args.batch, n_passages)
        per_batch.append(write_batch(store, args, rng, fact_rng, ids, start, stop, times))
        if stop == n_passages or (start // args.batch) % 50 == 0:
            print(
                f"  [{n:,}] passages {stop:,}/{n_passages:,}  rss {rss_mib():,.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
    return times, per_batch


def after_writes(
    store: EmbeddedStore, args: argparse.Namespace, query: str, entities: list[str]
) -> dict[str, Any]:
    """``--writes`` times: one more ``write_passages`` call of ``--write-batch`` passages (and its synonym
    edges), then the first default-mode query after it (the snapshot carried forward) and the next one.
    What an agent pays when it writes its memory while it reads it."""
    per = args.phrases_per_passage
    n0 = store.stats().phrases
    p0 = math.ceil(n0 / per)
    batch = args.write_batch
    total = (p0 + args.writes * batch) * per
    ids = [make_phrase_id(phrase_name(i)) for i in range(total)]
    rng = np.random.default_rng((args.seed, 2))
    fact_rng = np.random.default_rng((args.seed, 3))
    retriever = Retriever(
        store, RandomEmbedder(args.dim), RetrievalSettings(), NamedEntities({query: entities})
    )  # type: ignore[arg-type]
    retriever.retrieve(query, "hipporag2")  # warm before the first write
    rows = []
    for w in range(args.writes):
        start = p0 + w * batch
        times: dict[str, float] = {}
        write_s = write_batch(store, args, rng, fact_rng, ids, start, start + batch, times)
        t = time.perf_counter()
        retriever.retrieve(query, "hipporag2")
        first = time.perf_counter() - t
        t = time.perf_counter()
        retriever.retrieve(query, "hipporag2")
        rows.append(
            {
                "write_passages_s": round(write_s, 4),
                "write_synonyms_s": round(times["write_synonyms"], 4),
                "first_query_s": round(first, 4),
                "next_query_s": round(time.perf_counter() - t, 4),
                "load": load_average(),
            }
        )
    return {
        "writes": rows,
        "median": {
            key: round(float(np.median([r[key] for r in rows])), 4)
            for key in ("write_passages_s", "write_synonyms_s", "first_query_s", "next_query_s")
        },
    }


def query_workload(args: argparse.Namespace, rng: np.random.Generator) -> list[list[int]]:
    """Seed phrases per query: two distinct phrases each."""
    return [sorted(rng.choice(args.phrases, 2, replace=False).tolist()) for _ in range(args.queries)]


def child(args: argparse.Namespace) -> dict[str, Any]:
    rng = np.random.default_rng(args.seed)
    out: dict[str, Any] = {"phrases": args.phrases}
    reuse = Path(args.reuse_store) if args.reuse_store else None
    if reuse is not None and (reuse / "graph.sqlite").is_file():
        path = reuse  # built by an earlier run with the same parameters: measure load and queries only
        out["reused_store"] = str(path)
        store = EmbeddedStore(path, vector_search=VectorSearch(mode=args.vector_search))
        store.open(MODEL, args.dim)
    else:
        path = Path(tempfile.mkdtemp(prefix=f"hipporag-scale-{args.phrases}-", dir=args.workdir))
        out["store_path"] = str(path)
        store = EmbeddedStore(path, vector_search=VectorSearch(mode=args.vector_search))
        store.open(MODEL, args.dim)
        t = time.perf_counter()
        times, per_batch = build(store, args, rng)
        out["build_s"] = {k: round(v, 2) for k, v in times.items()}
        tenth = max(1, len(per_batch) // 10)
        # growth check: a write_passages call should cost the same on an empty and on a full store
        out["write_passages_per_batch_ms"] = {
            "first_tenth_mean": round(1000 * float(np.mean(per_batch[:tenth])), 1),
            "last_tenth_mean": round(1000 * float(np.mean(per_batch[-tenth:])), 1),
            "batches": len(per_batch),
        }
        out["build_s"]["wall"] = round(time.perf_counter() - t, 2)
        out["rss_after_build_mib"] = round(rss_mib(), 1)
        args.out.write_text(json.dumps(out))  # partial results survive a timeout
    rng = np.random.default_rng(args.seed + 1)  # same query workload whether built here or reused
    stats = store.stats()
    out["graph"] = {
        k: getattr(stats, k)
        for k in ("passages", "phrases", "facts", "relation_edges", "synonym_edges", "mentions")
    }
    store.close()
    out["store_on_disk_mib"] = round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)

    store = EmbeddedStore(
        path, vector_search=VectorSearch(mode=args.vector_search)
    )  # cold: loads from SQLite
    store.open(MODEL, args.dim)
    load: dict[str, float] = {}
    rss0 = rss_mib()
    with timed(load, "phrase_index"):
        store.cache.phrase_index()
    with timed(load, "graph_snapshot"):
        graph = store.cache.graph()
    out["snapshot_load_s"] = {k: round(v, 3) for k, v in load.items()}
    out["rss_after_snapshot_mib"] = round(rss_mib(), 1)
    out["snapshot_rss_growth_mib"] = round(rss_mib() - rss0, 1)
    arrays = [graph.phrases.vectors, graph.passage_vectors]
    for m in (graph.adjacency, graph.mentions):
        arrays += [m.data, m.indices, m.indptr]
    out["snapshot_arrays_mib"] = round(sum(a.nbytes for a in arrays) / 2**20, 1)
    out["transition_nnz"] = int(graph.adjacency.nnz)
    transition, dangling = ppr.transition_matrix(graph.adjacency)  # the power iteration's
    args.out.write_text(json.dumps(out))

    s = RetrievalSettings()
    names = graph.phrases.names
    workload = query_workload(args, rng)
    pool = min(5000, store.passage_count())
    lat: dict[str, list[float]] = {}

    def clock(key: str, fn: Any, *a: Any, **kw: Any) -> Any:
        start = time.perf_counter()
        value = fn(*a, **kw)
        lat.setdefault(key, []).append(time.perf_counter() - start)
        return value

    x = np.full(len(names), 1.0 / len(names))
    for _ in range(5):
        clock("sparse_matvec", transition.dot, x)
    entities: dict[str, list[str]] = {}
    for seed_positions in workload:
        seeds = {graph.phrases.ids[i]: 1.0 / max(int(graph.passage_counts[i]), 1) for i in seed_positions}
        reset = np.zeros(len(names))
        for i in seed_positions:
            reset[i] = seeds[graph.phrases.ids[i]]
        clock(
            "ppr_kernel",
            ppr.personalized_pagerank,
            transition,
            dangling,
            reset,
            s.damping,
            s.ppr_max_iterations,
            s.ppr_tolerance,
        )
        clock(
            "store_personalized_pagerank",
            store.personalized_pagerank,
            seeds,
            s.damping,
            s.ppr_max_iterations,
            s.ppr_tolerance,
        )
        clock(
            "graph_passage_scores_pool",
            store.graph_passage_scores,
            seeds,
            s.damping,
            s.ppr_max_iterations,
            s.ppr_tolerance,
            pool,
            s.explain_phrases,
        )
        clock(
            "graph_passage_scores_top5",
            store.graph_passage_scores,
            seeds,
            s.damping,
            s.ppr_max_iterations,
            s.ppr_tolerance,
            5,
            s.explain_phrases,
        )
        clock("nearest_phrases_link_2", store.nearest_phrases, unit_vectors(rng, 2, args.dim), 1, -1.0)
        clock("dense_passage_scores", store.dense_passage_scores, unit_vectors(rng, 1, args.dim)[0], pool)
        entities[f"How is {names[seed_positions[0]]} related to {names[seed_positions[1]]}?"] = [
            names[i] for i in seed_positions
        ]
    retriever = Retriever(store, RandomEmbedder(args.dim), s, NamedEntities(entities))  # type: ignore[arg-type]
    stages: dict[str, dict[str, list[float]]] = {}
    for query in entities:
        for mode in ("hipporag2", "hipporag", "dense", "hybrid"):
            result = clock(f"retrieve_{mode}", retriever.retrieve, query, mode)
            for key, value in result.timings.items():
                stages.setdefault(mode, {}).setdefault(key, []).append(value)
    out["peak_rss_before_synonym_search_mib"] = round(peak_rss_mib(), 1)
    # what each indexing batch pays at this size: synonym kNN of 512 new phrases, growing the phrase matrix
    for _ in range(3):
        clock(
            "nearest_phrases_synonyms_512",
            store.nearest_phrases,
            unit_vectors(rng, 512, args.dim),
            100,
            args.synonym_threshold,
        )
        clock(
            "phrase_matrix_vstack_2048", np.vstack, [graph.phrases.vectors, unit_vectors(rng, 2048, args.dim)]
        )
    out["latency"] = {k: latency_summary(v) for k, v in lat.items()}
    out["retrieve_stages"] = {m: {k: latency_summary(v) for k, v in d.items()} for m, d in stages.items()}
    out["candidate_pool"] = pool
    out["peak_rss_mib"] = round(peak_rss_mib(), 1)
    args.out.write_text(json.dumps(out))
    if args.writes:  # last: it grows the store
        first_query = next(iter(entities))
        out["after_write"] = after_writes(store, args, first_query, entities[first_query])
    store.close()
    if not args.keep and reuse is None:
        shutil.rmtree(path)
    return out


def run_child(size: int, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        result_file = Path(handle.name)
    command = [sys.executable, __file__, "--child", "--phrases", str(size), "--out", str(result_file)]
    for name in (
        "dim",
        "phrases_per_passage",
        "relations_per_phrase",
        "synonyms_per_phrase",
        "fact_vectors_per_phrase",
        "batch",
        "queries",
        "seed",
        "workdir",
        "writes",
        "write_batch",
        "synonym_threshold",
        "vector_search",
    ):
        command += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    if args.reuse_store:
        command += ["--reuse-store", args.reuse_store]
    if args.keep:
        command.append("--keep")
    started = time.perf_counter()
    load_before = load_average()
    try:
        subprocess.run(command, check=True, timeout=args.timeout, cwd=REPO)
        result = json.loads(result_file.read_text())
    except subprocess.TimeoutExpired:
        partial = result_file.read_text() if result_file.stat().st_size else "{}"
        result = {**json.loads(partial), "phrases": size, "error": f"did not finish within {args.timeout} s"}
    except subprocess.CalledProcessError as exc:
        result = {"phrases": size, "error": f"child failed with exit status {exc.returncode}"}
    finally:
        result_file.unlink(missing_ok=True)
    result["child_wall_s"] = round(time.perf_counter() - started, 1)
    result["load_before"], result["load_after"] = load_before, load_average()
    return result


def _get(r: dict[str, Any], *path: str) -> Any:
    value: Any = r
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def markdown(data: dict[str, Any]) -> str:
    entries = data["sizes"]
    p = data["parameters"]
    with_latency = [r for r in entries if "latency" in r]

    graph_rows = [
        [
            r["phrases"],
            *(r["graph"][k] for k in ("passages", "facts", "relation_edges", "synonym_edges", "mentions")),
            r.get("transition_nnz"),
        ]
        for r in entries
        if "graph" in r
    ]
    build_rows = [
        [
            r["phrases"],
            *(
                _get(r, "build_s", k)
                for k in ("wall", "generate_records", "write_passages", "write_synonyms")
            ),
            _get(r, "write_passages_per_batch_ms", "first_tenth_mean"),
            _get(r, "write_passages_per_batch_ms", "last_tenth_mean"),
            _get(r, "snapshot_load_s", "phrase_index"),
            _get(r, "snapshot_load_s", "graph_snapshot"),
            r.get("store_on_disk_mib"),
        ]
        for r in entries
        if "build_s" in r or "snapshot_load_s" in r
    ]
    mem_keys = [
        "rss_after_build_mib",
        "snapshot_arrays_mib",
        "snapshot_rss_growth_mib",
        "rss_after_snapshot_mib",
        "peak_rss_before_synonym_search_mib",
        "peak_rss_mib",
    ]
    mem_rows = [
        [
            r["phrases"],
            *(r.get(k) for k in mem_keys),
            round(r["peak_rss_before_synonym_search_mib"] * 1024 / r["phrases"], 2),
        ]
        for r in entries
        if "peak_rss_before_synonym_search_mib" in r
    ]
    keys = [
        "sparse_matvec",
        "ppr_kernel",
        "store_personalized_pagerank",
        "graph_passage_scores_top5",
        "graph_passage_scores_pool",
        "nearest_phrases_link_2",
        "dense_passage_scores",
        "retrieve_hipporag2",
        "retrieve_hipporag",
        "retrieve_dense",
        "retrieve_hybrid",
        "nearest_phrases_synonyms_512",
        "phrase_matrix_vstack_2048",
    ]

    def lat(r: dict[str, Any], key: str) -> str:
        s = r["latency"].get(key)
        return f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f}" if s else "-"

    lat_rows = [[k] + [lat(r, k) for r in with_latency] for k in keys]
    stage_mode = "hipporag2" if all("hipporag2" in r["retrieve_stages"] for r in with_latency) else "hipporag"
    stage_keys = list(dict.fromkeys(k for r in with_latency for k in r["retrieve_stages"][stage_mode]))
    stage_rows = [
        [k] + [f"{_get(r, 'retrieve_stages', stage_mode, k, 'p50_ms') or 0.0:.1f}" for r in with_latency]
        for k in stage_keys
    ]
    write_rows = [
        [
            f"{r['phrases']:,}",
            len(r["after_write"]["writes"]),
            *(
                f"{1000 * r['after_write']['median'][k]:.1f}"
                + (
                    f" ({1000 * max(w[k] for w in r['after_write']['writes']):.1f})"
                    if k in ("write_passages_s", "first_query_s")
                    else ""
                )
                for k in ("write_passages_s", "write_synonyms_s", "first_query_s", "next_query_s")
            ),
        ]
        for r in entries
        if r.get("after_write")
    ]
    lines = [
        md_header("Scale benchmark: embedded store on synthetic graphs", data),
        f"Synthetic graph: {p['phrases_per_passage']} phrases per passage, "
        f"{p['relations_per_phrase']} relation edges (facts) and {p['synonyms_per_phrase']} synonym edge "
        f"per phrase, random unit vectors of dim {p['dim']} (phrases, passages; "
        f"{p.get('fact_vectors_per_phrase', 0.0)} embedded facts per phrase), "
        f"{p['queries']} queries of 2 seed phrases, "
        "PPR damping 0.5, tolerance 1e-8. Each size runs in its own process.",
        "",
        "## Graph",
        "",
        md_table(
            ["phrases", "passages", "facts", "relation edges", "synonym edges", "mentions", "CSR nnz"],
            graph_rows,
        ),
        "",
        "## Build and load (seconds; disk MiB)",
        "",
        md_table(
            [
                "phrases",
                "build wall",
                "record generation",
                "write_passages",
                "write_synonyms",
                "ms per write_passages call, first 10 %",
                "last 10 %",
                "load phrase index",
                "load graph snapshot",
                "disk MiB",
            ],
            build_rows,
        ),
        "",
        "## Memory (MiB)",
        "",
        md_table(
            [
                "phrases",
                "RSS after build",
                "snapshot arrays",
                "snapshot RSS growth",
                "RSS after snapshot",
                "peak RSS (build + queries)",
                "peak RSS incl. 512-query synonym search",
                "KiB per phrase",
            ],
            mem_rows,
        ),
        "",
        "## Latency, p50 / p95 ms",
        "",
        md_table(["operation"] + [f"{r['phrases']:,} phrases" for r in with_latency], lat_rows),
        "",
        f"## Retrieve ({stage_mode} mode) stages, p50 ms",
        "",
        md_table(["stage"] + [f"{r['phrases']:,}" for r in with_latency], stage_rows),
        "",
        "## Reads right after writes (ms, median over the writes)",
        "",
        "After the queries above, in the same process: one `write_passages` call of "
        f"{_write_batch(data)} passage(s) and its `write_synonyms`, then the first default-mode "
        "(`hipporag2`) query after it (the snapshot carried forward) and the next one; in brackets the "
        "slowest of the writes (the first write of a process grows the memory-mapped phrase and passage "
        "matrices).",
        "",
        md_table(
            ["phrases", "writes", "write_passages", "write_synonyms", "first query after", "next query"],
            write_rows,
        ),
        "",
        "Per size (load average before -> after, wall time of its process): "
        + "; ".join(
            f"{r['phrases']:,}: {r['load_before']} -> {r['load_after']}, {r['child_wall_s']} s"
            for r in entries
        ),
    ]
    for r in entries:
        if "error" in r:
            lines += ["", f"**{r['phrases']:,} phrases: {r['error']}** (after {r['child_wall_s']} s)"]
        if "reused_store" in r:
            lines += [
                "",
                f"{r['phrases']:,} phrases: build figures from the run that built the store; "
                "load and latency from a later run on that store (see `runs`).",
            ]
    return "\n".join(lines)


def _write_batch(data: dict[str, Any]) -> str:
    """Passages per write of the after-write phase (results before the option: one batch of 256)."""
    return str(data.get("parameters", {}).get("write_batch", 256))


def merge(previous: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Entries of a later run go into the earlier results, size by size (``--merge``)."""
    fixed = ("dim", "phrases_per_passage", "relations_per_phrase", "synonyms_per_phrase", "batch", "seed")
    if any(previous["parameters"][k] != new["parameters"][k] for k in fixed):
        raise SystemExit("--merge: the earlier results used other graph parameters")
    by_size = {r["phrases"]: r for r in previous["sizes"]}
    for entry in new["sizes"]:
        old = by_size.get(entry["phrases"], {})
        merged = {**old, **entry}
        if "error" not in entry:
            merged.pop("error", None)
        by_size[entry["phrases"]] = merged
    runs = previous.get("runs") or [
        {k: previous[k] for k in ("command", "date", "commit", "load_before", "load_after")}
    ]
    runs.append({k: new[k] for k in ("command", "date", "commit", "load_before", "load_after")})
    return {**previous, "runs": runs, "sizes": [by_size[k] for k in sorted(by_size)]}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--phrases-per-passage", type=int, default=8)
    parser.add_argument("--relations-per-phrase", type=float, default=4.0)
    parser.add_argument("--synonyms-per-phrase", type=int, default=1)
    parser.add_argument(
        "--fact-vectors-per-phrase",
        type=float,
        default=1.0,
        help="embedded facts per phrase (the first round(R x phrases per passage) facts of each passage)",
    )
    parser.add_argument("--synonym-threshold", type=float, default=0.8)
    parser.add_argument(
        "--vector-search",
        choices=("auto", "exact", "approximate"),
        default="auto",
        help="the store's vector search (store.vector_search): auto uses the IVF index from 200k rows",
    )
    parser.add_argument("--batch", type=int, default=256, help="passages per write_passages call")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument(
        "--writes",
        type=int,
        default=3,
        help="write_passages calls, each followed by the first query after it",
    )
    parser.add_argument(
        "--write-batch",
        type=int,
        default=1,
        help="passages per write_passages call of --writes (1: an agent writing one memory)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per size before it is stopped")
    parser.add_argument("--workdir", default=tempfile.gettempdir())
    parser.add_argument("--keep", action="store_true", help="keep the synthetic stores")
    parser.add_argument("--render-only", action="store_true", help="rewrite results/<stem>.md from its JSON")
    parser.add_argument("--merge", action="store_true", help="merge into the existing results of --stem")
    parser.add_argument("--reuse-store", help="a store kept by an earlier run (one size): skip the build")
    parser.add_argument("--stem", default="scale")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--phrases", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.out.write_text(json.dumps(child(args)))
        return
    if args.render_only:  # rewrite the markdown of existing results (after a format change)
        data = json.loads((RESULTS / f"{args.stem}.json").read_text())
        write_results(args.stem, data, markdown(data))
        return

    header = run_header()
    sizes = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"size {size:,} ...", flush=True)
        sizes.append(run_child(size, args))
        print(json.dumps(sizes[-1].get("latency", sizes[-1]))[:600], flush=True)
    header["load_after"] = load_average()
    parameters = {
        k: getattr(args, k)
        for k in (
            "dim",
            "phrases_per_passage",
            "relations_per_phrase",
            "synonyms_per_phrase",
            "synonym_threshold",
            "fact_vectors_per_phrase",
            "batch",
            "queries",
            "writes",
            "write_batch",
            "vector_search",
            "seed",
            "timeout",
        )
    }
    data = {**header, "parameters": parameters, "sizes": sizes}
    previous_file = RESULTS / f"{args.stem}.json"
    if args.merge and previous_file.is_file():
        data = merge(json.loads(previous_file.read_text()), data)
    md = markdown(data)
    json_path, md_path = write_results(args.stem, data, md)
    print(md)
    print(f"\nwrote {json_path} and {md_path}")


if __name__ == "__main__":
    main()
