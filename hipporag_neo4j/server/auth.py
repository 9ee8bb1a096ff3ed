"""API-key authentication, shared by the REST API and the MCP server's HTTP transport.

The key comes from settings (``HIPPORAG_SERVER__API_KEY``, a ``SecretStr``); clients send it as
``Authorization: Bearer <key>`` or ``X-API-Key: <key>``. It is compared in constant time. Serving
without a key needs ``server.no_auth`` and a loopback host.
"""

from __future__ import annotations

import hmac
import ipaddress
import json

from starlette.types import ASGIApp, Receive, Scope, Send

from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.settings import ServerSettings

UNAUTHORIZED = "missing or wrong API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ApiKeyAuth:
    """Checks a presented key against the configured one; with no key configured everything passes."""

    def __init__(self, settings: ServerSettings) -> None:
        key = settings.api_key.get_secret_value() if settings.api_key is not None else ""
        if key and settings.no_auth:
            raise ConfigError("server.api_key and server.no_auth are both set: choose one")
        if not key and not settings.no_auth:
            raise ConfigError(
                "no API key: set HIPPORAG_SERVER__API_KEY (clients send it as 'Authorization: Bearer "
                "<key>'), or serve without one on localhost with --no-auth (HIPPORAG_SERVER__NO_AUTH=true)"
            )
        if not key and not is_loopback(settings.host):
            raise ConfigError(
                f"--no-auth is only allowed on a loopback host, and {settings.host!r} is reachable from "
                "other machines: set HIPPORAG_SERVER__API_KEY"
            )
        self._key = key.encode() if key else None

    @property
    def required(self) -> bool:
        return self._key is not None

    def accepts(self, presented: str | None) -> bool:
        if self._key is None:
            return True
        if presented is None:
            return False
        return hmac.compare_digest(presented.encode(), self._key)

    @staticmethod
    def presented(authorization: str | None, x_api_key: str | None) -> str | None:
        """The key in the request: the Bearer token, else the X-API-Key header."""
        if authorization:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
        return x_api_key


class ApiKeyMiddleware:
    """ASGI middleware answering 401 to HTTP requests without the key (used for the MCP HTTP app)."""

    def __init__(self, app: ASGIApp, auth: ApiKeyAuth) -> None:
        self.app = app
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            presented = self.auth.presented(headers.get("authorization"), headers.get("x-api-key"))
            if not self.auth.accepts(presented):
                body = json.dumps({"detail": UNAUTHORIZED}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
