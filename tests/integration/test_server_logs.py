"""The servers as a user starts and stops them: each says where it listens, and a normal shutdown (Ctrl-C
with no job running) logs no WARNING. The CLI in its own process, on an empty embedded store."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.server_support import free_port

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def run_until(args: list[str], ready: str, cwd: Path, port: int) -> str:
    """Start the CLI, wait for ``ready`` on its stderr, check ``port`` accepts a connection at once, Ctrl-C
    it, check it exited 0; everything it printed on stderr."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hipporag_neo4j", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
            seen.append(line)
            if ready in line:
                break
        assert any(ready in line for line in seen), "".join(seen)
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # it said where it listens only once it does
        proc.send_signal(signal.SIGINT)
        seen.append(proc.communicate(timeout=120)[1])
        assert proc.returncode == 0, f"exit code {proc.returncode} after Ctrl-C:\n{''.join(seen)}"
    finally:
        if proc.poll() is None:
            proc.kill()
    return "".join(seen)


def test_rest_server_says_where_and_stops_without_a_warning(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    port = free_port()
    log = run_until(
        ["--store", "kb", "serve", "--create", "--no-auth", "--port", str(port)],
        f"running on http://127.0.0.1:{port}",
        tmp_path,
        port,
    )
    assert "Application shutdown complete" in log and "WARNING" not in log, log


def test_mcp_http_server_says_where_and_stops_without_a_warning(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    port = free_port()
    mcp = ["mcp", "--transport", "streamable-http", "--create", "--no-auth", "--port", str(port)]
    log = run_until(
        ["--store", "kb", *mcp],
        f"MCP server (streamable HTTP) on http://127.0.0.1:{port}/mcp for kb",
        tmp_path,
        port,
    )
    assert "WARNING" not in log and "Traceback" not in log, log
