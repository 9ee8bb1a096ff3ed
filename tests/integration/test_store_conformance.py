"""One suite, every store: the same writes must give the same graph, scores and deletes.

Runs on the embedded store everywhere, and on Neo4j where a server is reachable (see neo4j_support.py).
"""

from __future__ import annotations

import igraph as ig
import numpy as np
import pytest

from hipporag_neo4j.common.text import fact_text, make_fact_id, make_phrase_id
from hipporag_neo4j.errors import ModelMismatchError
from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import GraphStore, PassageRecord, SynonymEdge, WalkParams
from tests.support.store_corpus import CORPUS, EMB, _index, _records

pytestmark = pytest.mark.integration

DAMPING = 0.5


def _snapshot(store: GraphStore) -> dict[str, object]:
    """Everything observable through the protocol, for comparing two stores or two histories."""
    stats = store.stats()
    names = sorted({n for _, _, triples in CORPUS for s, _, o in triples for n in (s, o)})
    found = store.phrases_by_name(names)
    seeds = {h.id: 1.0 for h in found.values()}
    ppr = store.view().personalized_pagerank(seeds, WalkParams(DAMPING, 200, 1e-10)) if seeds else {}
    return {
        "counts": (
            stats.passages,
            stats.phrases,
            stats.facts,
            stats.relation_edges,
            stats.synonym_edges,
            stats.mentions,
        ),
        "phrases": {n: h.passage_count for n, h in found.items()},
        "ppr": {k: round(v, 6) for k, v in ppr.items()},
    }


def test_indexing_writes_the_graph(store: GraphStore) -> None:
    _index(store, {"p1", "p2", "p3", "p4", "p5"})
    stats = store.stats()
    assert stats.passages == 5
    assert stats.phrases == 8  # thomas stanford alzheimer_s maria robots lee harvard cambridge
    assert stats.facts == 7  # the duplicated harvard triple in p5 is one fact
    assert stats.relation_edges == 7
    counts = {n: h.passage_count for n, h in store.phrases_by_name(["stanford", "harvard", "robots"]).items()}
    assert counts == {"stanford": 2, "harvard": 2, "robots": 1}


def test_writes_are_idempotent(store: GraphStore) -> None:
    _index(store, {"p1", "p2", "p3"})
    once = _snapshot(store)
    _index(store, {"p1", "p2", "p3"})
    assert _snapshot(store) == once
    assert store.existing_passages(["p1", "p9"]) == {"p1"}


def test_missing_phrases_and_facts(store: GraphStore) -> None:
    _index(store, {"p1"})
    assert store.missing_phrases([make_phrase_id("thomas"), make_phrase_id("maria")]) == {
        make_phrase_id("maria")
    }
    known = make_fact_id("thomas", "is professor at", "stanford")
    assert store.missing_facts([known, "fact-unknown"]) == {"fact-unknown"}


def test_synonyms_are_stored_once_per_pair(store: GraphStore) -> None:
    _index(store, {"p1", "p2"})
    a, b = make_phrase_id("thomas"), make_phrase_id("stanford")
    assert store.write_synonyms([SynonymEdge(a, b, 0.9), SynonymEdge(b, a, 0.9)]) == 1
    assert store.write_synonyms([SynonymEdge(a, b, 0.9)]) == 0
    assert store.stats().synonym_edges == 1


def test_nearest_phrases_returns_cosine(store: GraphStore) -> None:
    _index(store, {"p1", "p2", "p3"})
    query = EMB.encode(["stanford", "robots variant"])  # the second is a near-duplicate of "robots"
    hits = store.nearest_phrases(
        query, top_k=2, min_similarity=0.5, exclude_ids=[make_phrase_id("stanford"), ""]
    )
    assert all(h.name != "stanford" for h in hits[0])
    assert hits[1][0].name == "robots"
    assert hits[1][0].similarity == pytest.approx(float(query[1] @ EMB.encode(["robots"])[0]), abs=1e-4)
    assert hits[1][0].passage_count == 1


