"""The Neo4j store's view of one graph version (``Neo4jStore.view``, ``client_copy.Reading``) on a real
server: one version check per warm query instead of one per store call, passage rows held per graph
version, and what must hold around it: a commit by another store between two queries is seen by the next
one, queries in threads each keep their own version, the GDS engines walk a projection of the view's
version or a newer one and never project an older one.

Every statement the store sends is recorded by name (tests/support/live_driver.py), so "a warm query
reads nothing but the version" is counted on the wire; the commits are another ``Neo4jStore``'s, on the
same server, between two statements or two queries."""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from hipporag_neo4j.models import Passage, RetrievalResult
from hipporag_neo4j.retrieval.retriever import Retriever
from hipporag_neo4j.settings import Neo4jSettings, RetrievalSettings
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord, WalkParams
from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.view import Neo4jView
from tests.support.fakes import FixedQueryNER, HashEmbedder
from tests.support.live_driver import RecordingDriver, recorded_store
from tests.support.neo4j_support import TEST_EMBEDDING_DIM, neo4j_settings_or_skip, run_cypher

pytestmark = pytest.mark.neo4j

MODEL = "hash-embedder"
DIM = TEST_EMBEDDING_DIM
EMBEDDER = HashEmbedder(dim=DIM)
QUESTION = "what links phrase 03 and phrase 17?"
OTHER = "where is phrase 07?"
DAMPING = 0.5
WALK = WalkParams(DAMPING, 200, 1e-12)
PHRASE_SEEDS = {"ph03": 0.5, "ph17": 0.3, "lonely": 0.2, "nope": 0.4}


def vector(text: str) -> np.ndarray:
    return np.asarray(EMBEDDER.encode([text])[0], dtype=np.float32)


def phrase(node_id: str, name: str) -> PhraseRecord:
    return PhraseRecord(node_id, name, vector(name))


def fact(subject: str, predicate: str, obj: str) -> FactRecord:
    text = f"{subject} {predicate} {obj}"
    return FactRecord(f"{subject}-{obj}", subject, predicate, obj, text, vector(text))


def corpus(seed: int = 7) -> tuple[list[PhraseRecord], list[PassageRecord]]:
    """40 phrases and 30 titled passages (as tests/support/neo4j_engines.py's corpus): each passage
    mentions 2-4 phrases (counts 1-2) and states a fact between each pair in a row (the RELATION edges),
    a few facts more (phrase 03 relates to phrase 17...), and a phrase with no edge (``lonely``)."""
    rng = np.random.default_rng(seed)
    phrases = [phrase(f"ph{i:02d}", f"phrase {i:02d}") for i in range(40)] + [
        phrase("lonely", "lonely phrase")
    ]
    extra = {"p01": [("ph03", "ph17")], "p02": [("ph07", "ph03")], "p03": [("ph17", "ph21")],
             "p04": [("ph02", "ph07")]}  # fmt: skip
    records = []
    for j in range(30):
        mentioned = [
            f"ph{i:02d}" for i in sorted(rng.choice(40, size=int(rng.integers(2, 5)), replace=False))
        ]
        pid = f"p{j:02d}"
        pairs = list(itertools.pairwise(mentioned)) + extra.get(pid, [])
        mentions = {m: int(rng.integers(1, 3)) for m in mentioned}
        for s, o in pairs:
            mentions.setdefault(s, 1)
            mentions.setdefault(o, 1)
        if j == 0:
            mentions["lonely"] = 1
        text = f"passage {j:02d} about " + ", ".join(mentions)
        passage = Passage(id=pid, text=text, title=f"Title {pid}")
        records.append(
            PassageRecord(passage, vector(text), mentions, [fact(s, "relates to", o) for s, o in pairs])
        )
    return phrases, records


def new_passage(pid: str, text: str, mentions: dict[str, int]) -> PassageRecord:
    return PassageRecord(Passage(id=pid, text=text, title=f"Title {pid}"), vector(text), mentions)


def retriever(store: Neo4jStore, mode: str = "hipporag2") -> Retriever:
    ner = FixedQueryNER({QUESTION: ["phrase 03", "phrase 17"], OTHER: ["phrase 07"]})
    settings = RetrievalSettings.model_validate({"mode": mode, "top_k": 5, "entity_seed_source": "ner"})
    return Retriever(store, EMBEDDER, settings, ner)


def ranked(result: RetrievalResult) -> list[tuple[str, float, str]]:
    return [(p.passage.id, p.score, p.passage.text) for p in result.passages]


def server_version(settings: Neo4jSettings) -> int:
    server = (settings.uri or "", settings.user, settings.password.get_secret_value(), settings.database)
    rows = run_cypher(
        server, "MATCH (m:HippoRAGMeta {namespace: $ns}) RETURN m.graph_version AS v", ns=settings.namespace
    )
    return int(rows[0]["v"])


