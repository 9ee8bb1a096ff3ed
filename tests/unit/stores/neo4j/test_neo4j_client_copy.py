"""The Neo4j store's in-process copy (stores/neo4j/client_copy.py) against the emulated server: read once
per graph version, vectors kept by id, a read that saw a concurrent commit used once, and the answers of
the embedded store's arithmetic (the live comparison is tests/neo4j/test_neo4j_same_answers.py)."""

from __future__ import annotations

import numpy as np
import pytest

from hipporag_neo4j.stores.base import WalkParams
from tests.support.neo4j_emulation import FakeGraph, FakeServer
from tests.support.neo4j_engines import (
    DAMPING,
    NS,
    corpus,
    reference_passage_scores,
    store_on,
    unit,
    with_vectors,
)

pytestmark = pytest.mark.unit


def test_the_graph_is_read_once_per_version_and_ranks_as_the_reference() -> None:
    g = corpus()
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver = store.runner.driver
    seeds = {"ph03": 0.5, "ph17": 0.3}
    first = store.view().graph_passage_scores(seeds, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    again = store.view().graph_passage_scores({"ph07": 1.0}, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    assert [s.passage_id for s in first] == [p for p, _ in reference_passage_scores(g, seeds, 5)]
    assert [s.score for s in first] == pytest.approx([s for _, s in reference_passage_scores(g, seeds, 5)])
    assert again and all(s.top_phrases for s in again)
    assert len(driver.named("client_mentions")) == 1  # one read for both queries
    assert not driver.named("passage_scores")  # aggregated in process: no phrase score shipped
    g.bump(NS)  # a write elsewhere
    store.view().graph_passage_scores(seeds, WalkParams(DAMPING, 200, 1e-12), 5, 2)
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
    view = store.copy._view
    assert view is not None and view.phrases is not None and view.phrase_vectors is not None
    server = {n.props["id"]: n.props["embedding"] for n in g.of("Phrase", NS)}
    # the rows carried from the version before are each phrase's own, and held once (no dict beside)
    assert np.asarray(view.phrase_vectors) == pytest.approx(
        np.asarray([server[i] for i in view.phrases.ids], dtype=np.float32)
    )
    assert store.copy._loose == {"phrase": {}, "fact": {}}
    dense = store.view().dense_passage_scores(query[0], 4)
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
    store.view().graph_passage_scores({"ph03": 1.0}, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    assert committed and len(driver.named("client_edges")) == 2  # read again at the new version
    store.view().graph_passage_scores({"ph03": 1.0}, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    assert len(driver.named("client_edges")) == 2  # and that one kept


def test_a_read_torn_by_a_commit_between_its_statements_is_read_again() -> None:
    """READ COMMITTED: a commit between the phrase read and the edge read makes the edges name a phrase
    the copy has no row for. That read is torn: never used, read again (CI saw the KeyError live)."""
    g = corpus()
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver = store.runner.driver
    committed: list[int] = []

    def hook(name: str) -> None:
        if name == "client_passage_ids" and not committed:  # after the phrases, before the edges
            g.phrase(NS, "late", "late phrase")
            g.relation(NS, "late", "ph03", 1.0)
            g.bump(NS)
            committed.append(g.versions[NS])

    driver.after_statement.append(hook)
    scores = store.view().graph_passage_scores({"ph03": 1.0}, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    assert committed and len(driver.named("client_edges")) == 2  # torn once, then read whole
    assert [s.passage_id for s in scores] == [p for p, _ in reference_passage_scores(g, {"ph03": 1.0}, 5)]


def test_a_read_torn_on_every_attempt_answers_from_the_nodes_it_read_and_is_not_kept() -> None:
    """Writers that commit between the statements of every read (a busy namespace) never make a query
    fail: the last read leaves out the rows naming nodes it had not read (commits after its phrase read)
    and is used once; the next query reads again."""
    g = corpus()
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver = store.runner.driver
    commits: list[int] = []

    def hook(name: str) -> None:
        if name == "client_passage_ids":  # after the phrases, before the edges: on every read
            late = f"late{len(commits)}"
            g.phrase(NS, late, f"late phrase {len(commits)}")
            g.relation(NS, late, "ph03", 1.0)
            g.bump(NS)
            commits.append(g.versions[NS])

    driver.after_statement.append(hook)
    reference = reference_passage_scores(g, {"ph03": 1.0}, 5)  # before any late phrase
    scores = store.view().graph_passage_scores({"ph03": 1.0}, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    assert len(commits) == 3 == len(driver.named("client_edges"))  # every read torn, the last one used
    # the late phrases mention no passage: the ranking is that of the graph without them
    assert [s.passage_id for s in scores] == [p for p, _ in reference]
    assert store.copy.reads.get("used_once") == 1
    driver.after_statement.clear()
    store.view().graph_passage_scores({"ph03": 1.0}, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    assert len(driver.named("client_edges")) == 4  # not kept: read again, whole this time


def test_the_index_setting_keeps_the_vector_indexes() -> None:
    g = with_vectors(corpus())
    store = store_on(FakeServer(g), gds=None, version="5.26.0", vector_search="index")
    store.view().dense_passage_scores(np.asarray(unit(1, 0, 0), dtype=np.float32), 3)
    assert store.runner.driver.named("vector_passages") and not store.runner.driver.named(
        "client_vectors_passage"
    )


def test_own_write_brings_the_copy_forward_without_reading_it_again() -> None:
    """After this process's write of version v + 1 on a copy at v, phrases, passage count, passage vectors
    and facts are advanced in process (nothing of them read again), and every answer equals that of a
    copy read afresh from the server."""
    from hipporag_neo4j.models import Passage
    from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord

    g = with_vectors(corpus())
    for node in g.of("Fact", NS):
        node.props["embedding"] = unit(0.3, 0.1, 0.9)
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver = store.runner.driver
    query = np.asarray([unit(1, 0.2, 0)], dtype=np.float32)
    store.nearest_phrases(query, 3, -1.0, None)
    store.view().dense_passage_scores(query[0], 4)
    store.view().nearest_facts(query[0], 4)
    store.passage_count()
    store.view().graph_passage_scores({"ph03": 1.0}, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    reads = {
        name: len(driver.named(name))
        for name in (
            "client_phrases",
            "client_vectors_passage",
            "client_facts",
            "client_mentions",
            "client_edges",
        )
    }
    version = store.copy.state().version

    # the rows of one write: a new phrase and an old one, a new passage mentioning both, a new fact
    new_phrase = PhraseRecord("aa-new", "aa new", np.asarray(unit(1, 0.2, 0.05), dtype=np.float32))
    fact = FactRecord(
        "f-new",
        "aa-new",
        "works in",
        "ph03",
        "aa new works in",
        np.asarray(unit(1, 0.25, 0), dtype=np.float32),
    )
    record = PassageRecord(
        Passage(id="p-mid", text="new"),
        np.asarray(unit(1, 0.2, 0.01), dtype=np.float32),
        {"aa-new": 1, "ph03": 2},
        [fact],
    )
    # as the write stores them: written_in, the version the write made
    g.phrase(
        NS, "aa-new", "aa new", embedding=[float(x) for x in new_phrase.embedding], written_in=version + 1
    )
    g.passage(NS, "p-mid", embedding=[float(x) for x in record.embedding], written_in=version + 1)
    g.mention(NS, "p-mid", "aa-new", 1)
    g.mention(NS, "p-mid", "ph03", 2)
    g.fact(
        NS, "f-new", "aa-new", "works in", "ph03", [float(x) for x in fact.embedding], written_in=version + 1
    )
    g.relation(NS, "aa-new", "ph03", 1.0)  # one (passage, fact) statement of a new pair
    g.bump(NS)
    assert store.copy.advance(version + 1, [new_phrase], [record], ["p-mid"], relation_edges=1, synonyms=[])
    # then this process's synonym write: one new edge
    g.synonym(NS, "aa-new", "ph07", 0.93)
    g.bump(NS)
    assert store.copy.advance(version + 2, synonyms=[("aa-new", "ph07", 0.93)])

    def answers(s: object) -> tuple[object, ...]:
        return (
            s.nearest_phrases(query, 3, -1.0, None),  # type: ignore[attr-defined]
            s.view().dense_passage_scores(query[0], 40),  # type: ignore[attr-defined]
            s.view().nearest_facts(query[0], 5),  # type: ignore[attr-defined]
            s.passage_count(),  # type: ignore[attr-defined]
            s.phrases_by_name(["aa new", "phrase 03"]),  # type: ignore[attr-defined]
            s.view().graph_passage_scores(
                {"aa-new": 1.0, "ph07": 0.5}, WalkParams(DAMPING, 200, 1e-12), 8, 3
            ),  # type: ignore[attr-defined]
            s.view().passage_node_scores(
                {"aa-new": 1.0}, {"p-mid": 0.2, "p03": 0.1}, WalkParams(DAMPING, 200, 1e-12), 8, 3
            ),  # type: ignore[attr-defined]
        )

    advanced = answers(store)
    assert {name: len(driver.named(name)) for name in reads} == reads  # nothing of these read again
    assert advanced[0][0][0].id == "aa-new" and advanced[3] == 31
    assert advanced[4]["phrase 03"].passage_count == g_count(g, "ph03")
    fresh = store_on(FakeServer(g), gds=None, version="5.26.0")
    expected = answers(fresh)
    assert expected[:5] == advanced[:5]
    for mine, theirs in zip(advanced[5:], expected[5:], strict=True):  # the PPR rankings
        assert [p.passage_id for p in mine] == [p.passage_id for p in theirs]  # type: ignore[attr-defined]
        assert [p.score for p in mine] == pytest.approx([p.score for p in theirs], rel=1e-9)  # type: ignore[attr-defined]
        assert [p.top_phrases for p in mine] == [p.top_phrases for p in theirs]  # type: ignore[attr-defined]
    # a copy that is not at version - 1 keeps nothing
    assert not store.copy.advance(version + 5)


def test_a_write_appends_its_facts_and_passages_where_a_read_puts_them_and_keeps_their_indexes() -> None:
    """A write's new facts and passages are appended to the copy's matrices (in id order), which is where
    a read of the new version puts them (by the version that gave each its vector, then id): the held
    matrices are not copied again (a second write fills spare rows), and their vector indexes stay valid
    (the new rows are their tail) instead of being trained again."""
    from hipporag_neo4j.models import Passage
    from hipporag_neo4j.stores.base import FactRecord, PassageRecord
    from hipporag_neo4j.stores.memory.vector_index import VectorSearch

    g = with_vectors(corpus())
    for k, fact_id in enumerate(["f-a", "f-m", "f-z", "f-zz"]):
        g.fact(NS, fact_id, "ph01", "knows", f"ph{k + 2:02d}", unit(1, 0.1 * k, 0.3))
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    store.vector_search = VectorSearch(mode="approximate")  # the index at any size
    query = np.asarray(unit(1, 0.2, 0.2), dtype=np.float32)
    store.view().nearest_facts(query, 3)
    store.view().dense_passage_scores(query, 1)  # 1 x 16 <= 31 passages: through the index
    assert store.copy.indexes.builds == 2  # facts, passages

    def write(passage_id: str, fact_id: str, vector: list[float]) -> None:
        version = store.copy.state().version
        fact = FactRecord(fact_id, "ph01", "knows", "ph09", f"{fact_id} text", np.asarray(vector))
        record = PassageRecord(Passage(id=passage_id, text="new"), np.asarray(vector), {"ph01": 1}, [fact])
        g.passage(NS, passage_id, embedding=vector, written_in=version + 1)
        g.mention(NS, passage_id, "ph01", 1)
        g.fact(NS, fact_id, "ph01", "knows", "ph09", vector, written_in=version + 1)
        g.bump(NS)
        assert store.copy.advance(version + 1, [], [record], [passage_id], relation_edges=0, synonyms=[])

    write("p-mid", "f-b", unit(1, 0.2, 0.2))  # both ids sort among the old ones
    first = store.copy.held()
    assert first is not None and first[1].facts is not None and first[1].dense is not None
    write("p-mid2", "f-c", unit(1, 0.25, 0.2))
    found = (store.view().nearest_facts(query, 2), store.view().dense_passage_scores(query, 1))
    assert store.copy.indexes.builds == 2  # the indexes of the first version, the new rows as their tail
    assert store.copy.reads.get("facts") == 1 and store.copy.reads.get("dense") == 1  # not read again
    mine = store.copy.held()
    assert mine is not None and mine[1].facts is not None and mine[1].dense is not None
    # the second write filled spare rows of the buffer the first one made: no copy of the held rows
    assert np.shares_memory(mine[1].facts.vectors, first[1].facts.vectors)
    assert np.shares_memory(mine[1].dense.vectors, first[1].dense.vectors)

    fresh = store_on(FakeServer(g), gds=None, version="5.26.0")
    fresh.vector_search = store.vector_search
    assert (fresh.view().nearest_facts(query, 2), fresh.view().dense_passage_scores(query, 1)) == found
    theirs = fresh.copy.held()
    assert theirs is not None and theirs[1].facts is not None and theirs[1].dense is not None
    assert mine[1].facts.ids == theirs[1].facts.ids == ["f-a", "f-m", "f-z", "f-zz", "f-b", "f-c"]
    assert np.array_equal(mine[1].facts.vectors, theirs[1].facts.vectors)
    assert list(mine[1].dense.ids) == list(theirs[1].dense.ids) and list(mine[1].dense.ids)[-2:] == [
        "p-mid",
        "p-mid2",
    ]
    assert np.array_equal(mine[1].dense.vectors, theirs[1].dense.vectors)


def g_count(g: FakeGraph, phrase_id: str) -> int:
    iid = g.iid("Phrase", NS, phrase_id)
    return sum(1 for (_, q) in g.mentions if q == iid)


def test_own_writes_append_new_phrase_vectors_in_place_with_the_fresh_read_s_rows() -> None:
    """A write's new phrases go into spare rows of the held phrase matrix (no stack of every vector per
    write: 1.5 GB at 1M phrases); the matrix equals a fresh read's, and the earlier view keeps its rows."""
    from hipporag_neo4j.stores.base import PhraseRecord

    g = with_vectors(corpus())
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    query = np.asarray([unit(1, 0.2, 0)], dtype=np.float32)
    store.nearest_phrases(query, 3, -1.0, None)
    held = []
    for k in range(3):
        version = store.copy.state().version
        vector = np.asarray(unit(1, 0.2, 0.05 * (k + 1)), dtype=np.float32)
        g.phrase(NS, f"zz-{k}", f"zz {k}", embedding=[float(x) for x in vector], written_in=version + 1)
        g.bump(NS)
        phrase = PhraseRecord(f"zz-{k}", f"zz {k}", vector)
        assert store.copy.advance(version + 1, [phrase], [], [], relation_edges=0, synonyms=[])
        store.nearest_phrases(query, 3, -1.0, None)
        view = store.copy._view
        assert view is not None and view.phrase_vectors is not None
        held.append((view.phrase_vectors.copy(), view.phrase_vectors))
    _, second, third = (matrix for _, matrix in held)
    assert np.shares_memory(second, third)  # appended in place, not stacked again
    for snapshot, matrix in held:
        assert np.array_equal(snapshot, matrix)  # a later write never touched an earlier view's rows
    fresh = store_on(FakeServer(g), gds=None, version="5.26.0")
    assert fresh.nearest_phrases(query, 5, -1.0, None) == store.nearest_phrases(query, 5, -1.0, None)
    fresh.nearest_phrases(query, 1, -1.0, None)
    assert fresh.copy._view is not None
    assert np.array_equal(fresh.copy._view.phrase_vectors, third)


def test_a_process_that_only_writes_carries_only_the_phrases_forward() -> None:
    """A copy restored from disk holds every part; a process that only writes (an index run) asks for the
    phrases alone, so its writes advance those and drop the graph, passage vectors and facts (re-read if a
    query asks later) and keep no fact vectors; once a query asks for the facts, writes carry them too."""
    import copy as copying

    from hipporag_neo4j.models import Passage
    from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord

    g = with_vectors(corpus())
    for node in g.of("Fact", NS):
        node.props["embedding"] = unit(0.3, 0.1, 0.9)
    reader = store_on(FakeServer(g), gds=None, version="5.26.0")
    query = np.asarray([unit(1, 0.2, 0)], dtype=np.float32)
    reader.nearest_phrases(query, 3, -1.0, None)
    reader.view().dense_passage_scores(query[0], 4)
    reader.view().nearest_facts(query[0], 4)
    reader.view().graph_passage_scores({"ph03": 1.0}, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    held = reader.copy._view
    assert held is not None and held.graph is not None and held.facts is not None and held.dense is not None
    state = reader.copy.state()

    writer = store_on(FakeServer(g), gds=None, version="5.26.0")
    assert writer.copy.restore(state, copying.copy(held))

    def write(k: int) -> None:
        version = writer.copy.state().version
        vector = np.asarray(unit(1, 0.2, 0.05 * (k + 1)), dtype=np.float32)
        fact = FactRecord(f"f-{k}", f"zz-{k}", "near", "ph03", f"zz {k} near", vector)
        record = PassageRecord(Passage(id=f"p-new-{k}", text="new"), vector, {f"zz-{k}": 1}, [fact])
        g.phrase(NS, f"zz-{k}", f"zz {k}", embedding=[float(x) for x in vector], written_in=version + 1)
        g.passage(NS, f"p-new-{k}", embedding=[float(x) for x in vector], written_in=version + 1)
        g.mention(NS, f"p-new-{k}", f"zz-{k}", 1)
        g.fact(NS, f"f-{k}", f"zz-{k}", "near", "ph03", [float(x) for x in vector])
        g.bump(NS)
        phrase = PhraseRecord(f"zz-{k}", f"zz {k}", vector)
        assert writer.copy.advance(
            version + 1, [phrase], [record], [f"p-new-{k}"], relation_edges=0, synonyms=[], model=("m", 3)
        )

    writer.nearest_phrases(query, 3, -1.0, [""])  # the synonym step's search: phrases only
    write(0)
    view = writer.copy._view
    assert view is not None and view.phrases is not None and view.phrase_vectors is not None
    assert (view.graph, view.dense, view.facts) == (None, None, None)  # dropped, not advanced
    assert "zz-0" in list(view.phrases.ids) and len(view.phrase_vectors) == len(view.phrases.ids)
    assert not writer.copy._loose["fact"]  # no fact vector kept by a process that only writes
    writer.view().nearest_facts(query[0], 4)  # a query asks for the facts: read, and carried from now on
    write(1)
    view = writer.copy._view
    assert view is not None and view.facts is not None and "f-1" in view.facts.ids
    # each vector held once: the written ones are rows of the view's matrices, none left beside them
    assert writer.copy._loose == {"phrase": {}, "fact": {}}
    fresh = store_on(FakeServer(g), gds=None, version="5.26.0")
    assert writer.view().nearest_facts(query[0], 6) == fresh.view().nearest_facts(query[0], 6)
    assert writer.nearest_phrases(query, 5, -1.0, None) == fresh.nearest_phrases(query, 5, -1.0, None)


def test_fact_vectors_of_a_new_version_are_the_held_rows_and_the_new_ones_read() -> None:
    g = with_vectors(corpus())
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver = store.runner.driver
    query = np.asarray(unit(1, 0.2, 0), dtype=np.float32)
    store.view().nearest_facts(query, 4)
    first = sum(len(c.params["ids"]) for c in driver.named("client_vectors_fact"))
    assert first == len(g.of("Fact", NS))
    g.phrase(NS, "zz-new", "zz new", embedding=unit(1, 0.2, 0.01))
    g.fact(NS, "f-zz", "zz-new", "near", "ph03", unit(1, 0.2, 0.01))
    g.bump(NS)  # another process's write
    hits = store.view().nearest_facts(query, 4)
    assert [c.params["ids"] for c in driver.named("client_vectors_fact")][-1] == ["f-zz"]  # alone read
    fresh = store_on(FakeServer(g), gds=None, version="5.26.0")
    assert hits == fresh.view().nearest_facts(query, 4)
    view = store.copy._view
    assert view is not None and view.facts is not None
    server = {n.props["id"]: n.props["embedding"] for n in g.of("Fact", NS)}
    assert np.asarray(view.facts.vectors) == pytest.approx(
        np.asarray([server[i] for i in view.facts.ids], dtype=np.float32)
    )


def test_a_phrase_without_a_vector_is_an_error_that_counts_them() -> None:
    from hipporag_neo4j.errors import StoreError

    g = with_vectors(corpus())
    g.phrase(NS, "zz-bare", "zz bare")  # written without its vector (an interrupted re-embed)
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    query = np.asarray([unit(1, 0.2, 0)], dtype=np.float32)
    with pytest.raises(StoreError, match=r"^1 nodes of namespace .* have no embedding"):
        store.nearest_phrases(query, 3, -1.0, None)


def test_the_copy_reads_its_rows_without_the_drivers_per_value_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy's bulk reads (ids, names, vectors, mentions, edges, facts) take the values as the driver
    decoded them: ``Result.data()`` walks every float of every vector through ``isinstance`` checks, which
    was 85% of the client's time reading a large namespace. Every part is read, and equals a read made
    through ``data()``."""
    from tests.support.neo4j_fake import FakeResult

    g = with_vectors(corpus())
    for k, fact_id in enumerate(["f-a", "f-b"]):
        g.fact(NS, fact_id, "ph01", "knows", f"ph{k + 2:02d}", unit(1, 0.1 * k, 0.3))
    query = np.asarray(unit(1, 0.2, 0.2), dtype=np.float32)

    def read_all(store: object) -> tuple[object, ...]:
        view = store.view()  # type: ignore[attr-defined]
        return (
            store.nearest_phrases(query[None, :], 3, -1.0, None),  # type: ignore[attr-defined]
            view.dense_passage_scores(query, 5),
            view.nearest_facts(query, 2),
            view.graph_passage_scores({"ph03": 1.0}, WalkParams(DAMPING, 200, 1e-12), 5, 2),
        )

    expected = read_all(store_on(FakeServer(g), gds=None, version="5.26.0"))
    walked: list[list[str]] = []
    data = FakeResult.data

    def counted(self: FakeResult) -> list[dict[str, object]]:
        if self.records and {"ids", "sources", "passage_ids"} & set(self.records[0]):
            walked.append(sorted(self.records[0]))
        return data(self)

    monkeypatch.setattr(FakeResult, "data", counted)
    assert read_all(store_on(FakeServer(g), gds=None, version="5.26.0")) == expected
    assert walked == []


def test_the_graph_is_read_in_batches_of_ids_with_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mentions and edges are read ``GRAPH_BATCH`` passage or phrase ids a statement (one collect of
    every edge of a namespace of 1.2M phrases passed the server's 512 MiB transaction memory), and the
    graph they make is the one a single statement makes."""
    from hipporag_neo4j.stores.neo4j import client_copy

    g = with_vectors(corpus())

    def scores(store: object) -> list[tuple[str, float]]:
        view = store.view()  # type: ignore[attr-defined]
        found = view.graph_passage_scores({"ph03": 1.0, "ph11": 0.5}, WalkParams(DAMPING, 200, 1e-12), 10, 2)
        return [(p.passage_id, p.score) for p in found]

    whole = store_on(FakeServer(g), gds=None, version="5.26.0")
    expected = scores(whole)
    assert len(whole.runner.driver.named("client_edges")) == 1
    monkeypatch.setattr(client_copy, "GRAPH_BATCH", 7)
    paged = store_on(FakeServer(g), gds=None, version="5.26.0")
    assert scores(paged) == expected
    assert len(paged.runner.driver.named("client_edges")) == -(-41 // 7)  # 41 phrases
    assert len(paged.runner.driver.named("client_mentions")) == -(-30 // 7)  # 30 passages
    held, expected_held = paged.copy.held(), whole.copy.held()
    assert held is not None and expected_held is not None
    assert held[1].graph is not None and expected_held[1].graph is not None
    assert held[1].graph.n_relation_edges == expected_held[1].graph.n_relation_edges > 0
    assert held[1].graph.n_synonym_edges == expected_held[1].graph.n_synonym_edges > 0


def test_a_passage_deleted_between_its_id_and_its_vector_is_read_again_not_an_error() -> None:
    """The passage vectors are read by id after the ids: a delete committed in between leaves an id
    without a row. That read saw a commit, so it is read again at the new version; no error."""
    g = with_vectors(corpus())
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver = store.runner.driver
    committed: list[int] = []

    def hook(name: str) -> None:
        if name == "client_passage_ids" and not committed:
            g.delete("Passage", NS, "p05")
            g.bump(NS)
            committed.append(g.versions[NS])

    driver.after_statement.append(hook)
    query = np.asarray(unit(1, 0.2, 0.2), dtype=np.float32)
    found = store.view().dense_passage_scores(query, 40)
    assert committed and len(driver.named("client_passage_ids")) == 2  # read again at the new version
    assert len(found) == 29 and "p05" not in {p.passage_id for p in found}
