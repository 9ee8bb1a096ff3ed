"""Defects a newcomer met in their first hour (issue 18), each as the user met it.

A folder without a store, the MCP tools' arguments against their documentation, a Markdown file's
heading, the query output's layout, the CLI's messages and options, the benchmark's missing-data message,
and `eval` indexing only its corpus.

Split by tier from the former tests/test_newcomer_defects.py: this file holds the tests on an indexed
store; the rest is in tests/unit/cli/test_newcomer_defects.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hipporag_neo4j.cli.main import main

REPO = Path(__file__).resolve().parents[2]


OPENIE = REPO / "tests" / "data" / "openie" / "records.jsonl"


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# --- CLI messages and options -------------------------------------------------------------------
@pytest.fixture(scope="module")
def indexed_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("cli") / "store"
    result = cli("--store", str(store), "index", "--openie", str(OPENIE))
    assert result.exit_code == 3, result.output  # the file has broken records on purpose
    return store


@pytest.mark.integration
def test_stats_and_reembed_print_readable_lines(indexed_store: Path) -> None:
    out = cli("--store", str(indexed_store), "stats").stdout
    assert "{" not in out and "graph_version: " in out, out
    as_json = json.loads(cli("--store", str(indexed_store), "--json", "stats").stdout)
    assert as_json["extra"]["graph_version"] >= 1
    out = cli("--store", str(indexed_store), "reembed").stdout
    assert "{" not in out and re.search(r"re-embedded \d+ passages, \d+ phrases, \d+ facts with ", out), out
    assert set(json.loads(cli("--store", str(indexed_store), "--json", "reembed").stdout)) == {
        "passage",
        "phrase",
        "fact",
    }


@pytest.mark.integration
def test_global_options_are_accepted_after_the_command(indexed_store: Path) -> None:
    result = cli("query", "Where is the Eiffel Tower?", "--json", "--store", str(indexed_store))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["query"] == "Where is the Eiffel Tower?"
    result = cli("stats", f"--store={indexed_store}", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["passages"] >= 1
    result = cli("--store", str(indexed_store), "list", "--limit", "1", "--json")
    assert result.exit_code == 0 and len(json.loads(result.stdout)) == 1


@pytest.mark.integration
def test_delete_says_passage_in_the_singular(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert cli("--store", str(store), "index", "--openie", str(OPENIE)).exit_code == 3
    out = cli("--store", str(store), "delete", "p-eiffel").stdout
    assert out.startswith("deleted 1 passage (0 not found)"), out