def _igraph_reference(store: GraphStore, seeds: dict[str, float]) -> dict[str, float]:
    names = sorted({n for _, _, triples in CORPUS for s, _, o in triples for n in (s, o)})
    present = store.phrases_by_name(names)
    ids = sorted(h.id for h in present.values())
    pos = {pid: i for i, pid in enumerate(ids)}
    weights: dict[tuple[int, int], float] = {}
    edges: dict[tuple[str, str], float] = {}
    seen_facts: set[tuple[str, str, str, str]] = set()
    for pid, _text, triples in CORPUS:
        if not store.existing_passages([pid]):
            continue
        for s, p, o in triples:
            key = (pid, s, p, o)
            if key in seen_facts:
                continue
            seen_facts.add(key)
            e = (make_phrase_id(s), make_phrase_id(o))
            edges[e] = edges.get(e, 0.0) + 1.0
    for (s, o), w in edges.items():
        weights[(pos[s], pos[o])] = w
    g = ig.Graph(n=len(ids), edges=list(weights), directed=False)
    g.es["weight"] = list(weights.values())
    reset = [seeds.get(pid, 0.0) for pid in ids]
    scores = g.personalized_pagerank(damping=DAMPING, directed=False, weights="weight", reset=reset)
    return dict(zip(ids, scores, strict=True))


def test_ppr_matches_igraph(store: GraphStore) -> None:
    _index(store, {"p1", "p2", "p3", "p4", "p5"})
    seeds = {make_phrase_id("stanford"): 0.5, make_phrase_id("alzheimer s"): 1.0}
    ours = store.view().personalized_pagerank(seeds, WalkParams(DAMPING, 200, 1e-12))
    reference = _igraph_reference(store, seeds)
    assert sum(ours.values()) == pytest.approx(1.0, abs=1e-6)
    for pid, score in reference.items():
        assert ours.get(pid, 0.0) == pytest.approx(score, abs=1e-4)


def test_graph_passage_scores_aggregate_ppr_times_count(store: GraphStore) -> None:
    _index(store, {"p1", "p2", "p3", "p4", "p5"})
    seeds = {make_phrase_id("stanford"): 1.0, make_phrase_id("alzheimer s"): 1.0}
    ppr = store.view().personalized_pagerank(seeds, WalkParams(DAMPING, 200, 1e-12))
    scored = store.view().graph_passage_scores(
        seeds, WalkParams(DAMPING, 200, 1e-12), limit=3, explain_phrases=2
    )
    assert len(scored) == 3
    assert [s.score for s in scored] == sorted((s.score for s in scored), reverse=True)
    _, records = _records({"p1", "p2", "p3", "p4", "p5"})
    expected = {r.passage.id: sum(ppr.get(k, 0.0) * c for k, c in r.mentions.items()) for r in records}
    for item in scored:
        assert item.score == pytest.approx(expected[item.passage_id], abs=1e-4)
        assert len(item.top_phrases) <= 2
        assert item.top_phrases[0][1] >= item.top_phrases[-1][1]
    best = sorted(expected, key=lambda k: -expected[k])[:3]
    assert {s.passage_id for s in scored} == set(best)


def test_dense_passage_scores(store: GraphStore) -> None:
    _index(store, {"p1", "p2", "p3"})
    query = EMB.encode(["Thomas researches Alzheimer's."])[0]
    scored = store.view().dense_passage_scores(query, limit=2)
    assert scored[0].passage_id == "p2"
    assert scored[0].score == pytest.approx(1.0, abs=1e-4)
    assert len(scored) == 2


def test_delete_is_exact(store: GraphStore) -> None:
    _index(store, {"p1", "p2", "p4"})
    only_a = _snapshot(store)
    _index(store, {"p3", "p5"})
    a = make_phrase_id("maria")
    b = make_phrase_id("robots")
    store.write_synonyms([SynonymEdge(a, b, 0.85)])  # an edge only B's phrases support
    report = store.delete_passages(["p3", "p5", "nope"])
    assert sorted(report.passages) == ["p3", "p5"]
    assert report.missing == ["nope"]
    assert report.phrases_removed == 3  # maria, robots, cambridge (harvard stays: p4)
    assert _snapshot(store) == only_a
    assert store.get_passages(["p3", "p1"]).keys() == {"p1"}


