"""The quickstart notebook runs top to bottom, so it cannot rot: with every extra, and on the base install
(no neo4j-graphrag), and it leaves no temporary folder behind."""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.integration

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"


def execute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pythonpath: tuple[Path, ...] = ()) -> str:
    """Run the notebook with its temporary folders under ``tmp_path / "tmp"``; returns every output."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # the kernel's tempfile.mkdtemp() lands here
    paths = [*map(str, pythonpath), *filter(None, [os.environ.get("PYTHONPATH")])]
    if paths:
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(run_dir)}}
    ).execute()
    left = [p for p in scratch.iterdir() if (p / "kb").exists()]
    assert left == [], f"the notebook left its store behind: {left}"
    return "\n".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
        for c in nb.cells
        for o in c.get("outputs", [])
    )


def test_quickstart_notebook_executes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("neo4j_graphrag")
    outputs = execute(tmp_path, monkeypatch)
    assert "'embedded'" in outputs
    assert "Helena Várkonyi" in outputs  # the showcase answer's passage is retrieved
    assert "['note-1']" in outputs
    answer = re.search(r"GraphRAG answer.*: (.*)", outputs)
    assert answer, "the HippoRAGRetriever cell did not run inside neo4j-graphrag's GraphRAG"
    assert "Helena Várkonyi" in answer[1] and "Satō Kenji" not in answer[1], answer[1]


def test_quickstart_notebook_runs_on_the_base_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shadow = tmp_path / "no_graphrag"
    (shadow / "neo4j_graphrag").mkdir(parents=True)
    (shadow / "neo4j_graphrag" / "__init__.py").write_text(
        'raise ModuleNotFoundError("No module named \'neo4j_graphrag\'", name="neo4j_graphrag")\n',
        encoding="utf-8",
    )
    outputs = execute(tmp_path, monkeypatch, (shadow,))
    assert "skipped: No module named 'neo4j_graphrag'" in outputs and "[graphrag]" in outputs
    assert "['note-1']" in outputs  # the cells after it ran
