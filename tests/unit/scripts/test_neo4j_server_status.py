"""``make neo4j-status`` on a stopped server (issue 37 item 6): ``scripts/neo4j_server.py status`` says
"not running" and why, and exits 0 (a make target that fails on an answer is an error to the user)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.unit

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "neo4j_server.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("neo4j_server_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_status_of_an_empty_home_says_not_running_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script()
    assert script.main(["status", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "not running: no server.json (never started here)" in out
    assert script.main(["status", "--home", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["running"] is False


def test_status_of_a_stopped_server_says_not_running_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script()
    state = script.State(
        pair="lts",
        neo4j="5.26.0",
        gds="2.13.2",
        apoc="5.26.0",
        browser="5.26.0",
        java_home="/nowhere",
        java_major=17,
        home=str(tmp_path),
        bolt_port=7687,
        http_port=7474,
        user="neo4j",
        password="secret",
        pid=None,  # what stop leaves
    )
    script.write_state(tmp_path, state)
    assert script.main(["status", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "pair: lts" in out and "not running: stopped" in out and "running: True" not in out
