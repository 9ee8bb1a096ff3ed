"""API-key authentication, shared by the REST API, the explorer's data calls and the MCP server's HTTP
transport.

Keys come from settings, never from the command line:

* ``server.api_key`` (``HIPPORAG_SERVER__API_KEY``): one key that opens every namespace (as before
  keys had scopes);
* ``server.api_keys`` (``HIPPORAG_SERVER__API_KEYS``, a JSON object) and ``server.api_keys_file`` (a TOML
  file): keys scoped to namespaces, ``{"<key>": ["<namespace>", ...]}``, ``"*"`` meaning every one.

Clients send a key as ``Authorization: Bearer <key>`` or ``X-API-Key: <key>``. A request without a known
key gets 401; a known key that does not open the namespace the server serves gets 403 naming that
namespace and nothing else. Keys are compared in constant time (SHA-256 digests, every key compared on
every request) and never logged or put in a message: a bad entry is named by its position. Serving
without a key needs ``server.no_auth`` and a loopback host.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.settings import SAFE_NAME, ServerSettings

UNAUTHORIZED = "missing or wrong API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'"
EVERY_NAMESPACE = "*"


def forbidden_message(namespace: str) -> str:
    """The 403 body: names the namespace the request was for, nothing about what it holds."""
    return f"this API key is not allowed on namespace {namespace!r}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class KeyScope:
    """The namespaces a key opens (``everything``: all of them, as the unscoped key and no-auth)."""

    namespaces: frozenset[str] = frozenset()
    everything: bool = False

    def allows(self, namespace: str) -> bool:
        return self.everything or namespace in self.namespaces

    def visible(self, names: Iterable[str]) -> list[str]:
        """The names among ``names`` this key may see (a listing must not reveal the others)."""
        return [name for name in names if self.allows(name)]


EVERYTHING = KeyScope(everything=True)


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def _scope_of(where: str, namespaces: Any) -> KeyScope:
    if not isinstance(namespaces, list) or not namespaces or not all(isinstance(n, str) for n in namespaces):
        raise ConfigError(f"{where}: the namespaces must be a non-empty list of names")
    if EVERY_NAMESPACE in namespaces:
        return EVERYTHING
    bad = [n for n in namespaces if not SAFE_NAME.match(n)]
    if bad:
        raise ConfigError(
            f"{where}: {bad[0]!r} is not a namespace name (a letter, then letters, digits, underscores), "
            f"nor '{EVERY_NAMESPACE}' for every namespace"
        )
    return KeyScope(frozenset(namespaces))


def parse_scoped_keys(
    entries: Mapping[str, Any] | list[tuple[str, Any]], source: str
) -> dict[bytes, KeyScope]:
    """``{key: [namespace, ...]}`` as digests -> scopes. Errors name the entry by position (1-based),
    never by its key."""
    pairs = list(entries.items()) if isinstance(entries, Mapping) else list(entries)
    scopes: dict[bytes, KeyScope] = {}
    for position, (key, namespaces) in enumerate(pairs, 1):
        where = f"{source}, entry {position}"
        if not isinstance(key, str) or not key.strip() or key != key.strip() or any(c.isspace() for c in key):
            raise ConfigError(f"{where}: a key must be a non-empty string without spaces")
        digest = _digest(key)
        if digest in scopes:
            raise ConfigError(f"{where}: the same key is listed twice")
        scopes[digest] = _scope_of(where, namespaces)
    return scopes


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as its list of pairs (json's ``object_pairs_hook``): a repeated key stays visible
    (an error, not a silent merge), and an object is told apart from an array."""


def load_scoped_keys(settings: ServerSettings) -> dict[bytes, KeyScope]:
    """The keys of ``server.api_keys`` and ``server.api_keys_file`` (ConfigError naming what is wrong)."""
    scopes: dict[bytes, KeyScope] = {}
    if settings.api_keys is not None and settings.api_keys.get_secret_value().strip():
        source = "HIPPORAG_SERVER__API_KEYS"
        try:
            pairs = json.loads(settings.api_keys.get_secret_value(), object_pairs_hook=_Pairs)
        except json.JSONDecodeError as exc:  # the message quotes no input, only a position
            raise ConfigError(
                f"{source} is not JSON (line {exc.lineno}, column {exc.colno}): "
                'write {"<key>": ["<namespace>"]}'
            ) from None
        if not isinstance(pairs, _Pairs):
            raise ConfigError(f'{source} must be a JSON object: {{"<key>": ["<namespace>", ...]}}')
        scopes.update(parse_scoped_keys(pairs, source))
    if settings.api_keys_file is not None:
        scopes = _merge(scopes, _read_keys_file(settings.api_keys_file))
    return scopes


