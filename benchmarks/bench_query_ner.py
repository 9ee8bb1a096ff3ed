"""The query NER with only spaCy's ``ner`` component against the whole pipeline, side by side (issue 19).

``extraction.query_ner_pipeline = "auto"`` (the default now) runs only the ``ner`` component of
en_core_web_sm (it has its own tok2vec) and reads determiners, possessive markers, pronouns and sentence
starts from the words; ``"full"`` runs tok2vec, tagger, parser, attribute ruler, lemmatizer and ner for
every query, as before. A query without a name (the noun-chunk fallback) runs the whole pipeline either way.

1. **Entities**: the 70 MuSiQue and 50 HotpotQA development questions, both paths, for each
   ``query_noun_chunks`` setting; every difference is listed.
2. **NER time**: ``query_entities`` of each question, the two paths alternated per question (rotating who
   goes first), ``--passes`` passes; p50 and ratio; p50 of each pipeline component run one by one. With
   ``--encode``, each NER is followed by the encoder call a query makes (the question and its names, the
   default embedder, 1 query thread), timed apart: per-question paired differences of both.
3. **Retrieval** (``--store NAME=DIR``, an embedded store built with the default install, e.g. by
   ``bench_query_hot_path.py`` or ``bench_vs_hipporag2.py``): the default mode ``hipporag2``, top 10, the
   two query NERs swapped on one retriever, alternated per question: same top 10 (ids and order), p50
   of one retrieve and of each stage.

    python benchmarks/bench_query_ner.py [--passes 3] [--store musique=DIR --store hotpotqa=DIR]
        [--encode] [--stem query_ner]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    MUSIQUE,
    QUESTIONS_FILE,
    latency_summary,
    load_average,
    md_header,
    md_table,
    require_files,
    run_header,
    write_results,
)

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.extraction.spacy_extractor import SpacyQueryNER, load_spacy_model
from hipporag_neo4j.settings import load_settings

HOTPOTQA_QUESTIONS = MUSIQUE.parent / "hotpotqa" / "hotpotqa_dev50.json"
PATHS = ("full", "auto")
LABELS = {"full": "whole pipeline (before)", "auto": "ner only (auto, now)"}


def questions() -> dict[str, list[str]]:
    return {
        "musique": [s["question"] for s in json.loads(QUESTIONS_FILE.read_text())],
        "hotpotqa": [s["question"] for s in json.loads(HOTPOTQA_QUESTIONS.read_text())],
    }


def compare_entities(qs: dict[str, list[str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for chunks in ("fallback", "never", "always"):
        full = SpacyQueryNER(noun_chunks=chunks, pipeline="full")
        auto = SpacyQueryNER(noun_chunks=chunks)
        rows: dict[str, Any] = {}
        for name, items in qs.items():
            diffs = []
            for q in items:
                a, b = full.query_entities(q), auto.query_entities(q)
                if a != b:
                    diffs.append({"question": q, "full": a, "auto": b})
            rows[name] = {"questions": len(items), "identical": len(items) - len(diffs), "differences": diffs}
        out[chunks] = rows
    return out


def time_ner(qs: dict[str, list[str]], passes: int, encode: bool = False) -> dict[str, Any]:
    all_q = [q for items in qs.values() for q in items]
    ners = {"full": SpacyQueryNER(pipeline="full"), "auto": SpacyQueryNER()}
    embedder = None
    if encode:
        from hipporag_neo4j.embedding.encoder import create_embedder

        embedder = create_embedder(load_settings({}, env_file=None).embedding)
        embedder.encode(["warm up question about Paris", "Paris"])
    for ner in ners.values():
        ner.query_entities("warm up question about Paris")
    seconds: dict[str, list[float]] = {p: [] for p in PATHS}
    encode_s: dict[str, list[float]] = {p: [] for p in PATHS}
    whole_pipeline_runs = 0
    nlp = load_spacy_model()
    load_start = load_average()
    for pass_no in range(passes):
        for i, q in enumerate(all_q):
            rotation = (i + pass_no) % 2
            for path in PATHS[rotation:] + PATHS[:rotation]:
                t = time.perf_counter()
                names = ners[path].query_entities(q)
                seconds[path].append(time.perf_counter() - t)
                if embedder is not None:
                    t = time.perf_counter()
                    embedder.encode([q, *names])
                    encode_s[path].append(time.perf_counter() - t)
    for q in all_q:  # which questions needed the whole pipeline on the NER-only path (no name)
        doc = nlp.get_pipe("ner")(nlp.make_doc(q))
        names = SpacyQueryNER._names(q, doc, *_word_readers())
        whole_pipeline_runs += not any(e > s for s, e in names)
    components: dict[str, list[float]] = {n: [] for n in ["tokenizer", *nlp.pipe_names]}
    for _ in range(passes):
        for q in all_q:
            t = time.perf_counter()
            doc = nlp.make_doc(q)
            components["tokenizer"].append(time.perf_counter() - t)
            for name, proc in nlp.pipeline:
                t = time.perf_counter()
                doc = proc(doc)
                components[name].append(time.perf_counter() - t)
    paired = {}
    if embedder is not None:
        ner_diff = np.subtract(seconds["auto"], seconds["full"])
        enc_diff = np.subtract(encode_s["auto"], encode_s["full"])
        paired = {
            "encoder": getattr(embedder, "backend", type(embedder).__name__),
            "encode_p50_ms": {p: round(1000 * float(np.median(v)), 3) for p, v in encode_s.items()},
            "ner_plus_encode_p50_ms": {
                p: round(1000 * float(np.median(np.add(seconds[p], encode_s[p]))), 3) for p in PATHS
            },
            "paired_median_diff_ms": {
                "ner": round(1000 * float(np.median(ner_diff)), 3),
                "encode": round(1000 * float(np.median(enc_diff)), 3),
                "ner_plus_encode": round(1000 * float(np.median(ner_diff + enc_diff)), 3),
            },
        }
    return {
        "questions": len(all_q),
        "passes": passes,
        "with_encode": paired,
        "load_start": load_start,
        "load_end": load_average(),
        "latency": {p: latency_summary(s) for p, s in seconds.items()},
        "ratio_p50_auto_to_full": round(
            float(np.percentile(seconds["auto"], 50) / np.percentile(seconds["full"], 50)), 3
        ),
        "questions_needing_the_whole_pipeline": whole_pipeline_runs,
        "component_p50_ms": {k: round(1000 * statistics.median(v), 3) for k, v in components.items()},
    }


def _word_readers() -> tuple[Any, Any]:
    from hipporag_neo4j.extraction.spacy_extractor import _capitalised_by_words, _trim_span_by_words

    return _trim_span_by_words, _capitalised_by_words


def time_retrieval(name: str, store: Path, items: list[str], passes: int) -> dict[str, Any]:
    settings = load_settings({"store": {"path": str(store), "backend": "embedded"}}, env_file=None)
    memory = HippoRAG(settings)
    try:
        retriever = memory.retriever
        ners = {"full": SpacyQueryNER(pipeline="full"), "auto": SpacyQueryNER()}
        for ner in ners.values():
            retriever.query_ner = ner
            memory.retrieve("Who founded the company that made the first car?", mode="hipporag2", top_k=10)
        seconds: dict[str, list[float]] = {p: [] for p in PATHS}
        stages: dict[str, dict[str, list[float]]] = {p: {} for p in PATHS}
        ranked: dict[str, list[list[str]]] = {p: [] for p in PATHS}
        entities: dict[str, list[list[str]]] = {p: [] for p in PATHS}
        load_start = load_average()
        for pass_no in range(passes):
            for i, q in enumerate(items):
                rotation = (i + pass_no) % 2
                for path in PATHS[rotation:] + PATHS[:rotation]:
                    retriever.query_ner = ners[path]
                    t = time.perf_counter()
                    result = memory.retrieve(q, mode="hipporag2", top_k=10)
                    elapsed = time.perf_counter() - t
                    seconds[path].append(elapsed)
                    for stage, value in result.timings.items():
                        stages[path].setdefault(stage, []).append(value)
                    named = sum(v for k, v in result.timings.items() if k != "total")
                    stages[path].setdefault("other", []).append(elapsed - named)
                    if pass_no == 0:
                        ranked[path].append([p.passage.id for p in result.passages])
                        entities[path].append(list(result.query_entities))
        same = sum(a == b for a, b in zip(ranked["full"], ranked["auto"], strict=True))
        same_entities = sum(a == b for a, b in zip(entities["full"], entities["auto"], strict=True))
        differing = [
            {"question": q, "entities_full": ef, "entities_auto": ea, "top10_identical": rf == ra}
            for q, ef, ea, rf, ra in zip(
                items, entities["full"], entities["auto"], ranked["full"], ranked["auto"], strict=True
            )
            if ef != ea or rf != ra
        ]
        return {
            "store": str(store),
            "questions": len(items),
            "passes": passes,
            "load_start": load_start,
            "load_end": load_average(),
            "same_top10": same,
            "same_entities": same_entities,
            "differing": differing,
            "latency": {p: latency_summary(s) for p, s in seconds.items()},
            "ratio_p50_auto_to_full": round(
                float(np.percentile(seconds["auto"], 50) / np.percentile(seconds["full"], 50)), 3
            ),
            "stage_p50_ms": {
                p: {k: round(1000 * float(np.percentile(v, 50)), 2) for k, v in by.items()}
                for p, by in stages.items()
            },
        }
    finally:
        memory.close()


def markdown(data: dict[str, Any]) -> str:
    lines = [md_header("Query NER: ner only against the whole spaCy pipeline", data)]
    lines += ["## Entities, both paths (every question of both development sets)", ""]
    rows = []
    for chunks, by in data["entities"].items():
        for name, r in by.items():
            rows.append([chunks, name, f"{r['identical']} / {r['questions']}"])
    lines += [md_table(["query_noun_chunks", "questions", "identical entities"], rows), ""]
    diffs = [
        (chunks, name, d)
        for chunks, by in data["entities"].items()
        for name, r in by.items()
        for d in r["differences"]
    ]
    if diffs:
        lines += ["Differences:", ""]
        lines += [
            f"- {chunks}, {name}: {d['question']!r}: whole pipeline {d['full']}, ner only {d['auto']}"
            for chunks, name, d in diffs
        ]
        lines += [""]
    t = data["ner_time"]
    lines += [
        f"## NER time ({t['questions']} questions × {t['passes']} passes, alternated; load "
        f"{t['load_start']} → {t['load_end']})",
        "",
        md_table(
            ["path", "p50 ms", "p95 ms", "mean ms"],
            [
                [LABELS[p], t["latency"][p]["p50_ms"], t["latency"][p]["p95_ms"], t["latency"][p]["mean_ms"]]
                for p in PATHS
            ],
        ),
        "",
        f"Ratio of p50, ner only / whole pipeline: **{t['ratio_p50_auto_to_full']}**. Questions with no name "
        f"(the whole pipeline runs for their noun chunks): {t['questions_needing_the_whole_pipeline']} of "
        f"{t['questions']}.",
        "",
        "p50 of each pipeline component run one by one (ms): "
        + ", ".join(f"{k} {v}" for k, v in t["component_p50_ms"].items()),
        "",
    ]
    if t.get("with_encode"):
        w = t["with_encode"]
        lines += [
            f"Each NER followed by the query's encoder call (question + names, {w['encoder']}): encode p50 "
            + ", ".join(f"{LABELS[p]} {w['encode_p50_ms'][p]}" for p in PATHS)
            + " ms; NER + encode p50 "
            + ", ".join(f"{LABELS[p]} {w['ner_plus_encode_p50_ms'][p]}" for p in PATHS)
            + " ms. Median per-question difference, ner only − whole pipeline: "
            + ", ".join(f"{k} {v} ms" for k, v in w["paired_median_diff_ms"].items())
            + ".",
            "",
        ]
    for name, r in data.get("retrieval", {}).items():
        lines += [
            f"## Retrieval, {name} (`hipporag2`, top 10, {r['questions']} questions × {r['passes']} passes, "
            f"alternated; load {r['load_start']} → {r['load_end']})",
            "",
            f"Same top 10 (ids and order): **{r['same_top10']} of {r['questions']}**; same query entities: "
            f"{r['same_entities']} of {r['questions']}. Ratio of p50, ner only / whole pipeline: "
            f"**{r['ratio_p50_auto_to_full']}**.",
            "",
            md_table(
                ["path", "p50 ms", "p95 ms", "stage p50 ms"],
                [
                    [
                        LABELS[p],
                        r["latency"][p]["p50_ms"],
                        r["latency"][p]["p95_ms"],
                        ", ".join(f"{k} {v}" for k, v in r["stage_p50_ms"][p].items()),
                    ]
                    for p in PATHS
                ],
            ),
            "",
        ]
        for d in r["differing"]:
            lines += [
                f"- {d['question']!r}: entities whole pipeline {d['entities_full']}, ner only "
                f"{d['entities_auto']}; same top 10: {d['top10_identical']}"
            ]
        if r["differing"]:
            lines += [""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument(
        "--store",
        action="append",
        default=[],
        help="NAME=DIR: an embedded store of the data set NAME (musique or hotpotqa) to retrieve from",
    )
    parser.add_argument("--stem", default="query_ner")
    parser.add_argument("--encode", action="store_true", help="time the query's encoder call after each NER")
    args = parser.parse_args()
    require_files(QUESTIONS_FILE, HOTPOTQA_QUESTIONS)
    stores: dict[str, Path] = {}
    for item in args.store:
        name, sep, path = item.partition("=")
        if not sep or name not in ("musique", "hotpotqa") or not Path(path, "graph.sqlite").is_file():
            parser.error(f"--store {item!r}: expected musique=DIR or hotpotqa=DIR with DIR/graph.sqlite")
        stores[name] = Path(path)
    data: dict[str, Any] = run_header()
    qs = questions()
    data["entities"] = compare_entities(qs)
    data["ner_time"] = time_ner(qs, args.passes, args.encode)
    data["retrieval"] = {name: time_retrieval(name, d, qs[name], args.passes) for name, d in stores.items()}
    data["load_after"] = load_average()
    json_path, md_path = write_results(args.stem, data, markdown(data))
    print(md_path.read_text())
    print(f"wrote {json_path} and {md_path}")


if __name__ == "__main__":
    main()
