"""Nodes enter the vector indexes only when they are used (schema.py, ``HippoRAGMeta.vector_labels``),
live.

With ``neo4j.vector_search = client`` a namespace's writes leave the dimension's label off (inserting into
an HNSW index is most of a write's cost, and nothing queries it); opening it with ``index`` labels its
nodes in batches and the index searches find them; a namespace made before the state existed (its nodes
labelled by their writes) keeps labelling in both modes.
"""

from __future__ import annotations

import numpy as np
import pytest

from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord
from hipporag_neo4j.stores.neo4j import Neo4jStore, schema
from hipporag_neo4j.stores.neo4j.graph_model import EMBEDDED_KINDS, embedding_label
from tests.support.corpora import chain_corpus
from tests.support.neo4j_support import neo4j_settings_or_skip, run_cypher

pytestmark = pytest.mark.neo4j

DIM = 12  # a dimension of its own: its indexes hold only this module's nodes


def server_of(s: Neo4jSettings) -> tuple[str, str, str, str]:
    return (s.uri or "", s.user, s.password.get_secret_value(), s.database)


def corpus(n: int, seed: int, prefix: str = "") -> tuple[list[PhraseRecord], list[PassageRecord]]:
    """``chain_corpus(n)`` with random ``DIM``-d vectors."""
    phrases, records = chain_corpus(n, prefix)
    rng = np.random.default_rng(seed)

    def unit() -> np.ndarray:
        v = rng.standard_normal(DIM)
        return (v / np.linalg.norm(v)).astype(np.float32)

    return [PhraseRecord(p.id, p.name, unit()) for p in phrases], [
        PassageRecord(
            r.passage,
            unit(),
            r.mentions,
            [FactRecord(f.id, f.subject_id, f.predicate, f.object_id, f.text, unit()) for f in r.facts],
        )
        for r in records
    ]


def labelled_counts(s: Neo4jSettings) -> dict[str, tuple[int, int]]:
    """Per kind: (nodes of the namespace, of them under the label its dimension's vector index covers)."""
    counts = {}
    for kind in EMBEDDED_KINDS:
        label = embedding_label(kind, DIM)
        rows = run_cypher(
            server_of(s),
            f"MATCH (n:{kind.capitalize()} {{namespace: $ns}}) "
            f"RETURN count(n) AS nodes, count(CASE WHEN n:{label} THEN 1 END) AS labelled",
            ns=s.namespace,
        )
        counts[kind] = (int(rows[0]["nodes"]), int(rows[0]["labelled"]))
    return counts


def opened(s: Neo4jSettings) -> Neo4jStore:
    store = Neo4jStore(s)
    store.open(f"hash-{DIM}", DIM)
    return store


def index_answers(store: Neo4jStore, phrases: list[PhraseRecord], records: list[PassageRecord]) -> None:
    """Each node is found by its own vector through the server's vector indexes."""
    assert store.settings.vector_search == "index"
    for p in phrases:
        hits = store.nearest_phrases(np.stack([p.embedding]), top_k=1, min_similarity=0.99)[0]
        assert [h.id for h in hits] == [p.id]
    for r in records:
        assert [s.passage_id for s in store.index_dense_passage_scores(r.embedding, 1)] == [r.passage.id]
        for f in r.facts:
            assert f.embedding is not None
            assert [h.id for h in store.index_nearest_facts(f.embedding, 1)] == [f.id]


