"""Evaluation reports: the JSON record of a run, the metric table, the bootstrap table, the error analysis.

Tables show percentages with one decimal. Error analysis classifies each question a mode misses at R@k
(some gold passage not in its top k), by the first rule that holds, from the graph side of the question
(the mode's own links; for dense, those of the first graph mode evaluated):

* ``no_query_entity``: nothing in the question linked to a graph phrase;
* ``low_similarity_link``: some query entity linked to its phrase with cosine below the threshold;
* ``gold_unreached``: some missed gold passage mentions no phrase that PPR reaches from the links;
* ``other``: the graph reached every missed gold passage but ranked it too low.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.evaluation.metrics import recall_key
from hipporag_neo4j.evaluation.runner import GRAPH_MODES, EvalReport, ModeResult, QuestionResult

TABLE_COLUMNS: tuple[str, ...] = ("R@1", "R@2", "R@5", "R@10", "AR@2", "AR@5")
ANSWER_COLUMNS: tuple[str, ...] = ("EM", "F1")
LOW_SIMILARITY = 0.8

MissCategory = Literal["no_query_entity", "low_similarity_link", "gold_unreached", "other"]
MISS_CATEGORIES: tuple[MissCategory, ...] = (
    "no_query_entity",
    "low_similarity_link",
    "gold_unreached",
    "other",
)


# --------------------------------------------------------------------------- run context


def git_info(repo: Path | None = None) -> dict[str, Any] | None:
    """Commit of the checkout holding this package (or ``repo``), and the package files that differ from
    it (modified or untracked): the code that ran is the commit plus those. None outside a git checkout."""
    where = repo or Path(__file__).resolve().parents[2]
    try:
        commit = _git(where, "rev-parse", "HEAD").strip()
        status = _git(where, "status", "--porcelain", "--", "hipporag_neo4j")
    except (OSError, subprocess.SubprocessError):
        return None
    changed = [line[3:] for line in status.splitlines() if line.strip()]
    return {"commit": commit, "uncommitted_package_files": changed}


def _git(where: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=where, capture_output=True, text=True, check=True, timeout=10
    ).stdout


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def machine_info() -> dict[str, Any]:
    try:
        load: list[float] | None = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "torch": _version("torch"),
        "sentence_transformers": _version("sentence-transformers"),
        "load_average_1_5_15min": load,
    }


def percent_table(report: EvalReport) -> dict[str, dict[str, float]]:
    """Mode -> metric -> percent, rounded to one decimal."""
    return {
        mode: {key: round(100.0 * value, 1) for key, value in table.means.items()}
        for mode, table in report.tables.items()
    }


def report_payload(
    report: EvalReport,
    memory: HippoRAG,
    *,
    command: str | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything about a run as a JSON-ready dict: settings (secrets redacted), store, model, machine,
    commit, the metric table, the bootstrap comparisons and the per-question results."""
    payload: dict[str, Any] = {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": command,
        "git": git_info(),
        "machine": machine_info(),
        "settings": memory.settings.redacted(),
        "store": memory.stats().model_dump(mode="json"),
        "embedding_model": memory.embedder.model_name,
        "modes": report.modes,
        "top_k": report.top_k,
        "answered": report.answered,
        "n_questions": report.n_questions,
        "n_corpus": report.n_corpus,
        "table_percent": percent_table(report),
        "seconds_per_mode": report.seconds,
    }
    payload.update(extra or {})
    payload.update(report.model_dump(mode="json", exclude={"modes", "top_k", "answered", "seconds"}))
    return payload


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- tables


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100.0 * value:.1f}"


def format_table(report: EvalReport) -> str:
    """Markdown table: one row per mode, R@1/2/5/10 and AR@2/5 (and EM/F1 when answered), in percent,
    with the mean wall time per question."""
    columns = list(TABLE_COLUMNS) + (list(ANSWER_COLUMNS) if report.answered else [])
    lines = [
        "| mode | " + " | ".join(columns) + " | s/question |",
        "|---|" + "---:|" * (len(columns) + 1),
    ]
    for mode in report.modes:
        means = report.tables[mode].means
        per_question = report.seconds[mode] / max(report.n_questions, 1)
        cells = [_pct(means.get(c)) for c in columns]
        lines.append(f"| {mode} | " + " | ".join(cells) + f" | {per_question:.3f} |")
    return "\n".join(lines)


