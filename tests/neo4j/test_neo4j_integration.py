"""The Neo4j store against a real server (testcontainers or HIPPORAG_TEST_NEO4J_URI; skipped without).

The protocol's behaviour is asserted by tests/integration/test_store_conformance.py on both stores; this
module
covers what only Neo4j has: schema and capabilities, namespaces sharing a database, the GDS projection
catalog (versions, kinds, dropped on close), both GDS PageRank forms against the in-process engine
(tiny seed weights included), HippoRAG 2's walk on every engine, exact vector scores, vector-index
over-fetching across namespaces, and two writers at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import neo4j
import numpy as np
import pytest

from hipporag_neo4j.errors import ModelMismatchError
from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord, SynonymEdge, WalkParams
from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.engines import GdsPpr, LocalPpr
from hipporag_neo4j.stores.neo4j.projection import graph_prefix, namespace_prefix
from tests.support.corpora import chain_corpus, unit
from tests.support.neo4j_support import TEST_EMBEDDING_DIM, neo4j_settings_or_skip

pytestmark = pytest.mark.neo4j

MODEL = "hash-embedder"
DIM = TEST_EMBEDDING_DIM


KINDS = ("passage", "phrase", "fact")


def near(v: np.ndarray, noise: float, seed: int) -> np.ndarray:
    w = v + noise * np.random.default_rng(seed).standard_normal(DIM)
    return (w / np.linalg.norm(w)).astype(np.float32)


def open_store(settings: Neo4jSettings) -> Neo4jStore:
    store = Neo4jStore(settings)
    store.open(MODEL, DIM)
    return store


@pytest.fixture
def settings() -> Neo4jSettings:
    """With GDS, ``ppr_engine=gds``: these graphs are small, where ``auto`` runs PPR in process."""
    found = neo4j_settings_or_skip()
    return found.model_copy(update={"ppr_engine": "gds"}) if has_gds(found) else found


@pytest.fixture
def store(settings: Neo4jSettings) -> Iterator[Neo4jStore]:
    s = open_store(settings)
    yield s
    s.close()


def raw(settings: Neo4jSettings, query: str, **params: Any) -> list[dict[str, Any]]:
    """Cypher outside the store, to look at what it left in the database."""
    auth = (settings.user, settings.password.get_secret_value())
    with neo4j.GraphDatabase.driver(settings.uri or "", auth=auth) as driver:
        records, _, _ = driver.execute_query(query, params, database_=settings.database)
        return [r.data() for r in records]


def has_gds(settings: Neo4jSettings) -> bool:
    rows = raw(settings, "SHOW PROCEDURES YIELD name WHERE name = 'gds.graph.list' RETURN count(*) AS n")
    return bool(rows[0]["n"])


def test_open_is_idempotent_and_reports_capabilities(store: Neo4jStore, settings: Neo4jSettings) -> None:
    again = open_store(settings)
    assert again.meta() == store.meta()
    caps = store.capabilities()
    assert caps.vector_index and caps.usable and caps.notes
    if has_gds(settings):
        assert caps.ppr_engine in ("gds-weighted", "gds-linear")
        assert caps.gds_version is not None
    else:  # Community without GDS: the in-process engine, said plainly
        assert caps.ppr_engine == "local" and caps.gds_version is None
        assert any("in process" in note for note in caps.notes)
    names = {r["name"] for r in raw(settings, "SHOW CONSTRAINTS YIELD name RETURN name")}
    assert {
        "hipporag_passage_key",
        "hipporag_phrase_key",
        "hipporag_fact_key",
        "hipporag_meta_namespace",
    } <= names
    indexes = raw(settings, "SHOW INDEXES YIELD name, type, state WHERE type = 'VECTOR' RETURN name, state")
    # this store's dimension has its three indexes; a shared database may hold other dimensions' too
    states = {r["name"]: r["state"] for r in indexes if r["name"].startswith("hipporag_")}
    assert {name: states.get(name) for name in (f"hipporag_{k}_embedding_{DIM}" for k in KINDS)} == {
        f"hipporag_{kind}_embedding_{DIM}": "ONLINE" for kind in KINDS
    }
    assert all(name.rsplit("_", 1)[1].isdigit() for name in states), states  # every index is per dimension
    again.close()


def test_another_dimension_in_the_same_database_has_its_own_indexes(
    settings: Neo4jSettings, store: Neo4jStore
) -> None:
    """Issue 17: one database (Community has one) holds namespaces of several embedding dimensions."""
    other = Neo4jStore(neo4j_settings_or_skip())
    other.open("bigger-model", DIM * 2)
    try:
        names = {r["name"] for r in raw(settings, "SHOW INDEXES YIELD name, type WHERE type = 'VECTOR'")}
        assert {f"hipporag_phrase_embedding_{DIM}", f"hipporag_phrase_embedding_{DIM * 2}"} <= names
        with pytest.raises(ModelMismatchError, match="bigger-model"):  # a namespace keeps its model
            Neo4jStore(other.settings).open("hash-embedder", DIM)
    finally:
        other.close()


def test_namespaces_and_user_nodes_are_left_alone(settings: Neo4jSettings, store: Neo4jStore) -> None:
    marker = f"user-{settings.namespace}"
    raw(
        settings,
        "CREATE (:Passage {id: 'p0', note: $marker}), (:Phrase {id: 'ph0', note: $marker})",
        marker=marker,
    )
    neighbour = open_store(neo4j_settings_or_skip())
    phrases, records = chain_corpus(3)
    store.write_passages(phrases, records)
    neighbour.write_passages(phrases[:2], records[:1])
    assert store.stats().passages == 3 and neighbour.stats().passages == 1

    report = store.delete_passages(["p0", "p1", "p2"])
    assert report.passages == ["p0", "p1", "p2"] and report.phrases_removed == 4
    assert store.stats().phrases == 0
    assert neighbour.stats().passages == 1 and neighbour.stats().phrases == 2
    left = raw(
        settings,
        "MATCH (n {note: $marker}) RETURN labels(n)[0] AS label, n.id AS id ORDER BY label",
        marker=marker,
    )
    assert left == [{"label": "Passage", "id": "p0"}, {"label": "Phrase", "id": "ph0"}]
    raw(settings, "MATCH (n {note: $marker}) DETACH DELETE n", marker=marker)
    neighbour.close()


def test_gds_forms_agree_with_the_local_engine_and_projections_are_versioned(
    settings: Neo4jSettings, store: Neo4jStore
) -> None:
    """With GDS: both GDS forms give the in-process scores and the projection follows the graph version
    (the old one dropped). Without: the store's engine is the in-process one, and its cached graph
    follows the graph version the same way."""
    phrases, records = chain_corpus(8)
    store.write_passages(phrases, records)
    store.write_synonyms([SynonymEdge("ph1", "ph6", 0.87), SynonymEdge("ph2", "ph7", 0.91)])
    seeds = {"ph0": 0.6, "ph4": 0.3, "ph8": 0.1}
    scores = store.view().personalized_pagerank(seeds, WalkParams(0.5, 100, 1e-10))
    local = LocalPpr(store.copy).run(seeds, WalkParams(0.5, 100, 1e-12))
    gds = has_gds(settings)
    forms = [scores]
    if gds:
        forms.append(
            GdsPpr(store.runner, store.projections, settings.namespace, weighted=False).run(
                seeds, WalkParams(0.5, 100, 1e-10)
            )
        )
    assert sum(scores.values()) == pytest.approx(1.0)
    for found in forms:
        assert set(found) == set(local)
        for phrase_id, score in local.items():
            assert found[phrase_id] == pytest.approx(score, abs=1e-4)

    if gds:
        catalog = store.projections()
        first = catalog.current
        assert first is not None and first.node_count == 9
    else:
        engine = store.ppr_engine()  # the in-process copy, read once per graph version
        assert isinstance(engine, LocalPpr) and engine.copy is not None
        reads = engine.copy.reads.get("graph", 0)
        assert reads == 1, engine.copy.reads
        store.view().personalized_pagerank(seeds, WalkParams(0.5, 100, 1e-10))
        assert engine.copy.reads.get("graph") == reads  # same graph version: the held graph
    store.write_synonyms([SynonymEdge("ph0", "ph8", 0.95)])
    after = store.view().personalized_pagerank(seeds, WalkParams(0.5, 100, 1e-10))
    assert after != scores  # the new edge is walked
    if gds:
        second = catalog.current
        assert second is not None and second.version > first.version
        listed = raw(
            settings,
            "CALL gds.graph.list() YIELD graphName WHERE graphName STARTS WITH $prefix RETURN graphName",
            prefix=graph_prefix(settings.database, settings.namespace),
        )
        assert [r["graphName"] for r in listed] == [second.name]  # the old projection was dropped
    else:
        # a new version, written by this store: the copy is brought forward by the edge written (not read
        # again); the walk above already saw the new edge
        assert engine.copy.reads.get("graph") == reads, engine.copy.reads
        assert engine.copy.reads.get("advanced") == 1, engine.copy.reads


def test_passage_scores_and_explanations(store: Neo4jStore) -> None:
    phrases, records = chain_corpus(5)
    store.write_passages(phrases, records)
    scored = store.view().graph_passage_scores(
        {"ph0": 1.0}, WalkParams(0.5, 100, 1e-10), limit=3, explain_phrases=1
    )
    assert scored[0].passage_id == "p0"
    assert len(scored[0].top_phrases) == 1 and scored[0].top_phrases[0][0] in ("phrase 0", "phrase 1")
    ppr = store.view().personalized_pagerank({"ph0": 1.0}, WalkParams(0.5, 100, 1e-10))
    assert scored[0].score == pytest.approx(ppr["ph0"] * 1 + ppr["ph1"] * 2, rel=1e-6)


def test_nearest_phrases_over_fetch_past_other_namespaces(store: Neo4jStore) -> None:
    query = unit(77)
    crowd = open_store(neo4j_settings_or_skip())
    crowd_phrases = [PhraseRecord(f"c{i}", f"crowd {i}", near(query, 0.01, i)) for i in range(60)]
    crowd.write_passages(
        crowd_phrases, [PassageRecord(Passage(id="c", text="c"), query, {p.id: 1 for p in crowd_phrases})]
    )
    ours = [PhraseRecord("mine", "mine", near(query, 0.3, 1)), PhraseRecord("far", "far", -query)]
    store.write_passages(ours, [PassageRecord(Passage(id="m", text="m"), query, {"mine": 1, "far": 1})])
    hits = store.nearest_phrases(np.stack([query]), top_k=2, min_similarity=0.0)
    assert [h.id for h in hits[0]] == ["mine"]
    assert hits[0][0].similarity == pytest.approx(float(query @ ours[0].embedding), abs=1e-3)
    crowd.close()


def test_two_writers_at_once_make_no_duplicates(settings: Neo4jSettings, store: Neo4jStore) -> None:
    phrases, records = chain_corpus(30)
    errors: list[BaseException] = []

    def write(part: list[PassageRecord]) -> None:
        writer = Neo4jStore(settings)
        try:
            writer.open(MODEL, DIM)
            writer.write_passages(phrases, part)
        except BaseException as exc:
            errors.append(exc)
        finally:
            writer.close()

    threads = [
        threading.Thread(target=write, args=(records[:20],)),
        threading.Thread(target=write, args=(records[10:],)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors
    stats = store.stats()
    assert (stats.passages, stats.phrases, stats.facts, stats.relation_edges, stats.mentions) == (
        30,
        31,
        30,
        30,
        60,
    )
    counts = {
        h.id: h.passage_count for h in store.phrases_by_name([f"phrase {i}" for i in range(31)]).values()
    }
    assert counts["ph0"] == 1 and counts["ph15"] == 2 and counts["ph30"] == 1


def test_tiny_seed_weights_and_every_engine_agree_on_both_walks(
    settings: Neo4jSettings, store: Neo4jStore
) -> None:
    """Issue 9, item 1: seeds of 1e-5 (1 / passage count at scale) with the retrieval defaults (100
    iterations, tolerance 1e-8) give the reference scores, on every engine the server has (GDS's forms
    where it is installed, the in-process engine everywhere)."""
    phrases, records = chain_corpus(12)
    store.write_passages(phrases, records)
    store.write_synonyms([SynonymEdge("ph2", "ph9", 0.9)])
    seeds = {"ph0": 2e-5, "ph5": 1e-5, "ph11": 1e-5}
    local = LocalPpr(store.copy)
    reference = local.run(seeds, WalkParams(0.5, 1000, 1e-15))
    found_scores = store.view().personalized_pagerank(seeds, WalkParams(0.5, 100, 1e-8))
    assert max(abs(found_scores.get(k, 0.0) - v) for k, v in reference.items()) < 1e-6
    passage_seeds = {"p3": 2e-5, "p7": 1e-5}
    expected = local.passage_node_scores(seeds, passage_seeds, WalkParams(0.5, 1000, 1e-15), 6, 2)
    engines: list[Any] = [local]
    if has_gds(settings):
        engines.append(GdsPpr(store.runner, store.projections, settings.namespace, weighted=False))
    if store.capabilities().ppr_engine == "gds-weighted":
        engines.append(GdsPpr(store.runner, store.projections, settings.namespace, weighted=True))
    for engine in engines:
        found = engine.passage_node_scores(seeds, passage_seeds, WalkParams(0.5, 100, 1e-8), 6, 2)
        assert [s.passage_id for s in found] == [s.passage_id for s in expected], engine.name
        for item, ref in zip(found, expected, strict=True):
            assert item.score == pytest.approx(ref.score, abs=1e-6)
            assert [n for n, _ in item.top_phrases] == [n for n, _ in ref.top_phrases]
    hits = store.view().graph_passage_scores(seeds, WalkParams(0.5, 100, 1e-8), 4, 2)
    assert [h.passage_id for h in hits] == [
        h.passage_id for h in local.passage_scores(seeds, WalkParams(0.5, 1000, 1e-15), 4, 2)
    ]


def test_projections_are_versioned_per_kind_and_dropped_on_close(settings: Neo4jSettings) -> None:
    """With GDS: one projection per kind, named for the namespace, dropped on close. Without: no
    projection at all (``gds_projections`` is empty), the in-process copy reads the graph once per version."""
    store = open_store(settings)
    phrases, records = chain_corpus(4)
    store.write_passages(phrases, records)
    store.view().graph_passage_scores({"ph0": 1.0}, WalkParams(0.5, 100, 1e-8), 3, 1)
    store.view().passage_node_scores({"ph0": 1.0}, {"p1": 0.1}, WalkParams(0.5, 100, 1e-8), 3, 1)
    prefix = namespace_prefix(settings.database, settings.namespace)
    held = [p["graph_name"] for p in store.gds_projections()]
    if not has_gds(settings):
        assert held == []
        engine = store.ppr_engine()
        assert isinstance(engine, LocalPpr) and engine.copy is not None
        # one read of the graph served both kinds of walk; asking again at the same version reads nothing
        assert engine.copy.reads.get("graph") == 1, engine.copy.reads
        store.view().graph_passage_scores({"ph0": 1.0}, WalkParams(0.5, 100, 1e-8), 3, 1)
        store.view().passage_node_scores({"ph0": 1.0}, {"p1": 0.1}, WalkParams(0.5, 100, 1e-8), 3, 1)
        assert engine.copy.reads.get("graph") == 1, engine.copy.reads
        store.close()
        return
    assert len(held) == 2 and all(name.startswith(prefix) for name in held)
    assert any(".passages.v" in name for name in held)
    store.close()
    listed = raw(
        settings,
        "CALL gds.graph.list() YIELD graphName WHERE graphName STARTS WITH $prefix RETURN graphName",
        prefix=prefix,
    )
    assert listed == []


def test_vector_scores_are_exact_cosines(store: Neo4jStore) -> None:
    """Issue 9, item 6: quantized index scores are re-scored with vector.similarity.cosine."""
    query = unit(5)
    ours = [PhraseRecord(f"v{i}", f"v {i}", near(query, 0.2 + 0.1 * i, i)) for i in range(6)]
    store.write_passages(ours, [PassageRecord(Passage(id="pv", text="pv"), query, {p.id: 1 for p in ours})])
    hits = store.nearest_phrases(np.stack([query]), top_k=6, min_similarity=-1.0)[0]
    by_id = {p.id: p.embedding for p in ours}
    for hit in hits:
        assert hit.similarity == pytest.approx(float(query @ by_id[hit.id]), abs=1e-6)


def test_counts_and_relations_brought_forward_by_writes_equal_a_recount(
    settings: Neo4jSettings, store: Neo4jStore
) -> None:
    """A write adds to the passage counts and RELATION edges (write_mentions, write_relations) instead
    of recounting them: after writes in several calls (a hub phrase, one pair stated by several passages
    with predicates arriving out of order, a fact stated twice) and a delete (which recounts), every
    phrase's passage_count and every RELATION edge's weight and sorted predicates are what a count from
    scratch over MENTIONS and STATES gives; no node written carries its dimension's label (with
    vector_search=client the namespace stays out of the vector indexes: test_neo4j_vector_labels.py)."""
    hub = PhraseRecord("hub", "hub", unit(1))
    phrases = [hub, *(PhraseRecord(f"x{i}", f"x {i}", unit(10 + i)) for i in range(6))]

    def fact(s: str, predicate: str, o: str) -> FactRecord:
        return FactRecord(
            f"{s}-{predicate}-{o}", s, predicate, o, f"{s} {predicate} {o}", unit(len(predicate))
        )

    def record(pid: str, mentions: list[str], facts: list[FactRecord]) -> PassageRecord:
        return PassageRecord(
            Passage(id=pid, text=f"text {pid}"), unit(100 + len(pid)), {m: 1 for m in mentions}, facts
        )

    batches = [
        [
            record("a1", ["hub", "x0", "x1"], [fact("x0", "z rel", "x1"), fact("hub", "in", "x0")]),
            record("a2", ["hub", "x0", "x1"], [fact("x0", "z rel", "x1"), fact("x0", "m rel", "x1")]),
        ],
        [
            record("b1", ["hub", "x0", "x1", "x2"], [fact("x0", "a rel", "x1"), fact("x1", "to", "x2")]),
            record("b2", ["hub", "x3"], [fact("hub", "in", "x0"), fact("x3", "self", "x3")]),
        ],
        [record("c1", ["hub", "x4", "x5"], [fact("x4", "to", "x5"), fact("x0", "z rel", "x1")])],
    ]
    for batch in batches:
        store.write_passages(phrases, batch)
    store.delete_passages(["b2"])
    store.write_passages(phrases, [record("d1", ["hub", "x3"], [fact("x3", "self", "x3")])])
    ns = store.namespace

    counts = raw(
        settings,
        "MATCH (p:Phrase {namespace: $ns}) "
        "RETURN p.id AS id, p.passage_count AS stored, COUNT { (d:Passage)-[:MENTIONS]->(p) } AS counted",
        ns=ns,
    )
    assert {r["id"]: r["stored"] for r in counts} == {r["id"]: r["counted"] for r in counts}
    assert {r["id"]: r["stored"] for r in counts}["hub"] == 5

    stored = raw(
        settings,
        "MATCH (s:Phrase {namespace: $ns})-[r:RELATION]->(o:Phrase) "
        "RETURN s.id AS s, o.id AS o, r.weight AS weight, r.predicates AS predicates",
        ns=ns,
    )
    counted = raw(
        settings,
        "MATCH (d:Passage {namespace: $ns})-[:STATES]->(f:Fact) WITH f ORDER BY f.predicate "
        "RETURN f.subject_id AS s, f.object_id AS o, count(*) AS weight, "
        "collect(DISTINCT f.predicate) AS predicates",
        ns=ns,
    )
    assert sorted(stored, key=lambda r: (r["s"], r["o"])) == sorted(counted, key=lambda r: (r["s"], r["o"]))
    x0_x1 = next(r for r in stored if (r["s"], r["o"]) == ("x0", "x1"))
    assert (x0_x1["weight"], x0_x1["predicates"]) == (5, ["a rel", "m rel", "z rel"])
    assert store.stats().relation_edges == len(counted)

    labelled = raw(
        settings,
        "MATCH (n {namespace: $ns}) WHERE (n:Phrase OR n:Passage OR n:Fact) AND n.embedding IS NOT NULL "
        "WITH n, CASE WHEN n:Phrase THEN 'Phrase' WHEN n:Passage THEN 'Passage' ELSE 'Fact' END AS kind "
        "WHERE kind + 'Embedding' + toString($dim) IN labels(n) RETURN n.id AS id",
        ns=ns,
        dim=DIM,
    )
    assert labelled == []