def _read_keys_file(path: Path) -> dict[bytes, KeyScope]:
    source = f"the API keys file {path}"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {source}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:  # its message names a line and column, not the content
        raise ConfigError(
            f'{source} is not TOML ({exc}): write one line per key, "<key>" = ["<namespace>"]'
        ) from None
    return parse_scoped_keys(data, source)


def _merge(first: dict[bytes, KeyScope], second: dict[bytes, KeyScope]) -> dict[bytes, KeyScope]:
    if set(first) & set(second):
        raise ConfigError("a key is in both HIPPORAG_SERVER__API_KEYS and the API keys file: list it once")
    return {**first, **second}


class ApiKeyAuth:
    """Checks a presented key against the configured ones; with no key configured everything passes."""

    def __init__(self, settings: ServerSettings) -> None:
        key = settings.api_key.get_secret_value() if settings.api_key is not None else ""
        scoped = load_scoped_keys(settings)
        if (key or scoped) and settings.no_auth:
            raise ConfigError(
                "an API key (server.api_key or api_keys) and server.no_auth are both set: choose one"
            )
        if not key and not scoped and not settings.no_auth:
            raise ConfigError(
                "no API key: set HIPPORAG_SERVER__API_KEY (clients send it as 'Authorization: Bearer "
                "<key>'), or keys scoped to namespaces (HIPPORAG_SERVER__API_KEYS, "
                "HIPPORAG_SERVER__API_KEYS_FILE), or serve without one on localhost with --no-auth "
                "(HIPPORAG_SERVER__NO_AUTH=true)"
            )
        if not key and not scoped and not is_loopback(settings.host):
            raise ConfigError(
                f"--no-auth is only allowed on a loopback host, and {settings.host!r} is reachable from "
                "other machines: set HIPPORAG_SERVER__API_KEY"
            )
        if key:
            if _digest(key) in scoped:
                raise ConfigError("server.api_key is also listed among the scoped keys: list it once")
            scoped[_digest(key)] = EVERYTHING
        self._keys = list(scoped.items())

    @property
    def required(self) -> bool:
        return bool(self._keys)

    def scope(self, presented: str | None) -> KeyScope | None:
        """What the presented key opens; None when it is missing or unknown. Every configured key is
        compared (in constant time), whichever matches."""
        if not self._keys:
            return EVERYTHING
        if presented is None:
            return None
        digest = _digest(presented)
        found: KeyScope | None = None
        for known, scope in self._keys:
            if hmac.compare_digest(digest, known):
                found = scope
        return found

    def accepts(self, presented: str | None, namespace: str) -> bool:
        scope = self.scope(presented)
        return scope is not None and scope.allows(namespace)

    @staticmethod
    def presented(authorization: str | None, x_api_key: str | None) -> str | None:
        """The key in the request: the Bearer token, else the X-API-Key header."""
        if authorization:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
        return x_api_key


class ApiKeyMiddleware:
    """ASGI middleware for the MCP HTTP app: 401 without a known key, 403 when the key does not open
    ``namespace`` (the one the server serves)."""

    def __init__(self, app: ASGIApp, auth: ApiKeyAuth, namespace: str) -> None:
        self.app = app
        self.auth = auth
        self.namespace = namespace

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            presented = self.auth.presented(headers.get("authorization"), headers.get("x-api-key"))
            found = self.auth.scope(presented)
            if found is None or not found.allows(self.namespace):
                status, detail = (
                    (401, UNAUTHORIZED) if found is None else (403, forbidden_message(self.namespace))
                )
                body = json.dumps({"detail": detail}).encode()
                extra = [(b"www-authenticate", b"Bearer")] if status == 401 else []
                await send(
                    {
                        "type": "http.response.start",
                        "status": status,
                        "headers": [
                            (b"content-type", b"application/json"),
                            *extra,
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