def format_comparisons(report: EvalReport) -> str:
    """Markdown table of the paired bootstrap differences (points) against the baseline, 95% CI."""
    if not report.comparisons:
        return "(no bootstrap: dense was not evaluated)"
    lines = [
        "| mode − dense | metric | diff (points) | 95% CI | p (two-sided) |",
        "|---|---|---:|---:|---:|",
    ]
    for c in report.comparisons:
        b = c.bootstrap
        lines.append(
            f"| {c.mode} | {c.metric} | {100 * b.mean_diff:+.1f} | [{100 * b.low:+.1f}, {100 * b.high:+.1f}]"
            f" | {b.p_value_two_sided:.3f} |"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- error analysis


class MissExample(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    question: str
    category: MissCategory
    query_entities: list[str]
    linked: list[str]
    """``entity -> phrase (cosine)`` for each link."""
    missed_gold: list[str]
    """Titles (else ids) of the gold passages not in the top k."""


class MissAnalysis(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: str
    k: int
    n_questions: int
    n_missed: int
    counts: dict[str, int]
    examples: dict[str, list[MissExample]]
    """Category -> up to ``n_examples`` examples, in question order."""


def _graph_side(result: QuestionResult, mode: str) -> ModeResult | None:
    if mode in GRAPH_MODES:
        return result.modes[mode]
    return next((result.modes[m] for m in result.modes if m in GRAPH_MODES), None)


def classify_miss(
    result: QuestionResult, mode: str, missed: Sequence[str], low_similarity: float = LOW_SIMILARITY
) -> MissCategory:
    """The category of a question whose ``missed`` gold passages ``mode`` did not rank (rules above)."""
    graph = _graph_side(result, mode)
    if graph is None:
        return "other"
    if not graph.linked:
        return "no_query_entity"
    if any(link.similarity < low_similarity for link in graph.linked):
        return "low_similarity_link"
    reached = result.graph_reached_gold or {}
    if any(not reached.get(gid, False) for gid in missed):
        return "gold_unreached"
    return "other"


def analyse_misses(
    report: EvalReport, k: int = 5, low_similarity: float = LOW_SIMILARITY, n_examples: int = 5
) -> dict[str, MissAnalysis]:
    """Mode -> the questions it misses at R@k, by category (rules in the module docstring)."""
    key = recall_key(k)
    analyses: dict[str, MissAnalysis] = {}
    for mode in report.modes:
        counts = dict.fromkeys(MISS_CATEGORIES, 0)
        examples: dict[str, list[MissExample]] = {c: [] for c in MISS_CATEGORIES}
        n_missed = 0
        for result in report.questions:
            mode_result = result.modes[mode]
            if mode_result.metrics.get(key, 1.0) >= 1.0:
                continue
            n_missed += 1
            missed = [g for g, rank in mode_result.gold_ranks.items() if rank is None or rank > k]
            category = classify_miss(result, mode, missed, low_similarity)
            counts[category] += 1
            if len(examples[category]) < n_examples:
                graph = _graph_side(result, mode)
                titles = dict(zip(result.gold_ids, result.gold_titles, strict=True))
                examples[category].append(
                    MissExample(
                        question_id=result.question_id,
                        question=result.question,
                        category=category,
                        query_entities=graph.query_entities if graph else [],
                        linked=[f"{x.query_entity} -> {x.phrase} ({x.similarity:.2f})" for x in graph.linked]
                        if graph
                        else [],
                        missed_gold=[titles.get(g) or g for g in missed],
                    )
                )
        analyses[mode] = MissAnalysis(
            mode=mode,
            k=k,
            n_questions=report.n_questions,
            n_missed=n_missed,
            counts=counts,
            examples=examples,
        )
    return analyses


def link_summary(report: EvalReport, low_similarity: float = LOW_SIMILARITY) -> dict[str, float] | None:
    """How the questions linked to the graph (first graph mode evaluated): mean query entities and links
    per question, share of links below ``low_similarity``, questions with such a link, questions where
    ensemble mixed in dense. None without a graph mode."""
    graph_mode = next((m for m in report.modes if m in GRAPH_MODES), None)
    if graph_mode is None or not report.questions:
        return None
    runs = [q.modes[graph_mode] for q in report.questions]
    links = [link for run in runs for link in run.linked]
    n = len(runs)
    summary: dict[str, float] = {
        "entities_per_question": sum(len(r.query_entities) for r in runs) / n,
        "links_per_question": len(links) / n,
        "share_of_links_below": sum(x.similarity < low_similarity for x in links) / max(len(links), 1),
        "questions_with_a_link_below": sum(
            any(x.similarity < low_similarity for x in r.linked) for r in runs
        ),
        "questions_without_links": sum(not r.linked for r in runs),
    }
    if "ensemble" in report.modes:
        summary["ensemble_mixed_dense"] = sum(
            q.modes["ensemble"].used_dense_fallback for q in report.questions
        )
    return summary


def format_miss_counts(analyses: dict[str, MissAnalysis]) -> str:
    if not analyses:
        return ""
    k = next(iter(analyses.values())).k
    lines = [
        f"| mode | questions missed at R@{k} | " + " | ".join(MISS_CATEGORIES) + " |",
        "|---|---:|" + "---:|" * len(MISS_CATEGORIES),
    ]
    for mode, analysis in analyses.items():
        cells = [str(analysis.counts[c]) for c in MISS_CATEGORIES]
        lines.append(f"| {mode} | {analysis.n_missed} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_miss_examples(analysis: MissAnalysis) -> str:
    lines: list[str] = []
    for category in MISS_CATEGORIES:
        examples = analysis.examples[category]
        if not examples:
            continue
        lines.append(f"- **{category}** ({analysis.counts[category]}):")
        for ex in examples:
            linked = "; ".join(ex.linked) or "nothing"
            lines.append(
                f"  - {ex.question_id}: {ex.question} — entities: {ex.query_entities or 'none'};"
                f" linked: {linked}; missed: {', '.join(ex.missed_gold)}"
            )
    return "\n".join(lines)
