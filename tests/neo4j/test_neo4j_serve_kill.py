"""The ``serve`` process boundary on Neo4j: REST writes from several clients, the server killed with
SIGKILL inside a step's store writes (its passages committed, its synonym edges not yet), restarted and
sent the same writes again. As tests/integration/test_tenants_serve_kill.py for the embedded store: after
the kill the namespace holds whole passages only (synonym edges may still be pending: they are written
by the next write); after the re-run nothing was indexed twice and the namespace equals one indexed
without a kill."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.settings import Settings
from tests.support.fakes import FixedQueryNER, HashEmbedder, TableExtractor
from tests.support.server_support import chain_corpus, harness, wait_for_file
from tests.support.tenant_serve import post_all

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

KEY = "k-tenant-n4j-1a2b3c4d5e6f"


def _without_synonyms(dump: dict[str, Any]) -> dict[str, Any]:
    """The dump without synonym edges and the pending marks of the phrases still waiting for theirs."""
    nodes = [{**n, "labels": [x for x in n["labels"] if x != "SynonymsPending"]} for n in dump["nodes"]]
    rels = [
        {**r, "b_labels": [x for x in r["b_labels"] if x != "SynonymsPending"]}
        for r in dump["relationships"]
        if r["type"] != "SYNONYM"
    ]
    return {"nodes": nodes, "relationships": rels}


def _difference(got: dict[str, Any], want: dict[str, Any]) -> str:
    lines = []
    for part in ("nodes", "relationships"):
        extra = [x for x in got[part] if x not in want[part]]
        missing = [x for x in want[part] if x not in got[part]]
        lines += [f"{part} only after the kill: {extra[:3]}", f"{part} only in the reference: {missing[:3]}"]
    return "\n".join(lines)[:3000]


def test_serve_on_neo4j_killed_during_writes_leaves_whole_passages_and_resumes(tmp_path: Path) -> None:
    from tests.support.neo4j_support import (
        namespace_dump,
        neo4j_env,
        neo4j_server_or_skip,
        neo4j_settings_or_skip,
        random_namespace,
        run_cypher,
    )

    server_address = neo4j_server_or_skip()

    def dump(namespace: str) -> dict[str, Any]:
        return namespace_dump(lambda q, **p: run_cypher(server_address, q, **p), namespace)

    passages, table = chain_corpus(24, variants_from=12)

    def reference(chosen: list[dict[str, str]]) -> dict[str, Any]:
        settings = Settings(store={"backend": "neo4j"}, neo4j=neo4j_settings_or_skip())
        memory = HippoRAG(
            settings, embedder=HashEmbedder(), extractor=TableExtractor(table), query_ner=FixedQueryNER({})
        )
        with memory:
            if chosen:
                memory.index(chosen)
        return dump(settings.neo4j.namespace)

    namespace = random_namespace()
    env = {
        **neo4j_env(),
        "HIPPORAG_NAMESPACE": namespace,
        "HIPPORAG_SERVER__API_KEYS": f'{{"{KEY}": ["{namespace}"]}}',
    }
    server = harness(tmp_path, table, env=env, hold_synonyms=2)
    try:
        with ThreadPoolExecutor(1) as pool:
            sent = pool.submit(post_all, server.url, KEY, passages)
            wait_for_file(tmp_path / "gates" / "write-entered")
            server.kill()
            answers = sent.result()
    finally:
        server.kill()
    assert None in answers

    after_kill = dump(namespace)
    stored = {n["props"]["id"] for n in after_kill["nodes"] if "Passage" in n["labels"]}
    survived = [p for p in passages if p["id"] in stored]
    assert 0 < len(survived) < len(passages)
    got, want = _without_synonyms(after_kill), _without_synonyms(reference(survived))
    assert got == want, _difference(got, want)

    server = harness(tmp_path, table, env=env)
    try:
        again = post_all(server.url, KEY, passages)
    finally:
        assert server.terminate()
    skipped = [pid for a in again if a for pid in a["skipped"]]
    indexed = [pid for a in again if a for pid in a["indexed"]]
    assert sorted(skipped) == sorted(p["id"] for p in survived)
    assert sorted(indexed + skipped) == sorted(p["id"] for p in passages)
    final, whole = dump(namespace), reference(passages)
    assert final == whole, _difference(final, whole)
