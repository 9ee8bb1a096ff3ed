"""Lint every ``cypher/*.cypher`` statement with Neo4j's own Cypher language support.

The schema handed to ``lintCypherQuery`` is ``testData.mockSchema``'s procedures and functions (Neo4j
built-ins, GDS, APOC) plus our labels, relationship types, property keys and parameters
(:mod:`hipporag_neo4j.stores.neo4j.graph_model`). Errors (unknown procedures, wrong arity, unknown YIELD
columns, undefined variables or parameters) and warnings (deprecations, unknown labels or properties)
both fail. ``tests/cypher_lint/node_modules`` is installed with ``npm ci`` when absent.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.stores.neo4j import graph_model
from hipporag_neo4j.stores.neo4j.cypher import cypher_dir, load_script, query_names

pytestmark = pytest.mark.unit

LINT_DIR = Path(__file__).resolve().parents[3] / "cypher_lint"
PACKAGE = LINT_DIR / "node_modules" / "@neo4j-cypher" / "language-support"


BROKEN = [
    ("CALL gds.pageRank.streem($graph_name) YIELD nodeId RETURN nodeId", "gds.pageRank.streem"),
    ("CALL gds.pageRank.stream($graph_name) YIELD nodeId, rank RETURN nodeId", "Unknown procedure output"),
    ("MATCH (p:Phrase {namespace: $namespace}) RETURN q.id", "Variable `q` not defined"),
    ("CALL gds.graph.exists($graph_name, $prefix) YIELD exists RETURN exists", "too many arguments"),
    ("MATCH (p:Phrase {namespace: $namespace}) RETURN id(p)", "deprecated"),
    ("MATCH (p:Phrase {namespace: $nmespace}) RETURN p.id", "Parameter $nmespace is not defined"),
    ("MATCH (p:Entity {namespace: $namespace}) RETURN p.id", "Label Entity is not present"),
    ("MATCH (p:Phrase {namespace: $namespace}) RETURN p.label", "label is not present"),
    (
        "CALL gds.graph.project.cypher($graph_name, 'MATCH (n) RETURN id(n) AS id', "
        "'MATCH (a)-->(b) RETURN id(a) AS source, id(b) AS target') YIELD graphName RETURN graphName",
        "deprecated",
    ),
]


def _queries() -> list[dict[str, str]]:
    root = cypher_dir()
    queries = []
    for name in query_names():
        queries.append(
            {"name": f"file:{name}", "text": root.joinpath(f"{name}.cypher").read_text(encoding="utf-8")}
        )
        script = load_script(name)
        if len(script) > 1:  # a single statement is the file itself, linted just above
            queries += [{"name": f"statement:{name}#{i}", "text": st.text} for i, st in enumerate(script)]
    queries += [{"name": f"broken:{i}", "text": text} for i, (text, _) in enumerate(BROKEN)]
    return queries


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Lints everything in one Node.js run (loading the language support takes seconds)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Cypher lint needs Node.js and npm")
    if not PACKAGE.is_dir():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed: cannot install tests/cypher_lint/node_modules")
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=LINT_DIR, check=True, timeout=600)
    schema = {
        "labels": list(graph_model.LABELS),
        "relationshipTypes": list(graph_model.RELATIONSHIP_TYPES),
        "propertyKeys": [*graph_model.PROPERTY_KEYS, *graph_model.ROW_KEYS],
        "parameters": graph_model.PARAMETERS,
    }
    schema_path = tmp_path_factory.mktemp("cypher_lint") / "schema.json"
    schema_path.write_text(json.dumps(schema), encoding="utf-8")
    queries = _queries()
    done = subprocess.run(
        [node, str(LINT_DIR / "lint.mjs"), str(schema_path), "-"],
        input=json.dumps(queries),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result = {entry["name"]: entry["diagnostics"] for entry in json.loads(done.stdout)}
    assert set(result) == {q["name"] for q in queries}
    return result


def test_every_statement_of_a_script_lints_clean(report: dict[str, list[dict[str, Any]]]) -> None:
    """The schema scripts run statement by statement; each must stand alone."""
    statements = {name: diags for name, diags in report.items() if name.startswith("statement:")}
    assert len(statements) >= 10, f"expected the schema scripts' statements, found {sorted(statements)}"
    problems = {name: diags for name, diags in statements.items() if diags}
    assert not problems, json.dumps(problems, indent=1)


def test_whole_files_lint_clean_as_browser_scripts(report: dict[str, list[dict[str, Any]]]) -> None:
    """Each file as written (comments, several ``;``-separated statements) is what Browser runs."""
    files = {name: diags for name, diags in report.items() if name.startswith("file:")}
    assert len(files) == len(query_names()) >= 40
    problems = {name: diags for name, diags in files.items() if diags}
    assert not problems, json.dumps(problems, indent=1)


@pytest.mark.parametrize(("index", "expected"), [(i, expected) for i, (_, expected) in enumerate(BROKEN)])
def test_linter_flags_broken_queries(
    report: dict[str, list[dict[str, Any]]], index: int, expected: str
) -> None:
    messages = [d["message"] for d in report[f"broken:{index}"]]
    assert any(expected in m for m in messages), messages
