"""Command line: a thin layer over :class:`hipporag_neo4j.HippoRAG`.

Exit codes: 0 success; 1 error (bad settings, unreadable store, unreachable server...); 2 usage error;
3 the command finished but some passages failed (each is listed with its reason); ``index`` stopped by
Ctrl-C 130, by SIGTERM 143 (saying what was written).
"""

from __future__ import annotations

import json
import logging
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO, TypeVar, get_args

import click

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.cli.aura import aura_cmd
from hipporag_neo4j.cli.evaluate import eval_cmd
from hipporag_neo4j.cli.link import about_cmd, link_cmd, unlink_cmd
from hipporag_neo4j.cli.mcp import mcp_cmd
from hipporag_neo4j.cli.progress import Progress
from hipporag_neo4j.cli.serve import serve_cmd
from hipporag_neo4j.cli.support import (
    EXIT_ERROR,
    EXIT_PARTIAL,
    Context,
    emit,
    exit_on_error,
    plural,
    print_retrieval,
)
from hipporag_neo4j.models import (
    RETRIEVAL_MODES,
    IndexReport,
    RetrievalMode,
    RetrievalResult,
    RetrievalStrategy,
)

T = TypeVar("T")
#: Ctrl-C: 128 + SIGINT, as a shell reports it; SIGTERM (systemd, docker stop, kill): 128 + SIGTERM
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


