"""A long document as a user has one: indexed whatever its length (the chunk limit is a setting, off by
default), in chunks that all answer to the file's path, without a false tokenizer warning. The CLI in its
own process, as a user runs it (the warning goes to the real stderr); real embedder, spaCy, embedded
store on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def hipporag(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "hipporag_neo4j", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_a_text_of_more_than_the_old_200_chunks_is_indexed_without_warnings(tmp_path: Path) -> None:
    sentences = [f"Researcher {n} of the kelp project works in Lab {n % 97} in Porto." for n in range(4000)]
    (tmp_path / "book.txt").write_text(" ".join(sentences), encoding="utf-8")  # ~60 K tokens, one line

    done = hipporag("--json", "index", "book.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    chunks = report["chunked"]["book.txt"]
    assert len(chunks) > 200 and len(report["indexed"]) == len(chunks) and report["failed"] == []
    assert "Token indices sequence length" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr

    listing = json.loads(hipporag("--json", "list", cwd=tmp_path).stdout)
    assert [p["id"] for p in listing] == [f"book.txt#{n}" for n in range(len(chunks))]  # natural order

    again = json.loads(hipporag("--json", "index", "book.txt", cwd=tmp_path).stdout)
    assert again["indexed"] == [] and len(again["skipped"]) == len(chunks)  # a re-run adds nothing
