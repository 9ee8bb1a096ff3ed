"""Ablation of the hipporag2 design choices on both data sets: each variant against dense, same stores.

Variants: HippoRAG 2 as published (fact seeds only, fact scores scaled by the best one), each of our two
departures alone (query-entity seeds; min-max fact scores over the candidates), both (the default), and
seed 002's options that stay off (combination with dense by rank or score, more passage-node weight,
only the best passages seeded). Every choice must hold on MuSiQue and HotpotQA.

    python benchmarks/run.py quality-ablation --musique-store DIR --hotpotqa-store DIR

The stores are the ones ``run.py quality --store`` builds (and reuses). Writes
``benchmarks/results/ablation_hipporag2.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_quality import DATASETS, RESULTS, describe_commit, require_data  # noqa: E402
from harness import command  # noqa: E402

#: name -> (retrieval settings, fact scores scaled by the best fact instead of min-max over candidates)
VARIANTS: dict[str, tuple[dict[str, Any], bool]] = {
    "HippoRAG 2 as published (w/o filter)": ({"entity_seeds": False}, True),
    "+ query-entity seeds": ({"entity_seeds": True}, True),
    "+ min-max fact scores": ({"entity_seeds": False}, False),
    "default: both": ({}, False),
    "default + combine with dense by rank (0.5)": ({"combine_alpha": 0.5, "combine_by": "rank"}, False),
    "default + combine with dense by score (0.5)": ({"combine_alpha": 0.5, "combine_by": "score"}, False),
    "default + passage node weight 0.1": ({"passage_node_weight": 0.1}, False),
    "default + only the best 50 passages seeded": ({"passage_seed_top_n": 50}, False),
}


@contextmanager
def fact_scores_scaled_by_best(enabled: bool) -> Iterator[None]:
    """HippoRAG 2's scaling as a vector index allows it: the best fact scores 1, the floor is 0."""
    from hipporag_neo4j.retrieval import hipporag2_walk

    original = hipporag2_walk.fact_scores
    if enabled:
        hipporag2_walk.fact_scores = lambda hits, *, floor_at_weakest: original(hits, floor_at_weakest=False)  # type: ignore[assignment]
    try:
        yield
    finally:
        hipporag2_walk.fact_scores = original


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--musique-store", type=Path, required=True)
    parser.add_argument("--hotpotqa-store", type=Path, required=True)
    args = parser.parse_args(argv)
    load_before = [round(x, 2) for x in os.getloadavg()]

    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
    from hipporag_neo4j.evaluation.report import git_info
    from hipporag_neo4j.evaluation.runner import index_corpus, run_evaluation
    from hipporag_neo4j.extraction.spacy_extractor import SpacyQueryNER
    from hipporag_neo4j.settings import load_settings

    git = git_info()
    rows: list[dict[str, Any]] = []
    for dataset, store in (("musique", args.musique_store), ("hotpotqa", args.hotpotqa_store)):
        require_data(dataset)
        corpus_file, questions_file, openie_file = DATASETS[dataset]
        settings = load_settings({"store": {"path": str(store), "backend": "embedded"}}, env_file=None)
        memory = HippoRAG(settings, query_ner=SpacyQueryNER(settings.extraction.spacy_model))
        try:
            corpus, questions = load_corpus(corpus_file), load_questions(questions_file)
            indexed = index_corpus(memory, corpus, openie_file)
            dense = run_evaluation(
                memory, questions, corpus, ["dense"], passage_ids=indexed.passage_ids, graph_reach=False
            )
            rows.append({"dataset": dataset, "variant": "dense", **_percent(dense.tables["dense"].means)})
            for name, (overrides, scaled_by_best) in VARIANTS.items():
                retrieval = memory.settings.retrieval
                saved = {k: getattr(retrieval, k) for k in overrides}
                started = time.perf_counter()
                try:
                    for key, value in overrides.items():
                        setattr(retrieval, key, value)
                    with fact_scores_scaled_by_best(scaled_by_best):
                        report = run_evaluation(
                            memory,
                            questions,
                            corpus,
                            ["dense", "hipporag2"],
                            passage_ids=indexed.passage_ids,
                            graph_reach=False,
                            n_resamples=2000,
                        )
                finally:
                    for key, value in saved.items():
                        setattr(retrieval, key, value)
                ci = {c.metric: c.bootstrap for c in report.comparisons if c.mode == "hipporag2"}
                row = {"dataset": dataset, "variant": name, **_percent(report.tables["hipporag2"].means)}
                row["vs_dense_ci"] = {
                    m: [round(100 * b.low, 1), round(100 * b.high, 1)] for m, b in ci.items()
                }
                row["seconds"] = round(time.perf_counter() - started, 1)
                rows.append(row)
                print(dataset, name, {k: row[k] for k in ("R@2", "R@5", "AR@5")}, file=sys.stderr)
        finally:
            memory.close()

    payload = {
        "command": command(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "git": git,
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ablation_hipporag2.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    lines = [
        "# hipporag2 ablation: MuSiQue (published OpenIE) and HotpotQA (spaCy extraction)",
        "",
        f"- command: `{payload['command']}`",
        f"- date: {payload['created']}; commit: {describe_commit(git or {})};"
        f" load average before/after {load_before} / {payload['load_after']}",
        "- all-MiniLM-L6-v2, spaCy query NER, no LLM; percent; 95% CI of the difference to dense"
        " (paired bootstrap, 2,000 resamples, seed 0)",
        "",
        "| data set | variant | R@2 | R@5 | AR@5 | AR@5 − dense, 95% CI |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        ci = row.get("vs_dense_ci", {}).get("AR@5")
        cell = f"[{ci[0]:+.1f}, {ci[1]:+.1f}]" if ci else "-"
        lines.append(
            f"| {row['dataset']} | {row['variant']} | {row['R@2']:.1f} | {row['R@5']:.1f} | {row['AR@5']:.1f}"
            f" | {cell} |"
        )
    (RESULTS / "ablation_hipporag2.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def _percent(means: dict[str, float]) -> dict[str, float]:
    return {k: round(100 * means[k], 1) for k in ("R@2", "R@5", "AR@5")}


if __name__ == "__main__":
    main()
