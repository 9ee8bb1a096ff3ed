"""The Neo4j store's in-process copy (stores/neo4j/client_copy.py) on a real server: read once per graph
version, vectors kept by id, a read that saw a concurrent commit used once, the store's own writes carrying
it forward, and the answers of the embedded store's arithmetic (the live comparison with the embedded store
is tests/neo4j/test_neo4j_same_answers.py).

Another process's commits are made by a second store on the namespace, between two statements of the
reading transaction (tests/support/live_driver.py): Neo4j reads at READ COMMITTED, so the next statement
of the read sees them. ``copy_cache`` is off: every part is read over Bolt, none loaded from disk."""

from __future__ import annotations

import copy as copying
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import neo4j
import numpy as np
import pytest

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord, SynonymEdge, WalkParams
from hipporag_neo4j.stores.memory.vector_index import VectorSearch
from hipporag_neo4j.stores.neo4j import Neo4jStore, client_copy
from tests.support import reference_ppr as reference
from tests.support.live_driver import RecordingDriver, recorded_store
from tests.support.neo4j_support import TEST_EMBEDDING_DIM, neo4j_settings_or_skip, run_cypher
from tests.support.reference_ppr import reference_ppr

pytestmark = pytest.mark.neo4j

MODEL = "hash-embedder"
DIM = TEST_EMBEDDING_DIM
DAMPING = 0.5
WALK = WalkParams(DAMPING, 200, 1e-12)
N_PHRASES, N_PASSAGES = 40, 30  # and the phrase "lonely": 41 phrases


def unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal(DIM)
    return (v / np.linalg.norm(v)).astype(np.float32)


def near(v: np.ndarray, noise: float, seed: int) -> np.ndarray:
    w = v + noise * np.random.default_rng(seed).standard_normal(DIM)
    return (w / np.linalg.norm(w)).astype(np.float32)


@dataclass
class Corpus:
    """What was written to the namespace, for the reference answers."""

    phrases: list[PhraseRecord]
    records: list[PassageRecord]
    synonyms: list[SynonymEdge] = field(default_factory=list)

    def plus(
        self,
        phrases: Sequence[PhraseRecord] = (),
        records: Sequence[PassageRecord] = (),
        synonyms: Sequence[SynonymEdge] = (),
    ) -> Corpus:
        return Corpus([*self.phrases, *phrases], [*self.records, *records], [*self.synonyms, *synonyms])


def corpus(seed: int = 7) -> Corpus:
    """40 phrases and 30 passages each mentioning 2 to 4 of them (counts 1 or 2) and stating a fact between
    each two consecutive ones (RELATION weights: the passages stating a pair), 6 synonym pairs, and the
    phrase ``lonely`` that p00 mentions and no edge reaches."""
    rng = np.random.default_rng(seed)
    phrases = [PhraseRecord(f"ph{i:02d}", f"phrase {i:02d}", unit(rng)) for i in range(N_PHRASES)]
    phrases.append(PhraseRecord("lonely", "lonely phrase", unit(rng)))
    records = []
    for j in range(N_PASSAGES):
        mentioned = sorted(int(i) for i in rng.choice(N_PHRASES, size=int(rng.integers(2, 5)), replace=False))
        mentions = {f"ph{i:02d}": int(rng.integers(1, 3)) for i in mentioned}
        if j == 0:
            mentions["lonely"] = 1
        facts = [
            FactRecord(
                f"f{j:02d}-{a:02d}-{b:02d}",
                f"ph{a:02d}",
                "relates to",
                f"ph{b:02d}",
                f"phrase {a:02d} relates to phrase {b:02d} in {j:02d}",
                unit(rng),
            )
            for a, b in itertools.pairwise(mentioned)
        ]
        records.append(
            PassageRecord(Passage(id=f"p{j:02d}", text=f"passage {j:02d}"), unit(rng), mentions, facts)
        )
    synonyms = []
    for _ in range(6):
        a, b = sorted(int(i) for i in rng.choice(N_PHRASES, size=2, replace=False))
        synonyms.append(SynonymEdge(f"ph{a:02d}", f"ph{b:02d}", float(rng.uniform(0.8, 1.0))))
    return Corpus(phrases, records, synonyms)


