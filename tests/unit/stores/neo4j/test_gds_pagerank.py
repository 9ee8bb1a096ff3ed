"""Issue 35 item 4: the GDS PageRank call's supersteps, threads, and ``auto``'s client memory budget."""

from __future__ import annotations

import numpy as np
import pytest

from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.neo4j.capabilities import (
    AUTO_LOCAL_MAX_EDGES,
    COPY_BYTES_PER_EDGE,
    COPY_BYTES_PER_ROW,
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
    assert small[0] == "local" and "fits neo4j.client_memory_budget_mb=1,024" in small[1]
    need = copy_estimate_mb(19_000, 28_000)
    tight = auto_engine("gds-weighted", 28_000, 19_000, budget_mb=max(1, int(need) - 1))
    assert tight[0] == "gds-weighted" and "more than neo4j.client_memory_budget_mb" in tight[1]
    assert f"{need:,.0f} MiB" in tight[1]
    assert auto_engine("gds-linear", 28_000, 19_000, budget_mb=None)[0] == "local"
    assert auto_engine("gds-linear", AUTO_LOCAL_MAX_EDGES + 1, 10, budget_mb=None)[0] == "gds-linear"
    assert auto_engine("local", 10**9, 10**8, budget_mb=1)[0] == "local"  # no GDS: nothing to weigh
    assert Neo4jSettings().client_memory_budget_mb == 2048


def test_the_copy_estimate_counts_every_vector_row_and_edge() -> None:
    """The client copy holds a float32 vector and a fixed cost per phrase, fact and passage besides its
    edges: a namespace whose graph alone fits the budget goes to GDS once its vectors do not."""
    graph_only = copy_estimate_mb(19_000, 28_000)
    assert graph_only == pytest.approx((19_000 * COPY_BYTES_PER_ROW + 28_000 * COPY_BYTES_PER_EDGE) / 2**20)
    with_rows = copy_estimate_mb(19_000, 28_000, facts=17_000, passages=1_900)
    assert with_rows - graph_only == pytest.approx((17_000 + 1_900) * COPY_BYTES_PER_ROW / 2**20)
    with_vectors = copy_estimate_mb(19_000, 28_000, facts=17_000, passages=1_900, dim=384)
    assert with_vectors - with_rows == pytest.approx((19_000 + 17_000 + 1_900) * 384 * 4 / 2**20)
    budget = int(graph_only) + 1
    assert auto_engine("gds-weighted", 28_000, 19_000, budget_mb=budget)[0] == "local"
    engine, why = auto_engine(
        "gds-weighted", 28_000, 19_000, budget_mb=budget, facts=17_000, passages=1_900, dim=384
    )
    assert engine == "gds-weighted" and f"about {with_vectors:,.0f} MiB" in why
    assert "the namespace has 28,000 graph edges and 19,000 phrases, 17,000 facts and 1,900 passages" in why


@pytest.mark.parametrize(
    ("phrases", "facts", "passages", "edges", "measured_mib"),
    [
        (19_425, 17_166, 1_890, 86_301, 454.5),  # S, Neo4j 5.26.24 (scale_suite_S_neo4j_lts)
        (123_896, 109_622, 12_000, 674_576, 1_732.2),  # M, 5.26.24 (scale_suite_M_neo4j_lts)
        (123_896, 109_622, 12_000, 366_710, 1_597.7),  # M, 2026.01.4 (scale_suite_M_neo4j_latest)
    ],
)
def test_the_copy_estimate_follows_the_measured_client_memory(
    phrases: int, facts: int, passages: int, edges: int, measured_mib: float
) -> None:
    """The estimate against what a new client process held after reading the namespace over Bolt and
    answering two queries (the scale suite's cold start; 230 MiB of it is the process without a
    namespace, the fit's base): within 10%, never more than 10% below."""
    estimate = copy_estimate_mb(phrases, edges, facts=facts, passages=passages, dim=384)
    assert 0.9 * (measured_mib - 230) <= estimate <= 1.1 * (measured_mib - 230)


def test_auto_runs_s_and_m_in_process_under_the_default_budget_and_m_on_gds_under_1_gib() -> None:
    """S (86k edges) in process by both rules; M (367k edges, ~1.4 GiB of copy, 1.6 GiB measured per
    client) is within the edge limit, where local measured 10x faster, and within the default 2 GiB
    budget; a 1 GiB budget sends it to GDS, and one edge past the largest size measured goes to GDS."""
    budget = Neo4jSettings().client_memory_budget_mb
    s = auto_engine("gds-weighted", 86_301, 19_425, budget, facts=17_166, passages=1_890, dim=384)
    assert s[0] == "local"
    m = {"facts": 109_622, "passages": 12_000, "dim": 384}
    engine, why = auto_engine("gds-weighted", 366_710, 123_896, budget, **m)
    assert engine == "local" and "fits neo4j.client_memory_budget_mb=2,048" in why
    engine, why = auto_engine("gds-weighted", 366_710, 123_896, 1024, **m)
    assert engine == "gds-weighted" and "more than neo4j.client_memory_budget_mb=1,024" in why
    assert auto_engine("gds-weighted", 366_711, 123_896, budget, **m)[0] == "gds-weighted"  # nothing measured
