"""Personalized PageRank by sparse power iteration (scipy).

Semantics match igraph's ``personalized_pagerank(directed=False, weights=..., reset=...)``: the graph is
undirected and weighted, a walker at node u follows an edge with probability ``damping`` (picking a
neighbour in proportion to edge weight) and jumps back to the reset distribution otherwise; a node with no
edges (dangling) sends all its mass back to the reset distribution. Scores sum to 1.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

FloatArray = npt.NDArray[np.float64]


def symmetric_adjacency(
    sources: npt.NDArray[np.int64], targets: npt.NDArray[np.int64], weights: FloatArray, n_nodes: int
) -> sp.csr_matrix:
    """Undirected weighted adjacency (CSR) from an edge list; parallel edges add up, self-loops dropped."""
    keep = sources != targets
    rows = np.concatenate([sources[keep], targets[keep]])
    cols = np.concatenate([targets[keep], sources[keep]])
    data = np.concatenate([weights[keep], weights[keep]]).astype(np.float64)
    return sp.csr_matrix((data, (rows, cols)), shape=(n_nodes, n_nodes))


def transition_matrix(adjacency: sp.csr_matrix) -> tuple[sp.csr_matrix, npt.NDArray[np.bool_]]:
    """Column-stochastic transition matrix ``T`` (T[v, u] = w(u,v) / strength(u)) and the dangling mask.

    Built once per graph version and reused for every query.
    """
    strength = np.asarray(adjacency.sum(axis=1)).ravel()
    dangling = strength == 0
    inv = np.zeros_like(strength)
    inv[~dangling] = 1.0 / strength[~dangling]
    # adjacency is symmetric, so (D^-1 A)^T = A D^-1
    transition = (adjacency @ sp.diags(inv)).tocsr()
    return transition, dangling


def personalized_pagerank(
    transition: sp.csr_matrix,
    dangling: npt.NDArray[np.bool_],
    reset: FloatArray,
    damping: float = 0.5,
    max_iterations: int = 100,
    tolerance: float = 1e-8,
) -> FloatArray:
    """Scores (summing to 1) of every node for the reset distribution ``reset`` (normalised here).

    Stops when the L1 change between iterations falls below ``tolerance`` or after ``max_iterations``.
    """
    total = float(reset.sum())
    if total <= 0:
        raise ValueError("reset distribution is empty (no seed node with positive weight)")
    p = reset.astype(np.float64) / total
    scores = p.copy()
    for _ in range(max_iterations):
        dangling_mass = float(scores[dangling].sum())
        updated = damping * (transition @ scores) + (damping * dangling_mass + (1.0 - damping)) * p
        change = float(np.abs(updated - scores).sum())
        scores = updated
        if change < tolerance:
            break
    result: FloatArray = scores / scores.sum()
    return result
