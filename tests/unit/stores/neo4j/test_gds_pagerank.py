"""Issue 35 item 4: the GDS PageRank call's supersteps, threads, and ``auto``'s client memory budget."""

from __future__ import annotations

import numpy as np
import pytest

from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.neo4j.capabilities import (
    AUTO_LOCAL_MAX_EDGES,
    auto_engine,
    copy_estimate_mb,
    gds_concurrency,
)
from hipporag_neo4j.stores.neo4j.engines.gds import supersteps
from tests.support.neo4j_emulation import pregel_pagerank


def random_graph(seed: int, nodes: int = 300, edges: int = 1200) -> list[tuple[int, int, float]]:
    rng = np.random.default_rng(seed)
    rels = []
    for _ in range(edges):
        a, b = (int(x) for x in rng.choice(nodes, size=2, replace=False))
        w = float(rng.uniform(0.5, 3.0))
        rels += [(a, b, w), (b, a, w)]  # undirected, as projected
    return rels


@pytest.mark.parametrize(("damping", "tolerance"), [(0.5, 1e-6), (0.5, 1e-8), (0.85, 1e-6), (0.3, 1e-4)])
def test_the_derived_supersteps_give_the_scores_of_an_uncapped_run(damping: float, tolerance: float) -> None:
    """GDS halts by itself once no change exceeds the tolerance: the cap never cuts a run short."""
    cap = supersteps(WalkParams(damping, 10_000, tolerance))
    assert cap < 10_000
    for seed in range(3):
        rels = random_graph(seed)
        bias = {0: 0.6, 7: 0.3, 42: 0.1}
        uncapped = pregel_pagerank(300, rels, bias, damping, 10_000, tolerance)
        capped = pregel_pagerank(300, rels, bias, damping, cap, tolerance)
        assert capped == uncapped
        assert pregel_pagerank(300, rels, bias, damping, 2, tolerance) != uncapped  # a cap can cut


def test_supersteps_never_exceed_the_setting_and_fall_back_without_a_bound() -> None:
    assert supersteps(WalkParams(0.5, 100, 1e-6)) == 21
    assert supersteps(WalkParams(0.5, 5, 1e-6)) == 5
    assert supersteps(WalkParams(0.5, 100, 0.0)) == 100
    assert supersteps(WalkParams(1.0, 100, 1e-6)) == 100


def test_threads_of_a_gds_call_default_to_one_and_never_exceed_the_servers_processors() -> None:
    assert gds_concurrency(None, 2) == 1
    assert gds_concurrency(None, None) == 1
    assert gds_concurrency(4, 2) == 2
    assert gds_concurrency(4, None) == 4
    assert gds_concurrency(3, 16) == 3
    assert Neo4jSettings().gds_concurrency is None


def test_auto_sends_a_namespace_too_large_for_the_client_budget_to_gds() -> None:
    small = auto_engine("gds-weighted", 28_000, 19_000, budget_mb=1024)
    assert small[0] == "local" and "fits neo4j.client_memory_budget_mb" in small[1]
    need = copy_estimate_mb(19_000, 28_000)
    tight = auto_engine("gds-weighted", 28_000, 19_000, budget_mb=max(1, int(need) - 1))
    assert tight[0] == "gds-weighted" and "more than neo4j.client_memory_budget_mb" in tight[1]
    assert f"{need:,.0f} MiB" in tight[1]
    assert auto_engine("gds-linear", 28_000, 19_000, budget_mb=None)[0] == "local"
    assert auto_engine("gds-linear", AUTO_LOCAL_MAX_EDGES + 1, 10, budget_mb=None)[0] == "gds-linear"
    assert auto_engine("local", 10**9, 10**8, budget_mb=1)[0] == "local"  # no GDS: nothing to weigh
    assert Neo4jSettings().client_memory_budget_mb == 1024