def neighbour() -> Corpus:
    """Another namespace of the database with the same ids: its rows must never show up."""
    rng = np.random.default_rng(11)
    phrases = [PhraseRecord(f"ph{i:02d}", f"other {i}", unit(rng)) for i in range(5)]
    records = [
        PassageRecord(
            Passage(id=f"p{i:02d}", text=f"other {i}"),
            unit(rng),
            {f"ph{i:02d}": 3, f"ph{i + 1:02d}": 1},
            [
                FactRecord(
                    f"f-other-{i}", f"ph{i:02d}", "next", f"ph{i + 1:02d}", f"other {i} next", unit(rng)
                )
            ],
        )
        for i in range(4)
    ]
    return Corpus(phrases, records)


def reference_scores(c: Corpus, seeds: dict[str, float]) -> dict[str, float]:
    """PPR (igraph semantics, converged) over the phrases of ``c``: each (passage, fact) statement adds 1
    to its pair's undirected weight, each synonym pair its score."""
    ids = list(dict.fromkeys(p.id for p in c.phrases))
    relation = [
        (f.subject_id, f.object_id, 1.0)
        for r in {r.passage.id: r for r in c.records}.values()
        for f in {f.id: f for f in r.facts}.values()
    ]
    synonym = [(e.source_id, e.target_id, e.score) for e in c.synonyms]
    return reference_ppr(ids, relation + synonym, seeds, DAMPING)


def reference_passage_scores(c: Corpus, seeds: dict[str, float], limit: int) -> list[tuple[str, float]]:
    """HippoRAG's passage scores: each passage's mentioned phrases' PPR scores times the mention counts."""
    mentions = [
        (r.passage.id, pid, count)
        for r in {r.passage.id: r for r in c.records}.values()
        for pid, count in r.mentions.items()
    ]
    return reference.reference_passage_scores(reference_scores(c, seeds), mentions, limit)


def late(name: str, seed: int, *, to: str = "ph03") -> tuple[list[PhraseRecord], list[PassageRecord]]:
    """A phrase ``name`` and a passage ``p-<name>`` mentioning it and ``to``, stating ``to`` -> ``name``: a
    RELATION edge from a phrase read before to one written later (an edge naming a phrase a read that
    began before this commit has no row for)."""
    rng = np.random.default_rng(seed)
    phrase = PhraseRecord(name, f"{name} phrase", unit(rng))
    fact = FactRecord(f"f-{name}", to, "meets", name, f"{to} meets {name}", unit(rng))
    record = PassageRecord(Passage(id=f"p-{name}", text=f"{name} text"), unit(rng), {to: 1, name: 1}, [fact])
    return [phrase], [record]


def ranking(scores: Sequence[Any]) -> list[str]:
    return [s.passage_id for s in scores]


def server_of(s: Neo4jSettings) -> tuple[str, str, str, str]:
    return (s.uri or "", s.user, s.password.get_secret_value(), s.database)


def server_vectors(s: Neo4jSettings, label: str) -> dict[str, np.ndarray]:
    rows = run_cypher(
        server_of(s),
        f"MATCH (n:{label} {{namespace: $ns}}) WHERE n.embedding IS NOT NULL "
        "RETURN n.id AS id, n.embedding AS v",
        ns=s.namespace,
    )
    return {str(r["id"]): np.asarray(r["v"], dtype=np.float64) for r in rows}


def opened(s: Neo4jSettings, vector_search: VectorSearch | None = None) -> Neo4jStore:
    store = Neo4jStore(s, vector_search=vector_search)
    store.open(MODEL, DIM)
    return store


@pytest.fixture
def settings() -> Neo4jSettings:
    """The in-process engine (the copy's graph) and no copy on disk standing in for a server read."""
    return neo4j_settings_or_skip(ppr_engine="local", copy_cache=False)


@pytest.fixture
def base() -> Corpus:
    return corpus()


@pytest.fixture
def writer(settings: Neo4jSettings, base: Corpus) -> Iterator[Neo4jStore]:
    """Another process on the namespace (its writes are commits the stores under test did not make), after
    writing the corpus; and the neighbouring namespace with the same ids."""
    other = opened(neo4j_settings_or_skip(ppr_engine="local", copy_cache=False))
    try:
        other.write_passages(neighbour().phrases, neighbour().records)
        store = opened(settings)
        try:
            store.write_passages(base.phrases, base.records)
            store.write_synonyms(base.synonyms)
            yield store
        finally:
            store.drop_namespace()
            store.close()
    finally:
        other.drop_namespace()
        other.close()


Open = Callable[..., tuple[Neo4jStore, RecordingDriver]]


