"""Retrieval variants of ``hipporag2`` on the cached offline stores, judged on both development sets together.

The stores are the ones :mod:`quality_offline` builds and caches (``--cache``; built there if absent).
Each variant (settings overrides, :data:`VARIANTS`) runs on every data set; dense runs once per set.
Per-question rankings go to ``<cache>/runs/<data set>/<variant>.json``, so the comparison can be
re-done without re-running a variant.

The comparison (``--compare A B``, or every variant against ``default`` and ``dense``): R@2 / R@5 / AR@5
per set, and a paired bootstrap 95% CI of the difference over the union of the offline questions
(HotpotQA dev50 + MuSiQue dev70, spaCy extraction: 120 questions), plus MuSiQue with the published OpenIE
apart (the no-regression check with an LLM's triples).

    python benchmarks/quality_topk.py --cache /work/oq-cache --variant default dense-top ... [--out NAME]
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from quality_offline import (  # noqa: E402
    DATASETS,
    REPO,
    RESULTS,
    CachedParses,
    CachingEmbedder,
    extractor_key,
    make_extractor,
)

#: variant -> retrieval settings overrides (on top of the defaults)
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    # issue 28: the default before title seeds (runs of the measurement are named as then: the default
    # was this one, and "title-phrase" was title seeds with the phrase's weight, now the default)
    "no-title-seeds": {"title_seeds": False},
}
OFFLINE = ("hotpotqa", "musique-offline")
METRICS = ("R@2", "R@5", "AR@5")


def metrics(ranked: list[str], gold: list[str]) -> dict[str, float]:
    g = set(gold)
    return {
        "R@2": len(g & set(ranked[:2])) / len(g),
        "R@5": len(g & set(ranked[:5])) / len(g),
        "AR@5": float(g <= set(ranked[:5])),
    }


def run(cache: Path, datasets: list[str], variants: list[str], force: bool, store_key: str | None) -> None:
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.embedding import SentenceTransformerEmbedder
    from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
    from hipporag_neo4j.evaluation.runner import index_corpus, run_evaluation
    from hipporag_neo4j.extraction.spacy_extractor import SpacyQueryNER, load_spacy_model
    from hipporag_neo4j.settings import load_settings

    embedder = CachingEmbedder(SentenceTransformerEmbedder("all-MiniLM-L6-v2"), cache / "minilm-cache")
    for dataset in datasets:
        corpus_file, questions_file, openie_file = DATASETS[dataset]
        out_dir = cache / "runs" / run_name(dataset, store_key)
        out_dir.mkdir(parents=True, exist_ok=True)
        todo = [v for v in variants if force or not (out_dir / f"{v}.json").is_file()]
        if not todo and (out_dir / "dense.json").is_file():
            continue
        corpus, questions = load_corpus(corpus_file), load_questions(questions_file)
        key = "openie" if openie_file else (store_key or extractor_key("default"))
        settings = load_settings(
            {"store": {"path": str(cache / "stores" / f"{dataset}-{key}")}}, env_file=None
        )
        extractor = None
        if openie_file is None:
            parses = CachedParses(
                load_spacy_model(settings.extraction.spacy_model), cache / f"parses-{dataset}.spacy"
            )
            extractor = make_extractor("default", settings.extraction.spacy_model, parses)
        memory = HippoRAG(
            settings,
            embedder=embedder,  # type: ignore[arg-type]
            extractor=extractor,
            query_ner=SpacyQueryNER(settings.extraction.spacy_model),
        )
        try:
            indexed = index_corpus(memory, corpus, openie_file)
            embedder.save()
            for variant in ["dense", *todo] if not (out_dir / "dense.json").is_file() else todo:
                retrieval = memory.settings.retrieval
                overrides = VARIANTS.get(variant, {})
                saved = {k: getattr(retrieval, k) for k in overrides}
                started = time.perf_counter()
                try:
                    for k, v in overrides.items():
                        setattr(retrieval, k, v)
                    memory.retriever.match_graph_phrases = retrieval.match_query_phrases
                    report = run_evaluation(
                        memory,
                        questions,
                        corpus,
                        ["dense" if variant == "dense" else "hipporag2"],
                        passage_ids=indexed.passage_ids,
                        graph_reach=False,
                        n_resamples=10,
                    )
                finally:
                    for k, v in saved.items():
                        setattr(retrieval, k, v)
                mode = "dense" if variant == "dense" else "hipporag2"
                per_question = {
                    q.question_id: {
                        "question": q.question,
                        "gold": q.gold_ids,
                        "gold_titles": q.gold_titles,
                        "ranked": q.modes[mode].retrieved_ids,
                        "entities": q.modes[mode].query_entities,
                        "linked": [
                            [x.query_entity, x.phrase, round(x.similarity, 3)] for x in q.modes[mode].linked
                        ],
                    }
                    for q in report.questions
                }
                (out_dir / f"{variant}.json").write_text(json.dumps(per_question), encoding="utf-8")
                means = {m: 100 * report.tables[mode].means[m] for m in METRICS}
                print(
                    f"{dataset:16} {variant:28} "
                    + " / ".join(f"{means[m]:.1f}" for m in METRICS)
                    + f"  ({time.perf_counter() - started:.0f} s)",
                    file=sys.stderr,
                )
        finally:
            memory.close()


def run_name(dataset: str, store_key: str | None) -> str:
    """Runs on the store of the current extractor are under the data set's name; others under its key."""
    return dataset if store_key is None or dataset == "musique-openie" else f"{dataset}-{store_key}"


