"""Shared test helpers."""

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

SHELL, PYTHON, NOT_RUN = {"bash", "sh", "shell"}, {"python", "py"}, {"text", "json", "cypher", "toml"}
ROOT = Path(__file__).resolve().parents[2]


README = ROOT / "README.md"


DOCS = sorted((ROOT / "docs").glob("*.md"))


DEMO = ROOT / "hipporag_neo4j" / "demo"


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
