"""Every shell command and Python snippet of README.md and docs/*.md runs as written.

Each file's blocks run in document order in one temporary folder holding what the README assumes a user
has (a `notes/` folder, a `passages.jsonl`, the demo's corpus, questions and OpenIE file), so state flows
from one block to the next as it does for a reader. Shell blocks run in bash with `set -euo pipefail`, with
`hipporag-neo4j` being this checkout's CLI on this interpreter; Python blocks are executed. A block that
needs what a test cannot have (a Neo4j server, an LLM, Docker, the network, a long-running server) carries
`<!-- needs: WHAT -->` on the line before it and is skipped with that reason; `needs: ci` blocks must be
what `.ci/run` itself runs, word for word, and the quick start's blocks (marked as run by
tests/e2e/test_wheel.py)
run there, in a fresh venv with the wheel.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.readme import DOCS, README, _run_file


@pytest.mark.integration
@pytest.mark.timeout(2400)
def test_readme_commands_and_python_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _run_file(README, tmp_path, monkeypatch, capsys)
    # your own documents: the folder's passages come back for the question, with why
    assert "notes/thomas.txt" in out and "notes/alz.txt" in out
    assert "via:" in out
    # the CLI block: the JSONL record and the OpenIE file were indexed, then doc-42 deleted
    assert "doc-42" in out
    # the Python API example
    assert "Thomas is a professor at Stanford." in out
    assert "passages=1" in out  # after delete(["t"])


@pytest.mark.integration
@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_docs_commands_and_python_run(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _run_file(path, tmp_path, monkeypatch, capsys)
    if path.name == "linking.md":
        # from the parent account, through SUBSIDIARY_OF, to the subsidiary's passage
        about = next(line for line in out.splitlines() if line.startswith("about a2:"))
        assert "('globex', ['a2'])" in about and "('acme', ['a1'])" in about, about
