"""Processes opening stores of a new dimension at the same moment (``serve`` workers starting together on an
empty database, or several CLI runs): every open succeeds and the dimension's three vector indexes are
made once and ONLINE. Each open creates the indexes one statement after another, so one that loses the
race on one index can lose it again on the next (seen on 2026.01.4 before the fix in schema.py)."""

from __future__ import annotations

import threading

import pytest

from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.graph_model import EMBEDDED_KINDS, vector_index_name
from tests.support.neo4j_support import neo4j_settings_or_skip, run_cypher, server_found

pytestmark = pytest.mark.neo4j

DIM = 21  # no other test uses it: its indexes do not exist before the opens
OPENERS = 4
ROUNDS = 3


def vector_indexes(dim: int) -> dict[str, str]:
    server = server_found()
    assert server is not None
    rows = run_cypher(server, "SHOW VECTOR INDEXES YIELD name, state RETURN name, state")
    wanted = {vector_index_name(kind, dim) for kind in EMBEDDED_KINDS}
    return {str(r["name"]): str(r["state"]) for r in rows if r["name"] in wanted}


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_stores_of_a_new_dimension_opened_at_once_all_open(round_: int) -> None:
    settings = [neo4j_settings_or_skip() for _ in range(OPENERS)]
    assert vector_indexes(DIM) == {}, "the dimension's indexes exist before the opens"
    stores = [Neo4jStore(s) for s in settings]
    start = threading.Barrier(OPENERS)
    errors: list[BaseException] = []

    def open_store(store: Neo4jStore) -> None:
        start.wait()
        try:
            store.open("hash-embedder", DIM)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_store, args=(s,)) for s in stores]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert errors == []
        assert vector_indexes(DIM) == {vector_index_name(kind, DIM): "ONLINE" for kind in EMBEDDED_KINDS}
    finally:
        for store in stores:  # one whose open failed is opened again here, so its namespace goes too
            try:
                store.open("hash-embedder", DIM)
                store.drop_namespace()  # the last one drops the dimension's indexes
            finally:
                store.close()
    assert vector_indexes(DIM) == {}
