"""Screenshots of Neo4j Browser and the graph explorer on a support-ticket archive (issue 37, "at real
sizes"), for docs/images/: a hub phrase in the explorer's Explore view (explorer-hub.png), a chunk's
neighbourhood there (explorer-chunk.png), and in Neo4j Browser with docker/browser-style.grass applied a
title-less chunk with its phrases and facts (neo4j-browser-chunk.png) and the hub phrase
(neo4j-browser-hub.png).

The corpus is tests/data/tickets/corpus.json written as a user's files: the 240 tickets as one archive
``tickets/archive-2023.txt`` (no title: chunked into ``archive-2023.txt#n``) and each ticket as its own
``tickets/FH-nnnn.txt``. It is indexed with the offline spaCy extractor into an embedded store and into
a Neo4j namespace, the real ``serve`` runs over the embedded store, and Debian's Chromium is driven
with Playwright (tests/support/browser_support.py).

    python scripts/ticket_screenshots.py --work DIR --neo4j-uri bolt://127.0.0.1:7730 \\
        --neo4j-password PW --browser-url http://127.0.0.1:7731/browser/ [--out docs/images]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SETTINGS: dict[str, Any] = {"extraction": {"method": "spacy"}}
NAMESPACE = "tickets"


def write_files(folder: Path) -> Path:
    corpus = json.loads((REPO / "tests" / "data" / "tickets" / "corpus.json").read_text(encoding="utf-8"))
    tickets = folder / "tickets"
    tickets.mkdir(parents=True, exist_ok=True)
    archive = "\n\n".join(f"{t['title']}\n{t['text']}" for t in corpus)
    (tickets / "archive-2023.txt").write_text(archive, encoding="utf-8")
    for t in corpus:
        name = t["title"].removeprefix("Ticket ")
        (tickets / f"{name}.txt").write_text(t["text"], encoding="utf-8")
    return tickets


def index(files: Path, settings: dict[str, Any]) -> None:
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.settings import load_settings

    with HippoRAG(load_settings({**SETTINGS, **settings})) as memory:
        report = memory.index_files([files])
        print(f"indexed {len(report.indexed)}, failed {len(report.failed)}", file=sys.stderr)


def hub_phrase(store: Path) -> tuple[str, int]:
    """The phrase most passages mention (of those with a name longer than 3 characters)."""
    import sqlite3

    from hipporag_neo4j.stores.embedded.schema import PASSAGE_COUNT

    with sqlite3.connect(store / "graph.sqlite") as conn:
        name, count = conn.execute(
            f"SELECT p.name, {PASSAGE_COUNT} AS n FROM phrases p WHERE length(p.name) > 3 "
            "ORDER BY n DESC LIMIT 1"
        ).fetchone()
    return str(name), int(count)


def shoot_explorer(browser: Any, url: str, key: str, hub: str, out: Path) -> None:
    page = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True).new_page()
    page.goto(url + "/explorer/")
    page.fill("#key-input", key)
    page.click("#login-form button[type=submit]")
    page.wait_for_function("window.__explorer.ready")
    page.click("button[data-view=explore]")
    page.fill("#search-input", hub)
    page.click("#search-form button[type=submit]")
    page.click(f"#search-results li[data-key^='phrase:'] >> text='{hub}'")
    page.wait_for_function("window.__explorer.exploreCount >= 1 && window.__explorer.stable", timeout=120_000)
    page.wait_for_timeout(500)
    page.screenshot(path=str(out / "explorer-hub.png"))
    page.click("#explore-clear")
    page.fill("#search-input", "archive-2023.txt#12")
    page.click("#search-form button[type=submit]")
    page.click("#search-results li[data-key^='passage:']")
    page.wait_for_function("window.__explorer.exploreCount >= 2 && window.__explorer.stable", timeout=120_000)
    page.wait_for_timeout(500)
    page.screenshot(path=str(out / "explorer-chunk.png"))


def chunk_id(uri: str, password: str) -> str:
    """The id of the archive's 13th chunk in the Neo4j namespace (ids are the paths as indexed)."""
    import neo4j

    with neo4j.GraphDatabase.driver(uri, auth=("neo4j", password)) as driver:
        records = driver.execute_query(
            "MATCH (d:Passage {namespace: $ns}) WHERE d.id ENDS WITH $end RETURN d.id AS id",
            ns=NAMESPACE,
            end="/archive-2023.txt#12",
        ).records
    return str(records[0]["id"])


def shoot_browser(browser: Any, browser_url: str, uri: str, password: str, hub: str, out: Path) -> None:
    from tests.support.neo4j_browser_support import browser_login, browser_run

    page = browser.new_context(viewport={"width": 1500, "height": 1000}).new_page()
    page.set_default_timeout(180_000)
    browser_login(page, browser_url, uri, "neo4j", password)
    grass = (REPO / "docker" / "browser-style.grass").read_text(encoding="utf-8")
    style = browser_run(page, ":style " + grass)
    style.locator('[data-testid="frameContents"]', has_text="node.Passage").wait_for()
    browser_run(page, f":param namespace => '{NAMESPACE}'")
    browser_run(page, f":param name => '{hub}'")
    browser_run(page, f":param passage_id => '{chunk_id(uri, password)}'")
    cypher = REPO / "cypher"
    for query, name in (
        ("explore_passage", "neo4j-browser-chunk.png"),
        ("explore_phrase", "neo4j-browser-hub.png"),
    ):
        frame = browser_run(page, (cypher / f"{query}.cypher").read_text(encoding="utf-8"))
        frame.locator("svg g.node").first.wait_for(state="attached")
        frame.locator('button[title="Fullscreen"]').click()
        collapse = frame.locator('button[aria-label="Collapse the node properties display"]')
        if collapse.count():  # Browser keeps the panel collapsed for the next frames
            collapse.click()
        page.wait_for_timeout(4000)  # the layout settles
        frame.locator('button[aria-label="zoom-to-fit"]').click()
        page.wait_for_timeout(1500)
        frame.screenshot(path=str(out / name))
        frame.locator('button[title="Close fullscreen"]').click()


def main() -> None:
    from hipporag_neo4j.common.captions import passage_caption  # noqa: F401  (the package from this tree)
    from tests.support.browser_support import launch_chromium, shrink_png

    sys.path.insert(0, str(REPO / "scripts"))
    from explorer_screenshots import serve

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for the files and the store")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    parser.add_argument("--neo4j-uri", required=True)
    parser.add_argument("--neo4j-password", required=True)
    parser.add_argument("--browser-url", required=True)
    parser.add_argument(
        "--skip-index", choices=["none", "embedded", "both"], default="none", help="stores built already"
    )
    args = parser.parse_args()
    store = args.work / "kb"
    neo4j = {"uri": args.neo4j_uri, "user": "neo4j", "password": args.neo4j_password, "namespace": NAMESPACE}
    files = write_files(args.work / "files")
    if args.skip_index == "none":
        index(files, {"store": {"path": str(store)}})
    if args.skip_index != "both":
        index(files, {"neo4j": neo4j})
    hub, count = hub_phrase(store)
    print(f"hub phrase: {hub!r} in {count} passages", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    key = "screenshot-key"
    with launch_chromium() as browser:
        proc, url = serve(store, key)
        try:
            shoot_explorer(browser, url, key, hub, args.out)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        shoot_browser(browser, args.browser_url, args.neo4j_uri, args.neo4j_password, hub, args.out)
    for png in ["explorer-hub.png", "explorer-chunk.png", "neo4j-browser-chunk.png", "neo4j-browser-hub.png"]:
        shrink_png(args.out / png)


if __name__ == "__main__":
    main()
