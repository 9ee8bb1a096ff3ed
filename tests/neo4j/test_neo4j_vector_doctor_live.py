"""Vector look-ups scored exactly, and doctor's report of the GDS projections, on a real server.

The vector indexes answer approximately (HNSW; the ``vector-2.0`` provider quantizes its vectors by
default): the statements re-score every candidate with ``vector.similarity.cosine``, so similarities and
thresholds are the exact cosines, in both ``neo4j.vector_search`` modes; an index shared by namespaces
is fetched from again, four times wider, while another namespace's nodes crowd out this one's (counted
on the wire, tests/support/live_driver.py). ``doctor`` names the engine ``auto`` runs for the
namespace's size, the server's GDS, and the heap each of the namespace's projections holds (and no other
namespace's).

The vectors are of the tests' dimension (``TEST_EMBEDDING_DIM``), whose indexes every session's
snapshot holds: the indexes of a dimension of this module's own would be dropped by the clean-up of any
other test session running on the same server meanwhile (tests/conftest.py drops the ``hipporag_``
vector indexes its snapshot did not have). Nodes enter them only in ``index`` mode
(test_neo4j_vector_labels.py), so the other namespaces there are this module's crowds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord, WalkParams
from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.cypher import load_query
from tests.support.corpora import chain_corpus
from tests.support.live_driver import RecordingDriver, recorded_store
from tests.support.neo4j_support import (
    TEST_EMBEDDING_DIM,
    neo4j_server_or_skip,
    neo4j_settings_or_skip,
    run_cypher,
    server_has_gds,
)

pytestmark = pytest.mark.neo4j

DIM = TEST_EMBEDDING_DIM
MODEL = "hash-embedder"


def server_of(s: Neo4jSettings) -> tuple[str, str, str, str]:
    return (s.uri or "", s.user, s.password.get_secret_value(), s.database)


def normalised(v: np.ndarray) -> np.ndarray:
    return np.asarray(v / np.linalg.norm(v), dtype=np.float32)


def exact_cosine(a: Any, b: Any) -> float:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


def opened(settings: Neo4jSettings) -> Neo4jStore:
    store = Neo4jStore(settings)
    store.open(MODEL, DIM)
    return store


def passages_mentioning(ids: list[str], prefix: str, vectors: list[np.ndarray]) -> list[PassageRecord]:
    """One passage per vector, each mentioning two of ``ids`` (every phrase mentioned)."""
    return [
        PassageRecord(
            Passage(id=f"{prefix}{i:02d}", text=f"passage {prefix}{i}"),
            v,
            {ids[(2 * i) % len(ids)]: 1, ids[(2 * i + 1) % len(ids)]: 1},
        )
        for i, v in enumerate(vectors)
    ]


@pytest.fixture
def stores() -> Iterator[list[Neo4jStore]]:
    """The stores a test opens: dropped (namespace, projections, unused indexes) and closed after it."""
    opened_here: list[Neo4jStore] = []
    yield opened_here
    for store in opened_here:
        store.drop_namespace()
        store.close()


def embedded(
    stores: list[Neo4jStore], vector_search: str
) -> tuple[Neo4jStore, RecordingDriver, dict[str, np.ndarray]]:
    """30 phrases and 12 passages with random vectors, beside another namespace's 40 phrases in the same
    indexes (``vector_search=index``: its nodes are in them). Returns the store, the driver recording what
    it sends, and every vector by id."""
    rng = np.random.default_rng(3)
    ours, driver = recorded_store(
        neo4j_settings_or_skip(vector_search=vector_search, copy_cache=False), MODEL, DIM
    )
    crowd = opened(neo4j_settings_or_skip(vector_search="index", copy_cache=False))
    stores += [ours, crowd]
    phrases = [
        PhraseRecord(f"ph{i:02d}", f"phrase {i}", normalised(rng.standard_normal(DIM))) for i in range(30)
    ]
    passage_vectors = [normalised(rng.standard_normal(DIM)) for _ in range(12)]
    ours.write_passages(phrases, passages_mentioning([p.id for p in phrases], "p", passage_vectors))
    others = [PhraseRecord(f"x{i}", f"x {i}", normalised(rng.standard_normal(DIM))) for i in range(40)]
    crowd.write_passages(others, passages_mentioning([p.id for p in others], "o", [others[0].embedding]))
    vectors = {p.id: p.embedding for p in phrases} | {f"p{i:02d}": v for i, v in enumerate(passage_vectors)}
    driver.calls.clear()
    return ours, driver, vectors


@pytest.mark.parametrize("vector_search", ["index", "client"])
def test_vector_scores_are_exact_cosines_not_quantized_index_scores(
    stores: list[Neo4jStore], vector_search: str
) -> None:
    store, driver, vectors = embedded(stores, vector_search)
    bump = np.eye(DIM, dtype=np.float32)[0] * 0.3
    query = normalised(vectors["ph05"] + bump)
    hits = store.nearest_phrases(np.stack([query]), top_k=5, min_similarity=0.0)[0]
    assert hits
    for hit in hits:
        assert hit.similarity == pytest.approx(exact_cosine(vectors[hit.id], query), abs=1e-6)
    assert [h.similarity for h in hits] == sorted((h.similarity for h in hits), reverse=True)
    # the threshold applies to the exact score: a phrase just above it is kept
    threshold = hits[2].similarity - 1e-5
    kept = store.nearest_phrases(np.stack([query]), top_k=5, min_similarity=threshold)[0]
    assert [h.id for h in kept] == [h.id for h in hits[:3]]
    dense = store.view().dense_passage_scores(query, 4)
    assert len(dense) == 4
    for item in dense:
        assert item.score == pytest.approx(exact_cosine(vectors[item.passage_id], query), abs=1e-6)
    searched = {"vector_phrases", "vector_passages"} & set(driver.counts())
    assert searched == ({"vector_phrases", "vector_passages"} if vector_search == "index" else set())
    statements = [load_query(n).text for n in ("vector_phrases", "vector_passages", "vector_facts")]
    assert all("vector.similarity.cosine" in t for t in statements)


def test_nearest_facts_over_fetch_past_other_namespaces_and_score_exactly(stores: list[Neo4jStore]) -> None:
    rng = np.random.default_rng(11)
    target = normalised(rng.standard_normal(DIM))
    settings = neo4j_settings_or_skip(vector_search="index", copy_cache=False)
    store, driver = recorded_store(settings, MODEL, DIM)
    crowd = opened(neo4j_settings_or_skip(vector_search="index", copy_cache=False))
    stores += [store, crowd]
    phrases = [
        PhraseRecord(f"ph{i:02d}", f"phrase {i}", normalised(rng.standard_normal(DIM))) for i in range(10)
    ]

    def fact(fid: str, s: int, predicate: str, o: int, v: np.ndarray) -> FactRecord:
        return FactRecord(fid, f"ph{s:02d}", predicate, f"ph{o:02d}", f"{fid} text", v)

    facts = [
        fact(f"f{i}", i, "relates to", i + 1, normalised(target + 0.6 * rng.standard_normal(DIM)))
        for i in range(3)
    ]
    facts += [fact("f-tie-b", 5, "is", 6, target), fact("f-tie-a", 7, "is", 8, target)]
    records = [
        PassageRecord(Passage(id=f"d{k}", text=f"d{k}"), target, {f.subject_id: 1, f.object_id: 1}, [f])
        for k, f in enumerate(facts)
    ]
    store.write_passages(phrases, records)
    crowd_phrases = [PhraseRecord(n, n, target) for n in ("x1", "x2")]
    crowd_facts = [
        FactRecord(f"o{i}", "x1", "is", "x2", f"o{i}", normalised(target + 0.01 * rng.standard_normal(DIM)))
        for i in range(40)
    ]  # closer, in another namespace
    crowd.write_passages(
        crowd_phrases, [PassageRecord(Passage(id="c", text="c"), target, {"x1": 1, "x2": 1}, crowd_facts)]
    )
    by_id = {f.id: f.embedding for f in facts}
    driver.calls.clear()
    hits = store.view().nearest_facts(target, 4)
    assert [h.id for h in hits][:2] == ["f-tie-a", "f-tie-b"]  # ties by id
    assert len(hits) == 4 and all(h.id.startswith("f") for h in hits)
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-6)
    third = hits[2]
    assert third.similarity == pytest.approx(exact_cosine(by_id[third.id], target), abs=1e-6)
    i = int(third.id[1:])
    assert (third.subject_id, third.subject, third.predicate, third.object_id, third.object) == (
        f"ph{i:02d}",
        f"phrase {i}",
        "relates to",
        f"ph{i + 1:02d}",
        f"phrase {i + 1}",
    )
    fetches = [c.params["fetch"] for c in driver.named("vector_facts")]
    assert fetches == [20, 80]  # the other namespace filled the first fetch
    assert store.view().nearest_facts(target, 0) == []


def test_doctor_names_the_engine_the_gds_status_and_the_projection_memory(stores: list[Neo4jStore]) -> None:
    from hipporag_neo4j.diagnostics import doctor
    from hipporag_neo4j.settings import Settings, StoreSettings

    if not server_has_gds(neo4j_server_or_skip()):
        pytest.skip("needs the GDS plugin (its absence and a sandboxed GDS are unit tests)")
    settings = neo4j_settings_or_skip(copy_cache=False)  # ppr_engine=auto
    ours = opened(settings)
    other = opened(neo4j_settings_or_skip(ppr_engine="gds", copy_cache=False))
    stores += [ours, other]
    phrases, records = chain_corpus(4)
    for store in (ours, other):
        store.write_passages(phrases, records)
    walk = WalkParams(0.5, 100, 1e-8)
    other.view().graph_passage_scores({"ph0": 1.0}, walk, 3, 1)  # another namespace's projection
    # the namespace's projections, made by a process of its own with ppr_engine=gds (held while it is open)
    projecting = opened(settings.model_copy(update={"ppr_engine": "gds"}))
    try:
        projecting.view().graph_passage_scores({"ph0": 1.0}, walk, 3, 1)
        projecting.view().passage_node_scores({"ph0": 1.0}, {"p1": 0.1}, walk, 3, 1)
        listed = run_cypher(
            server_of(settings),
            "CALL gds.graph.list() YIELD graphName, memoryUsage, sizeInBytes "
            "RETURN graphName, memoryUsage, sizeInBytes ORDER BY graphName",
        )
        mine = [r for r in listed if f".{settings.namespace}." in r["graphName"]]
        assert len(mine) == 2 and any(f".{other.namespace}." in r["graphName"] for r in listed)
        version = run_cypher(server_of(settings), "RETURN gds.version() AS v")[0]["v"]
        full = Settings(store=StoreSettings(backend="neo4j"), neo4j=settings)
        status, detail, data = doctor._neo4j_store(full)
    finally:
        projecting.close()
    # a namespace this small: auto runs the in-process engine, and doctor says so (GDS runs above the size)
    assert status == "ok" and "PPR engine: local (neo4j.ppr_engine=auto): auto runs in process" in detail
    assert f"above that size: GDS {version}" in detail and data["ppr_engine_runs"] == "local"
    held = detail.split("projections of this namespace: ")[1].split(";")[0]
    assert held == ", ".join(f"{r['graphName']} {r['memoryUsage']}" for r in mine)
    assert other.namespace not in held
    assert [(p["graph_name"], p["size_in_bytes"]) for p in data["gds_projections"]] == [
        (r["graphName"], r["sizeInBytes"]) for r in mine
    ]
