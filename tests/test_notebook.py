"""The quickstart notebook runs top to bottom, so it cannot rot."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.integration

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"


def test_quickstart_notebook_executes(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = "\n".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
        for c in nb.cells
        for o in c.get("outputs", [])
    )
    assert "'embedded'" in outputs
    assert "Helena Várkonyi" in outputs  # the showcase answer's passage is retrieved
    assert "['note-1']" in outputs
    assert "GraphRAG answer:" in outputs  # the HippoRAGRetriever cell ran inside neo4j-graphrag's GraphRAG