def test_reopen_with_other_model_is_refused(store: GraphStore) -> None:
    with pytest.raises(ModelMismatchError, match="hash-embedder"):
        store.open("another-model", 32)


def test_get_passages_and_texts(store: GraphStore) -> None:
    _index(store, {"p1", "p2"})
    assert store.get_passages(["p2"])["p2"].text == "Thomas researches Alzheimer's."
    texts = [t for batch in store.iter_texts("phrase", 2) for t in batch]
    assert sorted(name for _, name in texts) == ["alzheimer s", "stanford", "thomas"]
    phrase_ids = [i for i, _ in texts]
    store.set_embeddings("phrase", phrase_ids, np.stack([EMB.encode(["z"])[0]] * len(phrase_ids)))
    hits = store.nearest_phrases(EMB.encode(["z"]), top_k=5, min_similarity=0.99)
    assert len(hits[0]) == 3


# --- HippoRAG 2: fact search and the walk over phrases + passages -------------------------------------------


def test_nearest_facts_rank_by_cosine(store: GraphStore) -> None:
    _index(store, {"p1", "p2", "p3", "p4", "p5"})
    query = EMB.encode([fact_text("thomas", "researches", "alzheimer s")])[0]
    hits = store.view().nearest_facts(query, top_k=3)
    assert len(hits) == 3
    best = hits[0]
    assert (best.subject, best.predicate, best.object) == ("thomas", "researches", "alzheimer s")
    assert best.id == make_fact_id("thomas", "researches", "alzheimer s")
    assert (best.subject_id, best.object_id) == (make_phrase_id("thomas"), make_phrase_id("alzheimer s"))
    assert best.similarity == pytest.approx(1.0, abs=1e-4)
    assert [h.similarity for h in hits] == sorted((h.similarity for h in hits), reverse=True)
    assert len(store.view().nearest_facts(query, top_k=50)) == 7  # every fact, no more


def _igraph_passage_walk(
    store: GraphStore, phrase_seeds: dict[str, float], passage_seeds: dict[str, float]
) -> dict[str, float]:
    """The HippoRAG 2 graph built independently: phrases + passages, relation edges weighted by their
    (passage, fact) count, one weight-1 edge per (passage, mentioned phrase)."""
    _, records = _records({pid for pid, _, _ in CORPUS})
    phrase_ids = sorted({k for r in records for k in r.mentions})
    nodes = phrase_ids + [r.passage.id for r in records]
    pos = {n: i for i, n in enumerate(nodes)}
    weights: dict[tuple[int, int], float] = {}
    for r in records:
        for fact in {f.id: f for f in r.facts}.values():
            e = (pos[fact.subject_id], pos[fact.object_id])
            weights[e] = weights.get(e, 0.0) + 1.0
        for phrase_id in r.mentions:
            weights[(pos[phrase_id], pos[r.passage.id])] = 1.0
    g = ig.Graph(n=len(nodes), edges=list(weights), directed=False)
    g.es["weight"] = list(weights.values())
    reset = [phrase_seeds.get(n, 0.0) + passage_seeds.get(n, 0.0) for n in nodes]
    scores = g.personalized_pagerank(damping=DAMPING, directed=False, weights="weight", reset=reset)
    return {r.passage.id: scores[pos[r.passage.id]] for r in records}