@dataclass
class Live:
    """The namespace written once, read through a recorded store; ``other`` is another process's store."""

    settings: Neo4jSettings
    store: Neo4jStore
    driver: RecordingDriver
    other: Neo4jStore
    phrases: list[PhraseRecord]
    records: list[PassageRecord]

    def statements(self) -> Counter[str]:
        return self.driver.counts()


def written(**overrides: object) -> Iterator[Live]:
    settings = neo4j_settings_or_skip(copy_cache=False, **overrides)
    phrases, records = corpus()
    store, driver = recorded_store(settings, MODEL, DIM)
    other = Neo4jStore(settings)
    try:
        other.open(MODEL, DIM)
        other.write_passages(phrases, records)
        driver.calls.clear()
        yield Live(settings, store, driver, other, phrases, records)
    finally:
        other.close()
        store.drop_namespace()
        store.close()


@pytest.fixture
def live() -> Iterator[Live]:
    """The in-process engine (``ppr_engine=local``: no size check, as on a server without GDS)."""
    yield from written(ppr_engine="local")


@pytest.fixture
def live_gds() -> Iterator[Live]:
    """``ppr_engine=gds``: the GDS form of the server's pair (weighted on 2.17+, linear before)."""
    from tests.support.neo4j_support import neo4j_server_or_skip, server_has_gds

    if not server_has_gds(neo4j_server_or_skip()):
        pytest.skip("needs the GDS plugin")
    yield from written(ppr_engine="gds")


@pytest.mark.parametrize("mode", ["hipporag2", "hipporag", "dense"])
def test_a_warm_query_checks_the_version_once_and_reads_nothing_else(live: Live, mode: str) -> None:
    r = retriever(live.store, mode)
    first = r.retrieve(QUESTION)  # reads the copy's parts and the passage rows
    assert first.passages
    live.driver.calls.clear()
    again = r.retrieve(QUESTION)
    assert live.statements() == Counter({"client_state": 1})  # one round trip for the whole query
    assert ranked(again) == ranked(first)
    live.driver.calls.clear()
    other = r.retrieve(OTHER)  # other passages: their rows are read once, in one statement at most
    run = live.statements()
    assert run["client_state"] == 1 and set(run) <= {"client_state", "read_passages"}
    assert run["read_passages"] <= 1
    fresh, _ = recorded_store(live.settings, MODEL, DIM)  # a store of its own: the copy read afresh
    try:
        assert ranked(retriever(fresh, mode).retrieve(OTHER)) == ranked(other)
    finally:
        fresh.close()


def test_without_a_view_every_call_checks_the_version(live: Live) -> None:
    """What a view saves: the same calls on the store check the version each (the behaviour before)."""
    store, driver = live.store, live.driver
    query = np.stack([vector("phrase 03"), vector("phrase 21")])

    def calls(view: Callable[[], Neo4jView]) -> None:
        view().passage_count()
        view().nearest_phrases(query, 3, -1.0, None)
        view().nearest_facts(query[0], 3)
        view().dense_passage_scores(query[0], 5)
        view().phrases_by_name(["phrase 03"])
        view().passage_node_scores({"ph03": 1.0}, {"p01": 0.5}, WALK, 5, 2)
        view().get_passages(["p01", "p02"])

    calls(store.view)  # warm
    driver.calls.clear()
    calls(store.view)  # a view per call: each checks the version
    assert live.statements() == Counter({"client_state": 6, "read_passages": 1})
    driver.calls.clear()
    view = store.view()
    calls(lambda: view)
    assert live.statements() == Counter({"client_state": 1, "read_passages": 1})  # rows not held yet
    driver.calls.clear()
    calls(lambda: view)  # the same view again: nothing read
    assert live.statements() == Counter()
    again = store.view()
    calls(lambda: again)  # a new view: the version checked once, the rows held for it
    assert live.statements() == Counter({"client_state": 1})


def test_a_write_between_queries_is_seen_by_the_next_query(live: Live) -> None:
    """Another store's commit (a new version): the next query reads it, the passage rows held for the
    old version included (a passage replaced under the same id comes back with its new text)."""
    r = retriever(live.store)
    before = r.retrieve(QUESTION)
    top = before.passages[0].passage.id
    r.retrieve(QUESTION)  # its rows are held now
    old = next(rec for rec in live.records if rec.passage.id == top)
    live.other.delete_passages([top])  # replaced under the same id, the same mentions and facts
    replaced = Passage(id=top, text="rewritten", title=old.passage.title, metadata=old.passage.metadata)
    live.other.write_passages(live.phrases, [PassageRecord(replaced, old.embedding, old.mentions, old.facts)])
    live.driver.calls.clear()
    after = r.retrieve(QUESTION)
    assert live.driver.named("client_phrases") and live.driver.named("read_passages")  # the new version read
    assert [p.passage.id for p in after.passages] == [p.passage.id for p in before.passages]
    assert after.passages[0].passage.text == "rewritten"
    twin = phrase("zz-new", "phrase 03 twin")
    live.other.write_passages([twin], [new_passage("p-twin", "the twin", {"zz-new": 1})])
    assert live.store.view().phrases_by_name(["phrase 03 twin"])  # the next query sees it


