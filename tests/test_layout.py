"""Package layering: the CLI is the top; no module imports it, so command modules cannot form a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parents[1] / "hipporag_neo4j"


def _imports(path: Path) -> set[str]:
    """Every hipporag_neo4j module a file imports, also inside functions and ``if TYPE_CHECKING``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("hipporag_neo4j")}


def test_no_module_imports_the_top_level_cli() -> None:
    top = {PACKAGE / "cli.py", PACKAGE / "__main__.py"}
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path not in top and "hipporag_neo4j.cli" in _imports(path)
    ]
    assert offenders == [], f"these modules import hipporag_neo4j.cli (a cycle): {offenders}"


def test_the_check_sees_imports_under_type_checking(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("if TYPE_CHECKING:\n    from hipporag_neo4j.cli import Context\n")
    assert "hipporag_neo4j.cli" in _imports(sample)
