"""One suite, every store: the same writes must give the same graph, scores and deletes.

Runs on the embedded store everywhere, and on Neo4j where a server is reachable (see neo4j_support.py).

Split by tier from the former tests/test_store_conformance.py: this file holds the Neo4j-only tests (a
live server, both engines); the rest is in tests/integration/test_store_conformance.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import igraph as ig
import pytest

from hipporag_neo4j.common.text import fact_text, make_fact_id, make_phrase_id
from hipporag_neo4j.stores.base import GraphStore, WalkParams
from tests.support.store_corpus import CORPUS, EMB, _index, _records

pytestmark = pytest.mark.integration


DAMPING = 0.5


@pytest.fixture(params=["auto", "local"])
def neo4j_store(request: pytest.FixtureRequest) -> Iterator[GraphStore]:
    """A Neo4j store with the engine the server allows (GDS on the test servers) and with the in-process
    engine; skipped without a server."""
    from hipporag_neo4j.stores.neo4j.store import Neo4jStore
    from tests.support.neo4j_support import neo4j_settings_or_skip

    s = Neo4jStore(neo4j_settings_or_skip(ppr_engine=request.param))
    s.open(EMB.model_name, EMB.dimension)
    yield s
    s.close()


def _passage_graph_reference(
    phrase_seeds: dict[str, float], passage_seeds: dict[str, float]
) -> dict[str, float]:
    """igraph PPR over the corpus's phrases and passages: RELATION edges weighted by the number of
    (passage, fact) pairs, MENTIONS edges of weight 1, undirected."""
    names = sorted({n for _, _, triples in CORPUS for s, _, o in triples for n in (s, o)})
    phrase_ids = sorted(make_phrase_id(n) for n in names)
    passage_ids = [pid for pid, _, _ in CORPUS]
    nodes = phrase_ids + passage_ids
    pos = {node: i for i, node in enumerate(nodes)}
    weights: dict[tuple[int, int], float] = {}
    seen: set[tuple[str, str, str, str]] = set()
    for pid, _, triples in CORPUS:
        for s, p, o in triples:
            if (pid, s, p, o) not in seen:
                seen.add((pid, s, p, o))
                key = (pos[make_phrase_id(s)], pos[make_phrase_id(o)])
                weights[key] = weights.get(key, 0.0) + 1.0
            for name in (s, o):
                weights[(pos[pid], pos[make_phrase_id(name)])] = 1.0
    g = ig.Graph(n=len(nodes), edges=list(weights), directed=False)
    g.es["weight"] = list(weights.values())
    reset = [phrase_seeds.get(n, 0.0) for n in phrase_ids] + [passage_seeds.get(n, 0.0) for n in passage_ids]
    scores = g.personalized_pagerank(damping=DAMPING, directed=False, weights="weight", reset=reset)
    return dict(zip(nodes, scores, strict=True))


def test_neo4j_passage_node_scores(neo4j_store: GraphStore) -> None:
    _index(neo4j_store, {"p1", "p2", "p3", "p4", "p5"})
    phrase_seeds = {make_phrase_id("stanford"): 0.6, make_phrase_id("alzheimer s"): 0.4, "phrase-x": 1.0}
    passage_seeds = {"p5": 0.05, "p3": 0.02, "nope": 1.0}
    found = neo4j_store.view().passage_node_scores(
        phrase_seeds, passage_seeds, WalkParams(DAMPING, 200, 1e-12), 4, 2
    )
    reference = _passage_graph_reference(
        {k: v for k, v in phrase_seeds.items() if k != "phrase-x"},
        {k: v for k, v in passage_seeds.items() if k != "nope"},
    )
    ranked = sorted((p for p, _, _ in CORPUS), key=lambda p: (-reference[p], p))[:4]
    assert [s.passage_id for s in found] == ranked
    names = {make_phrase_id(n): n for _, _, triples in CORPUS for s, _, o in triples for n in (s, o)}
    for item in found:
        assert item.score == pytest.approx(reference[item.passage_id], abs=1e-5)
        assert 1 <= len(item.top_phrases) <= 2
        mentioned = {names[k]: reference[k] for k in _records({item.passage_id})[1][0].mentions}
        for name, score in item.top_phrases:
            assert score == pytest.approx(mentioned[name], abs=1e-5)
        assert [n for n, _ in item.top_phrases] == sorted(mentioned, key=lambda n: (-mentioned[n], n))[:2]
    assert neo4j_store.view().passage_node_scores({}, {}, WalkParams(DAMPING, 200, 1e-12), 4, 2) == []


def test_neo4j_nearest_facts(neo4j_store: GraphStore) -> None:
    _index(neo4j_store, {"p1", "p2", "p3", "p4", "p5"})
    query = EMB.encode(["maria works at stanford"])[0]
    hits = neo4j_store.view().nearest_facts(query, top_k=3)
    facts = {make_fact_id(s, p, o): (s, p, o) for _, _, triples in CORPUS for s, p, o in triples}
    expected = sorted(facts, key=lambda f: (-float(EMB.encode([fact_text(*facts[f])])[0] @ query), f))[:3]
    assert [h.id for h in hits] == expected
    for hit in hits:
        s, p, o = facts[hit.id]
        assert (hit.subject, hit.predicate, hit.object) == (s, p, o)
        assert (hit.subject_id, hit.object_id) == (make_phrase_id(s), make_phrase_id(o))
        assert hit.similarity == pytest.approx(float(EMB.encode([fact_text(s, p, o)])[0] @ query), abs=1e-5)
    assert neo4j_store.view().nearest_facts(query, top_k=0) == []
