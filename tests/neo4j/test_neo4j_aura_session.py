"""The ``aura`` PPR engine on a real Aura Graph Analytics session (marker ``aura``: needs Aura API
credentials, HIPPORAG_TEST_AURA_CLIENT_ID/_SECRET, and a database URI; starts a billed session), ranking
like the local engine. The rest of the aura tests, against a fake at our session interface and with no Aura
account, are in tests/unit/stores/neo4j/test_neo4j_aura.py.
"""

from __future__ import annotations

import pytest

from hipporag_neo4j.stores.base import WalkParams


@pytest.mark.aura
@pytest.mark.neo4j
def test_a_real_session_ranks_like_the_local_engine() -> None:
    """Index -> retrieve through a real Aura Graph Analytics session, compared with the in-process
    engine. Needs HIPPORAG_TEST_AURA_CLIENT_ID and _SECRET (and _PROJECT_ID when the client has several)
    plus HIPPORAG_TEST_NEO4J_URI/_USER/_PASSWORD of an AuraDB (or Neo4j >= 5.24) the session can reach.
    Deletes its session at the end."""
    import os

    client_id, secret = (
        os.environ.get("HIPPORAG_TEST_AURA_CLIENT_ID"),
        os.environ.get("HIPPORAG_TEST_AURA_CLIENT_SECRET"),
    )
    if not (client_id and secret and os.environ.get("HIPPORAG_TEST_NEO4J_URI")):
        pytest.skip(
            "needs HIPPORAG_TEST_AURA_CLIENT_ID, HIPPORAG_TEST_AURA_CLIENT_SECRET and HIPPORAG_TEST_NEO4J_URI"
        )
    pytest.importorskip("graphdatascience", reason="the [aura] extra is not installed")
    from hipporag_neo4j.stores.neo4j import Neo4jStore
    from hipporag_neo4j.stores.neo4j.engines import LocalPpr
    from tests.support.corpora import chain_corpus
    from tests.support.neo4j_support import TEST_EMBEDDING_DIM, neo4j_settings_or_skip

    settings = neo4j_settings_or_skip(
        ppr_engine="aura",
        aura={
            "client_id": client_id,
            "client_secret": secret,
            "project_id": os.environ.get("HIPPORAG_TEST_AURA_PROJECT_ID"),
            "session_ttl_minutes": 30,
        },
    )
    store = Neo4jStore(settings)
    store.open("hash-embedder", TEST_EMBEDDING_DIM)
    try:
        phrases, records = chain_corpus(10)
        store.write_passages(phrases, records)
        seeds, passage_seeds = {"ph0": 0.7, "ph6": 0.3}, {"p4": 0.05}
        local = LocalPpr(store.copy)
        expected = local.passage_node_scores(seeds, passage_seeds, WalkParams(0.5, 1000, 1e-15), 5, 2)
        found = store.view().passage_node_scores(seeds, passage_seeds, WalkParams(0.5, 100, 1e-8), 5, 2)
        assert [s.passage_id for s in found] == [s.passage_id for s in expected]
        for item, ref in zip(found, expected, strict=True):
            assert item.score == pytest.approx(ref.score, abs=1e-6)
        assert [
            s.passage_id for s in store.view().graph_passage_scores(seeds, WalkParams(0.5, 100, 1e-8), 3, 1)
        ] == [s.passage_id for s in local.passage_scores(seeds, WalkParams(0.5, 1000, 1e-15), 3, 1)]
    finally:
        store.delete_aura_session()
        store.close()