@pytest.fixture
def reader(settings: Neo4jSettings, writer: Neo4jStore) -> Iterator[Open]:
    """Opens stores on the namespace through a :class:`RecordingDriver` (closed before the namespace is
    dropped); keyword arguments update the settings."""
    stores: list[tuple[Neo4jStore, RecordingDriver]] = []

    def open_reader(**overrides: Any) -> tuple[Neo4jStore, RecordingDriver]:
        store, driver = recorded_store(settings.model_copy(update=overrides), MODEL, DIM)
        stores.append((store, driver))
        return store, driver

    yield open_reader
    for store, driver in stores:
        store.close()
        driver.close()


@pytest.fixture
def fresh(settings: Neo4jSettings, writer: Neo4jStore) -> Iterator[Callable[..., Neo4jStore]]:
    """Opens plain stores on the namespace: a new process that reads everything from the server."""
    stores: list[Neo4jStore] = []

    def open_fresh(vector_search: VectorSearch | None = None) -> Neo4jStore:
        stores.append(opened(settings, vector_search))
        return stores[-1]

    yield open_fresh
    for store in stores:
        store.close()


def test_the_graph_is_read_once_per_version_and_ranks_as_the_reference(
    writer: Neo4jStore, reader: Open, base: Corpus
) -> None:
    store, driver = reader()
    seeds = {"ph03": 0.5, "ph17": 0.3}
    first = store.view().graph_passage_scores(seeds, WALK, 5, 2)
    again = store.view().graph_passage_scores({"ph07": 1.0}, WALK, 5, 2)
    expected = reference_passage_scores(base, seeds, 5)
    assert len(expected) == 5
    assert ranking(first) == [p for p, _ in expected]
    assert [s.score for s in first] == pytest.approx([s for _, s in expected])
    assert again and all(s.top_phrases for s in again)
    assert len(driver.named("client_mentions")) == 1  # one read for both queries
    assert not driver.named("passage_scores")  # aggregated in process: no phrase score shipped
    writer.write_passages([PhraseRecord("zz-elsewhere", "zz elsewhere", unit(np.random.default_rng(5)))], [])
    store.view().graph_passage_scores(seeds, WALK, 5, 2)
    assert len(driver.named("client_mentions")) == 2


def test_vectors_are_read_once_by_id_and_searched_exactly(
    settings: Neo4jSettings, writer: Neo4jStore, reader: Open
) -> None:
    store, driver = reader()
    query = np.stack([unit(np.random.default_rng(42))])
    hits = store.nearest_phrases(query, 3, -1.0, None)[0]
    phrases = server_vectors(settings, "Phrase")
    exact = sorted(
        ((float(v @ query[0].astype(np.float64)), pid) for pid, v in phrases.items()),
        key=lambda sp: (-sp[0], sp[1]),
    )[:3]
    assert [h.id for h in hits] == [pid for _, pid in exact]
    assert [h.similarity for h in hits] == pytest.approx([s for s, _ in exact], abs=1e-6)
    fetched = sum(len(c.params["ids"]) for c in driver.named("client_vectors_phrase"))
    assert fetched == len(phrases) == N_PHRASES + 1
    writer.write_passages([PhraseRecord("zz-new", "zz new", near(query[0], 0.05, 1))], [])  # elsewhere
    hits = store.nearest_phrases(query, 1, 0.0, None)[0]
    assert [h.id for h in hits] == ["zz-new"]  # the new version's phrase is found ...
    assert [c.params["ids"] for c in driver.named("client_vectors_phrase")][-1] == [
        "zz-new"
    ]  # ... alone read
    view = store.copy._view
    assert view is not None and view.phrases is not None and view.phrase_vectors is not None
    server = server_vectors(settings, "Phrase")
    assert sorted(view.phrases.ids) == sorted(server)
    # the rows carried from the version before are each phrase's own, and held once (no dict beside)
    assert np.asarray(view.phrase_vectors) == pytest.approx(
        np.asarray([server[i] for i in view.phrases.ids], dtype=np.float32)
    )
    assert store.copy._loose == {"phrase": {}, "fact": {}}
    dense = store.view().dense_passage_scores(query[0], 4)
    passages = server_vectors(settings, "Passage")
    best = max(passages, key=lambda pid: float(passages[pid] @ query[0].astype(np.float64)))
    assert len(dense) == 4 and dense[0].passage_id == best
    assert not driver.named("vector_phrases") and not driver.named("vector_passages")


