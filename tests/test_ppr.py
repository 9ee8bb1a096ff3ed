from __future__ import annotations

import igraph as ig
import numpy as np
import pytest

from hipporag_neo4j.ppr import personalized_pagerank, symmetric_adjacency, transition_matrix

pytestmark = pytest.mark.unit


def _random_graph(seed: int, n: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, m), rng.integers(0, n, m), rng.random(m) + 0.1


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("damping", [0.5, 0.85])
def test_matches_igraph_personalized_pagerank(seed: int, damping: float) -> None:
    n, m = 300, 700  # sparse enough to leave isolated (dangling) nodes
    s, t, w = _random_graph(seed, n, m)
    transition, dangling = transition_matrix(symmetric_adjacency(s, t, w, n))
    reset = np.zeros(n)
    reset[[1, 5, 7, int(np.flatnonzero(dangling)[0]) if dangling.any() else 9]] = [1.0, 2.0, 0.5, 1.0]
    ours = personalized_pagerank(transition, dangling, reset, damping, 1000, 1e-14)
    keep = s != t
    g = ig.Graph(n=n, edges=list(zip(s[keep].tolist(), t[keep].tolist(), strict=True)), directed=False)
    g.es["weight"] = w[keep].tolist()
    ref = g.personalized_pagerank(damping=damping, directed=False, weights="weight", reset=reset.tolist())
    assert np.abs(ours - np.array(ref)).max() < 1e-9
    assert ours.sum() == pytest.approx(1.0)


def test_parallel_edges_add_up_and_self_loops_are_dropped() -> None:
    a = symmetric_adjacency(np.array([0, 0, 1]), np.array([1, 1, 1]), np.array([1.0, 2.0, 5.0]), 2)
    assert a.toarray().tolist() == [[0.0, 3.0], [3.0, 0.0]]


def test_seed_only_graph_keeps_mass_on_seed() -> None:
    transition, dangling = transition_matrix(
        symmetric_adjacency(np.array([0]), np.array([1]), np.array([1.0]), 3)
    )
    scores = personalized_pagerank(transition, dangling, np.array([0.0, 0.0, 1.0]), 0.5)
    assert scores.tolist() == pytest.approx([0.0, 0.0, 1.0])


def test_empty_reset_is_an_error() -> None:
    transition, dangling = transition_matrix(
        symmetric_adjacency(np.array([0]), np.array([1]), np.array([1.0]), 2)
    )
    with pytest.raises(ValueError, match="empty"):
        personalized_pagerank(transition, dangling, np.zeros(2), 0.5)
