"""Readers never wait for the writer on the embedded store (issue 36, part 2): a query made while a write
is held inside its store writes returns before the write ends, from the last committed graph version.
The Neo4j twin is tests/neo4j/test_neo4j_readers_writers.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.embedded import EmbeddedStore
from tests.support.held_write import query_during_a_held_write

pytestmark = pytest.mark.integration


def test_a_query_during_a_held_write_returns_before_the_write_ends(tmp_path: Path) -> None:
    settings = load_settings({"store": {"path": str(tmp_path / "kb")}, "llm": {"model": None}}, env_file=None)
    query_during_a_held_write(settings, EmbeddedStore(tmp_path / "kb"))