def test_a_read_that_saw_a_commit_is_used_once_and_not_kept(writer: Neo4jStore, reader: Open) -> None:
    store, driver = reader()
    ran = driver.after("client_edges", lambda: writer.write_passages(*late("late", 1)))
    store.view().graph_passage_scores({"ph03": 1.0}, WALK, 5, 2)
    assert ran == [1] and len(driver.named("client_edges")) == 2  # read again at the new version
    store.view().graph_passage_scores({"ph03": 1.0}, WALK, 5, 2)
    assert len(driver.named("client_edges")) == 2  # and that one kept


def test_a_read_torn_by_a_commit_between_its_statements_is_read_again(
    writer: Neo4jStore, reader: Open, base: Corpus
) -> None:
    """READ COMMITTED: a commit between the passage read and the edge read makes the edges name a phrase
    the copy has no row for (ph03 -> late). That read is torn: never used, read again (CI saw the KeyError
    live)."""
    store, driver = reader()
    written = late("late", 1)
    ran = driver.after("client_passage_ids", lambda: writer.write_passages(*written))
    scores = store.view().graph_passage_scores({"ph03": 1.0}, WALK, 5, 2)
    assert ran == [1] and len(driver.named("client_edges")) == 2  # torn once, then read whole
    # torn: given up at its edges, before the closing version read (a query's first one, then two a read)
    assert len(driver.named("client_state")) == 1 + 1 + 2
    expected = reference_passage_scores(base.plus(*written), {"ph03": 1.0}, 5)
    assert ranking(scores) == [p for p, _ in expected] and "p-late" in ranking(scores)
    assert [s.score for s in scores] == pytest.approx([s for _, s in expected])


def test_a_read_torn_on_every_attempt_answers_from_the_nodes_it_read_and_is_not_kept(
    writer: Neo4jStore, reader: Open, base: Corpus
) -> None:
    """Writers that commit between the statements of every read (a busy namespace) never make a query
    fail: the last read leaves out the rows naming nodes it had not read (commits after its passage read)
    and is used once; the next query reads again."""
    store, driver = reader()
    commits: list[tuple[list[PhraseRecord], list[PassageRecord]]] = []

    def commit() -> None:
        commits.append(late(f"late{len(commits)}", len(commits)))
        writer.write_passages(*commits[-1])

    driver.after("client_passage_ids", commit, times=10)  # after the passages, before the edges: every read
    scores = store.view().graph_passage_scores({"ph03": 1.0}, WALK, 40, 2)
    assert len(commits) == 3 == len(driver.named("client_edges"))  # every read torn, the last one used
    # the last read began after the first two commits: the graph as they left it, without the third's
    # phrase (the edge ph03 -> late2 left out) and passage
    seen = base.plus(*commits[0]).plus(*commits[1])
    expected = reference_passage_scores(seen, {"ph03": 1.0}, 40)
    assert ranking(scores) == [p for p, _ in expected]
    assert [s.score for s in scores] == pytest.approx([s for _, s in expected])
    everything = reference_passage_scores(seen.plus(*commits[2]), {"ph03": 1.0}, 40)
    assert "p-late2" in [p for p, _ in everything] and "p-late2" not in ranking(scores)
    assert store.copy.reads.get("used_once") == 1
    driver.after_statement.clear()
    again = store.view().graph_passage_scores({"ph03": 1.0}, WALK, 40, 2)
    assert len(driver.named("client_edges")) == 4  # not kept: read again, whole this time
    assert ranking(again) == [p for p, _ in everything]
    assert [s.score for s in again] == pytest.approx([s for _, s in everything])


def test_the_index_setting_keeps_the_vector_indexes(
    settings: Neo4jSettings, writer: Neo4jStore, reader: Open
) -> None:
    store, driver = reader(vector_search="index")
    query = unit(np.random.default_rng(42))
    found = store.view().dense_passage_scores(query, 3)
    assert driver.named("vector_passages") and not driver.named("client_vectors_passage")
    passages = server_vectors(settings, "Passage")
    best = max(passages, key=lambda pid: float(passages[pid] @ query.astype(np.float64)))
    assert found and found[0].passage_id == best


