"""``neo4j.gds_top_nodes`` (opt-in, issue 35 item 4): on the ``gds-weighted`` engine, HippoRAG's passage
scores aggregate only the walk's N best phrases (``gds_passage_scores_top``), divided by the sum over
every phrase reached; unset, the exact statement runs. Against the emulated server (no Neo4j here)."""

from __future__ import annotations

import pytest

from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import WalkParams
from tests.support.neo4j_emulation import FakeGraph, FakeServer
from tests.support.neo4j_engines import (
    DAMPING,
    NS,
    PHRASE_SEEDS,
    corpus,
    reference_passage_scores,
    reference_scores,
    store_on,
)
from tests.support.neo4j_fake import FakeDriver

pytestmark = pytest.mark.unit

WALK = WalkParams(DAMPING, 200, 1e-12)


def reference_cut(g: FakeGraph, top: int, limit: int) -> list[tuple[str, float]]:
    """HippoRAG's aggregation over the reference PPR's ``top`` best phrases (scores summing to 1 over all)."""
    scores = {node_id: s for (label, node_id), s in reference_scores(g, PHRASE_SEEDS).items() if s > 0}
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    assert ranked[top - 1][1] > ranked[top][1] + 1e-9  # no tie at the cut: the kept set is defined
    kept = dict(ranked[:top])
    totals: dict[str, float] = {}
    for (d, q), count in g.mentions.items():
        phrase = g.nodes[q].props["id"]
        if g.nodes[d].namespace == NS and g.nodes[q].namespace == NS and phrase in kept:
            pid = g.nodes[d].props["id"]
            totals[pid] = totals.get(pid, 0.0) + kept[phrase] * count
    return sorted(((p, s) for p, s in totals.items() if s > 0), key=lambda ps: (-ps[1], ps[0]))[:limit]


@pytest.mark.parametrize("top", [3, 8])
def test_the_cut_aggregates_only_the_walks_best_phrases(top: int) -> None:
    g = corpus()
    store = store_on(FakeServer(g), gds_top_nodes=top)
    driver: FakeDriver = store.runner.driver  # type: ignore[assignment]
    found = store.view().graph_passage_scores(PHRASE_SEEDS, WALK, 6, 2)
    assert driver.names_run()[-1] == "gds_passage_scores_top"
    assert driver.calls[-1].params["top_nodes"] == top
    expected = reference_cut(g, top, 6)
    assert [s.passage_id for s in found] == [p for p, _ in expected]
    for item, (_, score) in zip(found, expected, strict=True):
        assert item.score == pytest.approx(score, abs=1e-9)
    exact = reference_passage_scores(g, PHRASE_SEEDS, 6)
    assert [(s.passage_id, pytest.approx(s.score)) for s in found] != exact  # the cut changes scores


def test_a_cut_above_the_nodes_reached_gives_the_exact_scores() -> None:
    g = corpus()
    store = store_on(FakeServer(g), gds_top_nodes=10_000)
    found = store.view().graph_passage_scores(PHRASE_SEEDS, WALK, 8, 2)
    expected = reference_passage_scores(g, PHRASE_SEEDS, 8)
    assert [(s.passage_id, pytest.approx(s.score, abs=1e-9)) for s in found] == expected


def test_unset_runs_the_exact_statement_and_the_linear_form_ignores_the_setting() -> None:
    assert Neo4jSettings().gds_top_nodes is None
    g = corpus()
    store = store_on(FakeServer(g))
    driver: FakeDriver = store.runner.driver  # type: ignore[assignment]
    store.view().graph_passage_scores(PHRASE_SEEDS, WALK, 5, 2)
    assert driver.names_run()[-1] == "gds_passage_scores_weighted"
    linear = store_on(FakeServer(corpus()), gds="2.13.2", version="5.26.0", gds_top_nodes=3)
    linear_driver: FakeDriver = linear.runner.driver  # type: ignore[assignment]
    found = linear.view().graph_passage_scores(PHRASE_SEEDS, WALK, 5, 2)
    assert linear_driver.names_run()[-1] == "gds_passage_scores_linear"
    assert [(s.passage_id, pytest.approx(s.score)) for s in found] == reference_passage_scores(
        g, PHRASE_SEEDS, 5
    )


def test_the_setting_refuses_zero() -> None:
    with pytest.raises(ValueError, match="gds_top_nodes"):
        Neo4jSettings(gds_top_nodes=0)
