"""The local llama.cpp server helper: what it runs, and the clear errors when it cannot run."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipporag_neo4j.llm import local_server
from hipporag_neo4j.llm.local_server import LocalLLMServer, LocalServerError, default_model_path

pytestmark = pytest.mark.unit


def test_default_model_path_follows_the_cache_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(local_server.CACHE_ENV, str(tmp_path))
    assert default_model_path() == tmp_path / local_server.MODEL_FILE


def test_command_binds_loopback_with_two_threads(tmp_path: Path) -> None:
    server = LocalLLMServer(tmp_path / local_server.MODEL_FILE)
    command = server.command(8123)
    assert command[1:3] == ["-m", "llama_cpp.server"]
    options = dict(zip(command[3::2], command[4::2], strict=True))
    assert options["--host"] == "127.0.0.1" and options["--port"] == "8123"
    assert options["--n_threads"] == options["--n_threads_batch"] == "2"
    assert options["--model_alias"] == "qwen2.5-coder-1.5b-instruct"


def test_a_missing_model_names_the_setup_script(tmp_path: Path) -> None:
    server = LocalLLMServer(tmp_path / "absent.gguf")
    with pytest.raises(LocalServerError, match=r"no model at .*absent\.gguf: run scripts/setup_local_llm"):
        server.start()
    with pytest.raises(LocalServerError, match="not started"):
        _ = server.base_url


@pytest.mark.skipif(not local_server.server_installed(), reason="llama-cpp-python[server] is not installed")
def test_a_server_that_cannot_load_the_model_is_reported(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)
    server = LocalLLMServer(broken, log_path=tmp_path / "server.log", startup_timeout=120)
    with pytest.raises(LocalServerError, match="exited with code"):
        server.start()
    assert (tmp_path / "server.log").is_file()
