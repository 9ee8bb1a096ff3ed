"""The synonym step's search on a big embedded store, by itself: ``EmbeddedStore.nearest_phrases`` for a
batch of phrases (top 100 at cosine >= 0.8, each phrase's own row excluded, as the indexer asks), through
the store's IVF index (``store.vector_search = auto``, the default from 200k phrases) and by the exact scan,
in interleaved rounds (A B A B), with wall and CPU seconds per 512 phrases and the recall of the exact
scan's edges (compared by score: ties at the top-100 cut make ids arbitrary). The batch is drawn from the
stored phrases (their vectors as the "new" ones), so nothing is written.

    python benchmarks/bench_synonym_step.py --store STORE --batch 512 --rounds 4 [--probes 32] [--min-rows N]

``--min-rows`` lowers the size from which the index is used (``store.vector_index_min_rows``), to measure
it on a store below the default 200k phrases (issue 35's M with the real encoder: 124,601 phrases).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections import Counter
from pathlib import Path

import numpy as np

from hipporag_neo4j.stores.embedded import EmbeddedStore
from hipporag_neo4j.stores.memory.vector_index import VectorSearch

TOP_K, TAU = 100, 0.8  # retrieval.synonym_top_k, retrieval.synonym_threshold (defaults)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--probes", type=int, default=32, help="store.vector_index_synonym_probes")
    parser.add_argument("--min-rows", type=int, help="store.vector_index_min_rows (default: the store's)")
    args = parser.parse_args()
    indexed = VectorSearch("auto", synonym_probes=args.probes)
    if args.min_rows:
        indexed = VectorSearch("auto", min_rows=args.min_rows, synonym_probes=args.probes)
    stores = {
        "index": EmbeddedStore(args.store, vector_search=indexed),
        "exact": EmbeddedStore(args.store, vector_search=VectorSearch("exact")),
    }
    for store in stores.values():
        meta = store.meta()
        assert meta is not None, f"{args.store} is not an embedded store"
        store.open(meta.embedding_model, meta.embedding_dim)
    phrases = stores["index"].cache.phrase_index()
    n = len(phrases.ids)
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    when = time.strftime("%F %T")
    print(f"# {machine}; {n:,} phrases; {args.probes} probes; index from {indexed.min_rows:,} rows; {when}")
    rng = np.random.default_rng(args.seed)
    for store in stores.values():  # warm: the index trained or loaded, the matrix read
        store.nearest_phrases(phrases.vectors[:8], TOP_K, TAU, list(phrases.ids.take(np.arange(8))))
    for r in range(1, args.rounds + 1):
        rows = np.sort(rng.choice(n, args.batch, replace=False))
        batch = np.ascontiguousarray(phrases.vectors[rows])
        ids = [str(i) for i in phrases.ids.take(rows)]
        found: dict[str, list[list[float]]] = {}
        for label in ("index", "exact") if r % 2 else ("exact", "index"):
            load = os.getloadavg()[0]
            wall, cpu = time.perf_counter(), time.process_time()
            hits = stores[label].nearest_phrases(batch, TOP_K, TAU, ids)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            found[label] = [sorted(round(h.similarity, 6) for h in row) for row in hits]
            per = 512 / args.batch
            print(
                json.dumps(
                    {
                        "round": r,
                        "search": label,
                        "wall_s_per_512": round(wall * per, 3),
                        "cpu_s_per_512": round(cpu * per, 3),
                        "pairs": sum(map(len, found[label])),
                        "load": round(load, 2),
                    }
                ),
                flush=True,
            )
        # per phrase, the exact scan's similarities the index's edges match: a phrase with more than TOP_K
        # neighbours above TAU keeps TOP_K of them, and which of equal-scored ones is arbitrary (hash
        # vectors of name variants tie often), so edges are compared by score, not by id
        matched = sum(
            sum((Counter(a) & Counter(b)).values())
            for a, b in zip(found["index"], found["exact"], strict=True)
        )
        total = sum(map(len, found["exact"]))
        recall = matched / total if total else 1.0
        print(json.dumps({"round": r, "recall_of_exact_pairs": round(recall, 4)}), flush=True)
    for store in stores.values():
        store.close()


if __name__ == "__main__":
    main()