@contextmanager
def terminate_as_interrupt() -> Iterator[list[int]]:
    """SIGTERM handled as Ctrl-C while the block runs: it raises KeyboardInterrupt in the main thread,
    so a run stops the same clean way (the write in flight finishes, the rest is not started); the
    list yielded holds the signal once it came. A second SIGTERM while stopping is ignored (SIGKILL
    still ends the process). Outside the main thread nothing is installed."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum: int, frame: object) -> None:
        if received:
            return
        received.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


MODES = list(RETRIEVAL_MODES)
STRATEGIES = list(get_args(RetrievalStrategy))


#: The group's options that take a value, and its flags: also accepted after the command.
GLOBAL_VALUE_OPTIONS = frozenset(
    {
        "--store",
        "--neo4j-uri",
        "--namespace",
        "--llm-model",
        "--llm-base-url",
        "--embedding-model",
        "--env-file",
        "--config",
    }
)
GLOBAL_FLAGS = frozenset({"--json", "--quiet", "-q", "--verbose", "-v"})


def hoist_global_options(group: click.Group, args: list[str]) -> list[str]:
    """``query "..." --json --store DIR`` as ``--json --store DIR query "..."``: global options found
    after the command move before it (unless the command has an option of that name; ``--`` ends it)."""
    position = 0
    while position < len(args):
        token = args[position]
        name = token.split("=", 1)[0]
        if token in GLOBAL_VALUE_OPTIONS:
            position += 2
        elif name in GLOBAL_VALUE_OPTIONS or token in GLOBAL_FLAGS or token.startswith("-"):
            position += 1
        else:
            break
    if position >= len(args) or args[position] not in group.commands:
        return args
    command = group.commands[args[position]]
    own = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    moved: list[str] = []
    rest: list[str] = []
    tail = args[position + 1 :]
    i = 0
    while i < len(tail):
        token = tail[i]
        name = token.split("=", 1)[0]
        if token == "--":
            rest.extend(tail[i:])
            break
        if name in own:
            rest.append(token)
        elif token in GLOBAL_VALUE_OPTIONS:
            moved.extend(tail[i : i + 2])
            i += 1
        elif name in GLOBAL_VALUE_OPTIONS or token in GLOBAL_FLAGS:
            moved.append(token)
        else:
            rest.append(token)
        i += 1
    return [*args[:position], *moved, args[position], *rest]


class _MainGroup(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_global_options(self, args))


@click.group(
    cls=_MainGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option("--store", "store_path", type=click.Path(path_type=Path), help="Embedded store directory.")
@click.option("--neo4j-uri", help="Use Neo4j at this URI (bolt://, neo4j://, neo4j+s://).")
@click.option(
    "--namespace",
    help="Knowledge-base name: in Neo4j a property of every node; in the embedded store its own database "
    "under the store directory.",
)
@click.option("--llm-model", help="LLM model name (enables LLM extraction, query NER and answers).")
@click.option("--llm-base-url", help="OpenAI-compatible endpoint for the LLM.")
@click.option("--embedding-model", help="sentence-transformers model name or local path.")
@click.option(
    "--env-file",
    type=click.Path(exists=True, dir_okay=False),
    help="Read HIPPORAG_* settings from this file (default: .env in the working directory, if any).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    help="Read settings from this TOML file (default: hipporag.toml in the working directory, if any).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
@click.option("--quiet", "-q", is_flag=True, help="No progress; warnings and errors only.")
@click.option("--verbose", "-v", is_flag=True, help="Log what each step does (INFO) on stderr.")
@click.version_option(package_name="hipporag-neo4j")
@click.pass_context
def main(
    click_ctx: click.Context,
    store_path: Path | None,
    neo4j_uri: str | None,
    namespace: str | None,
    llm_model: str | None,
    llm_base_url: str | None,
    embedding_model: str | None,
    env_file: str | None,
    config_file: str | None,
    as_json: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """HippoRAG long-term memory with its knowledge graph in Neo4j or an embedded store.

    Settings come from hipporag.toml, .env and HIPPORAG_* environment variables, in that order, each
    over the one before; options here override them all, and may also come after the command
    (`query "..." --json`). Commands that only read (query, list, stats...)
    refuse a store that does not exist; `index` creates it.
    """
    overrides: dict[str, dict[str, Any]] = {}
    pairs = [
        ("store", "path", store_path),
        ("neo4j", "uri", neo4j_uri),
        ("neo4j", "namespace", namespace),
        ("llm", "model", llm_model),
        ("llm", "base_url", llm_base_url),
        ("embedding", "model", embedding_model),
    ]
    for group, field, value in pairs:
        if value is not None:
            overrides.setdefault(group, {})[field] = value
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose contradict each other: give one")
    if verbose:
        logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        logging.getLogger("hipporag_neo4j").setLevel(logging.INFO)
    click_ctx.obj = Context(overrides, env_file, as_json, config_file)
    click_ctx.obj.quiet = quiet


def _memory(ctx: Context, extra: dict[str, Any] | None = None) -> HippoRAG:
    return HippoRAG(ctx.settings(extra))


def _with_memory(ctx: Context, action: Callable[[HippoRAG], T]) -> T:
    """Run ``action`` on a HippoRAG over an existing store (a missing one is refused when first used,
    never created); errors exit 1 with their message."""
    with exit_on_error():
        memory = HippoRAG(ctx.settings(), create=False)
        try:
            return action(memory)
        finally:
            memory.close()


def _print_index_report(report: IndexReport) -> None:
    click.echo(
        f"indexed {plural(len(report.indexed), 'passage')}, skipped {len(report.skipped)} already stored or "
        f"repeated, updated {len(report.updated)}, failed {len(report.failed)}; new phrases "
        f"{report.new_phrases}, facts {report.new_facts}, synonym edges {report.new_synonym_edges}"
    )
    for parent, chunks in report.chunked.items():
        click.echo(f"  chunked {parent} into {len(chunks)} passages (longer than the embedder's window)")
    if report.updated:
        click.echo(
            f"  updated {', '.join(report.updated)}: replaced {len(report.removed)} stored passages "
            "of their old versions"
        )
    if report.unsupported:
        click.secho(f"  skipped {len(report.unsupported)} files of unsupported type:", fg="yellow")
        for path in report.unsupported:
            click.secho(f"    {path}", fg="yellow")
    if report.empty:
        click.secho(f"  skipped {plural(len(report.empty), 'empty file')} (no text to index):", fg="yellow")
        for path in report.empty:
            click.secho(f"    {path}", fg="yellow")
    for failure in report.failed:
        click.secho(
            f"  failed {failure.passage_id or '-'} ({failure.source or '-'}): {failure.reason}", fg="yellow"
        )
    if report.usage.requests or report.usage.cached:
        u = report.usage
        click.echo(
            f"LLM: {u.requests} requests, {u.cached} cached, {u.prompt_tokens} prompt + "
            f"{u.completion_tokens} completion tokens, {u.retries} retries"
        )


@main.command("index")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--openie",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Pre-extracted OpenIE (HippoRAG JSON or JSONL of {passage_id, triples}): no LLM needed.",
)
@click.option("--extractor", type=click.Choice(["auto", "llm", "spacy"]), help="Extraction method.")
@click.option(
    "--progress-every",
    type=click.FloatRange(0),
    default=30.0,
    show_default=True,
    help="When stderr is not a terminal: a progress line every this many seconds (a terminal gets bars).",
)
@click.pass_obj
def index_cmd(
    ctx: Context,
    paths: tuple[Path, ...],
    openie: Path | None,
    extractor: str | None,
    progress_every: float,
) -> None:
    """Index passages from .txt/.md, JSON, JSONL, PDF, DOCX and HTML files or directories (or an --openie
    file).

    A file's passages get stable ids (the path; records their own id, else path[n] or path:line), so a
    re-run skips what is stored, retries what failed, and replaces what was edited. Progress shows each
    stage with its counts; Ctrl-C says what was stored, and running the command again resumes.
    """
    if not paths and openie is None:
        raise click.UsageError("give PATHS to index, or --openie FILE")
    progress = Progress.for_stderr(ctx.quiet, progress_every)
    with exit_on_error(), terminate_as_interrupt() as signals:
        memory = _memory(ctx, {"extraction": {"method": extractor}} if extractor else None)
        try:
            if openie is not None:
                report = memory.index_openie(openie, progress=progress)
            if paths:
                report = memory.index_files(list(paths), progress=progress)
        except KeyboardInterrupt as exc:
            progress.finish()
            how = "SIGTERM" if signals else "Ctrl-C"
            message = progress.interrupted(exc, how)
            log = logging.getLogger("hipporag_neo4j.progress")
            if log.hasHandlers():  # a log is configured (--verbose): the message goes there, once
                log.warning(message)
            else:
                click.secho(message, fg="yellow", err=True)
            sys.exit(EXIT_TERMINATED if signals else EXIT_INTERRUPTED)
        finally:
            progress.finish()
            memory.close()
    emit(ctx, report.model_dump(mode="json"), lambda: _print_index_report(report))
    if report.failed:
        sys.exit(EXIT_PARTIAL)


_STRATEGY_HELP = (
    "single retrieval, or an LLM loop around the mode: ircot or clues (default: retrieval.strategy)."
)


def read_questions(arguments: tuple[str, ...], source: TextIO | None) -> list[str]:
    """The questions to ask: the arguments, then the lines of ``source`` (a file or standard input), one
    question a line; blank lines and surrounding spaces are left out."""
    questions = [q for q in arguments]
    if source is not None:
        questions.extend(line.strip() for line in source if line.strip())
    return questions


@main.command("query")
@click.argument("questions", nargs=-1)
@click.option(
    "--questions-file",
    "-f",
    "questions_file",
    type=click.File("r", encoding="utf-8"),
    help="Read questions from FILE, one a line ('-': standard input); with arguments, after them.",
)
@click.option("--mode", type=click.Choice(MODES), help="Retrieval mode (default: retrieval.mode).")
@click.option("--strategy", type=click.Choice(STRATEGIES), help=_STRATEGY_HELP)
@click.option("--top-k", type=click.IntRange(1, 1000), help="Passages to return.")
@click.option("--explain/--no-explain", default=True, help="Show the phrases behind each passage.")
@click.option(
    "--seed-node",
    "seed_nodes",
    multiple=True,
    help="A node of your linked graph to start from (repeatable; QUESTION may then be empty).",
)
@click.option(
    "--joined/--no-joined",
    default=None,
    help="PPR over the graph joined with your linked graph (default: retrieval.joined_graph).",
)
@click.option(
    "--via",
    "rel_types",
    multiple=True,
    help="A relationship type of your graph the joined walk follows (repeatable; implies --joined).",
)
@click.pass_obj
def query_cmd(
    ctx: Context,
    questions: tuple[str, ...],
    questions_file: TextIO | None,
    mode: RetrievalMode | None,
    strategy: RetrievalStrategy | None,
    top_k: int | None,
    explain: bool,
    seed_nodes: tuple[str, ...],
    joined: bool | None,
    rel_types: tuple[str, ...],
) -> None:
    """Retrieve the passages that answer each QUESTION, with the graph path behind each.

    Several questions (arguments, or --questions-file FILE one a line, '-' for standard input) are
    answered in one process: the models load once. With --json, one question prints one JSON object;
    several print JSON lines, one object a question, in their order.
    """
    asked = read_questions(questions, questions_file)
    if not asked:
        if questions_file is not None:
            raise click.UsageError(f"no question in {questions_file.name} (one question a line)")
        asked = [""]  # seed nodes alone, or the empty question's usage error from the API

    def ask(memory: HippoRAG, question: str) -> RetrievalResult:
        return memory.retrieve(
            question,
            mode=mode,
            top_k=top_k,
            strategy=strategy,
            seed_nodes=seed_nodes,
            joined=joined,
            via=list(rel_types) if rel_types else None,
        )

    if len(asked) == 1 and questions_file is None:
        result = _with_memory(ctx, lambda memory: ask(memory, asked[0]))
        emit(ctx, result.model_dump(mode="json"), lambda: print_retrieval(result, explain))
        return

    def ask_all(memory: HippoRAG) -> None:
        for number, question in enumerate(asked, start=1):
            result = ask(memory, question)
            if ctx.as_json:
                click.echo(json.dumps(result.model_dump(mode="json"), ensure_ascii=False, default=str))
                continue
            if number > 1:
                click.echo()
            click.secho(f"[{number}/{len(asked)}] {question}", bold=True)
            print_retrieval(result, explain)

    _with_memory(ctx, ask_all)


@main.command("answer")
@click.argument("question")
@click.option("--mode", type=click.Choice(MODES))
@click.option("--strategy", type=click.Choice(STRATEGIES), help=_STRATEGY_HELP)
@click.option("--top-k", type=click.IntRange(1, 1000))
@click.pass_obj
def answer_cmd(
    ctx: Context,
    question: str,
    mode: RetrievalMode | None,
    strategy: RetrievalStrategy | None,
    top_k: int | None,
) -> None:
    """Retrieve, then answer QUESTION with the reader LLM (needs an LLM configured)."""
    answer = _with_memory(
        ctx, lambda memory: memory.answer(question, mode=mode, top_k=top_k, strategy=strategy)
    )

    def human() -> None:
        click.secho(answer.answer, bold=True)
        click.echo("from:")
        for item in answer.retrieval.passages:
            click.echo(f"  {item.rank}. {item.passage.title or item.passage.id}")

    emit(ctx, answer.model_dump(mode="json"), human)


@main.command("delete")
@click.argument("passage_ids", nargs=-1, required=True)
@click.pass_obj
def delete_cmd(ctx: Context, passage_ids: tuple[str, ...]) -> None:
    """Delete passages and everything only they supported.

    PASSAGE_IDS are passage ids, ids of chunked passages (all their chunks go), paths of indexed files
    (every passage read from the file) or folders (every passage read from a file under them).
    """
    report = _with_memory(ctx, lambda memory: memory.delete(list(passage_ids)))
    payload = report.__dict__

    def human() -> None:
        click.echo(
            f"deleted {plural(len(report.passages), 'passage')} ({len(report.missing)} not found); removed "
            f"{plural(report.phrases_removed, 'phrase')}, {plural(report.facts_removed, 'fact')}, "
            f"{plural(report.synonym_edges_removed, 'synonym edge')}"
        )
        if report.missing:
            click.secho(f"  not found: {', '.join(report.missing)}", fg="yellow")

    emit(ctx, payload, human)
    if report.missing:
        sys.exit(EXIT_PARTIAL)


@main.command("drop")
@click.option("--yes", is_flag=True, help="Really delete: without it, only show what would be deleted.")
@click.pass_obj
def drop_cmd(ctx: Context, yes: bool) -> None:
    """Delete the whole knowledge base (the store, or the Neo4j namespace).

    Every passage, phrase, fact and edge goes, with the metadata, links to your own nodes (your nodes
    stay), GDS projections and the vector indexes no other namespace uses. Other namespaces are untouched.
    Without --yes it shows what it would delete and exits with 3.
    """
    if not yes:
        stats = _with_memory(ctx, lambda memory: memory.stats())
        payload = {"dropped": False, "would_remove": stats.model_dump(mode="json")}

        def preview() -> None:
            click.echo(
                f"would delete {stats.location}: {plural(stats.passages, 'passage')}, "
                f"{plural(stats.phrases, 'phrase')}, {plural(stats.facts, 'fact')}; run again with --yes to "
                "delete"
            )

        emit(ctx, payload, preview)
        sys.exit(EXIT_PARTIAL)
    report = _with_memory(ctx, lambda memory: memory.drop())
    removed = report.removed
    payload = {
        "dropped": removed is not None,
        "removed": removed.model_dump(mode="json") if removed else None,
        "projections_dropped": report.projections_dropped,
        "vector_index_dims_dropped": report.vector_index_dims_dropped,
    }

    def human() -> None:
        if removed is None:
            click.echo("nothing to drop")
            return
        click.echo(
            f"dropped {removed.location}: {plural(removed.passages, 'passage')}, "
            f"{plural(removed.phrases, 'phrase')}, {plural(removed.facts, 'fact')}"
        )
        if report.projections_dropped:
            click.echo(f"  GDS projections dropped: {', '.join(report.projections_dropped)}")
        if report.vector_index_dims_dropped:
            dims = ", ".join(str(d) for d in report.vector_index_dims_dropped)
            click.echo(f"  vector indexes dropped (dimension no other namespace uses): {dims}")

    emit(ctx, payload, human)


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders digits as numbers: ``doc#2`` before ``doc#10``, ``note9.txt`` before
    ``note10.txt``."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part)


@main.command("list")
@click.option("--limit", type=click.IntRange(1), help="Show at most this many passages.")
@click.pass_obj
def list_cmd(ctx: Context, limit: int | None) -> None:
    """List stored passages: id, title, source file, its format and encoding, and for chunks the passage
    they were cut from; ids in natural order (``#2`` before ``#10``)."""
    passages = _with_memory(ctx, lambda memory: memory.list_passages(limit=limit))
    passages.sort(key=lambda info: natural_key(info.id))

    def human() -> None:
        header = ("id", "title", "source", "format", "encoding", "chunk")
        rows = [
            (
                info.id,
                info.title or "-",
                info.source or "-",
                info.format or "-",
                info.encoding or "-",
                f"{info.chunk} of {info.parent_id}" if info.parent_id is not None else "-",
            )
            for info in passages
        ]
        click.echo("\t".join(header))
        for row in rows:
            click.echo("\t".join(row))
        click.echo(plural(len(passages), "passage"), err=True)

    emit(ctx, [p.model_dump(mode="json") for p in passages], human)


@main.command("stats")
@click.pass_obj
def stats_cmd(ctx: Context) -> None:
    """Counts of passages, phrases, facts and edges in the store."""
    stats = _with_memory(ctx, lambda memory: memory.stats())

    def human() -> None:
        rows = stats.model_dump()
        rows.update(rows.pop("extra") or {})  # backend-specific counts, one line each like the others
        width = max(map(len, rows))
        for key, value in rows.items():
            click.echo(f"{key:>{width}}: {value}")

    emit(ctx, stats.model_dump(mode="json"), human)


@main.command("reembed")
@click.pass_obj
def reembed_cmd(ctx: Context) -> None:
    """Re-encode every passage, phrase and fact with the configured embedding model."""

    def reembed(memory: HippoRAG) -> tuple[dict[str, int], str]:
        counts = memory.reembed(lambda kind, n: click.echo(f"  {kind}: {n}", err=True))
        return counts, memory.embedder.model_name

    counts, model = _with_memory(ctx, reembed)
    done = ", ".join(plural(n, kind) for kind, n in counts.items())
    emit(ctx, counts, lambda: click.echo(f"re-embedded {done} with {model}"))


@main.command("doctor")
@click.pass_obj
def doctor_cmd(ctx: Context) -> None:
    """What is configured and reachable: store, Neo4j/GDS, models, LLM."""
    from hipporag_neo4j.diagnostics.doctor import print_doctor, run_doctor

    with exit_on_error():
        report = run_doctor(ctx.settings())
    emit(ctx, report, lambda: print_doctor(report))
    if any(check.get("status") == "error" for check in report["checks"]):
        sys.exit(EXIT_ERROR)


@main.command("demo")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), help="Keep the demo store here.")
@click.option(
    "--link",
    is_flag=True,
    help="The linking demo instead: a bundled graph of accounts linked to the corpus, one question "
    "retrieved without and with the joined graph (always on the embedded store).",
)
@click.pass_obj
def demo_cmd(ctx: Context, keep: Path | None, link: bool) -> None:
    """Index the bundled demo corpus (recorded extraction, no LLM); compare HippoRAG with dense retrieval."""
    from hipporag_neo4j.demo.link import run_link_demo
    from hipporag_neo4j.demo.run import run_demo

    run = run_link_demo if link else run_demo
    with exit_on_error():
        outcome = run(ctx.settings(), keep=keep, echo=None if ctx.as_json else click.echo)
    if ctx.as_json:
        click.echo(json.dumps(outcome, indent=2, ensure_ascii=False, default=str))


main.add_command(eval_cmd)
main.add_command(aura_cmd)
main.add_command(serve_cmd)
main.add_command(mcp_cmd)
main.add_command(link_cmd)
main.add_command(unlink_cmd)
main.add_command(about_cmd)


if __name__ == "__main__":
    main()
