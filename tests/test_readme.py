"""Every shell command and Python snippet of README.md and docs/*.md runs as written.

Each file's blocks run in document order in one temporary folder holding what the README assumes a user
has (a `notes/` folder, a `passages.jsonl`, the demo's corpus, questions and OpenIE file), so state flows
from one block to the next as it does for a reader. Shell blocks run in bash with `set -euo pipefail`, with
`hipporag-neo4j` being this checkout's CLI on this interpreter; Python blocks are executed. A block that
needs what a test cannot have (a Neo4j server, an LLM, Docker, the network, a long-running server) carries
`<!-- needs: WHAT -->` on the line before it and is skipped with that reason; `needs: ci` blocks must be
what `.ci/run` itself runs, word for word, and the quick start's blocks (marked as run by tests/test_wheel.py)
run there, in a fresh venv with the wheel.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
DEMO = ROOT / "hipporag_neo4j" / "demo"

SHELL, PYTHON, NOT_RUN = {"bash", "sh", "shell"}, {"python", "py"}, {"text", "json", "cypher", "toml"}
NEEDS = {"ci", "neo4j", "llm", "docker", "server", "aura", "network", "wheel"}
BLOCK = re.compile(
    r"^(?:<!--\s*needs:\s*(?P<needs>[^>]*?)\s*-->\n)?```(?P<lang>[^\n`]*)\n(?P<body>.*?)^```\s*$", re.S | re.M
)


@dataclass
class Block:
    path: Path
    line: int
    lang: str
    body: str
    needs: str | None

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    return [
        Block(path, text.count("\n", 0, m.start("lang")) + 1, m["lang"].strip(), m["body"], m["needs"])
        for m in BLOCK.finditer(text)
    ]


@pytest.mark.unit
def test_every_block_says_what_it_is_and_what_it_needs() -> None:
    for path in [README, *DOCS]:
        text = path.read_text(encoding="utf-8")
        found = blocks(path)
        assert text.count("```") == 2 * len(found), f"{path.name}: a code fence the test does not read"
        for block in found:
            assert block.lang in SHELL | PYTHON | NOT_RUN, (
                f"{block.where}: code block without a known language"
            )
            if block.needs is not None:
                assert block.needs.split()[0] in NEEDS, f"{block.where}: unknown marker needs: {block.needs}"
                assert block.lang not in NOT_RUN, f"{block.where}: a marker on a block that never runs"


@pytest.mark.unit
def test_ci_blocks_are_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    marked = [b for p in [README, *DOCS] for b in blocks(p) if b.needs and b.needs.split()[0] == "ci"]
    assert marked, "README marks no block as run by .ci/run"
    for block in marked:
        for line in block.body.strip().splitlines():
            assert line.strip() in (c.strip() for c in ci), f"{block.where}: .ci/run does not run {line!r}"


def _workspace(tmp: Path) -> None:
    tmp.mkdir(exist_ok=True)
    notes = tmp / "notes"
    notes.mkdir()
    (notes / "thomas.txt").write_text("Thomas is a professor at Stanford.\n", encoding="utf-8")
    (notes / "alz.txt").write_text("Thomas researches Alzheimer's disease.\n", encoding="utf-8")
    (notes / "kim.txt").write_text("Kim grows tomatoes in Lisbon.\n", encoding="utf-8")
    record = {"id": "doc-42", "title": "Orbis", "text": "Orbis Shipyards builds ferries in Gdansk."}
    (tmp / "passages.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    shutil.copy(DEMO / "corpus.json", tmp / "corpus.json")
    shutil.copy(DEMO / "questions.json", tmp / "q.json")
    shutil.copy(DEMO / "openie_demo.json", tmp / "openie.json")
    bindir = tmp / ".bin"
    bindir.mkdir()
    cli = bindir / "hipporag-neo4j"  # this checkout's CLI on this interpreter, whatever is on PATH
    cli.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hipporag_neo4j "$@"\n', encoding="utf-8")
    cli.chmod(0o755)


def _clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPORAG_")}
    env["PATH"] = f"{tmp / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env |= {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return env


def _run_file(
    path: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    """Run the file's runnable blocks in order; return everything they printed."""
    runnable = [b for b in blocks(path) if b.needs is None and b.lang in SHELL | PYTHON]
    if not runnable:
        pytest.skip(f"{path.name} has no block that runs without a server, an LLM or the network")
    _workspace(tmp)
    env = _clean_env(tmp)
    for name in [k for k in os.environ if k.startswith("HIPPORAG_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp)
    printed = []
    for block in runnable:
        if block.lang in SHELL:
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block.body],
                cwd=tmp,
                env=env,
                capture_output=True,
                text=True,
                timeout=1200,
            )
            assert done.returncode == 0, (
                f"{block.where} failed (exit {done.returncode}):\n{block.body}\n"
                f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
            printed.append(done.stdout)
        else:
            exec(compile(block.body, block.where, "exec"), {"__name__": "__readme__"})
            printed.append(capsys.readouterr().out)
    return "\n".join(printed)


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


@pytest.mark.unit
def test_a_failing_command_fails_the_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("```bash\necho one\nfalse\necho never\n```\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    with pytest.raises(AssertionError, match=r"doc.md:1 failed \(exit 1\)"):
        _run_file(doc, tmp_path / "work", monkeypatch, capsys)
