"""The graph explorer (``/explorer`` of ``serve``): its reads on both stores, its API, and the page driven
in a real headless Chromium (Debian's ``chromium`` through Playwright; no browser download).

The integration part builds the demo store once (recorded OpenIE, the real all-MiniLM-L6-v2 embedder,
the demo's graph of accounts linked with SAME_AS, and one passage whose text is an XSS attempt) and runs
the real ``hipporag-neo4j serve`` over it on a free loopback port.
"""

from __future__ import annotations

from typing import Any

import pytest

from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.base import GraphEdge, GraphNode, bounded_neighbourhood
from tests.support.explorer_fixtures import KEY
from tests.support.neo4j_fake import FakeDriver

# --- unit: the bounded neighbourhood ---------------------------------------------------------------


def _phrase(i: int) -> GraphNode:
    return GraphNode("phrase", f"p{i}", f"phrase {i}")


def _candidates(kind: str, ids: range) -> list[tuple[GraphNode, GraphEdge]]:
    return [(_phrase(i), GraphEdge("RELATION", ("phrase", "c"), ("phrase", f"p{i}"), 1.0, kind)) for i in ids]


@pytest.mark.unit
def test_bounded_neighbourhood_takes_from_each_group_in_turn_and_says_when_it_cut() -> None:
    center = GraphNode("phrase", "c", "center")
    relations, passages = _candidates("rel", range(0, 10)), _candidates("men", range(100, 103))
    found = bounded_neighbourhood(center, [relations, passages], 4)
    assert [n.id for n in found.nodes] == ["p0", "p100", "p1", "p101"]
    assert found.truncated
    everything = bounded_neighbourhood(center, [relations, passages], 13)
    assert len(everything.nodes) == 13 and not everything.truncated


@pytest.mark.unit
def test_a_neighbour_in_two_groups_counts_once_and_keeps_both_edges() -> None:
    center = GraphNode("phrase", "c", "center")
    found = bounded_neighbourhood(center, [_candidates("rel", range(2)), _candidates("syn", range(2))], 2)
    assert [n.id for n in found.nodes] == ["p0", "p1"]
    assert sorted(e.label for e in found.edges) == ["rel", "rel", "syn", "syn"]
    assert not found.truncated


# --- unit: the Neo4j reads map records to nodes and edges --------------------------------------------


@pytest.mark.unit
def test_neo4j_phrase_neighbourhood_reads_each_named_statement() -> None:
    from hipporag_neo4j.stores.neo4j.store import Neo4jStore

    def one(**row: Any) -> list[dict[str, Any]]:
        return [row]

    driver = (
        FakeDriver()
        .on(
            "explorer_phrase",
            one(
                id="p1",
                name="stanford university",
                passage_count=5,
                relations=1,
                synonyms=1,
                links=1,
                passages=3,
            ),
        )
        .on(
            "explorer_phrase_relations",
            one(
                outgoing=False,
                id="p2",
                name="helena várkonyi",
                passage_count=2,
                predicates=["professor at"],
                weight=1,
            ),
        )
        .on(
            "explorer_phrase_synonyms",
            one(outgoing=True, id="p3", name="stanford", passage_count=1, score=0.9),
        )
        .on(
            "explorer_phrase_same_as",
            one(id="4:x:1", labels=["Account"], name="Stanford", score=1.0, method="exact"),
        )
        .on("explorer_phrase_passages", [{"id": f"d{i}", "title": f"T{i}", "count": 1} for i in range(3)])
    )
    settings = load_settings({"neo4j": {"uri": "bolt://fake", "namespace": "kb"}})
    store = Neo4jStore(settings.neo4j, driver=driver)  # type: ignore[arg-type]
    found = store.neighbourhood("phrase", "p1", 4)
    assert found.center == GraphNode("phrase", "p1", "stanford university", passage_count=5)
    assert [(n.kind, n.id) for n in found.nodes] == [
        ("phrase", "p2"), ("phrase", "p3"), ("entity", "4:x:1"), ("passage", "d0")
    ]  # fmt: skip
    assert found.truncated  # two passages left out
    assert found.totals == {"RELATION": 1, "SYNONYM": 1, "SAME_AS": 1, "MENTIONS": 3}
    kinds = {(e.kind, e.source, e.target, e.label) for e in found.edges}
    assert ("RELATION", ("phrase", "p2"), ("phrase", "p1"), "professor at") in kinds
    assert ("SAME_AS", ("phrase", "p1"), ("entity", "4:x:1"), "exact") in kinds
    for call in driver.calls:
        assert call.params["namespace"] == "kb"
    assert {c.params["limit"] for c in driver.calls if "limit" in c.params} == {5}  # limit + 1: to tell a cut


