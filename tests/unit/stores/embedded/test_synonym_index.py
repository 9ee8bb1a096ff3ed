"""The synonym step through the IVF index (issue 35): a batch search that, with every list scored, is the
exact scan; with the default lists, finds at least 99% of the exact scan's edges on clustered vectors, with
exact scores; new phrases (the index's tail) always searched; small stores unchanged.

Deterministic (fixed seeds); behaviour only, never times.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hipporag_neo4j.stores.base import PhraseRecord
from hipporag_neo4j.stores.embedded import EmbeddedStore
from hipporag_neo4j.stores.memory.knn import nearest_rows
from hipporag_neo4j.stores.memory.vector_index import DEFAULT_SYNONYM_PROBES, IvfIndex, VectorSearch

pytestmark = pytest.mark.unit

DIM = 32


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def _centres(rng: np.random.Generator, n: int) -> np.ndarray:
    return _unit(rng.standard_normal((n, DIM)))


def _jittered(rng: np.random.Generator, n: int, centres: np.ndarray) -> np.ndarray:
    """Rows around ``centres``, noise norm 0.3-1.0: siblings straddle cosine 0.8."""
    noise = rng.standard_normal((n, DIM))
    noise *= (rng.uniform(0.3, 1.0, n) / np.linalg.norm(noise, axis=1))[:, None]
    return _unit(centres[rng.integers(0, len(centres), n)] + noise)


def _pairs(rows: list[np.ndarray]) -> set[tuple[int, int]]:
    return {(q, int(r)) for q, found in enumerate(rows) for r in found}


def test_every_list_scored_is_the_exact_scan_and_the_tail_is_searched() -> None:
    rng = np.random.default_rng(1)
    centres = _centres(rng, 300)
    matrix = _jittered(rng, 5_000, centres)
    index = IvfIndex.train(matrix[:4_000], nlist=40)  # rows 4,000.. are the tail
    queries = _jittered(rng, 200, centres)
    got = index.search_many(matrix, queries, 11, 0.8, probes=40)
    exact = [r for r, _ in nearest_rows(queries, matrix, 11, 0.8)]
    assert _pairs(got) == _pairs(exact)
    assert any((np.asarray(r) >= 4_000).any() for r in got)  # tail rows found
    # with one list per query, some edges are missed: the index really restricts the search
    one = index.search_many(matrix, queries, 1_000, 0.8, probes=1)
    every = [r for r, _ in nearest_rows(queries, matrix, 1_000, 0.8)]
    assert _pairs(one) < _pairs(every)


def test_at_most_k_best_per_query() -> None:
    rng = np.random.default_rng(2)
    centres = _centres(rng, 20)
    matrix = _jittered(rng, 3_000, centres)  # ~150 rows per centre: many pass a low floor
    index = IvfIndex.train(matrix, nlist=16)
    queries = _jittered(rng, 10, centres)
    for q, found in zip(queries, index.search_many(matrix, queries, 5, 0.0, probes=16), strict=True):
        assert len(found) == 5
        sims = matrix @ q
        assert sorted(sims[found].tolist()) == pytest.approx(sorted(np.sort(sims)[-5:].tolist()), abs=1e-6)


def _store(path: Path, search: VectorSearch) -> EmbeddedStore:
    store = EmbeddedStore(path, vector_search=search)
    store.open("test-model", DIM)
    return store


def test_store_synonym_edges_through_the_index_keep_exact_scores_and_recall(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    centres = _centres(rng, 2_000)
    vectors = _jittered(rng, 20_000, centres)
    store = _store(tmp_path / "s", VectorSearch("approximate"))
    store.write_passages([PhraseRecord(f"ph{i}", f"phrase {i}", v) for i, v in enumerate(vectors)], [])
    new = _jittered(rng, 512, centres)
    store.write_passages([PhraseRecord(f"new{i}", f"new {i}", v) for i, v in enumerate(new)], [])
    ids = [f"new{i}" for i in range(len(new))]
    approx = store.nearest_phrases(new, 100, 0.8, exclude_ids=ids)
    assert store.cache.index_builds == 1  # the synonym step went through the index
    exact = _store(tmp_path / "s", VectorSearch("exact")).nearest_phrases(new, 100, 0.8, exclude_ids=ids)
    want = {(i, h.id, h.similarity) for i, row in enumerate(exact) for h in row}
    got = {(i, h.id, h.similarity) for i, row in enumerate(approx) for h in row}
    assert len(want) > 500
    assert got <= want  # nothing invented, every score exact
    assert len(got) / len(want) >= 0.99
    assert any(h.id.startswith("new") for row in approx for h in row)  # new phrases meet each other
    assert VectorSearch().synonym_probes == DEFAULT_SYNONYM_PROBES
