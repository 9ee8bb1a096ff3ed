"""Every passage and fact written to Neo4j has the ``caption`` Neo4j Browser shows (the project's
style, docker/browser-style.grass, captions them by it): a passage by its title, else its file name with
the chunk's ``#n``; a fact by its predicate and object. A namespace written before captions existed
gets them on open, in batches, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipporag_neo4j.common.captions import FACT_CAPTION_CHARS, passage_caption
from hipporag_neo4j.settings import load_settings
from tests.support.explorer_fixtures import CAPTION_SETTINGS, write_caption_files

pytestmark = [pytest.mark.neo4j, pytest.mark.integration]

READ = (
    "MATCH (d:Passage {namespace: $ns}) RETURN d.id AS id, d.title AS title, d.caption AS caption ORDER BY id"
)
FACTS = "MATCH (f:Fact {namespace: $ns}) RETURN f.caption AS caption, f.predicate AS predicate"


def test_every_passage_and_fact_has_a_caption_and_old_namespaces_get_theirs_on_open(tmp_path: Path) -> None:
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.stores.neo4j.captions import backfill_captions
    from hipporag_neo4j.stores.neo4j.store import Neo4jStore
    from tests.support.neo4j_support import neo4j_server_or_skip, neo4j_settings_or_skip, run_cypher

    server = neo4j_server_or_skip()
    n4j = neo4j_settings_or_skip()
    uri, user, password, database = server
    values = dict(uri=uri, user=user, password=password, database=database, namespace=n4j.namespace)
    settings = load_settings({**CAPTION_SETTINGS, "neo4j": values})
    with HippoRAG(settings) as memory:
        report = memory.index_files([write_caption_files(tmp_path / "files")])
    assert not report.failed, report.failed
    passages = run_cypher(server, READ, ns=n4j.namespace)
    assert all(p["caption"] == passage_caption(p["id"], p["title"]) for p in passages), passages
    captions = [p["caption"] for p in passages]
    chunks = [c for c in captions if c.startswith("archive-2023.txt#")]
    assert len(chunks) >= 3 and len(set(chunks)) == len(chunks), captions  # no two chunks look alike
    assert "FH-2000.txt" in captions and "Release notes" in captions
    facts = run_cypher(server, FACTS, ns=n4j.namespace)
    assert facts and all(f["caption"] and len(f["caption"]) <= FACT_CAPTION_CHARS for f in facts)
    assert all(f["caption"].startswith(f["predicate"][: FACT_CAPTION_CHARS - 1]) for f in facts), facts

    # a namespace written before captions: none stored; opening the store gives them back
    run_cypher(
        server,
        "MATCH (n) WHERE n.namespace = $ns AND (n:Passage OR n:Fact) REMOVE n.caption",
        ns=n4j.namespace,
    )
    assert {p["caption"] for p in run_cypher(server, READ, ns=n4j.namespace)} == {None}
    store = Neo4jStore(n4j)
    try:
        # a few at a time, as on open (bounded batches), until none is left
        done = backfill_captions(store.runner, n4j.namespace, batch=2)
        assert done == {"passage": len(passages), "fact": len(facts)}
        assert run_cypher(server, READ, ns=n4j.namespace) == passages
        assert sorted(map(str, run_cypher(server, FACTS, ns=n4j.namespace))) == sorted(map(str, facts))
        assert backfill_captions(store.runner, n4j.namespace) == {"passage": 0, "fact": 0}  # idempotent
        run_cypher(server, "MATCH (d:Passage {namespace: $ns}) REMOVE d.caption", ns=n4j.namespace)
        with HippoRAG(settings) as memory:
            memory.stats()  # opens the store
        assert run_cypher(server, READ, ns=n4j.namespace) == passages
    finally:
        store.close()
