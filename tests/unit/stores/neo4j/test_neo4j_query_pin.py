"""The Neo4j store's view of one graph version (``Neo4jStore.view``, ``client_copy.Reading``): one
version check per query instead of one per store call, passage rows held per graph version, and the
semantics that must hold around it (a write between queries seen by the next one, queries in threads
each at their own version, the GDS projections kept warm), against the emulated server
(tests/support/neo4j_emulation.py)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

from hipporag_neo4j.models import RetrievalResult
from hipporag_neo4j.retrieval.retriever import Retriever
from hipporag_neo4j.settings import RetrievalSettings
from hipporag_neo4j.stores.base import PassageRecord, WalkParams
from hipporag_neo4j.stores.neo4j.client_copy import PassageRows
from hipporag_neo4j.stores.neo4j.store import Neo4jStore
from hipporag_neo4j.stores.neo4j.view import Neo4jView
from tests.support.fakes import FixedQueryNER, HashEmbedder
from tests.support.neo4j_emulation import FakeGraph, FakeServer
from tests.support.neo4j_engines import DAMPING, NS, PHRASE_SEEDS, corpus, store_on, unit, with_vectors
from tests.support.neo4j_fake import FakeDriver

pytestmark = pytest.mark.unit

QUESTION = "what links phrase 03 and phrase 17?"
OTHER = "where is phrase 07?"


def graph() -> FakeGraph:
    """The engines' corpus with 3-d vectors, a few facts, and titled passages."""
    g = with_vectors(corpus())
    rng = np.random.default_rng(11)
    for k, (s, o) in enumerate([("ph03", "ph17"), ("ph07", "ph03"), ("ph17", "ph21"), ("ph02", "ph07")]):
        g.fact(NS, f"f{k}", s, "relates to", o, unit(*rng.standard_normal(3)))
    for node in g.of("Passage", NS):
        node.props["title"] = f"Title {node.props['id']}"
    return g


def retriever(store: Neo4jStore, mode: str = "hipporag2") -> Retriever:
    ner = FixedQueryNER({QUESTION: ["phrase 03", "phrase 17"], OTHER: ["phrase 07"]})
    settings = RetrievalSettings(mode=mode, top_k=5, entity_seed_source="ner")  # type: ignore[arg-type]
    return Retriever(store, HashEmbedder(dim=3), settings, ner)  # type: ignore[arg-type]


def record(passage_id: str) -> PassageRecord:
    from hipporag_neo4j.models import Passage

    return PassageRecord(Passage(id=passage_id, text=passage_id), np.zeros(3, dtype=np.float32), {})


def statements(driver: FakeDriver) -> Counter[str]:
    return Counter(driver.names_run())


def ranked(result: RetrievalResult) -> list[tuple[str, float, str]]:
    return [(p.passage.id, p.score, p.passage.text) for p in result.passages]


@pytest.mark.parametrize("mode", ["hipporag2", "hipporag", "dense"])
def test_a_warm_query_checks_the_version_once_and_reads_nothing_else(mode: str) -> None:
    g = graph()
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver: FakeDriver = store.runner.driver  # type: ignore[assignment]
    r = retriever(store, mode)
    first = r.retrieve(QUESTION)  # reads the copy's parts and the passage rows
    assert first.passages
    driver.calls.clear()
    again = r.retrieve(QUESTION)
    assert statements(driver) == Counter({"client_state": 1})  # one round trip for the whole query
    assert ranked(again) == ranked(first)
    driver.calls.clear()
    other = r.retrieve(OTHER)  # other passages: their rows are read once, in one statement at most
    run = statements(driver)
    assert run["client_state"] == 1 and set(run) <= {"client_state", "read_passages"}
    assert run["read_passages"] <= 1
    fresh = retriever(store_on(FakeServer(g), gds=None, version="5.26.0"), mode)
    assert ranked(fresh.retrieve(OTHER)) == ranked(other)  # a copy read afresh answers the same


def test_without_a_view_every_call_checks_the_version() -> None:
    """What a view saves: the same calls on the store check the version each (the behaviour before)."""
    g = graph()
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver: FakeDriver = store.runner.driver  # type: ignore[assignment]
    query = np.asarray([unit(1, 0.2, 0)], dtype=np.float32)

    def calls(view: Callable[[], Neo4jView]) -> None:
        view().passage_count()
        view().nearest_phrases(query, 3, -1.0, None)
        view().nearest_facts(query[0], 3)
        view().dense_passage_scores(query[0], 5)
        view().phrases_by_name(["phrase 03"])
        view().passage_node_scores({"ph03": 1.0}, {"p01": 0.5}, WalkParams(DAMPING, 200, 1e-12), 5, 2)
        view().get_passages(["p01", "p02"])

    calls(store.view)  # warm
    driver.calls.clear()
    calls(store.view)  # a view per call: each checks the version
    assert statements(driver) == Counter({"client_state": 6, "read_passages": 1})
    driver.calls.clear()
    view = store.view()
    calls(lambda: view)
    assert statements(driver) == Counter({"client_state": 1, "read_passages": 1})  # rows not held yet
    driver.calls.clear()
    calls(lambda: view)  # the same view again: nothing read
    assert statements(driver) == Counter()
    again = store.view()
    calls(lambda: again)  # a new view: the version checked once, the rows held for it
    assert statements(driver) == Counter({"client_state": 1})


