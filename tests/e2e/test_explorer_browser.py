"""The graph explorer (``/explorer`` of ``serve``): its reads on both stores, its API, and the page driven
in a real headless Chromium (Debian's ``chromium`` through Playwright; no browser download).

The integration part builds the demo store once (recorded OpenIE, the real all-MiniLM-L6-v2 embedder,
the demo's graph of accounts linked with SAME_AS, and one passage whose text is an XSS attempt) and runs
the real ``hipporag-neo4j serve`` over it on a free loopback port.

Split by tier from the former tests/test_explorer.py: this file holds the browser tests; the rest is in
tests/unit/server/test_explorer.py, tests/integration/test_explorer.py.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.common.text import make_phrase_id
from hipporag_neo4j.settings import load_settings
from tests.support.explorer_fixtures import KEY, XSS_ID, XSS_TEXT, XSS_TITLE
from tests.support.server_support import ServerProcess

QUESTION = "Which Stanford professor studies Alzheimer's disease?"  # the demo's showcase question


GOLD = ["Helena Várkonyi", "Várkonyi Laboratory"]


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
def test_explore_draws_at_most_per_kind_and_a_more_node_and_keeps_a_chunks_number(
    page: Any, server: ServerProcess
) -> None:
    import httpx

    _login(page)
    page.wait_for_function("window.__explorer.ready")
    page.click("button[data-view=explore]")
    page.fill("#explore-cap", "1")  # one neighbour of each kind: the phrase's passages become "+N more"
    page.fill("#search-input", "stanford university")
    page.click("#search-form button[type=submit]")
    page.click(f"#search-results li[data-key='phrase:{make_phrase_id('stanford university')}']")
    page.wait_for_function("window.__explorer.exploreCount >= 1 && window.__explorer.stable")
    drawn = page.evaluate("window.__explorer.explore")
    groups = {g["edge"]: g for g in drawn["groups"]}
    passages = groups["MENTIONS"]
    assert passages["total"] >= 2 and passages["shown"] == 1, groups
    assert len([k for k in drawn["nodes"] if k.startswith("passage:")]) == 1
    label = page.evaluate("(k) => window.__explorer.networks.explore.nodes.get(k).label", passages["more"])
    assert label == f"+{passages['total'] - 1} more passages"
    status = page.text_content("#explore-status")
    assert f"1 of {passages['total']} passages" in status and "+N more" in status, status

    # a chunk of a file with a long name: its label is cut before the name's end, never before its #n
    chunk = "support/tickets-archive-of-the-whole-year-2023.txt#12"
    headers = {"Authorization": f"Bearer {KEY}"}
    body = {"passages": [{"id": chunk, "text": "Ticket FH-2012: Omar Haddad replaced the seal kit."}]}
    response = httpx.post(server.url + "/passages", json=body, headers=headers, timeout=120)
    assert response.status_code == 200, response.text
    try:
        page.click("#explore-clear")
        page.fill("#search-input", "tickets-archive")
        page.click("#search-form button[type=submit]")
        page.click(f"#search-results li[data-key='passage:{chunk}']")
        page.wait_for_function("window.__explorer.exploreCount >= 2 && window.__explorer.stable")
        label = page.evaluate(
            "(k) => window.__explorer.networks.explore.nodes.get(k).label", f"passage:{chunk}"
        )
        assert label.endswith("\u2026#12") and label.startswith("tickets-archive-of") and len(label) <= 32, (
            label
        )
    finally:
        httpx.request("DELETE", server.url + "/passages", json={"ids": [chunk]}, headers=headers, timeout=120)


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
        from tests.support.browser_support import shrink_png

        shot = f"explorer-ask-dense-{width}x{height}.png"
        target = Path(__file__).resolve().parents[2] / "docs" / "images" / shot
        shutil.copyfile(tmp_path / shot, target)
        shrink_png(target)
