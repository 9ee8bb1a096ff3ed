"""Passage seeds of the default mode (``hipporag2``), paired per question on MuSiQue and HotpotQA (issue 19).

HippoRAG 2 seeds every passage node with its min-max-normalised dense score x ``passage_node_weight``;
on a large store that makes the walk whole-graph mat-vecs. ``retrieval.passage_seed_top_n`` seeds only
the best n passages in a store of more than n (``hipporag2.passage_seed_count``). This script runs
``hipporag2`` (top 10, no LLM, spaCy query NER) on the same store in these variants:

* ``all``: every passage seeded (``passage_seed_top_n`` unset: HippoRAG 2's rule);
* ``default``: the setting's default; on both corpora (1,890 and 994 passages) it must equal ``all``;
* ``top N``: the best N seeded, normalised over the best N + 1 given by the store (what a store of
  more than N passages gets by default);
* ``top N, range of all``: the best N seeded with their weights from the range of every passage
  (the former ``passage_seed_top_n`` rule, emulated here: the rule needs every passage's score).

Quality: R@2, R@5, AR@5 (``run_evaluation``, the regression tests' scorer), and per question against
``all``: how many questions gained / lost a gold passage in the top 2 / top 5 and the paired bootstrap
95 % CI of the AR@5 difference.

    python benchmarks/bench_passage_seeds.py --store-dir DIR [--datasets musique,hotpotqa] [--top 100,500]

``--store-dir DIR`` holds (or gets) the indexed stores ``DIR/musique`` and ``DIR/hotpotqa``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from harness import (
    MUSIQUE,
    OPENIE_FILE,
    load_average,
    md_header,
    md_table,
    require_files,
    run_header,
    write_results,
)

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
from hipporag_neo4j.evaluation.runner import EvalReport, index_corpus, run_evaluation
from hipporag_neo4j.retrieval import hipporag2
from hipporag_neo4j.settings import RetrievalSettings, load_settings
from hipporag_neo4j.stores.base import PassageScore

HOTPOTQA = MUSIQUE.parent / "hotpotqa"
DATASETS = {
    "musique": (MUSIQUE / "musique_corpus1890.json", MUSIQUE / "musique_dev70.json", OPENIE_FILE),
    "hotpotqa": (HOTPOTQA / "hotpotqa_corpus994.json", HOTPOTQA / "hotpotqa_dev50.json", None),
}
METRICS = ("R@2", "R@5", "AR@5")
Weights = Callable[[list[PassageScore], int, float], dict[str, float]]


def former_rule(top_n: int, rule: Weights) -> Weights:
    """The rule before: every passage's range (the store returns all of them), then the best top_n."""

    def weights(dense: list[PassageScore], seeded: int, weight: float) -> dict[str, float]:
        every = rule(dense, seeded, weight)
        return dict(list(every.items())[:top_n])

    return weights


def per_question(report: EvalReport) -> dict[str, dict[str, float]]:
    return {q.question_id: q.modes["hipporag2"].metrics for q in report.questions}


