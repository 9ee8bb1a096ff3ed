"""``hipporag-neo4j aura sessions list|delete``: the Aura Graph Analytics sessions that
``neo4j.ppr_engine=aura`` starts, which are billed while they run.

A thin layer over :meth:`Neo4jStore.aura_sessions` and :meth:`Neo4jStore.delete_aura_session`: it needs
the ``[aura]`` extra and Aura API credentials (``HIPPORAG_NEO4J__AURA__CLIENT_ID``/``_CLIENT_SECRET``),
not a database connection.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NoReturn

import click

from hipporag_neo4j.errors import HippoRAGError

if TYPE_CHECKING:
    from hipporag_neo4j.cli.support import Context
    from hipporag_neo4j.stores.neo4j import Neo4jStore

EXIT_ERROR = 1
#: The prefix of every session this package starts (:func:`~hipporag_neo4j.stores.neo4j.aura.session_name`).
OURS = "hipporag-"


def _store(ctx: Context) -> Neo4jStore:
    from hipporag_neo4j.stores.neo4j import Neo4jStore

    return Neo4jStore(ctx.settings().neo4j)  # no I/O: only the session manager is used


def _fail(message: str) -> NoReturn:
    click.secho(f"error: {message}", fg="red", err=True)
    sys.exit(EXIT_ERROR)


@contextmanager
def _errors() -> Iterator[None]:
    """Settings, a missing extra or credentials, Aura API failures: exit 1 with the message."""
    try:
        yield
    except HippoRAGError as exc:
        _fail(str(exc))


@click.group("aura")
def aura_cmd() -> None:
    """Aura Graph Analytics (neo4j.ppr_engine=aura): needs the [aura] extra and Aura API credentials."""


@aura_cmd.group("sessions")
def sessions_cmd() -> None:
    """The GDS sessions of the Aura project: billed while they run, deleted after their TTL idle."""


@sessions_cmd.command("list")
@click.pass_obj
def list_cmd(ctx: Context) -> None:
    """Every GDS session the Aura API credentials can see; `*` marks this database and namespace's."""
    with _errors():
        store = _store(ctx)
        mine = store.aura_session_name()
        sessions = store.aura_sessions().list()
    rows = [{**dataclasses.asdict(s), "this_namespace": s.name == mine} for s in sessions]
    if ctx.as_json:
        click.echo(json.dumps({"this_namespace": mine, "sessions": rows}, indent=2))
        return
    if not rows:
        click.echo(f"no GDS sessions (this namespace's would be {mine})")
        return
    for s in sessions:
        mark = "*" if s.name == mine else " "
        ttl = f", ttl {s.ttl}" if s.ttl else ""
        click.echo(f"{mark} {s.name}  {s.memory}  {s.status}  expires {s.expiry or '-'}{ttl}")


@sessions_cmd.command("delete")
@click.argument("name", required=False)
@click.option("--force", is_flag=True, help=f"Also delete a session whose name lacks the {OURS!r} prefix.")
@click.pass_obj
def delete_cmd(ctx: Context, name: str | None, force: bool) -> None:
    """Delete the GDS session NAME now (default: this database and namespace's session).

    Otherwise a session is deleted by Aura once it has been idle for its TTL
    (neo4j.aura.session_ttl_minutes). The next query with neo4j.ppr_engine=aura starts a new one.
    """
    with _errors():
        store = _store(ctx)
        target = name or store.aura_session_name()
        if not target.startswith(OURS) and not force:
            _fail(f"{target!r} was not started by hipporag-neo4j (no {OURS!r} prefix): --force deletes it")
        deleted = store.delete_aura_session(target)
    if ctx.as_json:
        click.echo(json.dumps({"session": target, "deleted": deleted}, indent=2))
    elif deleted:
        click.echo(f"deleted GDS session {target}")
    if not deleted:
        _fail(f"no GDS session named {target!r} (expired or never started; see `aura sessions list`)")
