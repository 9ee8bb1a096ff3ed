"""The graph explorer (``/explorer`` of ``serve``): its reads on both stores, its API, and the page driven
in a real headless Chromium (Debian's ``chromium`` through Playwright; no browser download).

The integration part builds the demo store once (recorded OpenIE, the real all-MiniLM-L6-v2 embedder,
the demo's graph of accounts linked with SAME_AS, and one passage whose text is an XSS attempt) and runs
the real ``hipporag-neo4j serve`` over it on a free loopback port.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j_fake import FakeDriver
from server_support import ServerProcess

from hipporag_neo4j.common.text import make_phrase_id
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.base import GraphEdge, GraphNode, bounded_neighbourhood

KEY = "explorer-test-key"
QUESTION = "Which Stanford professor studies Alzheimer's disease?"  # the demo's showcase question
GOLD = ["Helena Várkonyi", "Várkonyi Laboratory"]
XSS_ID = "xss-note"
XSS_TITLE = "<img src=x onerror=\"window.__pwned='title'\">Evil title"
XSS_TEXT = (
    "<script>window.__pwned='text'</script><img src=x onerror=\"window.__pwned='img'\"> "
    "Hestia Quorn is a librarian in Hawby."
)


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
        .on("explorer_phrase", one(id="p1", name="stanford university", passage_count=5))
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


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def small_store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    import test_store_conformance
    from fakes import HashEmbedder
    from test_store_conformance import CORPUS, _index, _open_store

    from hipporag_neo4j.stores.base import SynonymEdge

    # 384-d like the demo's model: one Neo4j database holds vector indexes of one dimension
    monkeypatch.setattr(test_store_conformance, "EMB", HashEmbedder(dim=384))
    store = _open_store(request.param, tmp_path)
    _index(store, {pid for pid, _, _ in CORPUS})
    stanford, harvard = make_phrase_id("stanford"), make_phrase_id("harvard")
    store.write_synonyms([SynonymEdge(stanford, harvard, 0.85).canonical()])
    yield store
    store.close()


def _ref(name: str) -> tuple[str, str]:
    return ("phrase", make_phrase_id(name))


@pytest.mark.integration
def test_graph_explorer_reads_agree_on_both_stores(small_store: Any) -> None:
    from hipporag_neo4j.stores.base import GraphExplorer

    store = small_store
    assert isinstance(store, GraphExplorer)
    stanford, harvard = make_phrase_id("stanford"), make_phrase_id("harvard")
    assert store.search_nodes("STAN", 10) == [GraphNode("phrase", stanford, "stanford", passage_count=2)]
    assert store.search_nodes("p3", 10) == [GraphNode("passage", "p3", "p3")]

    around = store.neighbourhood("phrase", stanford, 10)
    assert around.center == GraphNode("phrase", stanford, "stanford", passage_count=2)
    assert {(n.kind, n.id) for n in around.nodes} == {
        _ref("thomas"), _ref("maria"), _ref("harvard"), ("passage", "p1"), ("passage", "p3")
    }  # fmt: skip
    assert not around.truncated
    assert set(around.edges) == {
        GraphEdge("RELATION", _ref("thomas"), ("phrase", stanford), 1.0, "is professor at"),
        GraphEdge("RELATION", _ref("maria"), ("phrase", stanford), 1.0, "works at"),
        GraphEdge("SYNONYM", *sorted([("phrase", stanford), ("phrase", harvard)]), 0.85),
        GraphEdge("MENTIONS", ("passage", "p1"), ("phrase", stanford), 1.0),
        GraphEdge("MENTIONS", ("passage", "p3"), ("phrase", stanford), 1.0),
    }
    cut = store.neighbourhood("phrase", stanford, 2)  # one relation (ties by id), then the synonym
    first = min(make_phrase_id("thomas"), make_phrase_id("maria"))
    assert [(n.kind, n.id) for n in cut.nodes] == [("phrase", first), ("phrase", harvard)]
    assert cut.truncated

    passage = store.neighbourhood("passage", "p5", 10)
    assert {n.label for n in passage.nodes} == {"harvard", "cambridge"}
    assert GraphEdge("RELATION", _ref("harvard"), _ref("cambridge"), 1.0, "is in") in passage.edges
    assert GraphEdge("MENTIONS", ("passage", "p5"), _ref("harvard"), 2.0) in passage.edges

    among = store.edges_among([stanford, harvard, make_phrase_id("thomas")], ["p1"])
    assert set(among) == {
        GraphEdge("RELATION", _ref("thomas"), ("phrase", stanford), 1.0, "is professor at"),
        GraphEdge("SYNONYM", *sorted([("phrase", stanford), ("phrase", harvard)]), 0.85),
        GraphEdge("MENTIONS", ("passage", "p1"), _ref("thomas"), 1.0),
        GraphEdge("MENTIONS", ("passage", "p1"), ("phrase", stanford), 1.0),
    }
    assert store.neighbourhood("phrase", "phrase-missing", 5).center is None
    assert store.neighbourhood("passage", "missing", 5).center is None
    assert store.neighbourhood("entity", "missing", 5).center is None
    assert len(store.namespaces()) >= 1
    with pytest.raises(InputError, match="empty"):
        store.search_nodes("  ", 5)


# --- integration: the demo store and the real `serve` -------------------------------------------------


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.demo.link import LABEL
    from hipporag_neo4j.demo.run import demo_file

    path = tmp_path_factory.mktemp("explorer") / "kb"
    settings = load_settings({"store": {"path": str(path)}})
    with HippoRAG(settings) as memory:
        memory.index_openie(demo_file("openie_demo.json"))
        memory.import_graph(demo_file("enterprise_graph.jsonl"))
        memory.link(LABEL, "name")
        report = memory.index([{"id": XSS_ID, "title": XSS_TITLE, "text": XSS_TEXT}])
        assert report.indexed == [XSS_ID], report
    return path


@pytest.mark.integration
def test_embedded_store_explorer_reads(demo_store: Path) -> None:
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    store = EmbeddedStore(demo_store)
    try:
        found = store.search_nodes("várkonyi", 10)
        assert {(n.kind, n.label) for n in found} >= {
            ("phrase", "helena várkonyi"),
            ("passage", "Helena Várkonyi"),
        }
        stanford = make_phrase_id("stanford university")
        around = store.neighbourhood("phrase", stanford, 300)
        assert not around.truncated
        kinds = {e.kind for e in around.edges}
        assert {"RELATION", "MENTIONS"} <= kinds
        assert any(n.kind == "passage" and n.label == "Helena Várkonyi" for n in around.nodes)
        cut = store.neighbourhood("phrase", stanford, 3)
        assert len(cut.nodes) == 3 and cut.truncated
        lumora = store.neighbourhood("phrase", make_phrase_id("lumora biotics"), 50)
        entity = next(n for n in lumora.nodes if n.kind == "entity")
        assert entity.label == "Lumora Biotics" and entity.labels == ("Account",)
        account = store.neighbourhood("entity", entity.id, 50)
        assert any(e.kind == "LINKED" and e.label == "SUBSIDIARY_OF" for e in account.edges)
        assert any(e.kind == "SAME_AS" for e in account.edges)
        passage_id = next(n.id for n in around.nodes if n.label == "Helena Várkonyi")
        passage = store.neighbourhood("passage", passage_id, 50)
        assert {n.label for n in passage.nodes} >= {"helena várkonyi", "stanford university"}
        assert any(e.kind == "RELATION" for e in passage.edges)  # the facts it states, among its phrases
        among = store.edges_among([stanford, make_phrase_id("helena várkonyi")], [passage_id])
        assert {e.kind for e in among} == {"RELATION", "MENTIONS"}
        assert store.neighbourhood("phrase", "phrase-none", 5).center is None
        assert store.namespaces() == ["default"]
    finally:
        store.close()


@pytest.fixture(scope="module", params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def server(
    request: pytest.FixtureRequest, demo_store: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """The real ``serve`` over the demo: on the embedded store, and on Neo4j (the demo indexed into a
    fresh namespace) when a server is configured (HIPPORAG_TEST_NEO4J_URI)."""
    cwd = tmp_path_factory.mktemp("serve")
    env = {"HIPPORAG_SERVER__API_KEY": KEY}
    if request.param == "embedded":
        args = ["-m", "hipporag_neo4j", "--store", str(demo_store), "serve", "--port", "{port}"]
    else:
        from neo4j_support import neo4j_settings_or_skip

        from hipporag_neo4j.api import HippoRAG
        from hipporag_neo4j.demo.run import demo_file

        n4j = neo4j_settings_or_skip()
        password = n4j.password.get_secret_value()
        values = {"uri": n4j.uri, "user": n4j.user, "password": password, "database": n4j.database}
        with HippoRAG(load_settings({"neo4j": {**values, "namespace": n4j.namespace}})) as memory:
            memory.index_openie(demo_file("openie_demo.json"))
            memory.index([{"id": XSS_ID, "title": XSS_TITLE, "text": XSS_TEXT}])
        env |= {
            "HIPPORAG_NEO4J_URI": str(n4j.uri),
            "HIPPORAG_NEO4J_USER": n4j.user,
            "HIPPORAG_NEO4J_PASSWORD": password,
            "HIPPORAG_NEO4J_DATABASE": n4j.database,
        }
        args = ["-m", "hipporag_neo4j", "--namespace", n4j.namespace, "serve", "--port", "{port}"]
    proc = ServerProcess(args, env=env, cwd=cwd)
    proc.backend = request.param  # type: ignore[attr-defined]
    try:
        proc.wait_until_up("/ready")
        yield proc
    finally:
        proc.terminate()
        if request.param == "neo4j":  # module-scoped: the per-test clean-up never sees this namespace
            import neo4j_support

            server_found = neo4j_support.server_found()
            if server_found is not None:
                neo4j_support.delete_namespaces(server_found, [n4j.namespace])


def _get(server: ServerProcess, path: str, key: str | None = KEY, **params: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.get(server.url + path, params=params, headers=headers, timeout=60)


@pytest.mark.integration
def test_explorer_api_over_serve(server: ServerProcess) -> None:
    assert _get(server, "/explorer/", key=None).status_code == 200  # the page holds no data
    assert _get(server, "/explorer/api/overview", key=None).status_code == 401
    assert _get(server, "/explorer/api/overview", key="wrong").status_code == 401
    overview = _get(server, "/explorer/api/overview").json()
    assert overview["backend"] == server.backend  # type: ignore[attr-defined]
    assert overview["namespace"] in overview["namespaces"]
    assert overview["stats"]["passages"] == 43
    on_neo4j = server.backend == "neo4j"  # type: ignore[attr-defined]
    assert (overview["cypher"] is not None) == on_neo4j  # the Browser Cypher only on Neo4j
    stanford = make_phrase_id("stanford university")
    graph = _get(server, "/explorer/api/neighbourhood", kind="phrase", id=stanford, limit=2).json()
    assert graph["center"]["key"] == f"phrase:{stanford}" and len(graph["nodes"]) == 2 and graph["truncated"]
    if on_neo4j:
        assert graph["cypher"]["file"] == "cypher/explore_phrase.cypher"
        assert ':param name => "stanford university"' in graph["cypher"]["text"]
    assert (
        _get(server, "/explorer/api/neighbourhood", kind="phrase", id=stanford, limit=301).status_code == 422
    )
    assert _get(server, "/explorer/api/neighbourhood", kind="phrase", id="nope").status_code == 404
    assert _get(server, "/explorer/api/neighbourhood", kind="fact", id=stanford).status_code == 422
    page = _get(server, "/explorer/api/passages", limit=40).json()
    assert len(page["passages"]) == 40 and page["next_after"] == page["passages"][-1]["id"]
    rest = _get(server, "/explorer/api/passages", after=page["next_after"], limit=40).json()
    assert len(rest["passages"]) == 3 and rest["next_after"] is None
    passage = _get(server, "/explorer/api/passage", id=XSS_ID).json()
    assert passage["passage"]["text"] == XSS_TEXT
    assert _get(server, "/explorer/api/search", q="").status_code == 422


# --- browser ---------------------------------------------------------------------------------------------


@pytest.fixture
def page(chromium: Any, server: ServerProcess) -> Iterator[Any]:
    # bypass_csp lets Playwright evaluate its own scripts; the page's escaping is what is tested, not the CSP
    context = chromium.new_context(viewport={"width": 1400, "height": 850}, bypass_csp=True)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(server.url + "/explorer/")
    yield tab
    context.close()
    assert errors == [], errors


def _login(page: Any, key: str = KEY) -> None:
    page.wait_for_selector("#key-input", state="visible")
    page.fill("#key-input", key)
    page.click("#login-form button[type=submit]")


@pytest.mark.browser
@pytest.mark.integration
def test_wrong_key_is_refused_and_the_right_one_kept_for_the_tab(page: Any) -> None:
    _login(page, "not-the-key")
    page.wait_for_function("document.getElementById('login-error').textContent.includes('401')")
    assert page.is_hidden("#app")
    assert page.evaluate("sessionStorage.getItem('hipporag-explorer-key')") is None
    _login(page)
    page.wait_for_function("window.__explorer.ready")
    assert page.is_visible("#app")
    assert "43 passages" in page.text_content("#store-line")
    page.reload()  # the key is kept for the tab: no second prompt
    page.wait_for_function("window.__explorer.ready")
    assert page.is_hidden("#login")


@pytest.mark.browser
@pytest.mark.integration
def test_ask_draws_the_gold_passages_and_the_path_to_them(page: Any) -> None:
    _login(page)
    page.wait_for_function("window.__explorer.ready")
    page.fill("#ask-query", QUESTION)
    page.select_option("#ask-mode", "hipporag")
    page.click("#ask-form button[type=submit]")
    page.wait_for_function("window.__explorer.askCount >= 1", timeout=60_000)
    titles = page.locator("#ask-results li .title").all_text_contents()
    assert {t.split(". ", 1)[1] for t in titles[:2]} == set(GOLD)  # both gold passages on top
    drawn = page.evaluate("window.__explorer.ask")
    nodes = {n["key"]: n for n in drawn["nodes"]}
    edges = {(e["kind"], e["source"], e["target"]) for e in drawn["edges"]}
    stanford = f"phrase:{make_phrase_id('stanford university')}"
    helena = f"phrase:{make_phrase_id('helena várkonyi')}"
    gold = [k for k, n in nodes.items() if n["kind"] == "passage" and any(g in n["label"] for g in GOLD)]
    assert len(gold) == 2
    # query entity -> seed phrase -> (relation) -> phrase reached -> passage
    assert ("LINK", "query:Stanford", stanford) in edges
    assert nodes[stanford]["style"] == "seed" and nodes[stanford]["level"] == 1
    assert ("RELATION", helena, stanford) in edges  # "helena várkonyi professor at stanford university"
    assert any(("REACHED", helena, g) in edges for g in gold)
    assert nodes[helena]["size"] > 8  # PPR score as size
    # what was drawn is in the page's SVG, and a click on a phrase opens it in Explore
    drawn_keys = page.evaluate(
        "[...document.querySelectorAll('#ask-graph g.node')].map((g) => g.dataset.key)"
    )
    assert sorted(drawn_keys) == sorted(nodes)
    position = page.evaluate("(key) => window.__explorer.domPosition('ask', key)", helena)
    page.mouse.click(position["x"], position["y"])
    page.wait_for_function("window.__explorer.exploreCount >= 1 && window.__explorer.stable")
    assert helena in page.evaluate("window.__explorer.explore.expanded")
    page.click("button[data-view=ask]")

    for mode in ["hipporag2", "dense", "ensemble", "hybrid"]:
        page.select_option("#ask-mode", mode)
        count = page.evaluate("window.__explorer.askCount")
        page.click("#ask-form button[type=submit]")
        page.wait_for_function(f"window.__explorer.askCount > {count}", timeout=60_000)
        assert page.text_content("#ask-status").startswith(f"{mode} · single"), mode
        assert page.locator("#ask-results li").count() == 5
    hipporag2 = page.evaluate("window.__explorer.ask")
    assert any(n["kind"] == "passage" for n in hipporag2["nodes"])
    page.select_option("#ask-strategy", "ircot")
    page.click("#ask-form button[type=submit]")  # no LLM on this server: the API's reason is shown
    page.wait_for_function("document.getElementById('ask-status').classList.contains('error')")
    assert "LLM" in page.text_content("#ask-status") or "llm" in page.text_content("#ask-status")


@pytest.mark.browser
@pytest.mark.integration
def test_explore_expands_a_node_by_clicking_it_and_opens_a_passage(page: Any) -> None:
    _login(page)
    page.wait_for_function("window.__explorer.ready")
    page.click("button[data-view=explore]")
    page.fill("#search-input", "stanford")
    page.click("#search-form button[type=submit]")
    page.click("#search-results li[data-key^='phrase:']")
    page.wait_for_function("window.__explorer.exploreCount >= 1 && window.__explorer.stable")
    first = page.evaluate("window.__explorer.explore")
    helena = f"phrase:{make_phrase_id('helena várkonyi')}"
    assert helena in first["nodes"] and helena not in first["expanded"]
    position = page.evaluate("(key) => window.__explorer.domPosition('explore', key)", helena)
    page.mouse.click(position["x"], position["y"])  # a real click on the canvas
    page.wait_for_function("window.__explorer.exploreCount >= 2 && window.__explorer.stable")
    second = page.evaluate("window.__explorer.explore")
    assert helena in second["expanded"]
    assert len(second["nodes"]) > len(first["nodes"])
    assert f"phrase:{make_phrase_id('hungarian american')}" in second["nodes"]  # only Helena's neighbour

    passage = next(k for k in second["nodes"] if k.startswith("passage:"))
    position = page.evaluate("(key) => window.__explorer.domPosition('explore', key)", passage)
    page.mouse.click(position["x"], position["y"])
    page.wait_for_function("window.__explorer.panel !== null")
    assert page.is_visible("#passage-panel")
    assert page.text_content("#panel-id") == passage.split(":", 1)[1]
    assert page.locator("#panel-phrases li").count() >= 2


@pytest.mark.browser
@pytest.mark.integration
def test_a_passage_holding_html_shows_as_text_and_runs_nothing(page: Any) -> None:
    _login(page)
    page.wait_for_function("window.__explorer.ready")
    page.evaluate("(id) => window.__explorer.openPassage(id)", XSS_ID)
    page.wait_for_function("window.__explorer.panel !== null")
    assert page.text_content("#panel-text") == XSS_TEXT
    assert page.text_content("#panel-title") == XSS_TITLE
    page.click("button[data-view=explore]")
    page.fill("#search-input", "evil title")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector(f"#search-results li[data-key='passage:{XSS_ID}']")
    assert page.text_content(f"#search-results li[data-key='passage:{XSS_ID}'] .title") == XSS_TITLE
    page.click("button[data-view=manage]")
    page.wait_for_selector(f"#passage-table tr[data-id='{XSS_ID}']")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned === undefined")
    assert (
        page.locator(
            "#passage-panel script, #passage-panel img, #search-results img, #passage-table img"
        ).count()
        == 0
    )


@pytest.mark.browser
@pytest.mark.integration
def test_manage_indexes_pasted_text_as_a_job_and_deletes_it(page: Any) -> None:
    _login(page)
    page.wait_for_function("window.__explorer.ready")
    page.click("button[data-view=manage]")
    page.wait_for_selector("#passage-table tbody tr")
    page.fill("#index-id", "note-from-browser")
    page.fill("#index-title", "Marta Oyelaran")
    page.fill("#index-text", "Marta Oyelaran is a botanist at the Kesswick Herbarium.")
    page.click("#index-form button[type=submit]")
    page.wait_for_selector("#jobs li[data-status]", timeout=120_000)
    assert page.get_attribute("#jobs li", "data-status") == "succeeded"
    assert "indexed 1" in page.text_content("#jobs li")
    page.wait_for_selector("#passage-table tr[data-id='note-from-browser']")
    page.once("dialog", lambda dialog: dialog.accept())
    page.check("#passage-table tr[data-id='note-from-browser'] input")
    page.click("#passages-delete")
    page.wait_for_function("document.getElementById('manage-status').textContent.startsWith('deleted 1')")
    assert page.locator("#passage-table tr[data-id='note-from-browser']").count() == 0


# --- browser: the Ask graph's labels, measured -------------------------------------------------------------

VIEWPORTS = [(1400, 1000), (1280, 800)]  # a desktop window and a laptop's
MIN_FONT_PX = 10.0
FIRST = [
    "Ada",
    "Bruno",
    "Chiara",
    "Dmitri",
    "Elif",
    "Farid",
    "Greta",
    "Hiro",
    "Ines",
    "Jonas",
    "Kofi",
    "Lena",
]
LAST = ["Moreau", "Novak", "Okafor", "Petrov", "Quint", "Rossi", "Sato", "Tanaka", "Ueda", "Varga", "Weber"]
UNIVERSITIES = ["Stanford University", "Harvard University", "Oxford University", "Kyoto University"]
TOPICS = ["Alzheimer's disease", "Parkinson's disease", "dementia", "sleep apnea", "migraine"]
CITIES = ["Boston", "Lisbon", "Osaka", "Vienna"]
DENSE_QUESTIONS = [
    "Which professors at Stanford, Harvard and Oxford study Alzheimer's disease, dementia or Parkinson's?",
    "Who works with Ada Moreau and Bruno Novak in Boston or Lisbon on migraine or sleep apnea?",
    "Which Kyoto University professor studies dementia with a colleague in Vienna?",
]


def _dense_passages() -> list[dict[str, str]]:
    """30 notes on 30 people: many share a university, a topic and a city, so a question naming several of
    each seeds many phrases and reaches many more than the demo's."""
    passages = []
    for i in range(30):
        name = f"{FIRST[i % len(FIRST)]} {LAST[(i * 7) % len(LAST)]}"
        colleague = f"{FIRST[(i + 5) % len(FIRST)]} {LAST[((i + 5) * 7) % len(LAST)]}"
        text = (
            f"{name} is a professor at {UNIVERSITIES[i % 4]} who studies {TOPICS[i % 5]}. "
            f"{name} works with {colleague} in {CITIES[i % 4]} on {TOPICS[(i + 2) % 5]}."
        )
        passages.append({"id": f"dense-{i:02d}", "title": name, "text": text})
    return passages


