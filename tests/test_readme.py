"""The README's Python example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "README has no Python example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})  # runs in the test's temporary directory
    out = capsys.readouterr().out
    assert "Thomas is a professor at Stanford." in out
    assert "passages=1" in out  # after delete(["t"])
    # linking: from the parent account, through SUBSIDIARY_OF, to the subsidiary's passage
    about = next(line for line in out.splitlines() if line.startswith("about a2:"))
    assert "('globex', ['a2'])" in about and "('acme', ['a1'])" in about, about