def test_own_write_brings_the_copy_forward_without_reading_it_again(
    settings: Neo4jSettings, writer: Neo4jStore, reader: Open, fresh: Callable[..., Neo4jStore]
) -> None:
    """After this process's write of version v + 1 on a copy at v, phrases, passage count, passage vectors
    and facts are advanced in process (nothing of them read again), and every answer equals that of a
    copy read afresh from the server."""
    store, driver = reader()
    query = np.stack([unit(np.random.default_rng(42))])
    store.nearest_phrases(query, 3, -1.0, None)
    store.view().dense_passage_scores(query[0], 4)
    store.view().nearest_facts(query[0], 4)
    store.passage_count()
    store.view().graph_passage_scores({"ph03": 1.0}, WALK, 5, 2)
    names = ("client_phrases", "client_vectors_passage", "client_facts", "client_mentions", "client_edges")
    reads = {name: len(driver.named(name)) for name in names}
    assert all(reads.values()), reads
    version = store.copy.state().version

    # one write: a new phrase and an old one, a new passage mentioning both, a new fact (a new pair)
    new_phrase = PhraseRecord("aa-new", "aa new", near(query[0], 0.05, 1))
    fact = FactRecord("f-new", "aa-new", "works in", "ph03", "aa new works in", near(query[0], 0.1, 2))
    record = PassageRecord(
        Passage(id="p-mid", text="new"), near(query[0], 0.2, 3), {"aa-new": 1, "ph03": 2}, [fact]
    )
    store.write_passages([new_phrase], [record])
    store.write_synonyms([SynonymEdge("aa-new", "ph07", 0.93)])  # then this process's synonym write
    assert store.copy.reads.get("advanced") == 2 and store.copy.state().version == version + 2
    held = store.copy.held()
    assert held is not None and held[0].version == version + 2

    def answers(s: Neo4jStore) -> tuple[Any, ...]:
        return (
            s.nearest_phrases(query, 3, -1.0, None),
            s.view().dense_passage_scores(query[0], 40),
            s.view().nearest_facts(query[0], 5),
            s.passage_count(),
            s.phrases_by_name(["aa new", "phrase 03"]),
            s.view().graph_passage_scores({"aa-new": 1.0, "ph07": 0.5}, WALK, 8, 3),
            s.view().passage_node_scores({"aa-new": 1.0}, {"p-mid": 0.2, "p03": 0.1}, WALK, 8, 3),
        )

    advanced = answers(store)
    assert {name: len(driver.named(name)) for name in names} == reads  # nothing of these read again
    assert advanced[0][0][0].id == "aa-new" and advanced[3] == N_PASSAGES + 1
    counted = run_cypher(
        server_of(settings),
        "MATCH (d:Passage {namespace: $ns})-[:MENTIONS]->(:Phrase {namespace: $ns, id: 'ph03'}) "
        "RETURN count(d) AS n",
        ns=settings.namespace,
    )[0]["n"]
    assert advanced[4]["phrase 03"].passage_count == counted
    expected = answers(fresh())
    assert expected[:5] == advanced[:5]
    for mine, theirs in zip(advanced[5:], expected[5:], strict=True):  # the PPR rankings
        assert mine and [p.passage_id for p in mine] == [p.passage_id for p in theirs]
        assert [p.score for p in mine] == pytest.approx([p.score for p in theirs], rel=1e-9)
        assert [p.top_phrases for p in mine] == [p.top_phrases for p in theirs]
    # a copy that is not at version - 1 keeps nothing
    assert not store.copy.advance(version + 5)