@pytest.fixture(scope="module")
def dense_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hipporag_neo4j.api import HippoRAG

    path = tmp_path_factory.mktemp("dense") / "kb"
    with HippoRAG(load_settings({"store": {"path": str(path)}})) as memory:
        report = memory.index(_dense_passages())  # offline: spaCy's triples, the real embedder
        assert len(report.indexed) == 30 and not report.failed, report
    return path


@pytest.fixture(scope="module")
def corpus_servers(demo_store: Path, dense_store: Path) -> Iterator[dict[str, ServerProcess]]:
    """``serve`` over the demo and over the dense corpus (embedded stores)."""
    servers: dict[str, ServerProcess] = {}
    try:
        for name, store in [("demo", demo_store), ("dense", dense_store)]:
            args = ["-m", "hipporag_neo4j", "--store", str(store), "serve", "--port", "{port}"]
            servers[name] = ServerProcess(args, env={"HIPPORAG_SERVER__API_KEY": KEY}, cwd=store.parent)
            servers[name].wait_until_up("/ready")
        yield servers
    finally:
        for proc in servers.values():
            proc.terminate()


MEASURE_LABELS = """() => {
    const rect = (r) => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom});
    const graph = document.getElementById('ask-graph');
    const labels = [...graph.querySelectorAll('g.node text.label')].map((t) => ({
        key: t.parentNode.dataset.key,
        text: t.textContent,
        tip: t.parentNode.querySelector('title').textContent,
        box: rect(t.getBoundingClientRect()),
        px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a,
    }));
    const markers = [...graph.querySelectorAll('g.node .marker')].map((m) => ({
        key: m.parentNode.dataset.key, box: rect(m.getBoundingClientRect()),
    }));
    return {labels, markers, graph: rect(graph.getBoundingClientRect()),
            window: {left: 0, top: 0, right: innerWidth, bottom: innerHeight},
            nodes: window.__explorer.ask.nodes.length};
}"""


