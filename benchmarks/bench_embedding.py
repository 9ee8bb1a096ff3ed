"""Embedding throughput: HippoRAG 2's encoder loop, our torch path and our ONNX Runtime path, same texts.

Texts from MuSiQue's published OpenIE: every ``--stride``-th passage (title + text, as indexed), and
samples of its phrases and facts (subject predicate object). Three encoders of all-MiniLM-L6-v2 on
``--threads`` threads, run interleaved (A B C, then C B A, ...) on each kind:

* ``hipporag2``: HippoRAG 2's loop as its anchor script runs it (``../shared/anchor``): SentenceTransformer
  ``encode`` on chunks of 64 texts in input order (a re-run of that loop here, not its package);
* ``ours torch``: ``SentenceTransformerEmbedder.encode`` (length-sorted batches of 64);
* ``ours onnx``: ``embedding.backend = "onnx"`` (same batching, ONNX Runtime).

Reported: texts/s per kind (median of the rounds), ratios to hipporag2, the cosine of every ONNX vector to
the torch one, and single-query encoding latency with 1 and 2 threads (the 70 dev questions).

    python benchmarks/bench_embedding.py [--stride 4] [--rounds 2] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from typing import Any

import numpy as np
from common import (
    OPENIE_FILE,
    QUESTIONS_FILE,
    latency_summary,
    load_average,
    md_header,
    md_table,
    require_files,
    run_header,
    write_results,
)

from hipporag_neo4j.common.text import fact_text
from hipporag_neo4j.embedding.encoder import SentenceTransformerEmbedder, create_embedder
from hipporag_neo4j.settings import EmbeddingSettings


def texts_by_kind(stride: int, sample: int) -> dict[str, list[str]]:
    docs = json.loads(OPENIE_FILE.read_text())["docs"]
    passages = [d["passage"] for d in docs[::stride]]
    phrases: set[str] = set()
    facts: set[str] = set()
    for d in docs:
        phrases.update(str(e) for e in d["extracted_entities"])
        for triple in d["extracted_triples"]:
            if len(triple) == 3:
                facts.add(fact_text(*(str(x) for x in triple)))
    rng = random.Random(0)
    return {
        "passages": passages,
        "phrases": rng.sample(sorted(phrases), min(sample, len(phrases))),
        "facts": rng.sample(sorted(facts), min(sample, len(facts))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stride", type=int, default=4, help="every n-th passage")
    parser.add_argument("--sample", type=int, default=2000, help="phrases and facts sampled")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--stem", default="embedding")
    args = parser.parse_args()
    require_files(OPENIE_FILE, QUESTIONS_FILE)
    import torch
    from sentence_transformers import SentenceTransformer

    header = run_header()
    texts = texts_by_kind(args.stride, args.sample)
    questions = [q["question"] for q in json.loads(QUESTIONS_FILE.read_text())]
    torch.set_num_threads(args.threads)
    ours_torch = SentenceTransformerEmbedder("all-MiniLM-L6-v2", threads=args.threads, query_threads=None)
    cache = tempfile.mkdtemp(prefix="hipporag-onnx-")
    start = time.perf_counter()
    ours_onnx = create_embedder(
        EmbeddingSettings(backend="onnx", onnx_cache_dir=cache, threads=args.threads, query_threads=None)
    )
    ours_onnx.encode(["warm up"])
    export_seconds = time.perf_counter() - start
    model = SentenceTransformer(ours_torch._resolve(), device="cpu")

    def hipporag2(batch: list[str]) -> Any:
        return np.vstack(
            [
                model.encode(
                    batch[i : i + 64], batch_size=64, normalize_embeddings=True, show_progress_bar=False
                )
                for i in range(0, len(batch), 64)
            ]
        )

    encoders = {"hipporag2": hipporag2, "ours torch": ours_torch.encode, "ours onnx": ours_onnx.encode}
    for fn in encoders.values():
        fn(texts["passages"][:8])
    seconds: dict[str, dict[str, list[float]]] = {kind: {e: [] for e in encoders} for kind in texts}
    cosines: dict[str, float] = {}
    for r in range(args.rounds):
        for kind, batch in texts.items():
            vectors = {}
            for name in list(encoders) if r % 2 == 0 else list(reversed(encoders)):
                start = time.perf_counter()
                vectors[name] = encoders[name](batch)
                seconds[kind][name].append(time.perf_counter() - start)
                print(kind, name, round(seconds[kind][name][-1], 2), os.getloadavg(), flush=True)
            cos = (vectors["ours onnx"] * vectors["ours torch"]).sum(axis=1)
            cosines[kind] = float(min(cosines.get(kind, 1.0), cos.min()))
    # single-query latency, 1 and 2 threads, interleaved per question
    query_fns = {
        "torch, 1 thread": SentenceTransformerEmbedder("all-MiniLM-L6-v2", query_threads=1).encode,
        f"torch, {args.threads} threads": ours_torch.encode,
        "onnx, 1 thread": create_embedder(
            EmbeddingSettings(backend="onnx", onnx_cache_dir=cache, query_threads=1)
        ).encode,
        f"onnx, {args.threads} threads": ours_onnx.encode,
    }
    query_times: dict[str, list[float]] = {k: [] for k in query_fns}
    for fn in query_fns.values():
        fn([questions[0]])
    for i, question in enumerate(questions):
        for name in list(query_fns) if i % 2 == 0 else list(reversed(query_fns)):
            start = time.perf_counter()
            query_fns[name]([question])
            query_times[name].append(time.perf_counter() - start)
    header["load_after"] = load_average()

    throughput = {
        kind: {name: round(len(texts[kind]) / float(np.median(s)), 1) for name, s in by.items()}
        for kind, by in seconds.items()
    }
    rows = []
    for kind, by in throughput.items():
        for name, rate in by.items():
            rows.append(
                [
                    kind,
                    len(texts[kind]),
                    name,
                    rate,
                    round(by["hipporag2"] / rate, 3),
                    round(rate / by["ours torch"], 2),
                ]
            )
    queries = {k: latency_summary(v) for k, v in query_times.items()}
    markdown = "\n".join(
        [
            md_header("Embedding throughput", header),
            f"all-MiniLM-L6-v2, {args.threads} threads, batch 64, medians of {args.rounds} interleaved "
            f"rounds. ONNX export + session start: {export_seconds:.1f} s (once per model). Cosine of ONNX "
            f"to torch vectors, minimum per kind: "
            + ", ".join(f"{k} {v:.7f}" for k, v in cosines.items())
            + ".",
            "",
            md_table(
                ["texts", "n", "encoder", "texts/s", "time vs hipporag2", "texts/s vs ours torch"], rows
            ),
            "",
            "Single-query encoding (70 dev questions, interleaved):",
            "",
            md_table(
                ["encoder", "p50 ms", "p95 ms"],
                [[k, v["p50_ms"], v["p95_ms"]] for k, v in queries.items()],
            ),
        ]
    )
    write_results(
        args.stem,
        {
            **header,
            "counts": {k: len(v) for k, v in texts.items()},
            "seconds": seconds,
            "texts_per_second": throughput,
            "onnx_min_cosine": cosines,
            "export_seconds": export_seconds,
            "query_latency": queries,
        },
        markdown,
    )
    print(markdown)


if __name__ == "__main__":
    main()