def test_a_view_keeps_its_version_across_this_processs_own_write(live: Live) -> None:
    """A write by this store while a view is held: the view stays at its version (one query, one
    version); the next view sees the write, from the copy brought forward (one version check)."""
    store = live.store
    view = store.view()
    count = view.passage_count()
    version = view.version
    store.write_passages([], [new_passage("p-new", "a new passage", {"ph03": 1})])  # commits, carries
    assert server_version(live.settings) == version + 1
    live.driver.calls.clear()
    assert view.passage_count() == count and view.version == version
    assert live.statements() == Counter()
    later = store.view()
    assert later.passage_count() == count + 1 and later.version == version + 1
    assert live.statements() == Counter({"client_state": 1})


def test_queries_in_threads_each_keep_their_version(live: Live) -> None:
    """A view per query: a query begun before another store's commit keeps its version for all its
    calls, while a query begun after the commit sees the new version."""
    store = live.store
    store.phrases_by_name(["phrase 03"])  # warm
    pinned_in, committed, done = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def old_query() -> None:
        view = store.view()
        seen["old_first"] = view.phrases_by_name(["phrase 99"])
        pinned_in.set()
        committed.wait(30)
        seen["old_second"] = view.phrases_by_name(["phrase 99"])
        seen["old_version"] = view.version
        done.set()

    thread = threading.Thread(target=old_query)
    thread.start()
    assert pinned_in.wait(30)
    live.other.write_passages([phrase("ph99", "phrase 99")], [new_passage("p99", "ninety-nine", {"ph99": 1})])
    view = store.view()
    seen["new"] = view.phrases_by_name(["phrase 99"])
    new_version = view.version
    committed.set()
    assert done.wait(30)
    thread.join(30)
    assert seen["old_first"] == {} and seen["old_second"] == {}  # one version for the whole query
    assert "phrase 99" in seen["new"]  # type: ignore[operator]
    assert seen["old_version"] == new_version - 1 == server_version(live.settings) - 1


def test_gds_engines_use_the_views_version_and_never_project_an_older_one(live_gds: Live) -> None:
    """On each pair the GDS form it has (gds-weighted on 2.17+, gds-linear on the LTS pair's 2.13)."""
    store, driver = live_gds.store, live_gds.driver
    assert store.capabilities().ppr_engine in ("gds-weighted", "gds-linear")
    store.view().graph_passage_scores(PHRASE_SEEDS, WALK, 5, 2)  # projects the current version
    catalog = store.projections("phrases")
    made = catalog.projections_made
    driver.calls.clear()
    view = store.view()
    view.graph_passage_scores(PHRASE_SEEDS, WALK, 5, 2)
    view.graph_passage_scores({"ph17": 0.3, "ph03": 0.5}, WALK, 5, 2)
    assert driver.named("client_state") and not driver.named("meta_graph_version")
    assert len(driver.named("client_state")) == 1
    # another store commits, and a query begun after it projects the new version ...
    live_gds.other.write_passages([], [new_passage("p-late", "a late passage", {"ph03": 1, "ph21": 1})])
    other = threading.Thread(target=lambda: store.view().graph_passage_scores(PHRASE_SEEDS, WALK, 5, 2))
    other.start()
    other.join(60)
    assert catalog.projections_made == made + 1
    # ... which this query, at the older version, uses: the older one is not projected again
    found = view.graph_passage_scores(PHRASE_SEEDS, WALK, 5, 2)
    assert found and catalog.projections_made == made + 1
    assert catalog.current is not None and catalog.current.version == server_version(live_gds.settings)
    assert view.version == catalog.current.version - 1


def test_a_query_after_a_commit_projects_the_servers_version(live_gds: Live) -> None:
    """A query with no warm projection of its view's version projects the version the server holds now,
    never the one its view read before another store committed."""
    store = live_gds.store
    view = store.view()
    pinned = view.version
    live_gds.other.write_passages([], [new_passage("p-late", "a late passage", {"ph03": 1})])
    assert view.graph_passage_scores(PHRASE_SEEDS, WALK, 5, 2)
    current = store.projections("phrases").current
    assert current is not None and current.version == pinned + 1 == server_version(live_gds.settings)