def test_client_writes_stay_out_of_the_vector_indexes_until_index_mode_labels_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = neo4j_settings_or_skip(vector_search="client")
    phrases, records = corpus(7, seed=1)
    store = opened(client)
    try:
        store.write_passages(phrases, records)
        counts = labelled_counts(client)
        assert counts == {"phrase": (8, 0), "passage": (7, 0), "fact": (7, 0)}
        assert store.stats().extra["vector_labels"] == "unlabelled"
        # the client copy still answers exactly
        hits = store.nearest_phrases(np.stack([phrases[3].embedding]), top_k=1, min_similarity=0.99)[0]
        assert [h.id for h in hits] == [phrases[3].id]
    finally:
        store.close()
    monkeypatch.setattr(schema, "LABEL_BATCH", 3)  # several batches per kind (8 phrases: 3 + 3 + 2)
    index = client.model_copy(update={"vector_search": "index"})
    store = opened(index)
    try:
        assert labelled_counts(index) == {"phrase": (8, 8), "passage": (7, 7), "fact": (7, 7)}
        assert store.stats().extra["vector_labels"] == "labelled"
        index_answers(store, phrases, records)
        more_phrases, more = corpus(2, seed=2, prefix="x")
        store.write_passages(more_phrases, more)  # a labelled namespace's writes label their nodes
        index_answers(store, more_phrases, more)
    finally:
        store.close()
    # the state never goes back: a client-mode writer of a labelled namespace labels its nodes
    store = opened(client)
    try:
        late_phrases, late = corpus(1, seed=3, prefix="y")
        store.write_passages(late_phrases, late)
        assert store.stats().extra["vector_labels"] == "labelled"
    finally:
        store.close()
    assert labelled_counts(client) == {"phrase": (13, 13), "passage": (10, 10), "fact": (10, 10)}


def test_an_interrupted_switch_is_finished_by_the_next_index_open_and_writes_meanwhile_label() -> None:
    client = neo4j_settings_or_skip(vector_search="client")
    phrases, records = corpus(5, seed=4)
    store = opened(client)
    try:
        store.write_passages(phrases[:3], records[:2])
        # a switch interrupted after its first batch: state labelling, two phrases labelled
        run_cypher(
            server_of(client),
            "MATCH (m:HippoRAGMeta {namespace: $ns}) SET m.vector_labels = 'labelling'",
            ns=client.namespace,
        )
        run_cypher(
            server_of(client),
            "MATCH (n:Phrase {namespace: $ns}) WITH n ORDER BY n.id LIMIT 2 "
            f"SET n:{embedding_label('phrase', DIM)}",
            ns=client.namespace,
        )
        store.write_passages(phrases[3:], records[2:])  # written while labelling: labelled
        assert store.stats().extra["vector_labels"] == "labelling"
        after = labelled_counts(client)
        assert after["passage"] == (5, 3) and after["fact"] == (5, 3) and after["phrase"] == (6, 5)
    finally:
        store.close()
    index = client.model_copy(update={"vector_search": "index"})
    store = opened(index)
    try:
        assert labelled_counts(index) == {"phrase": (6, 6), "passage": (5, 5), "fact": (5, 5)}
        assert store.stats().extra["vector_labels"] == "labelled"
        index_answers(store, phrases, records)
    finally:
        store.close()


def test_a_namespace_written_before_the_state_existed_keeps_its_labels_in_client_mode() -> None:
    """A namespace of the old code: every node labelled, no ``vector_labels`` on its metadata. Opened
    with ``client`` it stays labelled and its new nodes are labelled too, so ``index`` finds them."""
    index = neo4j_settings_or_skip(vector_search="index")
    phrases, records = corpus(3, seed=5)
    store = opened(index)
    try:
        store.write_passages(phrases, records)
    finally:
        store.close()
    run_cypher(
        server_of(index),
        "MATCH (m:HippoRAGMeta {namespace: $ns}) REMOVE m.vector_labels",
        ns=index.namespace,
    )
    client = index.model_copy(update={"vector_search": "client"})
    store = opened(client)
    more_phrases, more = corpus(2, seed=6, prefix="x")
    try:
        assert store.stats().extra["vector_labels"] == "labelled"
        store.write_passages(more_phrases, more)
    finally:
        store.close()
    assert labelled_counts(client) == {"phrase": (7, 7), "passage": (5, 5), "fact": (5, 5)}
    store = opened(index)
    try:
        index_answers(store, phrases + more_phrases, records + more)
    finally:
        store.close()
