"""Neo4j Browser (5.24.0, served by the server ``scripts/neo4j_server.py`` builds) on our graph, driven in
Debian's Chromium through Playwright as the explorer's browser tests are: connect through the form, apply
``docker/browser-style.grass`` with ``:style`` (pasted, as a user would), set ``:param``s, run the saved
``cypher/explore_*.cypher`` queries on the demo corpus, and read the SVG the graph view draws: every
Phrase, Passage and Fact node has the colour, size and caption the style promises.

The Browser URL is the test server's HTTP connector: known for the servers the tests start
(``HIPPORAG_TEST_NEO4J_PAIR``), or given as ``HIPPORAG_TEST_NEO4J_BROWSER_URL`` for a running server.
``HIPPORAG_TEST_BROWSER_SCREENSHOTS=1`` also writes the screenshots to ``docs/images/``.

Text is pasted into Browser's editor, not typed (tests/support/neo4j_browser_support.py says why).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.neo4j_browser_support import TIMEOUT, browser_login
from tests.support.neo4j_browser_support import browser_run as _run

REPO = Path(__file__).resolve().parents[2]
GRASS = REPO / "docker" / "browser-style.grass"
CYPHER = REPO / "cypher"
IMAGES = REPO / "docs" / "images"

# what docker/browser-style.grass promises: fill colour, radius (diameter / 2), caption property
STYLE = {
    "Passage": ("#4C8EDA", 50.0, "caption"),
    "Phrase": ("#F79767", 30.0, "name"),
    "Fact": ("#C990C0", 35.0, "caption"),
}
PASSAGE_TITLE = "Helena Várkonyi"
PHRASE = "stanford university"

pytestmark = [pytest.mark.neo4j, pytest.mark.browser, pytest.mark.integration]


@pytest.fixture
def browser_url() -> str:
    """Browser on the test server (skips where its URL is not known)."""
    from tests.support import neo4j_support

    neo4j_support.neo4j_server_or_skip()
    given = os.environ.get("HIPPORAG_TEST_NEO4J_BROWSER_URL")
    if given:
        return given
    local = neo4j_support.local_server()
    if local is None:
        pytest.skip(
            "Browser's URL is known only for HIPPORAG_TEST_NEO4J_PAIR servers (else set "
            "HIPPORAG_TEST_NEO4J_BROWSER_URL)"
        )
    return f"http://127.0.0.1:{local.state['http_port']}/browser/"


@pytest.fixture
def indexed() -> Iterator[dict[str, Any]]:
    """The demo corpus indexed into a fresh namespace (dropped after the test by conftest's clean-up)."""
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.demo.run import demo_file
    from hipporag_neo4j.settings import load_settings
    from tests.support.neo4j_support import neo4j_settings_or_skip

    n4j = neo4j_settings_or_skip()
    values = {
        "uri": n4j.uri,
        "user": n4j.user,
        "password": n4j.password.get_secret_value(),
        "database": n4j.database,
        "namespace": n4j.namespace,
    }
    with HippoRAG(load_settings({"neo4j": values})) as memory:
        memory.index_openie(demo_file("openie_demo.json"))
    yield values


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(TIMEOUT)
    yield context.new_page()
    context.close()


def _drawn(frame: Any, count: int) -> list[dict[str, Any]]:
    """The nodes the frame's graph view draws (once ``count`` are there): fill, radius, caption lines."""
    frame.locator("svg g.node").nth(count - 1).wait_for(state="attached")
    nodes = frame.locator("svg g.node").evaluate_all(
        """gs => gs.map(g => ({
            fill: g.querySelector('circle.b-outline').getAttribute('fill'),
            r: parseFloat(g.querySelector('circle.b-outline').getAttribute('r')),
            caption: Array.from(g.querySelectorAll('text.caption')).map(t => t.textContent.trim()),
        }))"""
    )
    assert len(nodes) == count, nodes
    return nodes


def _caption_fits(caption: list[str], text: str) -> bool:
    """Browser fits a caption into its circle: cut to a length, wrapped in lines, a last word maybe
    shortened with an ellipsis. Its words must come from ``text`` in order (the last one a prefix)."""
    shown = " ".join(caption).replace("\u2026", " ").split()
    words = text.split()
    if not shown:
        return False
    at = 0
    for i, word in enumerate(shown):
        last = i == len(shown) - 1
        while at < len(words) and not (words[at] == word or (last and words[at].startswith(word))):
            at += 1
        if at == len(words):
            return False
        at += 1
    return True


def _check_styled(nodes: list[dict[str, Any]], expected: dict[str, list[str]]) -> None:
    """Each label's nodes drawn in its colour and size, with a caption from its caption property."""
    for label, texts in expected.items():
        fill, radius, _ = STYLE[label]
        mine = [n for n in nodes if n["fill"] == fill]
        assert len(mine) == len(texts), (label, nodes)
        assert all(n["r"] == radius for n in mine), (label, mine)
        for node in mine:
            assert any(_caption_fits(node["caption"], t) for t in texts), (label, node, texts)
        # captions that fit whole are shown whole
        assert any(" ".join(n["caption"]) in texts for n in mine) or all(len(t) > 12 for t in texts)
    assert {n["fill"] for n in nodes} == {STYLE[label][0] for label in expected}


def _shot(frame: Any, name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    frame.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    if os.environ.get("HIPPORAG_TEST_BROWSER_SCREENSHOTS") == "1":
        shutil.copyfile(path, IMAGES / name)


def test_browser_draws_our_graph_with_the_project_style(
    page: Any, browser_url: str, indexed: dict[str, Any], tmp_path: Path
) -> None:
    from tests.support.neo4j_support import neo4j_server_or_skip, run_cypher

    server = neo4j_server_or_skip()
    namespace = indexed["namespace"]
    passage = run_cypher(
        server,
        "MATCH (d:Passage {namespace: $ns, title: $title}) "
        "RETURN d.id AS id, COLLECT { MATCH (d)-[:MENTIONS]->(p:Phrase) RETURN p.name } AS phrases, "
        "COLLECT { MATCH (d)-[:STATES]->(f:Fact) RETURN f.caption } AS facts",
        ns=namespace,
        title=PASSAGE_TITLE,
    )[0]
    around = run_cypher(
        server,
        "MATCH (p:Phrase {namespace: $ns, name: $name}) "
        "RETURN COLLECT { MATCH (p)-[:RELATION|SYNONYM]-(o:Phrase) RETURN DISTINCT o.name } AS phrases, "
        "COLLECT { MATCH (d:Passage)-[:MENTIONS]->(p) RETURN d.caption } AS passages",
        ns=namespace,
        name=PHRASE,
    )[0]
    assert passage["phrases"] and passage["facts"] and around["passages"]

    browser_login(page, browser_url, indexed["uri"], indexed["user"], indexed["password"])

    style = _run(page, ":style " + GRASS.read_text(encoding="utf-8"))
    style.locator('[data-testid="frameContents"]', has_text="node.Passage").wait_for()
    _run(page, f":param namespace => '{namespace}'")
    _run(page, f":param name => '{PHRASE}'")
    _run(page, f":param passage_id => '{passage['id']}'")

    overview = _run(page, (CYPHER / "explore_overview.cypher").read_text(encoding="utf-8"))
    overview.locator("text=embedding_model").first.wait_for()

    phrase = _run(page, (CYPHER / "explore_phrase.cypher").read_text(encoding="utf-8"))
    phrase_names = sorted({PHRASE, *around["phrases"]})
    nodes = _drawn(phrase, len(phrase_names) + len(around["passages"]))
    _check_styled(nodes, {"Phrase": phrase_names, "Passage": around["passages"]})
    _shot(phrase, "neo4j-browser-phrase.png", tmp_path)

    drawn = _run(page, (CYPHER / "explore_passage.cypher").read_text(encoding="utf-8"))
    nodes = _drawn(drawn, 1 + len(passage["phrases"]) + len(passage["facts"]))
    _check_styled(nodes, {"Passage": [PASSAGE_TITLE], "Phrase": passage["phrases"], "Fact": passage["facts"]})
    _shot(drawn, "neo4j-browser-passage.png", tmp_path)