def test_a_write_appends_its_facts_and_passages_where_a_read_puts_them_and_keeps_their_indexes(
    writer: Neo4jStore, reader: Open, fresh: Callable[..., Neo4jStore], base: Corpus
) -> None:
    """A write's new facts and passages are appended to the copy's matrices (in id order), which is where
    a read of the new version puts them (by the version that gave each its vector, then id): the held
    matrices are not copied again (a second write fills spare rows), and their vector indexes stay valid
    (the new rows are their tail) instead of being trained again."""
    store, _ = reader()
    store.vector_search = VectorSearch(mode="approximate")  # the index at any size (the copy not made yet)
    query = unit(np.random.default_rng(42))
    store.view().nearest_facts(query, 3)
    store.view().dense_passage_scores(query, 1)  # 1 x 16 <= 30 passages: through the index
    assert store.copy.indexes.builds == 2  # facts, passages

    def write(passage_id: str, fact_id: str, seed: int) -> None:
        vector = near(query, 0.3, seed)
        version = store.copy.state().version
        fact = FactRecord(fact_id, "ph01", "knows", "ph09", f"{fact_id} text", vector)
        store.write_passages(
            [], [PassageRecord(Passage(id=passage_id, text="new"), vector, {"ph01": 1}, [fact])]
        )
        held = store.copy.held()
        assert held is not None and held[0].version == version + 1  # brought forward, not read

    old_facts = sorted(f.id for r in base.records for f in r.facts)
    write("p10-mid", "f10-mid", 1)  # both ids sort among the old ones
    assert old_facts[0] < "f10-mid" < old_facts[-1] and "p00" < "p10-mid" < "p29"
    first = store.copy.held()
    assert first is not None and first[1].facts is not None and first[1].dense is not None
    write("p10-mid2", "f20-mid", 2)
    found = (store.view().nearest_facts(query, 2), store.view().dense_passage_scores(query, 1))
    assert store.copy.indexes.builds == 2  # the indexes of the first version, the new rows as their tail
    assert store.copy.reads.get("facts") == 1 and store.copy.reads.get("dense") == 1  # not read again
    mine = store.copy.held()
    assert mine is not None and mine[1].facts is not None and mine[1].dense is not None
    # the second write filled spare rows of the buffer the first one made: no copy of the held rows
    assert np.shares_memory(mine[1].facts.vectors, first[1].facts.vectors)
    assert np.shares_memory(mine[1].dense.vectors, first[1].dense.vectors)

    other = fresh(store.vector_search)
    assert (other.view().nearest_facts(query, 2), other.view().dense_passage_scores(query, 1)) == found
    theirs = other.copy.held()
    assert theirs is not None and theirs[1].facts is not None and theirs[1].dense is not None
    assert mine[1].facts.ids == theirs[1].facts.ids == [*old_facts, "f10-mid", "f20-mid"]
    assert np.array_equal(mine[1].facts.vectors, theirs[1].facts.vectors)
    assert list(mine[1].dense.ids) == list(theirs[1].dense.ids)
    assert list(mine[1].dense.ids)[-2:] == ["p10-mid", "p10-mid2"]
    assert np.array_equal(mine[1].dense.vectors, theirs[1].dense.vectors)


def test_own_writes_append_new_phrase_vectors_in_place_with_the_fresh_read_s_rows(
    writer: Neo4jStore, reader: Open, fresh: Callable[..., Neo4jStore]
) -> None:
    """A write's new phrases go into spare rows of the held phrase matrix (no stack of every vector per
    write: 1.5 GB at 1M phrases); the matrix equals a fresh read's, and the earlier view keeps its rows."""
    store, _ = reader()
    query = np.stack([unit(np.random.default_rng(42))])
    store.nearest_phrases(query, 3, -1.0, None)
    held = []
    for k in range(3):
        version = store.copy.state().version
        store.write_passages([PhraseRecord(f"zz-{k}", f"zz {k}", near(query[0], 0.05 * (k + 1), k))], [])
        store.nearest_phrases(query, 3, -1.0, None)
        view = store.copy._view
        assert view is not None and view.version == version + 1 and view.phrase_vectors is not None
        held.append((view.phrase_vectors.copy(), view.phrase_vectors))
    assert store.copy.reads.get("advanced") == 3 and store.copy.reads.get("phrases") == 1  # never read again
    _, second, third = (matrix for _, matrix in held)
    assert np.shares_memory(second, third)  # appended in place, not stacked again
    for snapshot, matrix in held:
        assert np.array_equal(snapshot, matrix)  # a later write never touched an earlier view's rows
    other = fresh()
    assert other.nearest_phrases(query, 5, -1.0, None) == store.nearest_phrases(query, 5, -1.0, None)
    assert other.copy._view is not None
    assert np.array_equal(other.copy._view.phrase_vectors, third)


