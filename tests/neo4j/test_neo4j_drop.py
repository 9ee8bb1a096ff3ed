"""Dropping a whole knowledge base: everything of the namespace goes, nothing else does.

The store half runs on the embedded store everywhere and on Neo4j where a server is reachable; the CLI
half on the embedded store with the real model, as a user runs it.

Split by tier from the former tests/test_drop.py: this file holds the Neo4j-only test; the rest is in
tests/integration/test_drop.py.
"""

from __future__ import annotations

import pytest

from tests.support.fakes import HashEmbedder
from tests.support.store_corpus import _index

pytestmark = pytest.mark.integration


#: a dimension no other test uses, so the Neo4j test sees its vector indexes go
EMB = HashEmbedder(dim=12)


ALL = {"p1", "p2", "p3", "p4", "p5"}


@pytest.mark.neo4j
def test_neo4j_drop_keeps_your_nodes_and_drops_unused_vector_indexes() -> None:
    from hipporag_neo4j.stores.neo4j.store import Neo4jStore
    from tests.support.neo4j_support import neo4j_server_or_skip, neo4j_settings_or_skip, run_cypher

    server = neo4j_server_or_skip()
    settings = neo4j_settings_or_skip()
    ns = settings.namespace
    store = Neo4jStore(settings)
    try:
        store.open(EMB.model_name, EMB.dimension)
        _index(store, ALL)
        # a node of the user's own graph, linked to a phrase the way `link` links (SAME_AS)
        run_cypher(server, f"CREATE (:Customer_{ns} {{name: 'Stanford'}})")
        run_cypher(
            server,
            f"MATCH (p:Phrase {{namespace: $ns, name: 'stanford'}}), (c:Customer_{ns}) "
            "MERGE (p)-[:SAME_AS {score: 1.0, method: 'test'}]->(c)",
            ns=ns,
        )
        names = {r["name"] for r in run_cypher(server, "SHOW VECTOR INDEXES YIELD name RETURN name")}
        assert {f"hipporag_{k}_embedding_12" for k in ("passage", "phrase", "fact")} <= names

        report = store.drop_namespace()

        assert report.removed is not None and report.removed.passages == 5
        assert report.vector_index_dims_dropped == [12]  # no other namespace records 12-d vectors
        left = run_cypher(server, "MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS n", ns=ns)
        assert left[0]["n"] == 0
        yours = run_cypher(
            server, f"MATCH (c:Customer_{ns}) RETURN c.name AS name, COUNT {{ (c)--() }} AS rels"
        )
        assert yours == [{"name": "Stanford", "rels": 0}]
        names = {r["name"] for r in run_cypher(server, "SHOW VECTOR INDEXES YIELD name RETURN name")}
        assert not any(name.endswith("_embedding_12") for name in names)
        if server_has_gds_projections(server, ns):
            pytest.fail("a GDS projection of the dropped namespace is left")
    finally:
        store.close()


def server_has_gds_projections(server: tuple[str, str, str, str], namespace: str) -> bool:
    from tests.support.neo4j_support import run_cypher, server_has_gds

    if not server_has_gds(server):
        return False
    rows = run_cypher(server, "CALL gds.graph.list() YIELD graphName RETURN graphName")
    return any(f".{namespace}." in r["graphName"] for r in rows)
