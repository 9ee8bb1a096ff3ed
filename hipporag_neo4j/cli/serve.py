"""``hipporag-neo4j serve``: the REST API on uvicorn (one process: the model is loaded once)."""

from __future__ import annotations

import errno
import logging
import socket
from typing import Any

import click

from hipporag_neo4j.cli.support import Context, exit_on_error, require_store
from hipporag_neo4j.errors import ConfigError

CREATE_HELP = "Start with an empty store when none exists yet (otherwise a missing store is refused)."
#: The neo4j driver's logger for the notifications the server sends with results: an INFORMATION one is
#: logged at INFO, a WARNING one at WARNING (neo4j/_async/work/result.py, ``_handle_warnings``). At INFO a
#: Neo4j store's start logged nine such lines of about 1 kB (as many as the schema's constraint and range
#: index statements, whose ``IF NOT EXISTS`` an existing schema answers with an INFORMATION notice); the
#: server's log keeps WARNING and above of it.
DRIVER_NOTIFICATIONS = "neo4j.notifications"


def configure_logging() -> None:
    """The server's log at INFO (uvicorn's lines, the store's), the driver's notifications at WARNING."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")
    logging.getLogger(DRIVER_NOTIFICATIONS).setLevel(logging.WARNING)


def server_overrides(host: str | None, port: int | None, no_auth: bool) -> dict[str, Any]:
    values = {"host": host, "port": port, "no_auth": True if no_auth else None}
    return {"server": {k: v for k, v in values.items() if v is not None}}


def check_port(host: str, port: int) -> None:
    """ConfigError when ``host:port`` cannot be listened on (in use, not allowed), before any model loads.

    Binds as uvicorn does (SO_REUSEADDR), so a port only in TIME_WAIT is not reported as busy."""
    if port == 0:
        return
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: unknown host ({exc})") from exc
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            why = (
                "is in use (another server?)" if exc.errno == errno.EADDRINUSE else f"cannot be used ({exc})"
            )
            raise ConfigError(
                f"cannot listen on {host}:{port}: port {port} {why}; stop that server or choose another "
                "port with --port (HIPPORAG_SERVER__PORT)"
            ) from exc


@click.command("serve")
@click.option("--host", help="Interface to listen on (default: server.host, 127.0.0.1).")
@click.option("--port", type=click.IntRange(0, 65535), help="TCP port (default: server.port, 8000).")
@click.option(
    "--no-auth", is_flag=True, help="Serve without an API key (refused unless the host is loopback)."
)
@click.option("--create", is_flag=True, help=CREATE_HELP)
@click.pass_obj
def serve_cmd(ctx: Context, host: str | None, port: int | None, no_auth: bool, create: bool) -> None:
    """Serve the REST API (OpenAPI docs at /docs). Needs the [server] extra.

    The API key comes from HIPPORAG_SERVER__API_KEY, or keys scoped to namespaces from
    HIPPORAG_SERVER__API_KEYS / HIPPORAG_SERVER__API_KEYS_FILE (never from the command line, where other
    users could read it); the server serves one namespace and other namespaces' keys get 403. One
    process, one writer: run one server per store.
    """
    with exit_on_error():
        settings = ctx.settings(server_overrides(host, port, no_auth))
        if not create:
            require_store(settings, create_hint=True)
        check_port(settings.server.host, settings.server.port)
        try:
            import uvicorn

            from hipporag_neo4j.server.app import create_app
        except ImportError as exc:
            raise ConfigError(
                f"the REST server needs the [server] extra ({exc}): pip install 'hipporag-neo4j[server]'"
            ) from exc
        app = create_app(settings)
    configure_logging()
    uvicorn.run(app, host=settings.server.host, port=settings.server.port, log_level="info")
