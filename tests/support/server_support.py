"""Start a server as its own process on 127.0.0.1 and talk to it with httpx, as a client would."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
HARNESS = REPO / "tests" / "support" / "server_harness.py"
STARTUP_TIMEOUT = 180.0  # a guard against hanging, not an expectation


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_file(path: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


class ServerProcess:
    """A server subprocess; its stderr is collected line by line (uvicorn and the service log there)."""

    def __init__(
        self, args: Sequence[str], env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> None:
        self.port = free_port()
        full_env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        }
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, *[a.replace("{port}", str(self.port)) for a in args]],
            env=full_env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.url = f"http://127.0.0.1:{self.port}"

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()

    @property
    def log(self) -> str:
        with self._cond:
            return "\n".join(self.lines)

    def wait_for_log(self, text: str, timeout: float = 120.0) -> None:
        with self._cond:
            ok = self._cond.wait_for(lambda: any(text in line for line in self.lines), timeout)
        assert ok, f"server never logged {text!r}:\n{self.log}"

    def wait_until_up(self, path: str = "/health", status: int = 200) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            assert self.proc.poll() is None, f"server exited with {self.proc.returncode}:\n{self.log}"
            try:
                if httpx.get(f"{self.url}{path}", timeout=2).status_code == status:
                    return
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"server did not come up:\n{self.log}"
            time.sleep(0.1)

    def terminate(self) -> bool:
        """SIGTERM (what a process manager sends), wait for the exit; True when the shutdown was graceful.

        uvicorn re-raises the signal after its shutdown, so the exit code is -SIGTERM either way; its
        "Application shutdown complete." line says the app's shutdown (the service's close) ran to the end.
        """
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=STARTUP_TIMEOUT)
        self._reader.join(timeout=10)
        return code in (0, -signal.SIGTERM) and "Application shutdown complete." in self.log

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


def harness(
    tmp_path: Path,
    table: dict[str, list[list[str]]],
    queries: dict[str, list[str]] | None = None,
    *,
    env: dict[str, str] | None = None,
    hold_extract: int | None = None,
    hold_synonyms: int | None = None,
) -> ServerProcess:
    """The real app with test components (see server_harness.py), store in ``tmp_path / 'kb'``."""
    (tmp_path / "table.json").write_text(json.dumps(table), encoding="utf-8")
    (tmp_path / "queries.json").write_text(json.dumps(queries or {}), encoding="utf-8")
    gates = tmp_path / "gates"
    gates.mkdir(exist_ok=True)
    args = [
        str(HARNESS),
        "--store", str(tmp_path / "kb"),
        "--port", "{port}",
        "--table", str(tmp_path / "table.json"),
        "--queries", str(tmp_path / "queries.json"),
        "--gate-dir", str(gates),
    ]  # fmt: skip
    if hold_extract is not None:
        args += ["--hold-extract", str(hold_extract)]
    if hold_synonyms is not None:
        args += ["--hold-synonyms", str(hold_synonyms)]
    # the hash embedder and table extraction are built for the single-step graph mode's expectations
    defaults = {"HIPPORAG_SERVER__API_KEY": "test-key", "HIPPORAG_RETRIEVAL__MODE": "hipporag"}
    server = ServerProcess(args, env={**defaults, **(env or {})}, cwd=tmp_path)
    try:
        server.wait_until_up()
    except BaseException:
        server.kill()
        raise
    return server


def chain_corpus(
    n: int, *, variants_from: int | None = None
) -> tuple[list[dict[str, str]], dict[str, list[list[str]]]]:
    """``n`` passages, passage i: "entity i" relates to "entity i+1". From ``variants_from`` on, passages
    name "entity j variant" (a near-duplicate of an earlier phrase), so indexing them adds synonym edges."""
    passages, table = [], {}
    for i in range(n):
        obj = (
            f"entity {i + 1}"
            if variants_from is None or i < variants_from
            else f"entity {i - variants_from} variant"
        )
        text = f"Passage {i}: entity {i} relates to {obj}."
        passages.append({"id": f"p{i:03d}", "text": text})
        table[text] = [[f"entity {i}", "relates to", obj]]
    return passages, table