def test_a_process_that_only_writes_carries_only_the_phrases_forward(
    writer: Neo4jStore, reader: Open, fresh: Callable[..., Neo4jStore]
) -> None:
    """A copy restored from disk holds every part; a process that only writes (an index run) asks for the
    phrases alone, so its writes advance those and drop the graph, passage vectors and facts (re-read if a
    query asks later) and keep no fact vectors; once a query asks for the facts, writes carry them too."""
    first, _ = reader()
    query = np.stack([unit(np.random.default_rng(42))])
    first.nearest_phrases(query, 3, -1.0, None)
    first.view().dense_passage_scores(query[0], 4)
    first.view().nearest_facts(query[0], 4)
    first.view().graph_passage_scores({"ph03": 1.0}, WALK, 5, 2)
    held = first.copy._view
    assert held is not None and held.graph is not None and held.facts is not None and held.dense is not None
    state = first.copy.state()

    indexer, _ = reader()
    assert indexer.copy.restore(state, copying.copy(held))

    def write(k: int) -> None:
        vector = near(query[0], 0.05 * (k + 1), k)
        fact = FactRecord(f"f-{k}", f"zz-{k}", "near", "ph03", f"zz {k} near", vector)
        record = PassageRecord(Passage(id=f"p-new-{k}", text="new"), vector, {f"zz-{k}": 1}, [fact])
        advanced = indexer.copy.reads.get("advanced", 0)
        indexer.write_passages([PhraseRecord(f"zz-{k}", f"zz {k}", vector)], [record])
        assert indexer.copy.reads.get("advanced") == advanced + 1

    indexer.nearest_phrases(query, 3, -1.0, [""])  # the synonym step's search: phrases only
    write(0)
    view = indexer.copy._view
    assert view is not None and view.phrases is not None and view.phrase_vectors is not None
    assert (view.graph, view.dense, view.facts) == (None, None, None)  # dropped, not advanced
    assert "zz-0" in list(view.phrases.ids) and len(view.phrase_vectors) == len(view.phrases.ids)
    assert not indexer.copy._loose["fact"]  # no fact vector kept by a process that only writes
    indexer.view().nearest_facts(query[0], 4)  # a query asks for the facts: read, and carried from now on
    write(1)
    view = indexer.copy._view
    assert view is not None and view.facts is not None and "f-1" in view.facts.ids
    # each vector held once: the written ones are rows of the view's matrices, none left beside them
    assert indexer.copy._loose == {"phrase": {}, "fact": {}}
    other = fresh()
    assert indexer.view().nearest_facts(query[0], 6) == other.view().nearest_facts(query[0], 6)
    assert indexer.nearest_phrases(query, 5, -1.0, None) == other.nearest_phrases(query, 5, -1.0, None)


def test_fact_vectors_of_a_new_version_are_the_held_rows_and_the_new_ones_read(
    settings: Neo4jSettings, writer: Neo4jStore, reader: Open, fresh: Callable[..., Neo4jStore]
) -> None:
    store, driver = reader()
    query = unit(np.random.default_rng(42))
    store.view().nearest_facts(query, 4)
    first = sum(len(c.params["ids"]) for c in driver.named("client_vectors_fact"))
    assert first == len(server_vectors(settings, "Fact")) > 0
    phrase = PhraseRecord("zz-new", "zz new", near(query, 0.3, 3))
    fact = FactRecord("f-zz", "zz-new", "near", "ph03", "zz new near", near(query, 0.05, 4))
    record = PassageRecord(Passage(id="p-zz", text="zz"), phrase.embedding, {"zz-new": 1, "ph03": 1}, [fact])
    writer.write_passages([phrase], [record])  # another process's write
    hits = store.view().nearest_facts(query, 4)
    assert [c.params["ids"] for c in driver.named("client_vectors_fact")][-1] == ["f-zz"]  # alone read
    assert hits[0].id == "f-zz" and hits == fresh().view().nearest_facts(query, 4)
    view = store.copy._view
    assert view is not None and view.facts is not None
    server = server_vectors(settings, "Fact")
    assert sorted(view.facts.ids) == sorted(server)
    assert np.asarray(view.facts.vectors) == pytest.approx(
        np.asarray([server[i] for i in view.facts.ids], dtype=np.float32)
    )


def test_a_phrase_without_a_vector_is_an_error_that_counts_them(
    settings: Neo4jSettings, writer: Neo4jStore, reader: Open
) -> None:
    writer.write_passages([PhraseRecord("zz-bare", "zz bare", unit(np.random.default_rng(9)))], [])
    # its vector gone (an interrupted re-embed)
    run_cypher(
        server_of(settings),
        "MATCH (p:Phrase {namespace: $ns, id: 'zz-bare'}) REMOVE p.embedding",
        ns=settings.namespace,
    )
    store, _ = reader()
    query = np.stack([unit(np.random.default_rng(42))])
    with pytest.raises(StoreError, match=r"^1 nodes of namespace .* have no embedding"):
        store.nearest_phrases(query, 3, -1.0, None)


def test_a_passage_without_a_vector_is_left_out_of_the_dense_scores(
    settings: Neo4jSettings, writer: Neo4jStore, reader: Open, base: Corpus
) -> None:
    """Cypher's ``collect()`` drops a null vector but not its id: the statement leaves such a node out, so
    the other passages keep their own vectors (before, the read raised ValueError on a real server)."""
    run_cypher(
        server_of(settings),
        "MATCH (d:Passage {namespace: $ns, id: 'p05'}) REMOVE d.embedding",
        ns=settings.namespace,
    )
    store, _ = reader()
    query = base.records[5].embedding
    scores = store.view().dense_passage_scores(query, N_PASSAGES)
    assert [s.passage_id for s in scores] and "p05" not in [s.passage_id for s in scores]
    assert len(scores) == N_PASSAGES - 1
    vectors = {r.passage.id: r.embedding for r in base.records}
    for s in scores:
        assert s.score == pytest.approx(float(np.dot(query, vectors[s.passage_id])), abs=1e-5)


