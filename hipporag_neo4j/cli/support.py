"""What every command module shares: the global options' context, error handling, JSON output.

The top-level group (:mod:`hipporag_neo4j.cli.main`) and the subcommands defined elsewhere
(:mod:`hipporag_neo4j.cli.evaluate`, :mod:`hipporag_neo4j.cli.serve`, ...) import this module, never
each other, so there is no import cycle between the CLI and its subcommands.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from hipporag_neo4j.errors import HippoRAGError, StoreNotFoundError
from hipporag_neo4j.models import RetrievalResult
from hipporag_neo4j.settings import CONFIG_FILE, Settings, load_settings

EXIT_ERROR, EXIT_PARTIAL = 1, 3


class Context:
    """The global options (``--store``, ``--neo4j-uri``, ``--json``...) passed to every command."""

    def __init__(
        self,
        overrides: dict[str, Any],
        env_file: str | None,
        as_json: bool,
        config_file: str | None = None,
    ) -> None:
        self.overrides = overrides
        self.env_file = env_file
        self.as_json = as_json
        self.config_file = config_file
        self.quiet = False

    def settings(self, extra: dict[str, Any] | None = None) -> Settings:
        merged = {k: dict(v) for k, v in self.overrides.items()}
        for group, values in (extra or {}).items():
            merged.setdefault(group, {}).update(values)
        return load_settings(
            merged, env_file=self.env_file or ".env", config_file=self.config_file or CONFIG_FILE
        )


def plural(count: int, word: str) -> str:
    """``1 passage``, ``2 passages``, ``0 synonym edges``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def require_store(settings: Settings, *, create_hint: bool = False) -> None:
    """Exit-worthy :class:`StoreNotFoundError` when the configured store does not exist (reading commands
    and services started without ``--create``); creates nothing."""
    from hipporag_neo4j.api import create_store, store_missing

    store = create_store(settings)
    try:
        problem = store_missing(store, settings)
    finally:
        store.close()
    if problem is not None:
        hint = "; or pass --create to start with an empty store" if create_hint else ""
        raise StoreNotFoundError(problem + hint)


def emit(ctx: Context, payload: Any, human: Callable[[], None]) -> None:
    """Print ``payload`` as JSON under ``--json``, else call ``human`` to print it for people."""
    if ctx.as_json:
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    else:
        human()


@contextmanager
def exit_on_error() -> Iterator[None]:
    """Turn a :class:`HippoRAGError` into its message on stderr and exit code 1."""
    try:
        yield
    except HippoRAGError as exc:
        click.secho(f"error: {exc}", fg="red", err=True)
        sys.exit(EXIT_ERROR)


def _print_explanation(result: RetrievalResult) -> None:
    """How the result came about: facts and seeds, linked entities, seed nodes, clues and thoughts."""
    if result.mode == "hipporag2" and not result.query and result.seed_links:
        click.echo("facts: none (no question: seeded from your nodes)")
    elif result.mode == "hipporag2":
        kept = sorted((f for f in result.facts if f.kept), key=lambda f: -f.similarity)
        facts = "; ".join(f"({f.subject} | {f.predicate} | {f.object}) {f.similarity:.2f}" for f in kept)
        click.echo(
            f"facts (cosine to the question, -1 to 1): {facts or 'none kept (ranked by dense retrieval)'}"
        )
        if result.seeds:
            seeds = sorted(result.seeds, key=lambda x: -x.weight)
            click.echo(
                "seeds (walk start weight = its facts' score / passages naming it): "
                + ", ".join(f"{x.phrase} ({x.weight:.3g})" for x in seeds)
            )
    elif result.linked:
        linked = sorted(result.linked, key=lambda x: -x.similarity)
        links = ", ".join(f"{x.query_entity!r}→{x.phrase!r} ({x.similarity:.2f})" for x in linked)
        click.echo(f"linked (query entity → graph phrase, cosine): {links}")
    elif result.mode != "dense" and not result.seed_links:
        click.echo("linked: nothing (fell back to dense retrieval)")
    if result.seed_links:
        links = ", ".join(f"{x.query_entity}→{x.phrase!r} ({x.similarity:.2f})" for x in result.seed_links)
        click.echo(f"seed nodes: {links}")
    if result.joined is not None:
        click.echo("joined graph, through: " + (", ".join(result.joined) or "SAME_AS links only"))
    for label, lines in (("clues", result.clues), ("thoughts", result.thoughts)):
        if lines:
            click.echo(f"{label}: " + " | ".join(lines))


#: What the score in brackets is, by mode.
_SCORE_MEANING = {
    "hipporag2": "the passage's PageRank probability from the walk",
    "hipporag": "PageRank probability of its phrases x their mentions in it",
    "dense": "cosine of question and passage",
    "ensemble": "the walk's score, or walk and dense min-max scores averaged (see note)",
    "hybrid": "walk and dense min-max scores mixed (retrieval.hybrid_weight on the walk)",
}


def print_retrieval(result: RetrievalResult, explain: bool) -> None:
    """A query result for people (``query``, ``about``); ``explain=False``: the passages and any note."""
    if explain:
        _print_explanation(result)
        meaning = _SCORE_MEANING.get(result.mode)
        if meaning and result.passages:
            via = "; via: its phrases with the most PageRank probability" if result.mode != "dense" else ""
            click.echo(f"[score]: {meaning}{via}")
    if result.note:
        click.echo(f"note: {result.note}")
    for item in result.passages:
        title = f"{' '.join(item.passage.title.split())}: " if item.passage.title else ""
        flat = " ".join(item.passage.text.split())  # one line: raw newlines would break the indentation
        text = flat if len(flat) < 300 else flat[:297] + "..."
        click.secho(f"{item.rank}. [{item.score:.4f}] {item.passage.id}", bold=True)
        click.echo(f"   {title}{text}")
        if explain and item.explanation.top_phrases:
            phrases = ", ".join(f"{p.phrase} ({p.score:.3g})" for p in item.explanation.top_phrases)
            click.echo(f"   via: {phrases}")
        if item.linked_entities:
            nodes = ", ".join(f"{n.name or n.node_id} ({n.via_phrase})" for n in item.linked_entities)
            click.echo(f"   linked: {nodes}")
        if explain and item.explanation.clues:
            click.echo(
                "   found by clues: " + ", ".join(f"{c.clue!r} #{c.rank}" for c in item.explanation.clues)
            )
