"""``hipporag-neo4j eval``: index a benchmark corpus, run retrieval modes on its questions, print the table.

A thin layer over :func:`~hipporag_neo4j.evaluation.runner.index_corpus`,
:func:`~hipporag_neo4j.evaluation.runner.run_evaluation` and :mod:`~hipporag_neo4j.evaluation.report`.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from hipporag_neo4j.cli.support import EXIT_ERROR, EXIT_PARTIAL, Context
from hipporag_neo4j.errors import HippoRAGError
from hipporag_neo4j.models import RETRIEVAL_MODES

MODES: tuple[str, ...] = ("dense", *(m for m in RETRIEVAL_MODES if m != "dense"))
_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@contextmanager
def _store_dir(ctx: Context) -> Iterator[dict[str, Any] | None]:
    """Settings overrides for a fresh temporary embedded store, unless --store or --neo4j-uri was given."""
    if "path" in ctx.overrides.get("store", {}) or "uri" in ctx.overrides.get("neo4j", {}):
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="hipporag-eval-") as tmp:
        click.echo(f"no --store given: evaluating in a fresh temporary embedded store ({tmp})", err=True)
        yield {"store": {"path": tmp, "backend": "embedded"}}


class _Bar:
    """A progress bar on stderr that opens on the first update and closes when done reaches total."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: Any = None
        self.done = 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.done = 0
        self.bar.update(done - self.done)
        self.done = done
        if done >= total:
            self.bar.render_finish()
            self.bar = None


@click.command("eval")
@click.option(
    "--questions",
    "questions_path",
    required=True,
    type=_FILE,
    help="Question file (MuSiQue, HotpotQA, 2Wiki, plain).",
)
@click.option(
    "--corpus", "corpus_path", required=True, type=_FILE, help="Corpus file: the passages retrieved from."
)
@click.option(
    "--openie", "openie_path", type=_FILE, help="Pre-extracted OpenIE for the corpus (no LLM needed)."
)
@click.option(
    "--mode",
    "modes",
    multiple=True,
    type=click.Choice(MODES),
    help="Retrieval mode to evaluate; repeat for several (default: all).",
)
@click.option(
    "--strategy",
    type=click.Choice(["single", "ircot", "clues"]),
    help="Wrap every mode in an LLM loop (ircot, clues; needs an LLM); default: retrieval.strategy.",
)
@click.option(
    "--top-k", type=click.IntRange(1, 1000), default=10, show_default=True, help="Passages retrieved."
)
@click.option(
    "--answer", is_flag=True, help="Also answer with the reader LLM and score EM/F1 (needs an LLM)."
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the JSON report here.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Evaluate only the first N questions.")
@click.pass_obj
def eval_cmd(
    ctx: Context,
    questions_path: Path,
    corpus_path: Path,
    openie_path: Path | None,
    modes: tuple[str, ...],
    strategy: str | None,
    top_k: int,
    answer: bool,
    report_path: Path | None,
    limit: int | None,
) -> None:
    """Evaluate retrieval on a benchmark: R@1/2/5/10 and AR@2/5 per mode (EM/F1 with --answer), with
    paired bootstrap CIs of each mode against dense.

    Indexes the corpus first (into a temporary store unless --store/--neo4j-uri is given; an existing
    store is reused and only what is missing gets indexed). Exit 3 when corpus passages could not be
    indexed (they count as misses).
    """
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
    from hipporag_neo4j.evaluation.report import format_comparisons, format_table, report_payload, write_json
    from hipporag_neo4j.evaluation.runner import index_corpus, run_evaluation

    selected = list(modes) or list(MODES)
    try:
        questions = load_questions(questions_path)[:limit]
        corpus = load_corpus(corpus_path)
        with _store_dir(ctx) as extra:
            if strategy:
                extra = {**(extra or {}), "retrieval": {"strategy": strategy}}
            memory = HippoRAG(ctx.settings(extra))
            index_bar = _Bar("indexing")
            try:
                indexed = index_corpus(
                    memory, corpus, openie_path, progress=lambda _stage, done, total: index_bar(done, total)
                )
                report = run_evaluation(
                    memory,
                    questions,
                    corpus,
                    selected,
                    top_k,
                    answer,
                    progress=_Bar("questions"),
                    passage_ids=indexed.passage_ids,
                )
                arguments = {
                    "questions": str(questions_path),
                    "corpus": str(corpus_path),
                    "openie": str(openie_path) if openie_path else None,
                    "modes": selected,
                    "top_k": top_k,
                    "answer": answer,
                    "limit": limit,
                }
                payload = report_payload(
                    report,
                    memory,
                    command="hipporag-neo4j eval",
                    extra={
                        "arguments": arguments,
                        "temporary_store": extra is not None,
                        "corpus_not_indexed": [
                            corpus[i].title or indexed.passage_ids[i] for i in indexed.missing
                        ],
                        "index_failures": [f.model_dump(mode="json") for f in indexed.report.failed],
                        "index_seconds": indexed.report.timings,
                    },
                )
            finally:
                memory.close()
    except HippoRAGError as exc:
        click.secho(f"error: {exc}", fg="red", err=True)
        sys.exit(EXIT_ERROR)

    if report_path is not None:
        write_json(report_path, payload)
    if ctx.as_json:
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        click.echo(f"{report.n_questions} questions, {report.n_corpus} corpus passages, top {top_k}; percent")
        click.echo(format_table(report))
        click.echo("")
        click.echo(format_comparisons(report))
        if report.gold_not_in_store:
            click.echo(f"{len(report.gold_not_in_store)} gold passages are not in the store (not indexed)")
        if report_path is not None:
            click.echo(f"report written to {report_path}")
    if indexed.missing:
        titles = ", ".join(repr(corpus[i].title or indexed.passage_ids[i]) for i in indexed.missing[:5])
        why = f"have no record in {openie_path}" if openie_path else "failed extraction"
        click.secho(
            f"warning: {len(indexed.missing)} corpus passages {why} and were not indexed (first: {titles})",
            fg="yellow",
            err=True,
        )
        sys.exit(EXIT_PARTIAL)
