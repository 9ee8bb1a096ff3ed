"""The ``quality`` suite: retrieval quality on MuSiQue or HotpotQA, every retrieval mode.

* ``--dataset musique`` (default): the 70 dev questions over the 1,890-passage corpus, indexed from the
  OpenIE the HippoRAG authors published (gpt-3.5-turbo-1106, so no LLM call).
* ``--dataset hotpotqa``: the 50 dev questions over 994 passages, extracted offline with spaCy (no
  published extraction: the path a new user without an LLM takes).
* ``--dataset musique-offline``: MuSiQue's questions and corpus, extracted offline with spaCy.
* ``--questions N`` / ``--passages N``: the first N only (a smoke run; the figures are not comparable).
* ``--set section.key=VALUE`` (repeatable): a setting changed from the default, e.g.
  ``--set store.vector_search=approximate --set store.vector_index_probes=8`` (the IVF index forced on).

Embeds with all-MiniLM-L6-v2 and finds query entities with the offline spaCy NER; then scores R@1/2/5/10
and AR@2/5 per mode, paired bootstrap CIs against dense, and an error analysis of the misses at R@5.
Writes ``benchmarks/results/quality_<dataset>.json`` and ``.md``.

    python benchmarks/run.py quality [--dataset musique|hotpotqa|musique-offline] [--store DIR]
        [--torch-threads N] [--set section.key=VALUE ...] [--out STEM]

``--store`` keeps (and on a re-run reuses) the indexed store; without it a temporary one is used.
The data is read from ``../shared/data`` relative to the repository root.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
MUSIQUE = DATA / "musique"
#: dataset -> (corpus, questions, OpenIE file or None for offline spaCy extraction)
DATASETS: dict[str, tuple[Path, Path, Path | None]] = {
    "musique": (
        MUSIQUE / "musique_corpus1890.json",
        MUSIQUE / "musique_dev70.json",
        MUSIQUE / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json",
    ),
    "hotpotqa": (
        DATA / "hotpotqa" / "hotpotqa_corpus994.json",
        DATA / "hotpotqa" / "hotpotqa_dev50.json",
        None,
    ),
    "musique-offline": (MUSIQUE / "musique_corpus1890.json", MUSIQUE / "musique_dev70.json", None),
}
RESULTS = REPO / "benchmarks" / "results"
MODES = ["dense", "hipporag2", "hipporag", "ensemble", "hybrid"]

for _path in (REPO, REPO / "benchmarks"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from harness import command, cpu_model  # noqa: E402  (benchmarks/ is not a package)

#: Reference points (percent) from the issues, for comparison; not measured here.
REFERENCES: dict[str, list[dict[str, Any]]] = {"hotpotqa": [], "musique-offline": []}
REFERENCES["musique"] = [
    {
        "source": "dense, measured by the issue author with the same embedder (all-MiniLM-L6-v2)",
        "R@2": 50.0,
        "R@5": 64.3,
        "AR@5": 34.3,
    },
    {
        "source": "original HippoRAG 2 code without its LLM filter (issue author)",
        "R@2": 46.5,
        "R@5": 67.3,
        "AR@5": 40.0,
    },
    {"source": "HippoRAG paper, MuSiQue dev, Contriever", "R@2": 41.0, "R@5": 52.1, "AR@5": None},
]


#: Where each dataset's files come from: the HippoRAG repository, tag v1.0.0 (MIT licence).
SOURCES: dict[str, str] = {
    "musique": (
        "data/musique_train_corpus.json (the corpus), data/musique_train.json (the questions) and the "
        "published extraction output/openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"
    ),
    "hotpotqa": (
        "data/hotpotqa_train_corpus.json (the corpus) and data/hotpotqa_train.json (the questions); "
        "there is no published extraction: it is extracted offline with spaCy"
    ),
    "musique-offline": (
        "data/musique_train_corpus.json (the corpus) and data/musique_train.json (the questions); "
        "extracted offline with spaCy here"
    ),
}


def require_data(dataset: str) -> None:
    missing = [p for p in DATASETS[dataset] if p is not None and not p.is_file()]
    if missing:
        names = "\n  ".join(str(p) for p in missing)
        sys.exit(
            f"{dataset} benchmark data not found:\n  {names}\n"
            f"It is read from ../shared/data relative to the repository root ({DATA}).\n"
            f"The files come from the HippoRAG repository, https://github.com/OSU-NLP-Group/HippoRAG at tag "
            f"v1.0.0: {SOURCES[dataset]}. Save them under the names above (the question files here are "
            "subsets of those 100-question sets: figures on the full sets differ from the committed ones)."
        )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", choices=sorted(DATASETS), default="musique")
    parser.add_argument("--store", type=Path, help="Embedded store directory to index into / reuse.")
    parser.add_argument("--torch-threads", type=int, help="torch intra-op threads (default: torch's choice).")
    parser.add_argument("--out", help="Result file name stem in benchmarks/results (quality_<dataset>).")
    parser.add_argument("--questions", type=int, help="only the first N questions (smoke run)")
    parser.add_argument("--passages", type=int, help="only the first N corpus passages (smoke run)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="a setting changed from the default (VALUE read as JSON when it parses, else as a string)",
    )
    args = parser.parse_args(argv)
    args.out = args.out or f"quality_{args.dataset.replace('-', '_')}"
    return args


def overrides(pairs: list[str]) -> dict[str, dict[str, Any]]:
    """``["store.vector_search=approximate", "retrieval.damping=0.5"]`` as nested settings."""
    import json

    nested: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        section, dot, key = name.partition(".")
        if not sep or not dot:
            sys.exit(f"--set {pair!r}: expected SECTION.KEY=VALUE")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        nested.setdefault(section, {})[key] = value
    return nested


def _ref_cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def describe_commit(git: dict[str, Any]) -> str:
    """The commit a run measured, and the package files it had changed on top of it."""
    dirty = git.get("uncommitted_package_files")
    return git.get("commit", "unknown") + (
        f" plus uncommitted package files {', '.join(dirty)}" if dirty else ""
    )


def render_markdown(payload: dict[str, Any], report: Any, analyses: dict[str, Any]) -> str:
    from hipporag_neo4j.evaluation.report import (
        format_comparisons,
        format_miss_counts,
        format_miss_examples,
        format_table,
    )

    machine, git, r = payload["machine"], payload["git"] or {}, payload["settings"]["retrieval"]
    store, data = payload["store"], payload["data"]
    extraction = f"OpenIE {data['openie']}" if data["openie"] else "extraction: spaCy (offline, no LLM)"
    lines = [
        f"# {payload['dataset']} retrieval quality",
        "",
        f"- command: `{payload['command']}`",
        f"- date: {payload['created']}; commit: {describe_commit(git)}",
        f"- machine: {payload.get('cpu_model', '?')}, {machine['platform']}, {machine['cpu_count']} CPUs, "
        f"Python {machine['python']},"
        f" torch {machine['torch']} ({payload['torch_threads']} threads), numpy {machine['numpy']};"
        f" load average before/after {payload['load_before']} / {machine['load_average_1_5_15min']}",
        f"- data: {payload['n_questions']} questions ({data['questions']}), {payload['n_corpus']} passages"
        f" ({data['corpus']}); {extraction}",
        f"- embedder {payload['embedding_model']};"
        f" query NER spaCy {payload['settings']['extraction']['spacy_model']}"
        f"; store: {store['passages']} passages, {store['phrases']} phrases, {store['facts']} facts,"
        f" {store['relation_edges']} relation edges, {store['synonym_edges']} synonym edges",
        f"- retrieval settings: damping {r['damping']}, synonym threshold {r['synonym_threshold']},"
        f" link top-k {r['link_top_k']}, specificity {r['use_specificity']}, ensemble threshold"
        f" {r['ensemble_threshold']}, hybrid weight {r['hybrid_weight']}; hipporag2: fact top-k"
        f" {r['fact_top_k']}, seed phrases {r['seed_phrases']},"
        f" passage node weight {r['passage_node_weight']},"
        f" passage seeds {r['passage_seed_top_n'] or 'all'}, combine alpha {r['combine_alpha']};"
        f" top {payload['top_k']} retrieved",
        "",
        "## Results (percent)",
        "",
        format_table(report),
        "",
        "## Reference points (percent, from the issue; not measured here)",
        "",
        "| source | R@2 | R@5 | AR@5 |",
        "|---|---:|---:|---:|",
    ]
    for ref in REFERENCES[payload["dataset"]]:
        cells = " | ".join(_ref_cell(ref[k]) for k in ("R@2", "R@5", "AR@5"))
        lines.append(f"| {ref['source']} | {cells} |")
    lines += [
        "",
        "## Paired bootstrap against dense (10,000 resamples, seed 0; one question ="
        f" {100 / payload['n_questions']:.1f} points)",
        "",
        format_comparisons(report),
        "",
        "## Error analysis: questions missed at R@5 (some gold passage not in the top 5)",
        "",
        "Each miss gets the first category that holds, judged on the graph side of the question (for"
        " dense: the hipporag mode's links): no query entity linked / a link with cosine < 0.8 / a missed"
        " gold passage that PPR from the links does not reach (score 0) / other (reached, ranked too low).",
        "",
        format_miss_counts(analyses),
        "",
    ]
    links = payload.get("link_summary")
    if links:
        lines += [
            f"Links ({payload['n_questions']} questions, hipporag mode): {links['entities_per_question']:.1f}"
            f" query entities and {links['links_per_question']:.1f} links per question;"
            f" {100 * links['share_of_links_below']:.0f}% of links have cosine < 0.8, in"
            f" {links['questions_with_a_link_below']:.0f} questions; {links['questions_without_links']:.0f}"
            " questions link nothing; ensemble mixed in dense on"
            f" {links.get('ensemble_mixed_dense', 0):.0f} questions.",
            "",
        ]
    for mode, analysis in analyses.items():
        lines += [f"### {mode}", "", format_miss_examples(analysis) or "(no misses)", ""]
    seconds = payload["timings"]
    lines += [
        "## Runtimes",
        "",
        f"- indexing (extraction, embedding, synonyms): {seconds['index']:.1f} s"
        f" ({', '.join(f'{k} {v:.1f} s' for k, v in payload['index_stage_seconds'].items())})",
        f"- evaluation of all modes: {seconds['evaluate']:.1f} s; per mode, s per question: "
        + ", ".join(f"{m} {s / payload['n_questions']:.3f}" for m, s in payload["seconds_per_mode"].items()),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    require_data(args.dataset)
    corpus_file, questions_file, openie_file = DATASETS[args.dataset]
    import os

    load_before = [round(x, 2) for x in os.getloadavg()]
    torch: Any = None  # only with the [torch] extra; the default encoder runs on ONNX Runtime without it
    if importlib.util.find_spec("torch") is not None:
        import torch

        if args.torch_threads:
            torch.set_num_threads(args.torch_threads)

    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
    from hipporag_neo4j.evaluation.report import (
        analyse_misses,
        format_table,
        git_info,
        link_summary,
        report_payload,
        write_json,
    )
    from hipporag_neo4j.evaluation.runner import index_corpus, run_evaluation
    from hipporag_neo4j.extraction.spacy_extractor import SpacyQueryNER
    from hipporag_neo4j.settings import load_settings

    git_at_start = git_info()  # the code that runs is the code of the start, whatever lands meanwhile
    with tempfile.TemporaryDirectory(prefix="bench-quality-") as tmp:
        store_dir = args.store or Path(tmp) / "store"
        changed = overrides(args.overrides)
        config: dict[str, dict[str, Any]] = {
            "store": {"path": str(store_dir), "backend": "embedded"},
            "embedding": {"model": "all-MiniLM-L6-v2"},
        }
        for section, values in changed.items():
            config.setdefault(section, {}).update(values)
        settings = load_settings(config, env_file=None)
        memory = HippoRAG(settings, query_ner=SpacyQueryNER(settings.extraction.spacy_model))
        try:
            corpus, questions = load_corpus(corpus_file), load_questions(questions_file)
            if args.passages:  # a smoke run: the questions kept are those whose gold passages are all in
                corpus = corpus[: args.passages]
                titles = {p.title for p in corpus}
                questions = [q for q in questions if all(t in titles for t in q.gold_titles)]
            questions = questions[: args.questions] if args.questions else questions
            print(f"indexing {len(corpus)} passages into {store_dir} ...", file=sys.stderr)
            started = time.perf_counter()
            indexed = index_corpus(memory, corpus, openie_file)
            index_seconds = time.perf_counter() - started
            if indexed.missing and openie_file is not None:
                sys.exit(f"{len(indexed.missing)} corpus passages have no record in {openie_file.name}")
            print(
                f"indexed in {index_seconds:.1f} s; evaluating {len(questions)} questions ...",
                file=sys.stderr,
            )
            started = time.perf_counter()
            report = run_evaluation(
                memory,
                questions,
                corpus,
                MODES,
                top_k=10,
                passage_ids=indexed.passage_ids,
                progress=lambda done, total: print(f"  {done}/{total}", end="\r", file=sys.stderr),
            )
            evaluate_seconds = time.perf_counter() - started
            analyses = analyse_misses(report, k=5)
            payload = report_payload(
                report,
                memory,
                command=command(),
                extra={
                    "git": git_at_start,
                    "load_before": load_before,
                    "cpu_model": cpu_model(),
                    "torch_threads": torch.get_num_threads() if torch is not None else None,
                    "query_ner": "spacy",
                    "dataset": args.dataset,
                    "settings_changed": changed,
                    "smoke": {"questions": args.questions, "passages": args.passages},
                    "data": {
                        "corpus": corpus_file.name,
                        "questions": questions_file.name,
                        "openie": openie_file.name if openie_file else None,
                    },
                    "not_indexed": len(indexed.missing),
                    "references_percent": REFERENCES[args.dataset],
                    "timings": {"index": index_seconds, "evaluate": evaluate_seconds},
                    "index_stage_seconds": indexed.report.timings,
                    "index_reused_store": bool(indexed.report.skipped) and not indexed.report.indexed,
                    "link_summary": link_summary(report),
                    "error_analysis_r5": {m: a.model_dump(mode="json") for m, a in analyses.items()},
                },
            )
        finally:
            memory.close()

    RESULTS.mkdir(parents=True, exist_ok=True)
    write_json(RESULTS / f"{args.out}.json", payload)
    (RESULTS / f"{args.out}.md").write_text(render_markdown(payload, report, analyses), encoding="utf-8")
    print(format_table(report))
    print(f"wrote {RESULTS / (args.out + '.json')} and .md", file=sys.stderr)


if __name__ == "__main__":
    main()