@pytest.mark.unit
def test_neo4j_answer_edges_and_browser_cypher() -> None:
    from hipporag_neo4j.server.explorer.routes import browser_cypher
    from hipporag_neo4j.stores.neo4j.store import Neo4jStore

    driver = (
        FakeDriver()
        .on(
            "explorer_edges_among",
            [{"source": "a", "type": "SYNONYM", "target": "b", "predicates": None, "weight": 0.9}],
        )
        .on("explorer_mentions_among", [{"passage_id": "d1", "phrase_id": "a", "count": 2}])
    )
    settings = load_settings({"neo4j": {"uri": "bolt://fake"}})
    store = Neo4jStore(settings.neo4j, driver=driver)  # type: ignore[arg-type]
    edges = store.edges_among(["b", "a"], ["d1"])
    assert edges == [
        GraphEdge("SYNONYM", ("phrase", "a"), ("phrase", "b"), 0.9),
        GraphEdge("MENTIONS", ("passage", "d1"), ("phrase", "a"), 2.0),
    ]
    assert driver.named("explorer_edges_among")[0].params["phrase_ids"] == ["a", "b"]
    cypher = browser_cypher("explore_answer", namespace="demo", names=["helena várkonyi"], ids=["d1"])
    assert cypher.file == "cypher/explore_answer.cypher"
    assert cypher.text.splitlines()[:3] == [
        ':param ids => ["d1"]',
        ':param names => ["helena várkonyi"]',
        ':param namespace => "demo"',
    ]
    assert "MATCH (p:Phrase {namespace: $namespace})" in cypher.text


@pytest.mark.unit
def test_library_route_says_what_to_install_when_pyvis_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    from hipporag_neo4j.server.app import create_app
    from hipporag_neo4j.server.explorer import routes

    app = create_app(load_settings({"server": {"api_key": KEY}}))
    client = TestClient(app)  # no lifespan: these routes need no service
    ok = client.get("/explorer/lib/vis-network.min.js")
    assert ok.status_code == 200 and b"vis-network" in ok.content[:400]
    home = client.get("/", follow_redirects=False)  # the address `serve` prints opens the explorer
    assert home.status_code == 307 and home.headers["location"] == "/explorer/"
    page = client.get("/explorer/")
    assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    assert "cdn" not in page.text.lower() and "http" not in page.text.split("<body>")[0].lower()
    monkeypatch.setattr(routes, "VIS_PACKAGE", "no_such_package_for_vis")
    missing = client.get("/explorer/lib/vis-network.min.js")
    assert missing.status_code == 503
    assert "pip install 'hipporag-neo4j[server]'" in missing.json()["detail"]
    assert client.get("/explorer/lib/other.js").status_code == 404
    assert client.get("/explorer/static/../routes.py").status_code == 404


# --- integration: the same reads on both stores (the conformance corpus) -----------------------------


# --- integration: the demo store and the real `serve` -------------------------------------------------


# --- browser ---------------------------------------------------------------------------------------------


# --- browser: the Ask graph's labels, measured -------------------------------------------------------------


# --- unit: a hub's neighbours capped per kind, the rest one "+N more" node --------------------------------


