"""``neo4j.gds_top_nodes`` on a real server with GDS 2.17+ (issue 35 item 4): HippoRAG's passage scores
aggregate only the walk's N best phrases, divided by the sum over every phrase reached; a cut above the
phrases reached gives the exact scores. Skipped without a server, or on GDS without weighted source
nodes (the setting is for the ``gds-weighted`` engine only)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.engines import GdsPpr, LocalPpr
from tests.support.corpora import chain_corpus
from tests.support.neo4j_support import TEST_EMBEDDING_DIM, neo4j_settings_or_skip

pytestmark = pytest.mark.neo4j

SEEDS = {"ph0": 0.6, "ph3": 0.4}
N = 10  # chain_corpus: passage i mentions phrase i once and phrase i+1 twice
WALK = WalkParams(0.5, 100, 1e-10)


def open_store(top_nodes: int | None, namespace: str | None = None) -> Neo4jStore:
    overrides: dict[str, object] = {"ppr_engine": "gds", "gds_top_nodes": top_nodes}
    if namespace is not None:
        overrides["namespace"] = namespace
    store = Neo4jStore(neo4j_settings_or_skip(**overrides))
    store.open("hash-embedder", TEST_EMBEDDING_DIM)
    return store


@pytest.fixture
def written() -> Iterator[Neo4jStore]:
    store = open_store(None)
    if store.capabilities().ppr_engine != "gds-weighted":
        store.close()
        pytest.skip("needs GDS 2.17+ (weighted source nodes)")
    phrases, records = chain_corpus(N)
    store.write_passages(phrases, records)
    yield store
    store.drop_namespace()
    store.close()


def cut_scores(ppr: dict[str, float], top: int) -> dict[str, float]:
    ranked = sorted(ppr.items(), key=lambda kv: -kv[1])
    assert ranked[top - 1][1] > ranked[top][1] * (1 + 1e-6)  # no tie at the cut
    kept = dict(ranked[:top])
    return {
        f"p{i}": kept.get(f"ph{i}", 0.0) * 1 + kept.get(f"ph{i + 1}", 0.0) * 2
        for i in range(N)
        if f"ph{i}" in kept or f"ph{i + 1}" in kept
    }


@pytest.mark.parametrize("top", [2, 4])
def test_the_cut_keeps_the_walks_best_phrases_only(written: Neo4jStore, top: int) -> None:
    ppr = LocalPpr(written.copy).run(SEEDS, WalkParams(0.5, 1000, 1e-15))
    expected = cut_scores(ppr, top)
    exact = {s.passage_id: s.score for s in written.view().graph_passage_scores(SEEDS, WALK, N, 2)}
    cut = open_store(top, written.namespace)
    try:
        found = {s.passage_id: s.score for s in cut.view().graph_passage_scores(SEEDS, WALK, N, 2)}
        engine = cut.ppr_engine()
    finally:
        cut.close()
    assert isinstance(engine, GdsPpr) and engine.top_nodes == top
    assert found.keys() == expected.keys()
    for pid, score in expected.items():
        assert found[pid] == pytest.approx(score, abs=1e-6)
    assert any(abs(exact[pid] - found[pid]) > 1e-4 for pid in found)  # the cut changed the scores


def test_a_cut_above_the_phrases_reached_is_exact(written: Neo4jStore) -> None:
    exact = written.view().graph_passage_scores(SEEDS, WALK, N, 2)
    wide = open_store(10_000, written.namespace)
    try:
        found = wide.view().graph_passage_scores(SEEDS, WALK, N, 2)
    finally:
        wide.close()
    assert [s.passage_id for s in found] == [s.passage_id for s in exact]
    for a, b in zip(found, exact, strict=True):
        assert a.score == pytest.approx(b.score, abs=1e-9)