def load_run(cache: Path, dataset: str, variant: str) -> dict[str, Any]:
    """``variant`` or ``variant@store-key`` (a run on another extractor's stores)."""
    name, _, key = variant.partition("@")
    path = cache / "runs" / run_name(dataset, key or None) / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def per_question(run_: dict[str, Any]) -> dict[str, dict[str, float]]:
    return {qid: metrics(q["ranked"], q["gold"]) for qid, q in run_.items()}


def bootstrap(diffs: np.ndarray[Any, Any], n: int = 10_000, seed: int = 0) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    means = diffs[rng.integers(0, len(diffs), size=(n, len(diffs)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(diffs.mean()), float(low), float(high)


def compare(cache: Path, a: str, b: str, datasets: list[str]) -> dict[str, Any]:
    """a - b: per set (means and CIs) and over the union of the offline sets."""
    out: dict[str, Any] = {"a": a, "b": b, "sets": {}, "union": {}}
    union: dict[str, list[float]] = {m: [] for m in METRICS}
    for dataset in datasets:
        try:
            ra, rb = per_question(load_run(cache, dataset, a)), per_question(load_run(cache, dataset, b))
        except FileNotFoundError:  # a variant not run on this set
            continue
        row: dict[str, Any] = {}
        for m in METRICS:
            d = np.array([ra[q][m] - rb[q][m] for q in ra])
            mean, low, high = bootstrap(d)
            row[m] = {
                "a": round(100 * float(np.mean([ra[q][m] for q in ra])), 1),
                "b": round(100 * float(np.mean([rb[q][m] for q in rb])), 1),
                "diff": [round(100 * mean, 1), round(100 * low, 1), round(100 * high, 1)],
                "wins": int((d > 0).sum()),
                "losses": int((d < 0).sum()),
            }
            if dataset in OFFLINE:
                union[m].extend(d.tolist())
        out["sets"][dataset] = row
    for m in METRICS:
        if union[m]:
            mean, low, high = bootstrap(np.array(union[m]))
            out["union"][m] = [round(100 * mean, 1), round(100 * low, 1), round(100 * high, 1)]
    return out


def format_comparison(c: dict[str, Any]) -> str:
    lines = [f"{c['a']} - {c['b']}"]
    for dataset, row in c["sets"].items():
        cells = "  ".join(
            f"{m} {row[m]['a']:.1f} vs {row[m]['b']:.1f} {row[m]['diff'][0]:+.1f}"
            f" [{row[m]['diff'][1]:+.1f},{row[m]['diff'][2]:+.1f}] +{row[m]['wins']}/-{row[m]['losses']}"
            for m in METRICS
        )
        lines.append(f"  {dataset:16} {cells}")
    if c["union"]:
        lines.append(
            "  union offline    "
            + "  ".join(f"{m} {v[0]:+.1f} [{v[1]:+.1f},{v[2]:+.1f}]" for m, v in c["union"].items())
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument(
        "--dataset", nargs="*", default=[*OFFLINE, "musique-openie"], choices=sorted(DATASETS)
    )
    parser.add_argument("--variant", nargs="*", default=["default"], choices=sorted(VARIANTS))
    parser.add_argument("--force", action="store_true", help="Re-run variants whose rankings are saved.")
    parser.add_argument(
        "--compare",
        nargs=2,
        action="append",
        metavar=("A", "B"),
        help="Compare saved runs A - B (variant or variant@store-key; repeatable) instead of running.",
    )
    parser.add_argument("--note", default="", help="A line for the result file (what the run names mean).")
    parser.add_argument(
        "--store-key",
        help="The offline stores' key (default-<hash of the extractor's source>): another extractor's stores"
        " (built by quality_offline.py); its runs go to runs/<data set>-<key>.",
    )
    parser.add_argument("--out", help="Write the comparisons to benchmarks/results/<out>.json and .md.")
    args = parser.parse_args(argv)
    comparisons = []
    if args.compare:
        for a, b in args.compare:
            comparisons.append(compare(args.cache, a, b, args.dataset))
            print(format_comparison(comparisons[-1]))
    else:
        run(args.cache, args.dataset, args.variant, args.force, args.store_key)
    for v in [] if args.compare else args.variant:
        for base in ("dense", "default"):
            if v != base:
                key = f"@{args.store_key}" if args.store_key else ""
                comparisons.append(compare(args.cache, v + key, base + key, args.dataset))
                print(format_comparison(comparisons[-1]))
    if args.out:
        from hipporag_neo4j.evaluation.report import git_info

        payload = {
            "command": " ".join(["python benchmarks/quality_topk.py", shlex.join(sys.argv[1:])]),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "git": git_info(),
            "variants": {v: VARIANTS[v] for v in args.variant if v in VARIANTS},
            "note": args.note,
            "comparisons": comparisons,
        }
        (RESULTS / f"{args.out}.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        md = [
            f"# hipporag2 variants on both development sets\n\n- command: `{payload['command']}`",
            f"- date: {payload['created']}; commit: {(payload['git'] or {}).get('commit', 'unknown')}",
            *([f"- {args.note}"] if args.note else []),
            "",
            "```",
            *[format_comparison(c) for c in comparisons],
            "```",
        ]
        (RESULTS / f"{args.out}.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    _ = REPO


if __name__ == "__main__":
    main()
