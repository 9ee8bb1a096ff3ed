"""Several embedding models in one Neo4j database (Community has only one), live.

Each dimension has its own vector indexes (``hipporag_<kind>_embedding_<dim>`` over ``<Kind>Embedding<dim>``
nodes); namespaces of different dimensions are written, searched, re-embedded and deleted side by side.
A store made before the per-dimension indexes (one unsuffixed index per kind) migrates on open. The
driver is quiet about the notifications our statements cause by design, and raises deprecations.
"""

from __future__ import annotations

import logging
from typing import Any

import neo4j
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neo4j.warnings import Neo4jDeprecationWarning

from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import PassageRecord, PhraseRecord
from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.graph_model import EMBEDDED_KINDS, LEGACY_VECTOR_INDEXES, vector_index_name
from tests.support.corpora import chain_corpus
from tests.support.fakes import HashEmbedder
from tests.support.neo4j_support import neo4j_settings_or_skip, run_cypher

pytestmark = pytest.mark.neo4j


def server_of(s: Neo4jSettings) -> tuple[str, str, str, str]:
    return (s.uri or "", s.user, s.password.get_secret_value(), s.database)


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def vector_index_dims(s: Neo4jSettings) -> dict[str, int]:
    rows = run_cypher(
        server_of(s),
        "SHOW INDEXES YIELD name, type, options WHERE type = 'VECTOR' AND name STARTS WITH 'hipporag_' "
        "RETURN name, options.indexConfig['vector.dimensions'] AS dim",
    )
    return {r["name"]: r["dim"] for r in rows}


def write_namespace(dim: int, n: int, seed: int) -> tuple[Neo4jStore, np.ndarray]:
    store = Neo4jStore(neo4j_settings_or_skip())
    store.open(f"hash-{dim}", dim)
    vectors = unit_rows(np.random.default_rng(seed), n + 1, dim)
    phrases = [PhraseRecord(f"ph{i}", f"phrase {i}", vectors[i]) for i in range(n)]
    passage = PassageRecord(
        Passage(id="p", text=f"passage of {store.namespace}"), vectors[n], {p.id: 1 for p in phrases}
    )
    store.write_passages(phrases, [passage])
    return store, vectors


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    spec=st.lists(
        st.tuples(st.sampled_from([8, 16, 24]), st.integers(min_value=1, max_value=4)),
        min_size=1,
        max_size=4,
    ),
    seed=st.integers(min_value=0, max_value=2**16),
    drop=st.integers(min_value=0, max_value=3),
)
def test_namespaces_of_several_dimensions_each_find_only_their_own_nodes(
    spec: list[tuple[int, int]], seed: int, drop: int
) -> None:
    stores = [write_namespace(dim, n, seed + i) for i, (dim, n) in enumerate(spec)]
    try:
        indexes = vector_index_dims(stores[0][0].settings)
        for dim, _ in spec:
            assert all(indexes.get(vector_index_name(kind, dim)) == dim for kind in EMBEDDED_KINDS)
        if len(stores) > 1:  # delete one namespace's passage: the others are untouched
            gone, _ = stores[drop % len(stores)]
            gone.delete_passages(["p"])
            assert gone.stats().passages == 0 and gone.stats().phrases == 0
        for (dim, n), (store, vectors) in zip(spec, stores, strict=True):
            if store.stats().passages == 0:
                assert store.nearest_phrases(vectors[:1], top_k=5, min_similarity=-1.0) == [[]]
                assert store.view().dense_passage_scores(vectors[n], 3) == []
                continue
            rng = np.random.default_rng(seed)
            for i in range(n):
                query = vectors[i] + 0.05 * rng.standard_normal(dim).astype(np.float32)
                query = (query / np.linalg.norm(query)).astype(np.float32)
                hits = store.nearest_phrases(np.stack([query]), top_k=n + 2, min_similarity=-1.0)[0]
                assert {h.id for h in hits} == {f"ph{j}" for j in range(n)}  # its own, all of them
                best = max(range(n), key=lambda j: float(vectors[j] @ query))
                assert hits[0].id == f"ph{best}"
                assert hits[0].similarity == pytest.approx(float(vectors[best] @ query), abs=1e-5)
            dense = store.view().dense_passage_scores(vectors[n], 3)
            assert [d.passage_id for d in dense] == ["p"]
    finally:
        for store, _ in stores:
            store.close()


def test_reembed_to_another_dimension_while_other_namespaces_exist(tmp_path: Any) -> None:
    """Issue 17: `reembed` of one namespace to a new dimension while namespaces of other dimensions
    exist; each keeps answering from its own indexes, and the unused indexes go."""
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.settings import load_settings
    from tests.support.fakes import FixedQueryNER, TableExtractor
    from tests.support.reliability_worker import QUERY, corpus

    def memory(n4j: Neo4jSettings, dim: int) -> HippoRAG:
        group = {**n4j.model_dump(), "password": n4j.password.get_secret_value()}
        return HippoRAG(
            load_settings({"neo4j": group, "retrieval": {"synonym_top_k": 1000}}),
            embedder=HashEmbedder(dim=dim, model_name=f"hash-{dim}"),
            extractor=TableExtractor(corpus(12)),
            query_ner=FixedQueryNER({QUERY: ["person 3"]}),
        )

    # the moving namespace's nodes are in the vector indexes (vector_search=index): the re-embed moves
    # them to the new dimension's label; with client they carry no such label (test_neo4j_vector_labels)
    moving, staying = neo4j_settings_or_skip(vector_search="index"), neo4j_settings_or_skip()
    texts = list(corpus(12))
    for n4j, dim in ((moving, 16), (staying, 8)):
        mem = memory(n4j, dim)
        assert not mem.index(texts).failed
        mem.close()
    before = memory(staying, 8).retrieve(QUERY).passages
    mem = memory(moving, 40)
    counts = mem.reembed()
    assert counts["passage"] == 12 and counts["phrase"] > 0
    found = mem.retrieve(QUERY).passages
    assert found and found[0].passage.text.startswith("Person 3 ")
    stats = mem.stats()
    assert stats.embedding_dim == 40 and stats.synonym_edges > 0
    mem.close()
    other = memory(staying, 8)
    assert [p.passage.id for p in other.retrieve(QUERY).passages] == [p.passage.id for p in before]
    other.close()
    indexes = vector_index_dims(moving)
    assert all(vector_index_name(kind, 40) in indexes for kind in EMBEDDED_KINDS)
    assert all(vector_index_name(kind, 8) in indexes for kind in EMBEDDED_KINDS)
    labels = run_cypher(
        server_of(moving),
        "MATCH (n:Phrase {namespace: $ns}) RETURN DISTINCT [l IN labels(n) WHERE l <> 'Phrase'] AS extra",
        ns=moving.namespace,
    )
    assert {tuple(r["extra"]) for r in labels} <= {
        ("PhraseEmbedding40",),
        ("PhraseEmbedding40", "SynonymsPending"),
    }


