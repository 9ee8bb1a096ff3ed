from __future__ import annotations

import igraph as ig
import numpy as np
import pytest

from hipporag_neo4j.graph.ppr import (
    FactorisedPpr,
    forward_push,
    node_strengths,
    personalized_pagerank,
    symmetric_adjacency,
    transition_matrix,
)

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


def _igraph_ppr(s: np.ndarray, t: np.ndarray, w: np.ndarray, n: int, reset: np.ndarray, damping: float):
    keep = s != t
    g = ig.Graph(n=n, edges=list(zip(s[keep].tolist(), t[keep].tolist(), strict=True)), directed=False)
    g.es["weight"] = w[keep].tolist()
    ref = g.personalized_pagerank(damping=damping, directed=False, weights="weight", reset=reset.tolist())
    return np.array(ref)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("damping", [0.5, 0.85])
@pytest.mark.parametrize(("n", "m"), [(300, 700), (20_000, 60_000)])  # dense rounds / sparse pushes
@pytest.mark.parametrize("epsilon", [1e-4, 1e-7])
def test_forward_push_is_within_its_stated_bound_of_igraph(
    seed: int, damping: float, n: int, m: int, epsilon: float
) -> None:
    s, t, w = _random_graph(seed, n, m)
    n += 1  # node n has no edge: an isolated seed, whose mass goes back to the reset distribution
    adjacency = symmetric_adjacency(s, t, w, n)
    strength = node_strengths(adjacency)
    reset = np.zeros(n)
    isolated = n - 1
    reset[[1, 5, 7, isolated]] = [1.0, 2.0, 0.5, 1.0]
    ref = _igraph_ppr(s, t, w, n, reset, damping)
    ours = forward_push(adjacency, strength, reset, damping, epsilon)
    under = ref - ours
    z = 1.0 - damping * reset[isolated] / reset.sum()
    noise = 1e-10  # igraph's own accuracy (its PRPACK solver differs from exact by ~1e-12)
    assert under.min() >= -noise
    assert (under <= epsilon * strength / z + noise).all()
    assert ours.sum() <= 1.0 + 1e-12
    # the certified part of the top 10 is the exact order
    order = np.argsort(-ref, kind="stable")
    slack = epsilon * strength / z
    for k in range(1, 11):
        if ref[order[k - 1]] - slack[order[k - 1]] > ref[order[k:]].max() + noise:
            assert set(np.argsort(-ours, kind="stable")[:k].tolist()) == set(order[:k].tolist())


def test_forward_push_with_a_tiny_epsilon_is_exact() -> None:
    n, m = 2_000, 6_000
    s, t, w = _random_graph(3, n, m)
    adjacency = symmetric_adjacency(s, t, w, n)
    reset = np.zeros(n)
    reset[[10, 20]] = 1.0
    ours = forward_push(adjacency, node_strengths(adjacency), reset, 0.5, 1e-14)
    assert np.abs(ours - _igraph_ppr(s, t, w, n, reset, 0.5)).max() < 1e-9


def test_forward_push_only_touches_the_seeds_neighbourhood() -> None:
    # two components: mass never crosses, and the far component stays exactly 0
    s = np.array([0, 1, 2, 3, 4])
    t = np.array([1, 2, 0, 4, 5])
    adjacency = symmetric_adjacency(s, t, np.ones(5), 6)
    scores = forward_push(adjacency, node_strengths(adjacency), np.array([1.0, 0, 0, 0, 0, 0]), 0.5, 1e-12)
    assert scores[3:].tolist() == [0.0, 0.0, 0.0]
    assert scores[:3].sum() == pytest.approx(1.0)


def test_forward_push_empty_reset_is_an_error() -> None:
    adjacency = symmetric_adjacency(np.array([0]), np.array([1]), np.array([1.0]), 2)
    with pytest.raises(ValueError, match="empty"):
        forward_push(adjacency, node_strengths(adjacency), np.zeros(2), 0.5)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("damping", [0.5, 0.85])
def test_factorised_ppr_is_exact_against_igraph_with_an_isolated_seed(seed: int, damping: float) -> None:
    n, m = 2_000, 5_000
    s, t, w = _random_graph(seed, n, m)
    n += 1  # node n has no edge: an isolated seed
    adjacency = symmetric_adjacency(s, t, w, n)
    factorised = FactorisedPpr(adjacency, damping)
    assert factorised.factor_nonzeros > 0
    for reset_seed in range(3):
        reset = np.zeros(n)
        rng = np.random.default_rng(reset_seed)
        reset[rng.choice(n - 1, 3, replace=False)] = rng.random(3) + 0.1
        reset[n - 1] = reset_seed  # none, then some mass on the isolated node
        ours = factorised.scores(reset)
        assert np.abs(ours - _igraph_ppr(s, t, w, n, reset, damping)).max() < 1e-9
        assert ours.sum() == pytest.approx(1.0)


def test_factorised_ppr_needs_a_damping_below_one_and_a_seed() -> None:
    adjacency = symmetric_adjacency(np.array([0]), np.array([1]), np.array([1.0]), 2)
    with pytest.raises(ValueError, match="damping"):
        FactorisedPpr(adjacency, 1.0)
    with pytest.raises(ValueError, match="empty"):
        FactorisedPpr(adjacency, 0.5).scores(np.zeros(2))


@pytest.mark.parametrize(("n", "m"), [(300, 700), (20_000, 60_000)])  # bincount / add.at rounds
@pytest.mark.parametrize("max_gather", [1, 37, 5_000])
def test_forward_push_gathers_a_round_in_pieces_with_the_same_scores(n: int, m: int, max_gather: int) -> None:
    s, t, w = _random_graph(4, n, m)
    adjacency = symmetric_adjacency(s, t, w, n)
    strength = node_strengths(adjacency)
    reset = np.zeros(n)
    reset[[1, 5, 7]] = [1.0, 2.0, 0.5]
    whole = forward_push(adjacency, strength, reset, 0.5, 1e-7)
    pieces = forward_push(adjacency, strength, reset, 0.5, 1e-7, max_gather=max_gather)
    assert np.abs(pieces - whole).max() <= 1e-15  # the same sums, grouped differently
    ref = _igraph_ppr(s, t, w, n, reset, 0.5)
    assert (ref - pieces >= -1e-10).all() and (ref - pieces <= 1e-7 * strength / 1.0 + 1e-10).all()
