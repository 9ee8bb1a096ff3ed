"""Readers never wait for the writer on Neo4j (issue 36, part 2): a query made while a write is held inside
its store writes returns before the write ends, from the last committed graph version (the embedded
twin: tests/integration/test_service_readers.py)."""

from __future__ import annotations

import pytest

from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.neo4j import Neo4jStore
from tests.support.held_write import query_during_a_held_write
from tests.support.neo4j_support import TEST_EMBEDDING_DIM, neo4j_settings_or_skip

pytestmark = pytest.mark.integration


@pytest.mark.neo4j
@pytest.mark.parametrize("vector_search", ["client", "index"])
def test_a_query_during_a_held_write_returns_before_the_write_ends_on_neo4j(vector_search: str) -> None:
    n4j = neo4j_settings_or_skip(ppr_engine="local", vector_search=vector_search)
    settings = load_settings(
        {"llm": {"model": None}, "store": {"backend": "neo4j"}, "neo4j": n4j.model_dump()}, env_file=None
    )
    query_during_a_held_write(settings, Neo4jStore(n4j), dim=TEST_EMBEDDING_DIM)