def test_a_store_with_the_single_old_indexes_migrates_on_open() -> None:
    """A store of the single unsuffixed indexes (before per-dimension ones) opens: its nodes get their
    dimension's label, that dimension's indexes are made, the old ones dropped; searches still work."""
    dim = 44  # a dimension of its own: the old indexes are database-wide
    store = Neo4jStore(neo4j_settings_or_skip())
    store.open("hash-44", dim)
    phrases, records = chain_corpus(3)
    rng = np.random.default_rng(3)
    vectors = unit_rows(rng, len(phrases) + len(records) * 2, dim)
    phrases = [PhraseRecord(p.id, p.name, vectors[i]) for i, p in enumerate(phrases)]
    records = [
        PassageRecord(
            r.passage,
            vectors[len(phrases) + i],
            r.mentions,
            [type(f)(f.id, f.subject_id, f.predicate, f.object_id, f.text, vectors[-1 - i]) for f in r.facts],
        )
        for i, r in enumerate(records)
    ]
    store.write_passages(phrases, records)
    store.close()
    server, ns = server_of(store.settings), store.namespace
    # make it an old store: no per-dimension labels or indexes, the single indexes instead
    for kind in EMBEDDED_KINDS:
        run_cypher(server, f"DROP INDEX {vector_index_name(kind, dim)} IF EXISTS")
        label = kind.capitalize()
        run_cypher(
            server,
            f"MATCH (n:{label} {{namespace: $ns}}) REMOVE n:{label}Embedding{dim}",
            ns=ns,
        )
        run_cypher(
            server,
            f"CREATE VECTOR INDEX {LEGACY_VECTOR_INDEXES[kind]} IF NOT EXISTS "
            f"FOR (n:{label}) ON n.embedding OPTIONS {{indexConfig: "
            f"{{`vector.dimensions`: {dim}, `vector.similarity_function`: 'cosine'}}}}",
        )
        run_cypher(server, "CALL db.awaitIndex($name, 300)", name=LEGACY_VECTOR_INDEXES[kind])
    reopened = Neo4jStore(store.settings)
    reopened.open("hash-44", dim)
    try:
        indexes = vector_index_dims(store.settings)
        assert not set(LEGACY_VECTOR_INDEXES.values()) & set(indexes)
        assert all(indexes.get(vector_index_name(kind, dim)) == dim for kind in EMBEDDED_KINDS)
        hits = reopened.nearest_phrases(vectors[:1], top_k=2, min_similarity=-1.0)[0]
        assert hits[0].id == phrases[0].id
        assert [d.passage_id for d in reopened.view().dense_passage_scores(vectors[len(phrases)], 1)] == [
            "p0"
        ]
        assert reopened.view().nearest_facts(vectors[-1], 1)[0].id == records[0].facts[0].id
    finally:
        reopened.close()


def test_the_driver_is_quiet_about_expected_notifications_and_raises_deprecations(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = Neo4jStore(neo4j_settings_or_skip())
    store.open("hash-embedder", 16)
    try:
        driver = store.runner.driver
        with caplog.at_level(logging.INFO, logger="neo4j.notifications"):
            assert store.reembed_state() is None  # reads a property no node may have
            driver.execute_query(
                "MATCH (n:Phrase {namespace: $ns}) "
                "RETURN n.hipporag_never_written AS x, count(n.hipporag_never_written) AS c",
                ns=store.namespace,
            )
            driver.execute_query("UNWIND [1, null] AS x RETURN collect(x) AS c")  # null eliminated
        assert [r.getMessage() for r in caplog.records if r.name == "neo4j.notifications"] == []
        with pytest.warns(Neo4jDeprecationWarning):
            driver.execute_query("MATCH (n:Phrase {namespace: $ns}) RETURN id(n) AS old", ns=store.namespace)
    finally:
        store.close()


def test_a_plain_driver_would_have_logged_them() -> None:
    """The control for the test above: the same statement through a driver without our options logs."""
    s = neo4j_settings_or_skip()
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level=logging.DEBUG)
    logger = logging.getLogger("neo4j.notifications")
    logger.addHandler(handler)
    old = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        with neo4j.GraphDatabase.driver(s.uri or "", auth=(s.user, s.password.get_secret_value())) as d:
            d.execute_query("MATCH (n:Phrase) RETURN count(n.hipporag_never_written) AS c")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)
    assert any("hipporag_never_written" in r.getMessage() for r in records)
