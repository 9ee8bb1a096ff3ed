"""The Neo4j store's in-process copy (stores/neo4j/client_copy.py) against the emulated server: read once
per graph version, vectors kept by id, a read that saw a concurrent commit used once, and the answers of
the embedded store's arithmetic (the live comparison is tests/test_neo4j_same_answers.py)."""

from __future__ import annotations

import numpy as np
import pytest
from neo4j_fake import FakeGraph, FakeServer
from test_neo4j_engines import DAMPING, NS, corpus, reference_passage_scores, store_on

pytestmark = pytest.mark.unit


def unit(*values: float) -> list[float]:
    v = np.asarray(values, dtype=np.float64)
    return [float(x) for x in v / np.linalg.norm(v)]


def with_vectors(g: FakeGraph) -> FakeGraph:
    """Give every phrase and passage of the namespace a 3-d vector (the corpus has none)."""
    rng = np.random.default_rng(3)
    for node in g.nodes.values():
        if node.namespace == NS and node.label in ("Phrase", "Passage"):
            node.props["embedding"] = unit(*rng.standard_normal(3))
    return g


def test_the_graph_is_read_once_per_version_and_ranks_as_the_reference() -> None:
    g = corpus()
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver = store.runner.driver
    seeds = {"ph03": 0.5, "ph17": 0.3}
    first = store.graph_passage_scores(seeds, DAMPING, 200, 1e-12, 5, 2)
    again = store.graph_passage_scores({"ph07": 1.0}, DAMPING, 200, 1e-12, 5, 2)
    assert [s.passage_id for s in first] == [p for p, _ in reference_passage_scores(g, seeds, 5)]
    assert [s.score for s in first] == pytest.approx([s for _, s in reference_passage_scores(g, seeds, 5)])
    assert again and all(s.top_phrases for s in again)
    assert len(driver.named("client_mentions")) == 1  # one read for both queries
    assert not driver.named("passage_scores")  # aggregated in process: no phrase score shipped
    g.bump(NS)  # a write elsewhere
    store.graph_passage_scores(seeds, DAMPING, 200, 1e-12, 5, 2)
    assert len(driver.named("client_mentions")) == 2


def test_vectors_are_read_once_by_id_and_searched_exactly() -> None:
    g = with_vectors(corpus())
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver = store.runner.driver
    query = np.asarray([unit(1, 0.2, 0)], dtype=np.float32)
    hits = store.nearest_phrases(query, 3, -1.0, None)[0]
    phrases = [n for n in g.of("Phrase", NS)]
    exact = sorted(
        ((float(np.dot(n.props["embedding"], query[0].astype(np.float64))), n.props["id"]) for n in phrases),
        key=lambda sp: (-sp[0], sp[1]),
    )[:3]
    assert [h.id for h in hits] == [pid for _, pid in exact]
    assert [h.similarity for h in hits] == pytest.approx([s for s, _ in exact], abs=1e-6)
    fetched = sum(len(c.params["ids"]) for c in driver.named("client_vectors_phrase"))
    assert fetched == len(phrases)
    g.phrase(NS, "zz-new", "zz new", embedding=unit(1, 0.2, 0.01))
    g.bump(NS)
    hits = store.nearest_phrases(query, 1, 0.0, None)[0]
    assert [h.id for h in hits] == ["zz-new"]  # the new version's phrase is found ...
    assert [c.params["ids"] for c in driver.named("client_vectors_phrase")][-1] == [
        "zz-new"
    ]  # ... alone read
    dense = store.dense_passage_scores(query[0], 4)
    passages = g.of("Passage", NS)
    best = max(passages, key=lambda n: float(np.dot(n.props["embedding"], query[0].astype(np.float64))))
    assert len(dense) == 4 and dense[0].passage_id == best.props["id"]
    assert not driver.named("vector_phrases") and not driver.named("vector_passages")


def test_a_read_that_saw_a_commit_is_used_once_and_not_kept() -> None:
    g = corpus()
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver = store.runner.driver
    committed: list[int] = []

    def hook(name: str) -> None:
        if name == "client_edges" and not committed:
            g.phrase(NS, "late", "late phrase")
            g.bump(NS)
            committed.append(g.versions[NS])

    driver.after_statement.append(hook)
    store.graph_passage_scores({"ph03": 1.0}, DAMPING, 200, 1e-12, 5, 2)
    assert committed and len(driver.named("client_edges")) == 2  # read again at the new version
    store.graph_passage_scores({"ph03": 1.0}, DAMPING, 200, 1e-12, 5, 2)
    assert len(driver.named("client_edges")) == 2  # and that one kept


def test_the_index_setting_keeps_the_vector_indexes() -> None:
    g = with_vectors(corpus())
    store = store_on(FakeServer(g), gds=None, version="5.26.0", vector_search="index")
    store.dense_passage_scores(np.asarray(unit(1, 0, 0), dtype=np.float32), 3)
    assert store.runner.driver.named("vector_passages") and not store.runner.driver.named("client_passages")
