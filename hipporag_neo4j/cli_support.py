"""What every command module shares: the global options' context, error handling, JSON output.

The top-level group (:mod:`hipporag_neo4j.cli`) and the subcommands defined elsewhere
(:mod:`hipporag_neo4j.evaluation.cli`, :mod:`hipporag_neo4j.server.cli`, ...) import this module, never
each other, so there is no import cycle between the CLI and its subcommands.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from hipporag_neo4j.errors import HippoRAGError
from hipporag_neo4j.settings import Settings, load_settings

EXIT_ERROR, EXIT_PARTIAL = 1, 3


class Context:
    """The global options (``--store``, ``--neo4j-uri``, ``--json``...) passed to every command."""

    def __init__(self, overrides: dict[str, Any], env_file: str | None, as_json: bool) -> None:
        self.overrides = overrides
        self.env_file = env_file
        self.as_json = as_json

    def settings(self, extra: dict[str, Any] | None = None) -> Settings:
        merged = {k: dict(v) for k, v in self.overrides.items()}
        for group, values in (extra or {}).items():
            merged.setdefault(group, {}).update(values)
        return load_settings(merged, env_file=self.env_file or ".env")


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
