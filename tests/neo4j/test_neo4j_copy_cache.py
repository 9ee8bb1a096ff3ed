"""The in-process copy kept on local disk (copy_cache.py), live: a new process at the graph version a
closed one held loads it instead of reading the namespace over Bolt, with the same answers; a newer
version, or a namespace made again, is read from the server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.neo4j import Neo4jStore
from tests.support.corpora import DIM, chain_corpus, unit
from tests.support.neo4j_support import neo4j_settings_or_skip, run_cypher

pytestmark = pytest.mark.neo4j

PARTS = {"phrases", "graph", "dense", "facts"}  # the reads ClientCopy counts


def opened(s: Neo4jSettings) -> Neo4jStore:
    store = Neo4jStore(s)
    store.open("hash-embedder", DIM)
    return store


def answers(store: Neo4jStore) -> dict[str, Any]:
    """One query of each kind through one view (every part of the copy)."""
    view = store.view()
    query = unit(9001)
    return {
        "phrases": [
            (h.id, round(h.similarity, 6)) for h in view.nearest_phrases(np.stack([query]), 3, -1.0)[0]
        ],
        "dense": [(s.passage_id, round(s.score, 6)) for s in view.dense_passage_scores(query, 3)],
        "facts": [(h.id, round(h.similarity, 6)) for h in view.nearest_facts(query, 3)],
        "ppr": {k: round(v, 9) for k, v in view.personalized_pagerank({"ph1": 1.0}, WalkParams()).items()},
    }


def test_a_new_process_at_the_same_version_loads_the_copy_from_disk(tmp_path: Path) -> None:
    s = neo4j_settings_or_skip(ppr_engine="local", copy_cache_dir=str(tmp_path / "cache"))
    phrases, records = chain_corpus(6)
    store = opened(s)
    store.write_passages(phrases, records)
    store.close()
    reader = opened(s)  # a process that reads the namespace over Bolt, then closes (writes the file)
    first = answers(reader)
    assert set(reader.copy.reads) >= PARTS and "restored" not in reader.copy.reads
    reader.close()
    assert len(list((tmp_path / "cache").glob("*.npz"))) == 1

    again = opened(s)
    assert answers(again) == first
    assert again.copy.reads == {"restored": 1}  # nothing of the namespace read over Bolt
    again.close()

    off = opened(s.model_copy(update={"copy_cache": False}))
    assert answers(off) == first and "restored" not in off.copy.reads
    off.close()


def test_a_newer_version_or_a_namespace_made_again_is_read_from_the_server(tmp_path: Path) -> None:
    s = neo4j_settings_or_skip(ppr_engine="local", copy_cache_dir=str(tmp_path / "cache"))
    phrases, records = chain_corpus(6)
    store = opened(s)
    store.write_passages(phrases, records[:4])
    answers(store)
    store.close()  # the file holds this version

    writer = opened(s.model_copy(update={"copy_cache": False}))  # another process writes: newer version
    writer.write_passages(phrases, records[4:])
    writer.close()
    reader = opened(s)
    assert "restored" not in reader.copy.reads
    newer = answers(reader)
    assert "restored" not in reader.copy.reads and set(reader.copy.reads) >= PARTS
    assert {pid for pid, _ in newer["dense"]} <= {r.passage.id for r in records}
    assert reader.view().passage_count() == 6
    reader.close()  # the file now holds the newer version

    # the namespace's metadata says it was made at another time (dropped and made again): not used
    run_cypher(
        (s.uri or "", s.user, s.password.get_secret_value(), s.database),
        "MATCH (m:HippoRAGMeta {namespace: $ns}) SET m.created_at = datetime() + duration('PT1S')",
        ns=s.namespace,
    )
    remade = opened(s)
    assert answers(remade) == newer and "restored" not in remade.copy.reads
    remade.close()
