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

Split by tier from the former tests/test_readme.py: this file holds the checks of the blocks' markers and
of the runner; the rest is in tests/e2e/test_readme.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import readme
from tests.support.readme import DOCS, NEEDS, NOT_RUN, PYTHON, README, ROOT, SHELL, _run_file, blocks


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


@pytest.mark.unit
def test_a_failing_command_fails_the_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("```bash\necho one\nfalse\necho never\n```\n", encoding="utf-8")
    monkeypatch.setattr(readme, "ROOT", tmp_path)  # where Block.where and _run_file read it
    with pytest.raises(AssertionError, match=r"doc.md:1 failed \(exit 1\)"):
        _run_file(doc, tmp_path / "work", monkeypatch, capsys)
