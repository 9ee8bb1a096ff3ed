"""The default mode's query path, variant by variant, on MuSiQue and HotpotQA (issue 19).

For each data set an embedded store is built once with the default install (ONNX Runtime encoder):
MuSiQue from the published OpenIE, HotpotQA by the offline spaCy extraction (no LLM). Then ``hipporag2``
(top 10, no LLM) is run in these variants of the query path:

* ``ner`` (the default): spaCy query NER, the query and its names in one encoder call, each name linked
  to its nearest phrase, 1 encoder thread;
* ``query_phrases``: ``retrieval.entity_seed_source = "query_phrases"``: the entity seeds are the graph
  phrases found verbatim in the query (no NER model, the query encoded alone);
* ``no entity seeds``: ``retrieval.entity_seeds = false`` (HippoRAG 2 as published: fact seeds only);
* ``ner, 2 encoder threads``: the default with ``embedding.query_threads = 2`` (latency only: the same
  vectors, so the quality is the default's).

Quality: R@2, R@5, AR@5 of each variant from ``run_evaluation`` (the regression tests' scorer).
Latency: the questions with the variants alternated per question (rotating who goes first), p50 of one
retrieve and of each stage in ``RetrievalResult.timings``. Ratios to the default come from the same run.

    python benchmarks/bench_query_hot_path.py [--work DIR] [--datasets musique,hotpotqa] [--passes 2]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    MUSIQUE,
    OPENIE_FILE,
    latency_summary,
    load_average,
    md_header,
    md_table,
    require_files,
    run_header,
    write_results,
)

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.embedding.encoder import create_embedder
from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
from hipporag_neo4j.evaluation.runner import index_corpus, run_evaluation
from hipporag_neo4j.settings import RetrievalSettings, load_settings

HOTPOTQA = MUSIQUE.parent / "hotpotqa"
DATASETS = {
    "musique": (MUSIQUE / "musique_corpus1890.json", MUSIQUE / "musique_dev70.json", OPENIE_FILE),
    "hotpotqa": (HOTPOTQA / "hotpotqa_corpus994.json", HOTPOTQA / "hotpotqa_dev50.json", None),
}
VARIANTS: dict[str, dict[str, Any]] = {
    "ner": {},
    "query_phrases": {"entity_seed_source": "query_phrases"},
    "no entity seeds": {"entity_seeds": False},
    "ner, 2 encoder threads": {},
}
QUALITY_VARIANTS = ("ner", "query_phrases", "no entity seeds")
STAGES = ("query_ner", "encode", "link", "fact_search", "dense_search", "ppr_and_aggregation", "other")


def run_dataset(name: str, work: Path, passes: int) -> dict[str, Any]:
    corpus_file, questions_file, openie = DATASETS[name]
    require_files(corpus_file, questions_file, *([openie] if openie else []))
    settings = load_settings({"store": {"path": str(work / name)}}, env_file=None)
    memory = HippoRAG(settings)
    try:
        corpus = load_corpus(corpus_file)
        questions = load_questions(questions_file)
        t = time.perf_counter()
        indexed = index_corpus(memory, corpus, openie)
        index_s = time.perf_counter() - t
        retriever = memory.retriever
        base: RetrievalSettings = retriever.settings
        default_embedder = retriever.embedder
        two_threads = create_embedder(settings.embedding.model_copy(update={"query_threads": 2}))
        two_threads.encode(["warm up"])
        quality: dict[str, dict[str, float]] = {}
        for variant in QUALITY_VARIANTS:
            retriever.settings = base.model_copy(update=VARIANTS[variant])
            report = run_evaluation(
                memory,
                questions,
                corpus,
                ["hipporag2"],
                passage_ids=indexed.passage_ids,
                graph_reach=False,
                n_resamples=100,
            )
            means = report.tables["hipporag2"].means
            quality[variant] = {m: round(100 * means[m], 1) for m in ("R@2", "R@5", "AR@5")}
            print(name, variant, quality[variant], flush=True)
        seconds: dict[str, list[float]] = {v: [] for v in VARIANTS}
        stages: dict[str, dict[str, list[float]]] = {v: {} for v in VARIANTS}
        order = list(VARIANTS)
        load_start = load_average()
        for pass_no in range(passes):
            for i, question in enumerate(questions):
                rotation = (i + pass_no) % len(order)
                for variant in order[rotation:] + order[:rotation]:
                    retriever.settings = base.model_copy(update=VARIANTS[variant])
                    threads_2 = variant.endswith("2 encoder threads")
                    retriever.embedder = two_threads if threads_2 else default_embedder
                    start = time.perf_counter()
                    result = memory.retrieve(question.question, mode="hipporag2", top_k=10)
                    elapsed = time.perf_counter() - start
                    seconds[variant].append(elapsed)
                    for stage, value in result.timings.items():
                        stages[variant].setdefault(stage, []).append(value)
                    named = sum(v for k, v in result.timings.items() if k != "total")
                    stages[variant].setdefault("other", []).append(elapsed - named)
        retriever.settings, retriever.embedder = base, default_embedder
        return {
            "passages": len(corpus),
            "questions": len(questions),
            "index_s": index_s,
            "encoder": getattr(default_embedder, "backend", type(default_embedder).__name__),
            "quality_percent": quality,
            "latency": {v: latency_summary(s) for v, s in seconds.items()},
            "stage_p50_ms": {
                v: {k: round(1000 * float(np.percentile(x, 50)), 2) for k, x in by.items()}
                for v, by in stages.items()
            },
            "load_start": load_start,
            "load_end": load_average(),
            "passes": passes,
        }
    finally:
        memory.close()


def markdown(data: dict[str, Any]) -> str:
    lines = [md_header("The default mode's query path, variant by variant", data)]
    if data.get("environment"):
        lines += [f"Run with these settings in the environment: `{data['environment']}`.", ""]
    for name, d in data["datasets"].items():
        ner_p50 = d["latency"]["ner"]["p50_ms"]
        lines += [
            f"## {name} ({d['passages']} passages, {d['questions']} questions × {d['passes']} passes, "
            f"encoder {d['encoder']}; load {d['load_start']} → {d['load_end']})",
            "",
            md_table(
                ["variant", "R@2", "R@5", "AR@5", "p50 ms", "p95 ms", "p50 / ner"],
                [
                    [
                        v,
                        d["quality_percent"].get(v, d["quality_percent"]["ner"])["R@2"],
                        d["quality_percent"].get(v, d["quality_percent"]["ner"])["R@5"],
                        d["quality_percent"].get(v, d["quality_percent"]["ner"])["AR@5"],
                        lat["p50_ms"],
                        lat["p95_ms"],
                        round(lat["p50_ms"] / ner_p50, 2),
                    ]
                    for v, lat in d["latency"].items()
                ],
            ),
            "",
            "Stage p50 (ms; *other* = the retrieve call minus the named stages: ranking, reading passages):",
            "",
            md_table(
                ["variant", *STAGES, "total"],
                [
                    [v, *(by.get(k, "-") for k in STAGES), by.get("total", "-")]
                    for v, by in d["stage_p50_ms"].items()
                ],
            ),
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/hipporag-bench/hot_path"))
    parser.add_argument("--datasets", default="musique,hotpotqa")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--stem", default="query_hot_path")
    args = parser.parse_args()
    header = run_header()
    # settings given through the environment change what is measured: recorded with the results
    header["environment"] = {k: v for k, v in os.environ.items() if k.startswith("HIPPORAG_")}
    data: dict[str, Any] = {**header, "datasets": {}}
    for name in args.datasets.split(","):
        data["datasets"][name] = run_dataset(name, args.work, args.passes)
    data["load_after"] = load_average()
    json_path, md_path = write_results(args.stem, data, markdown(data))
    print(md_path.read_text())
    print(f"wrote {json_path} and {md_path}")


if __name__ == "__main__":
    main()
