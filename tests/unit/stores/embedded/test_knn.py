from __future__ import annotations

import numpy as np
import pytest

from hipporag_neo4j.stores.memory.knn import nearest_rows

pytestmark = pytest.mark.unit


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _brute_force(queries: np.ndarray, matrix: np.ndarray, k: int, min_similarity: float) -> list[list[float]]:
    sims = -np.sort(-(queries @ matrix.T), axis=1)[:, :k]
    return [row[row >= min_similarity].tolist() for row in sims]


@pytest.mark.parametrize("min_similarity", [-1.0, 0.0, 0.8])
@pytest.mark.parametrize("budget_bytes", [5_000, 200_000, 256 * 2**20])  # many blocks ... one block
def test_matches_brute_force_whatever_the_budget(min_similarity: float, budget_bytes: int) -> None:
    rng = np.random.default_rng(0)
    matrix = _unit(rng, 1_000, 16)
    # near-duplicates of stored rows (cosine ~0.9+, like synonyms) mixed with unrelated queries
    queries = np.vstack([matrix[:40] + 0.1 * _unit(rng, 40, 16), _unit(rng, 600, 16)])
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    found = nearest_rows(queries, matrix, 7, min_similarity, budget_bytes)
    expected = _brute_force(queries, matrix, 7, min_similarity)
    assert len(found) == len(queries)
    for (positions, values), query, want in zip(found, queries, expected, strict=True):
        assert np.allclose(matrix[positions] @ query, values, atol=1e-6)  # positions match similarities
        assert values.tolist() == pytest.approx(want, abs=1e-6)
        assert values.tolist() == sorted(values.tolist(), reverse=True)
    assert found[0][0][0] == 0  # the near-duplicate of row 0 finds row 0 first


def test_k_larger_than_the_matrix_returns_every_passing_row() -> None:
    rng = np.random.default_rng(1)
    matrix = _unit(rng, 5, 8)
    ((positions, values),) = nearest_rows(matrix[:1], matrix, 50, -1.0)
    assert sorted(positions.tolist()) == [0, 1, 2, 3, 4]
    assert values[0] == pytest.approx(1.0)


def test_empty_matrix_and_bad_k() -> None:
    rng = np.random.default_rng(2)
    ((positions, values),) = nearest_rows(_unit(rng, 1, 8), np.zeros((0, 8), dtype=np.float32), 3, -1.0)
    assert positions.size == 0 and values.size == 0
    with pytest.raises(ValueError, match="k must be at least 1"):
        nearest_rows(_unit(rng, 1, 8), _unit(rng, 4, 8), 0, -1.0)