def _meet(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


def _inside(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] >= b["left"]
        and a["right"] <= b["right"]
        and a["top"] >= b["top"]
        and a["bottom"] <= b["bottom"]
    )


def _check_labels(found: dict[str, Any], what: str) -> None:
    labels, markers = found["labels"], found["markers"]
    assert len(labels) == found["nodes"] > 0, what  # every drawn node has its label
    for i, a in enumerate(labels):
        assert a["px"] >= MIN_FONT_PX, (what, a)
        for part in a["text"].split("\u2026")[:-1]:  # a label cut short: its node's tooltip has it in full
            assert part.split(" \u2014 ")[-1].lstrip("#0123456789 ") in a["tip"], (what, a)
        assert _inside(a["box"], found["graph"]) and _inside(a["box"], found["window"]), (
            what,
            a,
            found["graph"],
        )
        for b in labels[i + 1 :]:
            assert not _meet(a["box"], b["box"]), (what, a, b)
        for m in markers:  # nor on another node's circle or box (its own box holds it)
            if m["key"] != a["key"]:
                assert not _meet(a["box"], m["box"]), (what, a, m)


@pytest.mark.browser
@pytest.mark.integration
@pytest.mark.parametrize("viewport", VIEWPORTS, ids=[f"{w}x{h}" for w, h in VIEWPORTS])
def test_ask_graph_labels_do_not_overlap_and_stay_readable(
    chromium: Any, corpus_servers: dict[str, ServerProcess], viewport: tuple[int, int], tmp_path: Path
) -> None:
    """Real questions on both corpora, in the graph modes: every label's box, read from the page, meets no
    other label and no other node, lies inside the graph's box and the window, and is >= 10 CSS px. The
    densest graph is photographed (into docs/images/ with HIPPORAG_TEST_BROWSER_SCREENSHOTS=1)."""
    from hipporag_neo4j.demo.run import demo_file

    demo_questions = [q["question"] for q in json.loads(demo_file("questions.json").read_text("utf-8"))]
    asked: dict[str, list[tuple[str, str, int]]] = {
        "demo": [(q, mode, 5) for q in demo_questions for mode in ("hipporag", "hipporag2")],
        "dense": [
            (q, mode, k) for q in DENSE_QUESTIONS for mode in ("hipporag", "hipporag2") for k in (5, 8)
        ],
    }
    width, height = viewport
    most = {corpus: 0 for corpus in asked}
    for corpus, questions in asked.items():
        context = chromium.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        page.goto(corpus_servers[corpus].url + "/explorer/")
        _login(page)
        page.wait_for_function("window.__explorer.ready")
        for question, mode, top_k in questions:
            count = page.evaluate("window.__explorer.askCount || 0")
            page.fill("#ask-query", question)
            page.select_option("#ask-mode", mode)
            page.fill("#ask-topk", str(top_k))
            page.click("#ask-form button[type=submit]")
            page.wait_for_function(f"window.__explorer.askCount > {count}", timeout=60_000)
            found = page.evaluate(MEASURE_LABELS)
            _check_labels(found, f"{corpus} {width}x{height} {mode} top {top_k}: {question}")
            if corpus == "dense" and found["nodes"] > most[corpus]:
                page.screenshot(path=str(tmp_path / f"explorer-ask-dense-{width}x{height}.png"))
            most[corpus] = max(most[corpus], found["nodes"])
        # the window resized (to the other size and back): the last graph is laid out again for it
        for other in [v for v in VIEWPORTS if v != viewport] + [viewport]:
            draws = page.evaluate("window.__explorer.askDraws")
            page.set_viewport_size({"width": other[0], "height": other[1]})
            page.wait_for_function(f"window.__explorer.askDraws > {draws}")
            _check_labels(page.evaluate(MEASURE_LABELS), f"{corpus} resized to {other[0]}x{other[1]}")
        context.close()
        assert errors == [], errors
    assert most["dense"] > most["demo"], most  # the dense corpus drew denser graphs than the demo's
    if os.environ.get("HIPPORAG_TEST_BROWSER_SCREENSHOTS") == "1":
        from browser_support import shrink_png

        shot = f"explorer-ask-dense-{width}x{height}.png"
        target = Path(__file__).resolve().parents[1] / "docs" / "images" / shot
        shutil.copyfile(tmp_path / shot, target)
        shrink_png(target)
