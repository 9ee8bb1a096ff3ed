"""A local OpenAI-compatible HTTP server replaying scripted responses, to test the real `openai` client.

``POST /v1/chat/completions`` (and ``/chat/completions``) answers each request with the next reply of the
first matching rule: a rule matches on substrings of the last user message (``match``) and of the system
message (``system``); rules without ``match``/``system`` take every request in sequence. Replies are recorded
exchanges from ``tests/data/llm/*.json`` (``{"status", "headers", "body"}``) or built in place; each may wait
(``delay``, e.g. past the client's timeout) before answering. A request no rule takes gets 418 and is listed
in ``unmatched``. Every request is recorded (``requests``), and the most requests in flight at once is kept
(``max_in_flight``).

Use the ``llm_server`` fixture (tests/conftest.py makes it every test's) and :func:`llm_settings`.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.settings import LLMSettings

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "llm"
MODEL = "gpt-3.5-turbo-1106"
MAX_BODY_BYTES = 10_000_000
MAX_DELAY_SECONDS = 30.0
_ids = itertools.count(1)


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status, headers, JSON body (or raw text), and a wait before sending it."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    @classmethod
    def recorded(cls, name: str, *, delay: float = 0.0) -> Reply:
        """The recorded exchange ``tests/data/llm/<name>.json``."""
        data = json.loads((DATA_DIR / f"{name}.json").read_text(encoding="utf-8"))
        return cls(status=data["status"], body=data["body"], headers=data.get("headers", {}), delay=delay)

    @classmethod
    def completion(
        cls,
        content: str | None,
        *,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        finish_reason: str = "stop",
        delay: float = 0.0,
    ) -> Reply:
        """A ``chat.completion`` body in the OpenAI wire format with ``content`` as the answer."""
        body = {
            "id": f"chatcmpl-replay{next(_ids):06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            "system_fingerprint": "fp_replay",
        }
        return cls(body=body, delay=delay)

    @classmethod
    def error(
        cls,
        status: int,
        message: str,
        *,
        error_type: str = "invalid_request_error",
        retry_after: str | None = None,
    ) -> Reply:
        """An OpenAI error body (``{"error": {...}}``) with ``status``, optionally with Retry-After."""
        headers = {"retry-after": retry_after} if retry_after is not None else {}
        body = {"error": {"message": message, "type": error_type, "param": None, "code": None}}
        return cls(status=status, body=body, headers=headers)


@dataclass
class Rule:
    replies: list[Reply]
    match: tuple[str, ...] = ()
    system: str | None = None
    repeat: bool = False
    served: int = 0

    def takes(self, last_user: str, system: str) -> bool:
        if self.served >= len(self.replies) and not (self.repeat and self.replies):
            return False
        if self.system is not None and self.system not in system:
            return False
        return all(m in last_user for m in self.match)

    def next_reply(self) -> Reply:
        reply = self.replies[min(self.served, len(self.replies) - 1)]
        self.served += 1
        return reply


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        if isinstance(self.body, dict) and isinstance(self.body.get("messages"), list):
            return list(self.body["messages"])
        return []

    @property
    def last_user(self) -> str:
        users = [m.get("content", "") for m in self.messages if m.get("role") == "user"]
        return str(users[-1]) if users else ""

    @property
    def system(self) -> str:
        systems = [m.get("content", "") for m in self.messages if m.get("role") == "system"]
        return str(systems[0]) if systems else ""


class ReplayServer:
    """The server; ``start()`` binds a free port on 127.0.0.1, ``stop()`` shuts it down."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._rules: list[Rule] = []
        self._in_flight = 0
        self.requests: list[RecordedRequest] = []
        self.unmatched: list[RecordedRequest] = []
        self.max_in_flight = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def script(
        self,
        *replies: Reply | str,
        match: str | Sequence[str] = (),
        system: str | None = None,
        repeat: bool = False,
    ) -> Rule:
        """Add a rule serving ``replies`` (Reply objects or recorded names) in order to matching requests.

        With ``repeat`` the last reply is served forever; otherwise the rule is spent after its replies.
        """
        rule = Rule(
            replies=[Reply.recorded(r) if isinstance(r, str) else r for r in replies],
            match=(match,) if isinstance(match, str) else tuple(match),
            system=system,
            repeat=repeat,
        )
        with self._lock:
            self._rules.append(rule)
        return rule

    def reset(self) -> None:
        with self._lock:
            self._rules.clear()
            self.requests.clear()
            self.unmatched.clear()
            self.max_in_flight = 0

    def requests_to(self, system: str) -> list[RecordedRequest]:
        """Recorded requests whose system message contains ``system``."""
        with self._lock:
            return [r for r in self.requests if system in r.system]

    # -- serving ------------------------------------------------------------------------------------------

    def _begin(self, request: RecordedRequest) -> Reply | None:
        with self._lock:
            self.requests.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            for rule in self._rules:
                if rule.takes(request.last_user, request.system):
                    return rule.next_reply()
            self.unmatched.append(request)
            return None

    def _end(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _wait(self, seconds: float) -> None:
        self._stopping.wait(min(seconds, MAX_DELAY_SECONDS))

    def start(self) -> ReplayServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                try:
                    raw = self._read_body()
                except ValueError as exc:
                    self._send(Reply.error(400, f"replay: {exc}"))
                    return
                try:
                    body: Any = json.loads(raw)
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                request = RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    with server._lock:
                        server.requests.append(request)
                    self._send(Reply.error(404, f"replay: no route {self.path}"))
                    return
                reply = server._begin(request)
                try:
                    if reply is None:
                        reply = Reply.error(
                            418, f"replay: no scripted response for {request.last_user[:80]!r}"
                        )
                    if reply.delay:
                        server._wait(reply.delay)
                finally:
                    # out of flight before the answer is written: a client that sends its next request
                    # as soon as it has read this answer must not find this one still counted (under
                    # load this thread could be descheduled between the write and the count)
                    server._end()
                self._send(reply)

            def _read_body(self) -> bytes:
                length = self.headers.get("Content-Length")
                if length is not None:
                    size = int(length)
                    if size > MAX_BODY_BYTES:
                        raise ValueError(f"body of {size} bytes is too large")
                    return self.rfile.read(size)
                if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
                    return b""
                chunks: list[bytes] = []
                total = 0
                while total <= MAX_BODY_BYTES:  # bounded by the body limit
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                    total += size
                raise ValueError("chunked body too large")

            def _send(self, reply: Reply) -> None:
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                data = payload.encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.send_header("x-request-id", f"req_replay{len(server.requests)}")
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to answer

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="llm-replay", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers waiting out a delay
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def llm_settings(server: ReplayServer, **overrides: Any) -> LLMSettings:
    """LLMSettings for ``server`` with tiny backoffs (tests run in seconds) and no cache unless given."""
    values: dict[str, Any] = {
        "base_url": server.base_url,
        "api_key": "sk-test-replay-0000",
        "model": MODEL,
        "timeout": 5.0,
        "max_retries": 3,
        "backoff_base": 0.001,
        "backoff_max": 0.01,
        "concurrency": 4,
        "cache_path": None,
    }
    values.update(overrides)
    return LLMSettings(**values)


@pytest.fixture
def llm_server() -> Iterator[ReplayServer]:
    server = ReplayServer().start()
    try:
        yield server
    finally:
        server.stop()
