"""A small hyperparameter sweep of the retrieval modes on MuSiQue (70 questions, 1,890 passages).

Grid:

* synonym threshold tau in {0.7, 0.8, 0.9}: changes the graph, so the corpus is indexed once per tau (from
  the published OpenIE) and every other setting reuses that index;
* per tau, hipporag mode over damping {0.3, 0.5, 0.7, 0.85} x link top-k {1, 2, 3};
* at the default tau (0.8) and damping (0.5): ensemble mode over ensemble threshold {0.7, 0.8, 0.9} and
  hybrid mode over hybrid weight {0.3, 0.5, 0.7}.

Dense runs beside every setting (its query vectors are cached, so it costs nearly nothing) to give paired
bootstrap CIs against it. Embeddings are cached across the whole sweep (the same phrase, passage, fact or
query is encoded once), so only the first index pays for encoding. The first index and the first setting
are timed and an estimate of the whole run is printed before the rest starts.

Writes ``benchmarks/results/sweep_musique.json`` and ``sweep_musique.md``.

    python benchmarks/sweep.py [--torch-threads N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench_quality import (  # noqa: E402
    DATASETS,
    RESULTS,
    describe_commit,
    require_data,
)

CORPUS_FILE, QUESTIONS_FILE, _openie = DATASETS["musique"]
assert _openie is not None
OPENIE_FILE: Path = _openie

SYNONYM_THRESHOLDS = (0.7, 0.8, 0.9)
DAMPINGS = (0.3, 0.5, 0.7, 0.85)
LINK_TOP_KS = (1, 2, 3)
ENSEMBLE_THRESHOLDS = (0.7, 0.8, 0.9)
HYBRID_WEIGHTS = (0.3, 0.5, 0.7)
DEFAULTS = {
    "synonym_threshold": 0.8,
    "damping": 0.5,
    "link_top_k": 1,
    "ensemble_threshold": 0.8,
    "hybrid_weight": 0.5,
}
SHOWN_METRICS = ("R@1", "R@2", "R@5", "R@10", "AR@2", "AR@5")
N_RESAMPLES = 2_000


class CachingEmbedder:
    """Wraps an embedder; every distinct text is encoded once per process (the sweep re-indexes the same
    corpus and re-asks the same questions many times)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_name: str = inner.model_name
        self._cache: dict[str, np.ndarray[Any, Any]] = {}
        self.encoded = 0

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    @property
    def max_tokens(self) -> int | None:
        value = self.inner.max_tokens
        return None if value is None else int(value)

    def token_count(self, text: str) -> int:
        return int(self.inner.token_count(text))

    def encode(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            for text, vector in zip(todo, self.inner.encode(todo), strict=True):
                self._cache[text] = vector
            self.encoded += len(todo)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)


def settings_grid() -> list[dict[str, Any]]:
    """Every setting of the sweep, grouped by synonym threshold (the index they need)."""
    grid: list[dict[str, Any]] = []
    for tau in SYNONYM_THRESHOLDS:
        for damping, link_k in itertools.product(DAMPINGS, LINK_TOP_KS):
            grid.append(
                {
                    **DEFAULTS,
                    "synonym_threshold": tau,
                    "damping": damping,
                    "link_top_k": link_k,
                    "mode": "hipporag",
                }
            )
        if tau == DEFAULTS["synonym_threshold"]:
            grid += [{**DEFAULTS, "ensemble_threshold": t, "mode": "ensemble"} for t in ENSEMBLE_THRESHOLDS]
            grid += [{**DEFAULTS, "hybrid_weight": w, "mode": "hybrid"} for w in HYBRID_WEIGHTS]
    return grid


def _retrieval_overrides(setting: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in setting.items() if k != "mode"}


