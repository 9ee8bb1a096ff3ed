"""The IVF vector index of the embedded store: finds planted near-duplicates, switches on by size, is
persisted and reused, never misses rows a later write added, and bad settings are clear errors.

Deterministic (fixed seeds); behaviour only, never times.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import Settings, StoreSettings
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord
from hipporag_neo4j.stores.embedded import EmbeddedStore
from hipporag_neo4j.stores.embedded.store import INDEX_DIR
from hipporag_neo4j.stores.memory.knn import top_positions
from hipporag_neo4j.stores.memory.vector_index import (
    DEFAULT_PROBES,
    IvfIndex,
    VectorSearch,
    fingerprint,
    list_count,
)

pytestmark = pytest.mark.unit

DIM = 24
MODEL = "test-model"


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def _clustered(rng: np.random.Generator, n: int, centres: int = 30) -> np.ndarray:
    """Unit vectors around a few centres (embeddings have topics; uniform random vectors have none)."""
    c = _unit(rng.standard_normal((centres, DIM)))
    return _unit(c[rng.integers(0, centres, n)] + 0.35 * rng.standard_normal((n, DIM)) / np.sqrt(DIM))


def _near(rng: np.random.Generator, rows: np.ndarray) -> np.ndarray:
    return _unit(rows + 0.02 * rng.standard_normal(rows.shape) / np.sqrt(DIM))


# --- the index alone ---------------------------------------------------------------------------------
def test_planted_near_duplicates_are_found_and_the_tail_is_always_searched() -> None:
    rng = np.random.default_rng(0)
    matrix = _clustered(rng, 20_000)
    index = IvfIndex.train(matrix)
    assert index.nlist == list_count(20_000) and index.n_indexed == 20_000
    planted = rng.choice(20_000, 200, replace=False)
    for row, query in zip(planted, _near(rng, matrix[planted]), strict=True):
        found = index.search(matrix, query, 5, probes=4)
        assert row in found.tolist()
        assert len(found) == 5
    # rows appended after training: the tail, scanned exactly however few lists are probed
    grown = np.vstack([matrix, _clustered(rng, 300)])
    assert index.covers(grown)
    for row in range(20_000, 20_300, 7):
        assert row in index.search(grown, grown[row], 3, probes=1).tolist()
    extended = index.extend(grown)
    assert extended.n_indexed == 20_300 and extended.covers(grown)
    assert np.array_equal(extended.assignment[:20_000], index.assignment)


def test_a_changed_prefix_is_not_covered() -> None:
    rng = np.random.default_rng(1)
    matrix = _clustered(rng, 3_000)
    index = IvfIndex.train(matrix)
    assert index.covers(matrix) and not index.covers(matrix[:2_999])
    assert not index.covers(np.delete(matrix, 10, axis=0))  # a deletion moved the rows after it
    # ... and as many rows written after it: same length, rows moved
    assert not index.covers(np.vstack([np.delete(matrix, 10, axis=0), matrix[:1]]))
    assert not index.covers(np.zeros((3_000, DIM + 1), np.float32))
    assert fingerprint(matrix, 3_000) == index.fingerprint


def test_training_is_deterministic_and_asks_for_more_lists_when_k_needs_them() -> None:
    rng = np.random.default_rng(2)
    matrix = _clustered(rng, 5_000)
    a, b = IvfIndex.train(matrix), IvfIndex.train(matrix)
    assert np.array_equal(a.centroids, b.centroids) and np.array_equal(a.assignment, b.assignment)
    # k larger than one list: enough lists are probed to return k rows
    assert len(a.search(matrix, matrix[0], 1_000, probes=1)) == 1_000
    assert len(a.search(matrix, matrix[0], 10_000, probes=1)) == 5_000
    with pytest.raises(ValueError, match="empty matrix"):
        IvfIndex.train(np.zeros((0, DIM), np.float32))
    with pytest.raises(ValueError, match="nlist must be between 1 and"):
        IvfIndex.train(matrix[:10], nlist=11)
    assert IvfIndex.train(matrix, nlist=7).nlist == 7


def test_top_positions_is_the_stable_sort_prefix() -> None:
    rng = np.random.default_rng(3)
    values = rng.integers(0, 20, 1_000).astype(np.float32)  # many ties
    for limit in (0, 1, 7, 50, 999, 1_000, 5_000):
        assert top_positions(values, limit).tolist() == np.argsort(-values, kind="stable")[:limit].tolist()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "fast"}, "vector search mode must be one of auto, exact, approximate"),
        ({"min_rows": 0}, "min_rows must be a positive integer"),
        ({"probes": 0}, "probes must be a positive integer"),
        ({"probes": 2.5}, "probes must be a positive integer"),
    ],
)
def test_bad_vector_search_values_are_clear_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        VectorSearch(**kwargs)  # type: ignore[arg-type]


def test_bad_store_settings_name_the_field() -> None:
    with pytest.raises(ValidationError, match="vector_search"):
        StoreSettings(vector_search="fast")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="vector_index_probes"):
        StoreSettings(vector_index_probes=0)


def test_create_store_passes_the_settings(tmp_path: Path) -> None:
    from hipporag_neo4j.api import create_store

    settings = Settings(
        store=StoreSettings(path=tmp_path / "s", vector_search="approximate", vector_index_probes=3)
    )
    store = create_store(settings)
    assert isinstance(store, EmbeddedStore)
    assert store.vector_search == VectorSearch("approximate", 200_000, 3)
    assert Settings().store.vector_index_probes == DEFAULT_PROBES


# --- in the embedded store -----------------------------------------------------------------------------
PER_PASSAGE = 8


def _write(store: EmbeddedStore, rng: np.random.Generator, first: int, n: int) -> np.ndarray:
    """Phrases ``first .. first + n``, one passage per 8 phrases, one embedded fact per phrase."""
    vectors = _clustered(rng, n)
    phrases = [PhraseRecord(f"ph{first + i}", f"phrase {first + i}", vectors[i]) for i in range(n)]
    passages = []
    for p in range(0, n, PER_PASSAGE):
        ids = [f"ph{first + i}" for i in range(p, min(p + PER_PASSAGE, n))]
        facts = [
            FactRecord(f"f{pid}", pid, "rel", ids[0], f"{pid} rel {ids[0]}", vectors[int(pid[2:]) - first])
            for pid in ids
        ]
        passage = Passage(id=f"pa{first + p}", text=f"passage {first + p}", title=None)
        passages.append(PassageRecord(passage, vectors[p], dict.fromkeys(ids, 1), facts))
    store.write_passages(phrases, passages)
    return vectors


def _open(path: Path, search: VectorSearch) -> EmbeddedStore:
    store = EmbeddedStore(path, vector_search=search)
    store.open(MODEL, DIM)
    return store


def _reads(store: EmbeddedStore, queries: np.ndarray, k: int = 1) -> list[object]:
    """The best ``k`` of each search (1: the planted row, which the index must find)."""
    return [
        [[(h.id, round(h.similarity, 6)) for h in row] for row in store.nearest_phrases(queries, k, -1.0)],
        [[(f.id, round(f.similarity, 6)) for f in store.view().nearest_facts(q, k)] for q in queries],
        [
            [(p.passage_id, round(p.score, 6)) for p in store.view().dense_passage_scores(q, k)]
            for q in queries
        ],
    ]


def test_approximate_answers_planted_queries_as_exact_and_is_persisted(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    path = tmp_path / "store"
    store = _open(path, VectorSearch("approximate"))
    vectors = _write(store, rng, 0, 6_000)
    planted = PER_PASSAGE * rng.choice(6_000 // PER_PASSAGE, 40, replace=False)  # phrase, fact, passage
    queries = _near(rng, vectors[planted])
    approx = _reads(store, queries)
    assert store.cache.index_builds == 3  # phrases, facts, passages
    assert {p.name for p in (path / INDEX_DIR).iterdir()} == {"phrase", "fact", "passage"}
    exact = _open(tmp_path / "store", VectorSearch("exact"))
    assert _reads(exact, queries) == approx
    for row, hits in zip(planted, approx[0], strict=True):
        assert hits[0][0] == f"ph{row}"  # each planted phrase first
    # beyond the planted row the index may miss some (recall), but every score it gives is exact
    for query, row in zip(queries, store.nearest_phrases(queries, 5, -1.0), strict=True):
        assert len(row) == 5
        for hit in row:
            exact_score = float(np.dot(vectors[int(hit.id[2:])].astype(np.float64), query.astype(np.float64)))
            assert hit.similarity == pytest.approx(exact_score, abs=1e-12)
        assert [h.similarity for h in row] == sorted((h.similarity for h in row), reverse=True)
    # another process: the persisted indexes are loaded, not trained again
    again = _open(path, VectorSearch("approximate"))
    assert _reads(again, queries) == approx
    assert again.cache.index_builds == 0


def test_a_later_write_is_searched_before_the_index_is_extended(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    path = tmp_path / "store"
    store = _open(path, VectorSearch("approximate", probes=1))
    _write(store, rng, 0, 4_000)
    store.nearest_phrases(_clustered(rng, 1), 3, -1.0)
    store.view().nearest_facts(_clustered(rng, 1)[0], 3)
    assert store.cache.index_builds == 2
    # another writer adds phrases; this store's index does not hold them yet
    other = _open(path, VectorSearch("exact"))
    added = _write(other, rng, 4_000, 400)
    queries = _near(rng, added[::50])
    hits = store.nearest_phrases(queries, 1, -1.0)
    assert [row[0].id for row in hits] == [f"ph{4_000 + i}" for i in range(0, 400, 50)]
    facts = [store.view().nearest_facts(q, 1)[0].id for q in queries]
    assert facts == [f"fph{4_000 + i}" for i in range(0, 400, 50)]
    assert store.cache.index_builds == 2  # the tail was scanned, nothing trained again


def test_a_deletion_rebuilds_the_index_and_never_serves_moved_rows(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    store = _open(tmp_path / "store", VectorSearch("approximate", probes=1))
    vectors = _write(store, rng, 0, 3_000)
    store.nearest_phrases(vectors[:1], 1, -1.0)
    assert store.cache.index_builds == 1
    store.delete_passages(["pa0"])  # phrases 0..7 go: every later row moves up
    _write(store, rng, 3_000, 16)  # and the matrix is longer than the index again
    queries = _near(rng, vectors[100:3_000:100])
    hits = store.nearest_phrases(queries, 1, -1.0)
    assert [r[0].id for r in hits] == [f"ph{i}" for i in range(100, 3_000, 100)]
    assert store.cache.index_builds == 2


def test_auto_switches_by_rows_and_small_stores_stay_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    small = _open(tmp_path / "small", VectorSearch("auto", min_rows=2_001))
    _write(small, rng, 0, 2_000)
    queries = _clustered(rng, 5)
    exact = _open(tmp_path / "small", VectorSearch("exact"))
    assert _reads(small, queries) == _reads(exact, queries)
    assert small.cache.index_builds == 0 and not (tmp_path / "small" / INDEX_DIR).exists()
    big = _open(tmp_path / "small", VectorSearch("auto", min_rows=2_000))
    big.nearest_phrases(queries, 3, -1.0)
    big.view().nearest_facts(queries[0], 3)
    big.view().dense_passage_scores(queries[0], 3)  # 250 passages: below min_rows, exact
    assert big.cache.index_builds == 2


def test_synonym_search_below_min_rows_stays_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    store = _open(tmp_path / "store", VectorSearch("auto", min_rows=3_001, synonym_probes=1))
    vectors = _write(store, rng, 0, 3_000)
    ids = [f"ph{i}" for i in range(0, 3_000, 100)]
    with_exclude = store.nearest_phrases(vectors[::100], 20, 0.5, exclude_ids=ids)
    assert store.cache.index_builds == 0
    exact = _open(tmp_path / "store", VectorSearch("exact"))
    assert with_exclude == exact.nearest_phrases(vectors[::100], 20, 0.5, exclude_ids=ids)
    assert sum(map(len, with_exclude)) > 100


def test_a_long_tail_is_assigned_to_lists_and_persisted_without_training(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hipporag_neo4j.stores.memory import vector_index

    monkeypatch.setattr(vector_index, "INDEX_TAIL_ROWS", 100)
    rng = np.random.default_rng(9)
    path = tmp_path / "store"
    store = _open(path, VectorSearch("approximate"))
    _write(store, rng, 0, 2_000)
    store.nearest_phrases(_clustered(rng, 1), 1, -1.0)
    meta = {"kind": "phrase", "embedding_model": MODEL, "embedding_dim": DIM}
    first = vector_index.load(path / INDEX_DIR / "phrase", meta)
    assert first is not None and first.n_indexed == 2_000
    added = _write(store, rng, 2_000, 50)  # a short tail: searched, not yet listed
    store.nearest_phrases(added[:1], 1, -1.0)
    assert vector_index.load(path / INDEX_DIR / "phrase", meta).n_indexed == 2_000  # type: ignore[union-attr]
    added = _write(store, rng, 2_050, 200)  # past the threshold: listed with the same centroids
    hits = store.nearest_phrases(_near(rng, added[:3]), 1, -1.0)
    assert [r[0].id for r in hits] == ["ph2050", "ph2051", "ph2052"]
    extended = vector_index.load(path / INDEX_DIR / "phrase", meta)
    assert extended is not None and extended.n_indexed == 2_250
    assert np.array_equal(extended.centroids, first.centroids)
    assert store.cache.index_builds == 1


def test_an_index_the_matrix_outgrew_is_trained_again_with_more_lists() -> None:
    """Appends keep the index (its tail, then extended) until the matrix would get twice its lists: then
    it is trained again, so its lists stay about sqrt(rows) long and a search scores as few rows."""
    from hipporag_neo4j.stores.memory.vector_index import HeldIndexes, list_count

    rng = np.random.default_rng(5)
    rows = rng.standard_normal((1_700, 16)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    held = HeldIndexes(VectorSearch("approximate"))
    first = held.index("phrase", rows[:400], version=1)
    assert first is not None and first.nlist == list_count(400) == 20 and held.builds == 1
    grown_once = held.index("phrase", rows[:1_000], version=2)  # 32 lists' worth: kept
    assert grown_once is not None and grown_once.nlist == 20 and held.builds == 1
    outgrown = held.index("phrase", rows, version=3)  # 41 lists' worth: trained again
    assert outgrown is not None and outgrown.nlist == list_count(1_700) == 41 and held.builds == 2
    assert outgrown.n_indexed == 1_700