def test_the_copy_reads_its_rows_without_the_drivers_per_value_walk(
    monkeypatch: pytest.MonkeyPatch, writer: Neo4jStore, fresh: Callable[..., Neo4jStore]
) -> None:
    """The copy's bulk reads (ids, names, vectors, mentions, edges, facts) take the values as the driver
    decoded them: ``Record.data()`` (what ``Result.data()`` calls per record) walks every float of every
    vector through ``isinstance`` checks, which was 85% of the client's time reading a large namespace.
    Every part is read, through the real driver, and equals a read made before the walk was watched."""
    query = unit(np.random.default_rng(42))

    def read_all(store: Neo4jStore) -> tuple[Any, ...]:
        view = store.view()
        return (
            store.nearest_phrases(query[None, :], 3, -1.0, None),
            view.dense_passage_scores(query, 5),
            view.nearest_facts(query, 2),
            view.graph_passage_scores({"ph03": 1.0}, WALK, 5, 2),
        )

    expected = read_all(fresh())
    walked: list[list[str]] = []
    data = neo4j.Record.data

    def counted(self: neo4j.Record, *keys: Any) -> dict[str, Any]:
        if {"ids", "sources", "passage_ids"} & set(self.keys()):
            walked.append(sorted(self.keys()))
        return data(self, *keys)

    monkeypatch.setattr(neo4j.Record, "data", counted)
    watched = fresh()
    assert read_all(watched) == expected
    assert {"phrases", "graph", "dense", "facts"} <= set(watched.copy.reads)
    assert walked == []
    neo4j.Record({"ids": ["x"]}).data()  # the watch sees a walk where there is one
    assert walked == [["ids"]]


def test_the_graph_is_read_in_batches_of_ids_with_the_same_answers(
    monkeypatch: pytest.MonkeyPatch, writer: Neo4jStore, reader: Open
) -> None:
    """The mentions and edges are read ``GRAPH_BATCH`` passage or phrase ids a statement (one collect of
    every edge of a namespace of 1.2M phrases passed the server's 512 MiB transaction memory), and the
    graph they make is the one a single statement makes."""

    def scores(store: Neo4jStore) -> list[tuple[str, float]]:
        found = store.view().graph_passage_scores({"ph03": 1.0, "ph11": 0.5}, WALK, 10, 2)
        return [(p.passage_id, p.score) for p in found]

    whole, whole_driver = reader()
    expected = scores(whole)
    assert len(whole_driver.named("client_edges")) == 1
    monkeypatch.setattr(client_copy, "GRAPH_BATCH", 7)
    paged, paged_driver = reader()
    assert scores(paged) == expected
    assert len(paged_driver.named("client_edges")) == -(-(N_PHRASES + 1) // 7)  # 41 phrases
    assert len(paged_driver.named("client_mentions")) == -(-N_PASSAGES // 7)  # 30 passages
    assert all(len(c.params["ids"]) <= 7 for c in paged_driver.named("client_edges"))
    held, expected_held = paged.copy.held(), whole.copy.held()
    assert held is not None and expected_held is not None
    assert held[1].graph is not None and expected_held[1].graph is not None
    assert held[1].graph.n_relation_edges == expected_held[1].graph.n_relation_edges > 0
    assert held[1].graph.n_synonym_edges == expected_held[1].graph.n_synonym_edges == 6


def test_a_passage_deleted_between_its_id_and_its_vector_is_read_again_not_an_error(
    writer: Neo4jStore, reader: Open
) -> None:
    """The passage vectors are read by id after the ids: a delete committed in between leaves an id
    without a row. That read saw a commit, so it is read again at the new version; no error."""
    store, driver = reader()
    ran = driver.after("client_passage_ids", lambda: writer.delete_passages(["p05"]))
    query = unit(np.random.default_rng(42))
    found = store.view().dense_passage_scores(query, 40)
    assert ran == [1] and len(driver.named("client_passage_ids")) == 2  # read again at the new version
    assert len(found) == N_PASSAGES - 1 and "p05" not in {p.passage_id for p in found}
