"""Exact k-nearest rows by dot product, in blocks whose working memory stays under a byte budget.

The phrase matrix is walked in blocks of columns (stored phrases), each block scored against up to a few
hundred query rows at once, so the matrix is read once per query chunk while the similarity block, its
mask and the partition indices stay under ``budget_bytes`` (at 1M phrases a whole 512-row block was 2 GiB
of similarities plus 4 GiB of int64 indices).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import numpy.typing as npt

from hipporag_neo4j.stores.base import Matrix, Vector

#: working memory of one search: similarity block (4 B), mask (1 B) and partition index (8 B) per cell
DEFAULT_BUDGET_BYTES = 256 * 2**20
_BYTES_PER_CELL = 13
_MAX_QUERY_ROWS = 512

Hits = tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]


def nearest_rows(
    queries: Matrix,
    matrix: Matrix,
    k: int,
    min_similarity: float,
    budget_bytes: int = DEFAULT_BUDGET_BYTES,
    matrix_first: bool = False,
) -> list[Hits]:
    """For each query row, the positions and similarities of up to ``k`` rows of ``matrix`` with
    similarity >= ``min_similarity``, highest first (ties in any order). ``matrix_first``: the products
    as ``matrix @ queries.T``, the faster BLAS call for a few query rows (a query's entities: about 4x at
    3 rows x 19k phrases), rounded in another order; callers that re-score their candidates exactly and
    keep a margin (query-time linking: one candidate more than kept) may use it."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    n = len(matrix)
    found: list[Hits] = []
    step = max(1, min(_MAX_QUERY_ROWS, len(queries)))
    for start in range(0, len(queries), step):
        chunk = queries[start : start + step]
        columns = max(2 * k, budget_bytes // (len(chunk) * _BYTES_PER_CELL))
        rows: list[npt.NDArray[np.intp]] = []
        cols: list[npt.NDArray[np.intp]] = []
        values: list[npt.NDArray[np.float32]] = []
        for first in range(0, n, columns):
            block = matrix[first : first + columns]
            sims = np.ascontiguousarray((block @ chunk.T).T) if matrix_first else chunk @ block.T
            r, c = block_candidates(sims, k, min_similarity)
            rows.append(r)
            cols.append(c + first)
            values.append(sims[r, c])
            del sims
        found.extend(best_per_row(len(chunk), k, rows, cols, values))
    return found


def block_candidates(
    sims: npt.NDArray[np.float32], k: int, min_similarity: float
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """(row, column) of each row's best k cells of the block that pass the threshold."""
    width = sims.shape[1]
    passing = sims >= min_similarity
    crowded = passing.sum(axis=1) > k
    if width <= k or not crowded.any():
        # typical for synonyms (cosine >= 0.8): few cells pass, no partition needed
        rows, cols = np.nonzero(passing)
        return rows, cols
    passing[crowded] = False
    sparse_r, sparse_c = np.nonzero(passing)
    del passing
    crowded_rows = np.flatnonzero(crowded)
    best = np.argpartition(sims[crowded_rows], width - k, axis=1)[:, width - k :]
    dense_r = np.repeat(crowded_rows, k)
    dense_c = best.ravel()
    keep = sims[dense_r, dense_c] >= min_similarity
    return np.concatenate([sparse_r, dense_r[keep]]), np.concatenate([sparse_c, dense_c[keep]])


def best_per_row(
    n_rows: int,
    k: int,
    rows: list[npt.NDArray[np.intp]],
    cols: list[npt.NDArray[np.intp]],
    values: list[npt.NDArray[np.float32]],
) -> list[Hits]:
    r = np.concatenate(rows) if rows else np.zeros(0, dtype=np.intp)
    c = np.concatenate(cols) if cols else np.zeros(0, dtype=np.intp)
    v = np.concatenate(values) if values else np.zeros(0, dtype=np.float32)
    order = np.lexsort((-v, r))  # by row, then similarity descending
    r, c, v = r[order], c[order], v[order]
    bounds = np.searchsorted(r, np.arange(n_rows + 1))
    return [
        (c[lo : min(hi, lo + k)], v[lo : min(hi, lo + k)]) for lo, hi in itertools.pairwise(bounds.tolist())
    ]


def top_positions(values: npt.NDArray[np.floating[Any]], limit: int) -> npt.NDArray[np.intp]:
    """Positions of the ``limit`` highest values, highest first, ties by position: the first ``limit`` of
    ``np.argsort(-values, kind="stable")``, without sorting every value (a partition, then a sort of the
    values at or above the limit's)."""
    n = len(values)
    if limit >= n:
        return np.argsort(-values, kind="stable")
    if limit <= 0:
        return np.zeros(0, dtype=np.intp)
    negated = -values
    kth = np.partition(negated, limit - 1)[limit - 1]
    kept = np.flatnonzero(negated <= kth)  # every value >= the limit's, in position order
    return kept[np.argsort(negated[kept], kind="stable")][:limit]


def exact_scores(matrix: Matrix, rows: npt.NDArray[np.intp], vector: Vector) -> npt.NDArray[np.float64]:
    """Dot products of ``matrix[rows]`` with ``vector`` as float64 products of the float32 values summed
    in one fixed order: a row scores the same whichever rows it is searched with, from either side of a
    pair and in any batch (a matrix product's rounding depends on its shape), so kept scores, synonym
    edges among them, do not depend on how a search was batched or which index found the candidates."""
    scores: npt.NDArray[np.float64] = (
        matrix[rows].astype(np.float64) * np.asarray(vector, dtype=np.float64)
    ).sum(axis=1)
    return scores