def _hub(passages: int, related: int, fetched: int) -> Any:
    """A phrase mentioned by ``passages`` passages (chunks of one file) and related to ``related``
    phrases, as a store returns it with at most ``fetched`` of each kind."""
    from hipporag_neo4j.stores.base import Neighbourhood

    center = GraphNode("phrase", "hub", "agent", passage_count=passages)
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    for i in range(min(related, fetched)):
        nodes.append(GraphNode("phrase", f"t{i}", f"ticket fh {1900 + i}", passage_count=1))
        edges.append(GraphEdge("RELATION", ("phrase", f"t{i}"), ("phrase", "hub"), 1.0, "handled by"))
    for i in range(min(passages, fetched)):
        nodes.append(GraphNode("passage", f"tickets/archive.txt#{i}", f"archive.txt#{i}"))
        edges.append(GraphEdge("MENTIONS", ("passage", f"tickets/archive.txt#{i}"), ("phrase", "hub"), 1.0))
    totals = {"RELATION": related, "SYNONYM": 0, "SAME_AS": 0, "MENTIONS": passages}
    return Neighbourhood(center, nodes, edges, truncated=fetched < max(passages, related), totals=totals)


@pytest.mark.unit
def test_a_hub_shows_at_most_cap_of_each_kind_and_one_more_node_with_the_real_count() -> None:
    from hipporag_neo4j.server.explorer.routes import grouped

    graph = grouped(_hub(passages=1068, related=40, fetched=100), 25, None)
    kinds = [n.kind for n in graph.nodes]
    assert kinds.count("passage") == 25 and kinds.count("phrase") == 25
    more = {n.key: n.label for n in graph.nodes if n.kind == "more"}
    assert more == {
        "more:phrase:hub|MENTIONS": "+1,043 more passages",
        "more:phrase:hub|RELATION": "+15 more related phrases",
    }
    assert graph.truncated
    groups = {g.edge: (g.shown, g.total, g.more) for g in graph.groups}
    assert groups == {
        "MENTIONS": (25, 1068, "more:phrase:hub|MENTIONS"),
        "RELATION": (25, 40, "more:phrase:hub|RELATION"),
    }  # no synonyms, no links: not listed
    keys = {n.key for n in graph.nodes} | {"phrase:hub"}
    assert all(e.source in keys and e.target in keys for e in graph.edges)
    assert {(e.kind, e.target) for e in graph.edges if e.kind == "MORE"} == set(("MORE", k) for k in more)
    # the strongest are kept (the store's order) and chunk labels are untouched
    assert [n.label for n in graph.nodes if n.kind == "passage"][:2] == ["archive.txt#0", "archive.txt#1"]


@pytest.mark.unit
def test_a_small_neighbourhood_is_drawn_whole_with_no_more_node() -> None:
    from hipporag_neo4j.server.explorer.routes import grouped

    graph = grouped(_hub(passages=3, related=2, fetched=100), 25, None)
    assert [n.kind for n in graph.nodes].count("more") == 0 and not graph.truncated
    assert {g.edge: (g.shown, g.total) for g in graph.groups} == {"MENTIONS": (3, 3), "RELATION": (2, 2)}


@pytest.mark.unit
def test_around_a_passage_the_more_node_counts_phrases() -> None:
    from hipporag_neo4j.server.explorer.routes import grouped
    from hipporag_neo4j.stores.base import Neighbourhood

    center = GraphNode("passage", "tickets/archive.txt#3", "archive.txt#3")
    nodes = [_phrase(i) for i in range(4)]
    edges = [GraphEdge("MENTIONS", ("passage", center.id), ("phrase", n.id), 1.0) for n in nodes]
    graph = grouped(Neighbourhood(center, nodes, edges, totals={"MENTIONS": 9}), 2, None)
    assert [n.label for n in graph.nodes if n.kind == "more"] == ["+7 more phrases"]