def paired(base: dict[str, dict[str, float]], other: dict[str, dict[str, float]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in METRICS:
        diff = np.array([other[q][m] - base[q][m] for q in base])
        out[m] = {"gained": int((diff > 0).sum()), "lost": int((diff < 0).sum())}
    diff = np.array([other[q]["AR@5"] - base[q]["AR@5"] for q in base])
    rng = np.random.default_rng(0)
    means = [float(diff[rng.integers(0, len(diff), len(diff))].mean()) for _ in range(2000)]
    out["AR@5_diff_ci95"] = [round(100 * float(np.percentile(means, p)), 1) for p in (2.5, 97.5)]
    return out


def run_dataset(name: str, store_dir: Path, tops: list[int]) -> dict[str, Any]:
    corpus_file, questions_file, openie = DATASETS[name]
    require_files(corpus_file, questions_file, *([openie] if openie else []))
    settings = load_settings({"store": {"path": str(store_dir / name)}}, env_file=None)
    memory = HippoRAG(settings)
    try:
        corpus = load_corpus(corpus_file)
        questions = load_questions(questions_file)
        indexed = index_corpus(memory, corpus, openie)
        retriever = memory.retriever
        base: RetrievalSettings = retriever.settings
        variants: dict[str, tuple[dict[str, Any], int | None]] = {
            "all": ({"passage_seed_top_n": None}, None),
            f"default ({base.passage_seed_top_n})": ({}, None),
        }
        for n in tops:
            variants[f"top {n}"] = ({"passage_seed_top_n": n}, None)
            variants[f"top {n}, range of all"] = ({"passage_seed_top_n": None}, n)
        rule = hipporag2.passage_seed_weights
        reports: dict[str, dict[str, dict[str, float]]] = {}
        rows: dict[str, Any] = {}
        load_start = load_average()
        for variant, (update, former) in variants.items():
            retriever.settings = base.model_copy(update=update)
            hipporag2.passage_seed_weights = rule if former is None else former_rule(former, rule)  # type: ignore[assignment]
            seeds: list[int] = []
            t = time.perf_counter()
            try:
                report = run_evaluation(
                    memory,
                    questions,
                    corpus,
                    ["hipporag2"],
                    passage_ids=indexed.passage_ids,
                    graph_reach=False,
                    n_resamples=100,
                )
                for q in questions[:3]:
                    result = memory.retrieve(q.question, mode="hipporag2", top_k=10)
                    seeds.append(result.passages[0].explanation.passage_seeds if result.passages else 0)
            finally:
                hipporag2.passage_seed_weights = rule
            reports[variant] = per_question(report)
            ranked = {q.question_id: q.modes["hipporag2"].retrieved_ids[:10] for q in report.questions}
            means = report.tables["hipporag2"].means
            rows[variant] = {
                "percent": {m: round(100 * means[m], 1) for m in METRICS},
                "passage_seeds_first_questions": seeds,
                "seconds": round(time.perf_counter() - t, 1),
                "top10": ranked,
            }
            print(name, variant, rows[variant]["percent"], seeds, flush=True)
        retriever.settings = base
        for variant in rows:
            rows[variant]["vs_all"] = paired(reports["all"], reports[variant])
            rows[variant]["same_top10_as_all"] = sum(
                rows[variant]["top10"][q] == rows["all"]["top10"][q] for q in rows["all"]["top10"]
            )
        return {
            "passages": len(corpus),
            "questions": len(questions),
            "variants": rows,
            "load_start": load_start,
            "load_end": load_average(),
        }
    finally:
        memory.close()


def markdown(data: dict[str, Any]) -> str:
    lines = [md_header("Passage seeds of the default mode, paired per question", data)]
    lines += [
        "",
        "`hipporag2`, top 10, no LLM, spaCy query NER. Gained / lost: questions whose metric rose / fell "
        "against `all`; CI: paired bootstrap (2,000 resamples) of the AR@5 difference, percentage points.",
        "",
    ]
    rows = []
    for name, d in data["datasets"].items():
        for variant, r in d["variants"].items():
            vs = r["vs_all"]
            rows.append(
                [
                    f"{name} ({d['passages']:,} passages)",
                    variant,
                    *(r["percent"][m] for m in METRICS),
                    *(f"+{vs[m]['gained']} / -{vs[m]['lost']}" for m in METRICS),
                    str(vs["AR@5_diff_ci95"]),
                    f"{r['same_top10_as_all']} / {d['questions']}",
                    ", ".join(str(s) for s in r["passage_seeds_first_questions"]),
                ]
            )
    lines.append(
        md_table(
            [
                "data set",
                "variant",
                *METRICS,
                *(f"{m} vs all" for m in METRICS),
                "AR@5 diff CI",
                "same top 10",
                "passage seeds (first 3 questions)",
            ],
            rows,
        )
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store-dir", type=Path, required=True)
    parser.add_argument("--datasets", default="musique,hotpotqa")
    parser.add_argument("--top", default="100,500", help="comma-separated N of the top-N variants")
    parser.add_argument("--stem", default="passage_seeds")
    args = parser.parse_args()
    data: dict[str, Any] = {**run_header(), "datasets": {}}
    for name in args.datasets.split(","):
        data["datasets"][name] = run_dataset(name, args.store_dir, [int(n) for n in args.top.split(",")])
        write_results(args.stem, data, markdown(data))
    data["load_after"] = load_average()
    write_results(args.stem, data, markdown(data))


if __name__ == "__main__":
    main()
