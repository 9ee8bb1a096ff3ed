"""``hipporag-neo4j serve``: the REST API on uvicorn (one process: the model is loaded once)."""

from __future__ import annotations

import logging
from typing import Any

import click

from hipporag_neo4j.cli_support import Context, exit_on_error
from hipporag_neo4j.errors import ConfigError


def server_overrides(host: str | None, port: int | None, no_auth: bool) -> dict[str, Any]:
    values = {"host": host, "port": port, "no_auth": True if no_auth else None}
    return {"server": {k: v for k, v in values.items() if v is not None}}


@click.command("serve")
@click.option("--host", help="Interface to listen on (default: server.host, 127.0.0.1).")
@click.option("--port", type=click.IntRange(0, 65535), help="TCP port (default: server.port, 8000).")
@click.option(
    "--no-auth", is_flag=True, help="Serve without an API key (refused unless the host is loopback)."
)
@click.pass_obj
def serve_cmd(ctx: Context, host: str | None, port: int | None, no_auth: bool) -> None:
    """Serve the REST API (OpenAPI docs at /docs). Needs the [server] extra.

    The API key comes from HIPPORAG_SERVER__API_KEY (never from the command line, where other users
    could read it). One process, one writer: run one server per store.
    """
    with exit_on_error():
        settings = ctx.settings(server_overrides(host, port, no_auth))
        try:
            import uvicorn

            from hipporag_neo4j.server.app import create_app
        except ImportError as exc:
            raise ConfigError(
                f"the REST server needs the [server] extra ({exc}): pip install 'hipporag-neo4j[server]'"
            ) from exc
        app = create_app(settings)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")
    uvicorn.run(app, host=settings.server.host, port=settings.server.port, log_level="info")
