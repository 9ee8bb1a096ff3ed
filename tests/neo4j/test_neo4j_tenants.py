"""Tenants on one Neo4j database: the adversarial scenario of tests/support/tenant_attacks.py (crafted
ids, titles, metadata, entity names, labels and property names for ``link``) between two fresh
namespaces, and the link that joined namespaces before own per-dimension labels were refused."""

from __future__ import annotations

from typing import Any

import pytest

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.settings import Settings
from tests.support import tenant_attacks
from tests.support.fakes import FixedQueryNER, HashEmbedder, TableExtractor

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


def _open(namespace: str) -> HippoRAG:
    from tests.support.neo4j_support import neo4j_settings_or_skip

    n4j = neo4j_settings_or_skip(namespace=namespace)
    settings = Settings(store={"backend": "neo4j"}, neo4j=n4j)
    return HippoRAG(
        settings,
        embedder=HashEmbedder(),
        extractor=TableExtractor(tenant_attacks.table()),
        query_ner=FixedQueryNER({}),
    )


def _database(server: tuple[str, str, str, str]) -> dict[str, int]:
    from tests.support.neo4j_support import run_cypher

    row = run_cypher(
        server, "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS n, count(r) AS r"
    )
    return {"nodes": row[0]["n"], "relationships": row[0]["r"]}


def test_crafted_input_never_crosses_namespaces_on_neo4j() -> None:
    from tests.support.neo4j_support import (
        namespace_dump,
        neo4j_server_or_skip,
        random_namespace,
        run_cypher,
    )

    server = neo4j_server_or_skip()
    a, b = random_namespace(), random_namespace()

    def raw(namespace: str) -> dict[str, Any]:
        return namespace_dump(lambda query, **params: run_cypher(server, query, **params), namespace)

    # a node of another user's graph that no crafted statement may delete
    marker = f"Keep_{b}"
    run_cypher(server, f"CREATE (:{marker} {{name: 'marlin'}})")
    try:
        tenant_attacks.run(_open, a, b, raw)
        assert run_cypher(server, f"MATCH (n:{marker}) RETURN count(n) AS n")[0]["n"] == 1
        # the crafted metadata key 'namespace' is data: every node of A's passages is in A
        rows = run_cypher(
            server,
            "MATCH (d:Passage) WHERE d.namespace IN [$a, $b] RETURN d.namespace AS ns, count(*) AS n",
            a=a,
            b=b,
        )
        assert {r["ns"]: r["n"] for r in rows} == {a: len(tenant_attacks.a_passages()) - 3, b: 2}
    finally:
        run_cypher(server, f"MATCH (n:{marker}) DELETE n")


def test_linking_to_the_per_dimension_phrase_label_is_refused() -> None:
    """``PhraseEmbedding16`` carries every namespace's 16-dimensional phrases: linking A to it linked A's
    phrases to B's phrase nodes by name (B's names then came back in A's results)."""
    from tests.support.neo4j_support import neo4j_server_or_skip, random_namespace, run_cypher

    server = neo4j_server_or_skip()
    a, b = random_namespace(), random_namespace()
    with _open(b) as memory_b:
        memory_b.index(tenant_attacks.b_passages())
    with _open(a) as memory_a:
        memory_a.index([{"id": "a1", "text": "Bob's boat Marlin sails from Hawby."}])
        before = _database(server)
        with pytest.raises(InputError, match="own labels"):
            memory_a.link("PhraseEmbedding16", "name")
        assert memory_a.unlink() == 0
        assert _database(server) == before
    links = run_cypher(
        server,
        "MATCH (p:Phrase {namespace: $a})-[:SAME_AS]->(n) RETURN count(n) AS n",
        a=a,
    )
    assert links[0]["n"] == 0
