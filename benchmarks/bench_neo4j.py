"""Neo4j store benchmark on the MuSiQue graph: ingestion (triples/s), synonym edges, query latency.

Runs only when a Neo4j URI is configured (``HIPPORAG_NEO4J_URI`` or ``--uri``); otherwise it says so and
exits 0. Uses HippoRAG's published OpenIE of the 1,890-passage MuSiQue corpus (``shared/data/musique``),
writes it into a fresh namespace, times:

* ingestion: ``write_passages`` calls of ``--passages-per-call`` passages -> triples/s, passages/s;
* synonyms: ``nearest_phrases`` over every phrase (vector index, batched) + ``write_synonyms``;
* queries: ``graph_passage_scores`` (PPR + Cypher aggregation) and ``dense_passage_scores`` for the
  MuSiQue dev questions, seeds = phrases whose names occur in the question; p50/p95 over warm queries
  (the first graph query, which makes the GDS projection, is reported on its own);
* delete of everything written, then the namespace dropped (metadata node included) unless ``--keep``;
* per stage, the client-side time of every Cypher statement (:class:`StatementClock`: round trip, server
  work and decoding), the profile that names the bottleneck.

Embeddings come from a deterministic hash embedder by default (the benchmark is about the database);
``--embedder minilm`` uses all-MiniLM-L6-v2. Results are printed and written as JSON to
``benchmarks/results/``.

    HIPPORAG_NEO4J_URI=bolt://localhost:7687 HIPPORAG_NEO4J_PASSWORD=... \
        python benchmarks/bench_neo4j.py --passages 1890
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import platform
import statistics
import sys
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from common import load_average, run_header  # noqa: E402

from hipporag_neo4j.common.text import fact_text, make_fact_id, make_phrase_id, normalize_phrase  # noqa: E402
from hipporag_neo4j.extraction.recorded import RecordedPassage, load_recorded_extraction  # noqa: E402
from hipporag_neo4j.settings import Neo4jSettings, load_settings  # noqa: E402
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord, SynonymEdge  # noqa: E402
from hipporag_neo4j.stores.neo4j import Neo4jStore  # noqa: E402
from hipporag_neo4j.stores.neo4j.writer import CypherTransaction  # noqa: E402

MUSIQUE = REPO.parent / "shared" / "data" / "musique"
OPENIE = MUSIQUE / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json"
QUESTIONS = MUSIQUE / "musique_dev70.json"


class HashVectors:
    """Deterministic unit vectors per text: no model, so the timings are the database's."""

    model_name = "hash-embedder"

    def __init__(self, dim: int) -> None:
        self.dimension = dim

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int(hashlib.md5(text.encode()).hexdigest()[:8], 16)
            v = np.random.default_rng(seed).standard_normal(self.dimension)
            out[i] = v / np.linalg.norm(v)
        return out


def make_embedder(kind: str, dim: int) -> Any:
    if kind == "hash":
        return HashVectors(dim)
    from hipporag_neo4j.embedding.encoder import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder("all-MiniLM-L6-v2")


def build_records(
    recorded: list[RecordedPassage], embedder: Any
) -> tuple[list[PhraseRecord], list[PassageRecord], int]:
    """The store's records for the corpus (same mention counting as the indexer); triple count."""
    names: dict[str, str] = {}
    raw: list[tuple[Any, dict[str, int], dict[str, tuple[str, str, str, str]]]] = []
    triples = 0
    for item in recorded:
        assert item.passage is not None
        mentions: Counter[str] = Counter()
        facts: dict[str, tuple[str, str, str, str]] = {}
        for t in item.extraction.triples:
            s_id, o_id = make_phrase_id(t.subject), make_phrase_id(t.object)
            names[s_id], names[o_id] = t.subject, t.object
            mentions[s_id] += 1
            mentions[o_id] += 1
            facts[make_fact_id(t.subject, t.predicate, t.object)] = (
                s_id,
                t.predicate,
                o_id,
                fact_text(t.subject, t.predicate, t.object),
            )
            triples += 1
        for entity in item.extraction.entities:
            name = normalize_phrase(entity)
            if name:
                names[make_phrase_id(name)] = name
                mentions[make_phrase_id(name)] += 1
        raw.append((item.passage, dict(mentions), facts))
    phrase_ids = sorted(names)
    phrase_vectors = embedder.encode([names[i] for i in phrase_ids])
    phrases = [PhraseRecord(i, names[i], v) for i, v in zip(phrase_ids, phrase_vectors, strict=True)]
    passage_vectors = embedder.encode([p.text if not p.title else f"{p.title}\n{p.text}" for p, _, _ in raw])
    all_facts = sorted({fid: f for _, _, facts in raw for fid, f in facts.items()}.items())
    fact_vectors = dict(
        zip([fid for fid, _ in all_facts], embedder.encode([f[3] for _, f in all_facts]), strict=True)
    )
    records = [
        PassageRecord(
            passage,
            vector,
            mentions,
            [FactRecord(fid, s, p, o, text, fact_vectors[fid]) for fid, (s, p, o, text) in facts.items()],
        )
        for (passage, mentions, facts), vector in zip(raw, passage_vectors, strict=True)
    ]
    return phrases, records, triples


