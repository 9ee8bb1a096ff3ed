"""``hipporag-neo4j mcp``: the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any, Literal

import click

from hipporag_neo4j.cli.support import Context, exit_on_error, require_store
from hipporag_neo4j.errors import ConfigError, HippoRAGError
from hipporag_neo4j.service import KnowledgeService

log = logging.getLogger(__name__)
_WARM_UP_JOIN_S = 60.0  # how long a stop waits for the model still loading


@click.command("mcp")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "streamable-http"]),
    default="stdio",
    show_default=True,
    help="stdio: started by the MCP client; streamable-http: a server at http://HOST:PORT/mcp.",
)
@click.option("--host", help="streamable-http: interface (default: server.host, 127.0.0.1).")
@click.option("--port", type=click.IntRange(0, 65535), help="streamable-http: port (default: server.port).")
@click.option("--no-auth", is_flag=True, help="streamable-http: no API key (loopback host only).")
@click.option(
    "--create",
    is_flag=True,
    help="Start with an empty store when none exists yet, for a memory the client fills with `remember` "
    "(otherwise a missing store is refused).",
)
@click.pass_obj
def mcp_cmd(
    ctx: Context,
    transport: Literal["stdio", "streamable-http"],
    host: str | None,
    port: int | None,
    no_auth: bool,
    create: bool,
) -> None:
    """Serve the memory to MCP clients: tools remember, recall, forget, stats. Needs the [mcp] extra.

    Over streamable HTTP, clients send the API key (HIPPORAG_SERVER__API_KEY, or a key scoped to this
    namespace: HIPPORAG_SERVER__API_KEYS / _FILE) as a Bearer token; other namespaces' keys get 403.
    """
    from hipporag_neo4j.cli.serve import check_port, server_overrides

    with exit_on_error():
        settings = ctx.settings(server_overrides(host, port, no_auth))
        if not create:
            require_store(settings, create_hint=True)
        try:
            from hipporag_neo4j.mcp_server.tools import build_mcp_server
        except ImportError as exc:
            raise ConfigError(
                f"the MCP server needs the [mcp] extra ({exc}): pip install 'hipporag-neo4j[mcp]'"
            ) from exc
        if transport == "streamable-http":
            from hipporag_neo4j.server.auth import ApiKeyAuth

            auth = ApiKeyAuth(settings.server)  # refuses unsafe settings before anything loads
            check_port(settings.server.host, settings.server.port)
    logging.basicConfig(level=logging.WARNING)  # stderr: stdout is the protocol channel under stdio
    service = KnowledgeService(settings)
    warming = threading.Thread(target=_warm_up, args=(service,), daemon=True)
    warming.start()  # load while the client connects
    try:
        server = build_mcp_server(service)
        if transport == "stdio":
            server.run("stdio")
        else:
            import uvicorn

            from hipporag_neo4j.server.auth import ApiKeyMiddleware
            from hipporag_neo4j.server.limits import BodySizeLimit

            app = server.streamable_http_app(
                host=settings.server.host, max_request_body_size=settings.server.max_body_bytes
            )
            guarded = ApiKeyMiddleware(
                BodySizeLimit(app, settings.server.max_body_bytes), auth, settings.neo4j.namespace
            )
            # uvicorn logs warnings only (its access log would drown the tools' own): say where it listens,
            # once it does (a Ctrl-C before then would interrupt uvicorn while it builds its event loop)
            store = settings.embedded_store_path if settings.backend == "embedded" else settings.neo4j.uri
            ready = (
                f"MCP server (streamable HTTP) on http://{settings.server.host}:{settings.server.port}/mcp "
                f"for {store}; Ctrl-C to stop"
            )
            config = uvicorn.Config(
                guarded, host=settings.server.host, port=settings.server.port, log_level="warning"
            )
            _serve_announcing(config, ready)
    finally:
        # a Ctrl-C right after start: let the model finish loading, or the interpreter's exit aborts the
        # process under the native runtime's threads ("terminate called without an active exception")
        warming.join(timeout=_WARM_UP_JOIN_S)
        service.close()


def _serve_announcing(config: Any, ready: str) -> None:
    """Run uvicorn's server; print ``ready`` on stderr once its socket listens."""
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                click.echo(ready, err=True)

    # uvicorn re-raises the Ctrl-C it handled after a clean stop; swallow it as uvicorn.run does
    with contextlib.suppress(KeyboardInterrupt):
        Server(config).run()


def _warm_up(service: KnowledgeService) -> None:
    try:
        service.warm_up()
    except HippoRAGError as exc:
        log.error("%s", exc)  # every tool call reports it too