def evaluate_setting(
    memory: Any, setting: dict[str, Any], questions: Any, corpus: Any, passage_ids: list[str]
) -> tuple[dict[str, Any], float]:
    """One setting's row (its mode and dense, with bootstrap against dense) and its wall time."""
    from hipporag_neo4j.evaluation.report import percent_table
    from hipporag_neo4j.evaluation.runner import run_evaluation

    started = time.perf_counter()
    report = run_evaluation(
        memory,
        questions,
        corpus,
        ["dense", setting["mode"]],
        top_k=10,
        passage_ids=passage_ids,
        n_resamples=N_RESAMPLES,
        graph_reach=False,
    )
    table = percent_table(report)
    row = {
        "setting": setting,
        "percent": table[setting["mode"]],
        "vs_dense": {c.metric: c.bootstrap.model_dump() for c in report.comparisons},
        "seconds_per_question": report.seconds[setting["mode"]] / report.n_questions,
        "dense_percent": table["dense"],
    }
    return row, time.perf_counter() - started


def render_markdown(payload: dict[str, Any]) -> str:
    machine, git = payload["machine"], payload["git"] or {}
    lines = [
        "# MuSiQue retrieval sweep"
        + ("" if payload.get("complete", True) else " (partial: the run stopped early)"),
        "",
        f"- command: `{payload['command']}`",
        f"- date: {payload['created']}; commit: {describe_commit(git)}",
        f"- machine: {machine['platform']}, {machine['cpu_count']} CPUs, Python {machine['python']},"
        f" torch {machine['torch']} ({payload['torch_threads']} threads); load average before/after"
        f" {payload['load_before']} / {machine['load_average_1_5_15min']}",
        f"- data: 70 MuSiQue dev questions, 1,890 passages, OpenIE {OPENIE_FILE.name}; embedder"
        f" {payload['embedding_model']}; query NER spaCy; top 10 retrieved",
        f"- defaults: {payload['defaults']}",
        f"- runtime: {payload['seconds_total']:.0f} s in all; indexing per synonym threshold "
        + ", ".join(f"{k}: {v['seconds']:.0f} s" for k, v in payload["indexes"].items()),
        "",
        "One question is 1.4 points of R@k and AR@k, and this is many settings on 70 questions: read",
        "differences of a few points as noise unless the bootstrap CI against dense says otherwise.",
        "s/question leaves out text encoding (embeddings are cached across the sweep); see",
        "quality_musique.md for end-to-end query times.",
        "",
        "Dense for reference: "
        + ", ".join(f"{k} {v:.1f}" for k, v in payload["dense_percent"].items() if k in SHOWN_METRICS),
        "",
        "| mode | synonym τ | damping | link top-k | ensemble τ | hybrid w | "
        + " | ".join(SHOWN_METRICS)
        + " | ΔR@5 vs dense [95% CI] | s/question |",
        "|---|---:|---:|---:|---:|---:|" + "---:|" * (len(SHOWN_METRICS) + 2),
    ]
    for row in payload["results"]:
        s, m = row["setting"], row["percent"]
        delta = row["vs_dense"].get("R@5")
        delta_cell = (
            f"{100 * delta['mean_diff']:+.1f} [{100 * delta['low']:+.1f}, {100 * delta['high']:+.1f}]"
            if delta
            else "-"
        )
        lines.append(
            f"| {s['mode']} | {s['synonym_threshold']} | {s['damping']} | {s['link_top_k']} |"
            f" {s['ensemble_threshold'] if s['mode'] == 'ensemble' else '-'} |"
            f" {s['hybrid_weight'] if s['mode'] == 'hybrid' else '-'} | "
            + " | ".join(f"{m.get(k, 0.0):.1f}" for k in SHOWN_METRICS)
            + f" | {delta_cell} | {row['seconds_per_question']:.3f} |"
        )
    best = max(payload["results"], key=lambda r: (r["percent"]["R@5"], r["percent"]["R@2"]))
    lines += [
        "",
        f"Highest R@5 (ties by R@2): {best['setting']} -> "
        + ", ".join(f"{k} {best['percent'][k]:.1f}" for k in SHOWN_METRICS),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--torch-threads", type=int, help="torch intra-op threads (default: torch's choice).")
    parser.add_argument("--out", default="sweep_musique", help="Result file name stem in benchmarks/results.")
    args = parser.parse_args(argv)
    require_data("musique")
    load_before = [round(x, 2) for x in os.getloadavg()]
    import torch

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)

    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.embedding.encoder import SentenceTransformerEmbedder
    from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
    from hipporag_neo4j.evaluation.report import git_info, machine_info, write_json
    from hipporag_neo4j.evaluation.runner import index_corpus
    from hipporag_neo4j.extraction.spacy_extractor import SpacyQueryNER
    from hipporag_neo4j.settings import load_settings

    git_at_start = git_info()  # the code that runs is the code of the start, whatever lands meanwhile
    started_all = time.perf_counter()
    corpus, questions = load_corpus(CORPUS_FILE), load_questions(QUESTIONS_FILE)
    embedder = CachingEmbedder(SentenceTransformerEmbedder("all-MiniLM-L6-v2"))
    ner = SpacyQueryNER(load_settings(env_file=None).extraction.spacy_model)
    grid = settings_grid()
    results: list[dict[str, Any]] = []
    indexes: dict[str, dict[str, Any]] = {}
    dense_percent: dict[str, float] = {}
    first_setting_seconds: float | None = None

    def settings_for(store_dir: Path, setting: dict[str, Any]) -> Any:
        return load_settings(
            {
                "store": {"path": str(store_dir), "backend": "embedded"},
                "retrieval": _retrieval_overrides(setting),
            },
            env_file=None,
        )

    def write(complete: bool) -> None:
        """Write the results so far (after each setting, so a stopped run leaves what it measured)."""
        payload: dict[str, Any] = {
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "command": " ".join(
                ["python benchmarks/sweep.py", shlex.join(sys.argv[1:] if argv is None else argv)]
            ).strip(),
            "complete": complete,
            "git": git_at_start,
            "machine": machine_info(),
            "load_before": load_before,
            "torch_threads": torch.get_num_threads(),
            "embedding_model": embedder.model_name,
            "texts_encoded": embedder.encoded,
            "defaults": DEFAULTS,
            "bootstrap_resamples": N_RESAMPLES,
            "indexes": indexes,
            "dense_percent": dense_percent,
            "results": results,
            "seconds_total": time.perf_counter() - started_all,
        }
        RESULTS.mkdir(parents=True, exist_ok=True)
        write_json(RESULTS / f"{args.out}.json", payload)
        (RESULTS / f"{args.out}.md").write_text(render_markdown(payload), encoding="utf-8")

    with tempfile.TemporaryDirectory(prefix="sweep-") as tmp:
        for tau in SYNONYM_THRESHOLDS:
            store_dir = Path(tmp) / f"tau{tau}"
            group = [s for s in grid if s["synonym_threshold"] == tau]
            base = HippoRAG(settings_for(store_dir, group[0]), embedder=embedder)
            t = time.perf_counter()
            indexed = index_corpus(base, corpus, OPENIE_FILE)
            index_seconds = time.perf_counter() - t
            stats = base.stats()
            indexes[str(tau)] = {
                "seconds": index_seconds,
                "synonym_edges": stats.synonym_edges,
                "phrases": stats.phrases,
            }
            print(
                f"tau {tau}: indexed in {index_seconds:.0f} s, {stats.synonym_edges} synonym edges",
                file=sys.stderr,
            )
            try:
                for setting in group:
                    memory = HippoRAG(
                        settings_for(store_dir, setting), store=base.store, embedder=embedder, query_ner=ner
                    )
                    row, seconds = evaluate_setting(memory, setting, questions, corpus, indexed.passage_ids)
                    results.append(row)
                    dense_percent = row.pop("dense_percent")
                    print(f"  {setting} -> {row['percent']}", file=sys.stderr)
                    write(complete=False)
                    if first_setting_seconds is None:
                        first_setting_seconds = seconds
                        # later indexes reuse cached embeddings: count them as synonyms + writes only
                        rest_index = sum(v for k, v in indexed.report.timings.items() if k != "embedding")
                        estimate = index_seconds + 2 * rest_index + len(grid) * seconds
                        print(
                            f"first index {index_seconds:.0f} s, first setting {seconds:.0f} s: {len(grid)}"
                            f" settings and {len(SYNONYM_THRESHOLDS)} indexes take about"
                            f" {estimate / 60:.0f} min",
                            file=sys.stderr,
                        )
            finally:
                base.close()

    write(complete=True)
    print(f"wrote {RESULTS / (args.out + '.json')} and .md", file=sys.stderr)


if __name__ == "__main__":
    main()