class StatementClock:
    """Client-side wall time per Cypher statement name (round trip + server work + decoding): which
    statement a stage spends its time in."""

    def __init__(self) -> None:
        self.seconds: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        self._original = CypherTransaction.run_query

    def __enter__(self) -> StatementClock:
        original = self._original
        clock = self

        def timed(tx: CypherTransaction, query: Any, params: dict[str, Any]) -> Any:
            t0 = time.perf_counter()
            try:
                return original(tx, query, params)
            finally:
                clock.seconds[query.name] += time.perf_counter() - t0
                clock.calls[query.name] += 1

        CypherTransaction.run_query = timed  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        CypherTransaction.run_query = self._original  # type: ignore[method-assign]

    def take(self) -> dict[str, dict[str, float]]:
        """Statements by time spent since the last take, then reset."""
        out = {
            name: {"seconds": round(sec, 3), "calls": self.calls[name]}
            for name, sec in self.seconds.most_common()
        }
        self.seconds.clear()
        self.calls.clear()
        return out


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def question_seeds(store: Neo4jStore, question: str, max_words: int = 4) -> dict[str, float]:
    words = normalize_phrase(question).split()
    grams = {" ".join(words[i : i + n]) for n in range(1, max_words + 1) for i in range(len(words) - n + 1)}
    hits = store.phrases_by_name(grams)
    return {h.id: 1.0 / max(1, h.passage_count) for h in hits.values() if len(h.name) > 2}