def test_a_write_between_queries_is_seen_by_the_next_query() -> None:
    """Another process's commit (a new version): the next query reads it, the passage rows held for the
    old version included (a passage replaced under the same id comes back with its new text)."""
    g = graph()
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver: FakeDriver = store.runner.driver  # type: ignore[assignment]
    r = retriever(store)
    before = r.retrieve(QUESTION)
    top = before.passages[0].passage.id
    r.retrieve(QUESTION)  # its rows are held now
    g.nodes[g.iid("Passage", NS, top)].props["text"] = "rewritten"  # type: ignore[index]
    g.bump(NS)
    driver.calls.clear()
    after = r.retrieve(QUESTION)
    assert driver.named("client_phrases") and driver.named("read_passages")  # the new version read
    assert [p.passage.id for p in after.passages] == [p.passage.id for p in before.passages]
    assert after.passages[0].passage.text == "rewritten"
    g.phrase(NS, "zz-new", "phrase 03 twin", embedding=unit(1, 0, 0))
    g.bump(NS)
    assert store.view().phrases_by_name(["phrase 03 twin"])  # the next query sees it


def test_a_view_keeps_its_version_across_this_processs_own_write() -> None:
    """A write by this process while a view is held: the view stays at its version (one query, one
    version); the next view sees the write, from the copy brought forward (one version check)."""
    g = graph()
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    driver: FakeDriver = store.runner.driver  # type: ignore[assignment]
    view = store.view()
    count = view.passage_count()
    version = view.version
    g.passage(NS, "p-new")
    g.bump(NS)  # as a write of this process commits ...
    assert store.copy.advance(version + 1, records=[record("p-new")], written=["p-new"])  # ... and carries
    driver.calls.clear()
    assert view.passage_count() == count and view.version == version
    assert statements(driver) == Counter()
    later = store.view()
    assert later.passage_count() == count + 1 and later.version == version + 1
    assert statements(driver) == Counter({"client_state": 1})


def test_queries_in_threads_each_keep_their_version() -> None:
    """A view per query: a query begun before a commit keeps its version for all its calls, while a
    query begun after the commit sees the new version."""
    g = graph()
    store = store_on(FakeServer(g), gds=None, version="5.26.0")
    store.phrases_by_name(["phrase 03"])  # warm
    pinned_in, committed, done = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def old_query() -> None:
        view = store.view()
        seen["old_first"] = view.phrases_by_name(["phrase 99"])
        pinned_in.set()
        committed.wait(5)
        seen["old_second"] = view.phrases_by_name(["phrase 99"])
        seen["old_version"] = view.version
        done.set()

    thread = threading.Thread(target=old_query)
    thread.start()
    assert pinned_in.wait(5)
    g.phrase(NS, "ph99", "phrase 99", embedding=unit(0, 1, 0))
    g.bump(NS)
    view = store.view()
    seen["new"] = view.phrases_by_name(["phrase 99"])
    new_version = view.version
    committed.set()
    assert done.wait(5)
    thread.join(5)
    assert seen["old_first"] == {} and seen["old_second"] == {}  # one version for the whole query
    assert "phrase 99" in seen["new"]  # type: ignore[operator]
    assert seen["old_version"] == new_version - 1


@pytest.mark.parametrize(("gds", "version"), [("2.17.0", "2025.04.0"), ("2.13.2", "5.26.0")])
def test_gds_engines_use_the_views_version_and_never_project_an_older_one(gds: str, version: str) -> None:
    g = graph()
    store = store_on(FakeServer(g), gds=gds, version=version)
    driver: FakeDriver = store.runner.driver  # type: ignore[assignment]
    seeds = PHRASE_SEEDS
    store.view().graph_passage_scores(seeds, WalkParams(DAMPING, 200, 1e-12), 5, 2)  # projects the current
    catalog = store.projections("phrases")
    made = catalog.projections_made
    driver.calls.clear()
    view = store.view()
    view.graph_passage_scores(seeds, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    view.graph_passage_scores({"ph17": 0.3, "ph03": 0.5}, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    assert driver.named("client_state") and not driver.named("meta_graph_version")
    assert len(driver.named("client_state")) == 1
    # another process commits, and a query begun after it projects the new version ...
    g.bump(NS)
    other = threading.Thread(
        target=lambda: store.view().graph_passage_scores(seeds, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    )
    other.start()
    other.join(10)
    assert catalog.projections_made == made + 1
    # ... which this query, at the older version, uses: the older one is not projected again
    found = view.graph_passage_scores(seeds, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    assert found and catalog.projections_made == made + 1
    assert catalog.current is not None and catalog.current.version == g.versions[NS]


def test_a_query_after_a_commit_projects_the_servers_version() -> None:
    """A query with no warm projection of its view's version projects the version the server holds now,
    never the one its view read before another process committed."""
    g = graph()
    store = store_on(FakeServer(g), gds="2.17.0", version="2025.04.0")
    view = store.view()
    pinned = view.version
    g.bump(NS)
    assert view.graph_passage_scores(PHRASE_SEEDS, WalkParams(DAMPING, 200, 1e-12), 5, 2)
    current = store.projections("phrases").current
    assert current is not None and current.version == pinned + 1 == g.versions[NS]


def test_passage_rows_are_bounded() -> None:
    from hipporag_neo4j.models import Passage

    rows = PassageRows(limit=3)
    rows.add({f"p{i}": Passage(id=f"p{i}", text=str(i)) for i in range(5)})
    assert len(rows) == 3 and set(rows.get(["p0", "p1", "p2", "p3", "p4"])) == {"p2", "p3", "p4"}