def test_passage_node_scores_match_igraph(store: GraphStore) -> None:
    _index(store, {"p1", "p2", "p3", "p4", "p5"})
    phrase_seeds = {make_phrase_id("stanford"): 0.5, make_phrase_id("alzheimer s"): 1.0}
    passage_seeds = {"p5": 0.05, "p3": 0.02}
    scored = store.view().passage_node_scores(
        phrase_seeds, passage_seeds, WalkParams(DAMPING, 200, 1e-12), limit=5, explain_phrases=2
    )
    reference = _igraph_passage_walk(store, phrase_seeds, passage_seeds)
    assert [s.passage_id for s in scored] == sorted(reference, key=lambda k: (-reference[k], k))
    for item in scored:
        assert item.score == pytest.approx(reference[item.passage_id], abs=1e-5)
        mentioned = {
            n for pid, _, triples in CORPUS if pid == item.passage_id for s, _, o in triples for n in (s, o)
        }
        assert {name for name, _ in item.top_phrases} <= mentioned
        assert 1 <= len(item.top_phrases) <= 2
        assert item.top_phrases[0][1] >= item.top_phrases[-1][1]
    top2 = store.view().passage_node_scores(
        phrase_seeds, passage_seeds, WalkParams(DAMPING, 200, 1e-12), limit=2, explain_phrases=0
    )
    assert [s.passage_id for s in top2] == [s.passage_id for s in scored[:2]]


def test_passage_node_scores_without_seeds(store: GraphStore) -> None:
    _index(store, {"p1", "p2"})
    assert (
        store.view().passage_node_scores({}, {}, WalkParams(DAMPING, 100, 1e-8), limit=5, explain_phrases=2)
        == []
    )
    assert (
        store.view().passage_node_scores(
            {"phrase-unknown": 1.0}, {}, WalkParams(DAMPING, 100, 1e-8), limit=5, explain_phrases=2
        )
        == []
    )
    only_passage = store.view().passage_node_scores(
        {}, {"p1": 1.0}, WalkParams(DAMPING, 100, 1e-8), limit=5, explain_phrases=2
    )
    assert only_passage[0].passage_id == "p1"


# === Neo4j store: the issue 7 methods, and issue 9's synonym rule ==================================
# (kept apart from the shared tests above so additions for the embedded store merge cleanly; the
# synonym test runs on every store, the others on Neo4j only, with GDS and with the in-process engine)


def test_an_existing_synonym_edge_keeps_its_score(store: GraphStore) -> None:
    """One rule on both stores (issue 9): writing a stored pair again changes nothing, its score included."""
    _index(store, {"p1", "p2", "p3"})
    a, b = make_phrase_id("thomas"), make_phrase_id("maria")
    assert store.write_synonyms([SynonymEdge(a, b, 0.9)]) == 1
    seeds = {make_phrase_id("stanford"): 1.0}
    before = store.view().personalized_pagerank(seeds, WalkParams(DAMPING, 200, 1e-12))
    assert store.write_synonyms([SynonymEdge(b, a, 0.2)]) == 0
    after = store.view().personalized_pagerank(seeds, WalkParams(DAMPING, 200, 1e-12))
    assert after == pytest.approx(before, abs=1e-9)


def _bare(passage_id: str, **metadata: object) -> PassageRecord:
    text = f"text of {passage_id}"
    passage = Passage(id=passage_id, text=text, title=f"title {passage_id}", metadata=dict(metadata))
    return PassageRecord(passage, EMB.encode([text])[0], {}, [])


def test_list_passages_pages_by_id(store: GraphStore) -> None:
    store.write_passages([], [_bare("b", source="docs/b.txt"), _bare("a"), _bare("c")])
    first = store.list_passages("", 2)
    assert [i.id for i in first] == ["a", "b"]
    assert (
        first[1].source == "docs/b.txt" and first[1].title == "title b" and first[1].chars == len("text of b")
    )
    assert [i.id for i in store.list_passages("b", 2)] == ["c"]
    assert store.list_passages("c", 2) == []


def test_chunks_are_found_by_their_parent_id(store: GraphStore) -> None:
    chunks = [_bare(f"doc#{n}", parent_id="doc", chunk=n, chunks=12) for n in range(12)]
    other = [_bare("doc#x"), _bare("doc2#0", parent_id="doc2", chunk=0), _bare("do")]  # look-alikes
    store.write_passages([], [*chunks, *other])
    found = store.passages_by_parent(["doc", "do", "missing"])
    assert found == {"doc": [f"doc#{n}" for n in range(12)]}  # chunk order, not string order
    info = {i.id: i for i in store.list_passages("", 100)}
    assert (info["doc#3"].parent_id, info["doc#3"].chunk) == ("doc", 3)