def run(args: argparse.Namespace, settings: Neo4jSettings) -> dict[str, Any]:
    recorded = [r for r in load_recorded_extraction(args.openie).records if r.passage is not None][
        : args.passages
    ]
    embedder = make_embedder(args.embedder, args.dim)
    started = time.perf_counter()
    phrases, records, triples = build_records(recorded, embedder)
    prepare_s = time.perf_counter() - started

    store = Neo4jStore(settings)
    store.open(embedder.model_name, embedder.dimension)
    result: dict[str, Any] = {
        **run_header(),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "runtime": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "capabilities": {
            k: v
            for k, v in dataclasses.asdict(store.capabilities()).items()
            if k in ("neo4j_version", "edition", "gds_version", "ppr_engine", "vector_query")
        },
        "settings": {
            "batch_size": settings.batch_size,
            "passages_per_call": args.passages_per_call,
            "embedder": args.embedder,
        },
        "corpus": {
            "passages": len(records),
            "phrases": len(phrases),
            "triples": triples,
            "prepare_s": round(prepare_s, 3),
        },
    }
    clock = StatementClock().__enter__()
    try:
        # ingestion: each call writes the phrases its passages mention, then the passages
        by_id = {p.id: p for p in phrases}
        started = time.perf_counter()
        for start in range(0, len(records), args.passages_per_call):
            chunk = records[start : start + args.passages_per_call]
            wanted = sorted({pid for r in chunk for pid in r.mentions})
            store.write_passages([by_id[i] for i in wanted], chunk)
        ingest_s = time.perf_counter() - started
        result["ingest"] = {
            "seconds": round(ingest_s, 3),
            "triples_per_s": round(triples / ingest_s, 1),
            "passages_per_s": round(len(records) / ingest_s, 1),
            "statements": clock.take(),
        }

        started = time.perf_counter()
        vectors = np.stack([p.embedding for p in phrases])
        hits = store.nearest_phrases(
            vectors, args.synonym_top_k, args.synonym_threshold, [p.id for p in phrases]
        )
        edges = [
            SynonymEdge(p.id, h.id, h.similarity) for p, row in zip(phrases, hits, strict=True) for h in row
        ]
        created = store.write_synonyms(edges)
        result["synonyms"] = {
            "seconds": round(time.perf_counter() - started, 3),
            "edges": created,
            "statements": clock.take(),
        }

        questions = [q["question"] for q in json.loads(Path(args.questions).read_text(encoding="utf-8"))]
        graph_ms: list[float] = []
        dense_ms: list[float] = []
        first_ms = None
        for question in questions[: args.queries]:
            seeds = question_seeds(store, question)
            if not seeds:
                continue
            t0 = time.perf_counter()
            store.graph_passage_scores(seeds, 0.5, 100, 1e-8, limit=5, explain_phrases=3)
            elapsed = (time.perf_counter() - t0) * 1000
            if first_ms is None:
                first_ms = elapsed
            else:
                graph_ms.append(elapsed)
            t0 = time.perf_counter()
            store.dense_passage_scores(embedder.encode([question])[0], 5)
            dense_ms.append((time.perf_counter() - t0) * 1000)
        result["query"] = {
            "questions_with_seeds": len(graph_ms) + (first_ms is not None),
            "first_graph_ms (projection)": round(first_ms or float("nan"), 2),
            "graph_p50_ms": round(percentile(graph_ms, 50), 2),
            "graph_p95_ms": round(percentile(graph_ms, 95), 2),
            "dense_p50_ms": round(percentile(dense_ms, 50), 2),
            "dense_p95_ms": round(percentile(dense_ms, 95), 2),
            "graph_mean_ms": round(statistics.fmean(graph_ms), 2) if graph_ms else None,
            "statements": clock.take(),
        }
        result["stats"] = store.stats().model_dump(exclude={"extra"})
    finally:
        if not args.keep:
            started = time.perf_counter()
            store.delete_passages([r.passage.id for r in records])
            result["delete_s"] = round(time.perf_counter() - started, 3)
            result["delete_statements"] = clock.take()
            store.drop_namespace()  # the metadata node too: the database as it was before the run
        clock.__exit__()
        store.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", help="Neo4j URI (default: HIPPORAG_NEO4J_URI)")
    parser.add_argument("--namespace", help="namespace to write (default: a fresh random one)")
    parser.add_argument("--openie", type=Path, default=OPENIE)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--passages", type=int, default=1890)
    parser.add_argument("--passages-per-call", type=int, default=100)
    parser.add_argument("--queries", type=int, default=70)
    parser.add_argument("--embedder", choices=("hash", "minilm"), default="hash")
    parser.add_argument("--dim", type=int, default=384, help="hash embedder dimension")
    parser.add_argument("--synonym-top-k", type=int, default=100)
    parser.add_argument("--synonym-threshold", type=float, default=0.8)
    parser.add_argument("--keep", action="store_true", help="leave the data in the namespace")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    parser.add_argument("--stem", help="result file name (default: neo4j_<UTC time>)")
    args = parser.parse_args(argv)

    overrides: dict[str, Any] = {"neo4j": {"namespace": args.namespace or f"bench_{uuid.uuid4().hex[:10]}"}}
    if args.uri:
        overrides["neo4j"]["uri"] = args.uri
    settings = load_settings(overrides).neo4j
    if not settings.uri:
        print("bench_neo4j: no Neo4j URI (set HIPPORAG_NEO4J_URI or --uri); nothing to run.")
        return 0
    if not args.openie.exists():
        print(f"bench_neo4j: MuSiQue OpenIE not found at {args.openie}")
        return 1
    result = run(args, settings)
    result["load_after"] = load_average()
    print(json.dumps(result, indent=2))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / (
        args.stem + ".json" if args.stem else f"neo4j_{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    )
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
