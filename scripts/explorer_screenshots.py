"""Screenshots of the graph explorer for docs/images/ (explorer-ask.png at 1400x1000, explorer-ask-laptop.png
at a laptop's 1280x800, explorer-explore.png, explorer-passage.png, explorer-manage.png).

Builds the demo store with its linked graph of accounts in a temporary directory, runs the real
``hipporag-neo4j serve`` over it on a free loopback port, drives Debian's Chromium with Playwright and
saves each view (Chromium launched by tests/support/browser_support.py, as the browser tests do). Needs the
[server]
and [dev] extras and ``apt-get install chromium``.

    python scripts/explorer_screenshots.py [--out docs/images] [--url URL --key KEY]

With ``--url`` it photographs a server you already run (e.g. one on Neo4j) instead.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
QUESTION = "Which Stanford professor studies Alzheimer's disease?"


def build_demo(path: Path) -> None:
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.demo.link import LABEL
    from hipporag_neo4j.demo.run import demo_file
    from hipporag_neo4j.settings import load_settings

    with HippoRAG(load_settings({"store": {"path": str(path)}})) as memory:
        memory.index_openie(demo_file("openie_demo.json"))
        memory.import_graph(demo_file("enterprise_graph.jsonl"))
        memory.link(LABEL, "name")


def serve(store: Path, key: str) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "HIPPORAG_SERVER__API_KEY": key, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "hipporag_neo4j", "--store", str(store), "serve", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/ready", timeout=2).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit("the server did not come up")


def ask(browser: Any, url: str, key: str, viewport: tuple[int, int]) -> Any:
    """A logged-in tab of that size with the demo's question asked in the hipporag mode."""
    width, height = viewport
    page = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True).new_page()
    page.goto(url + "/explorer/")
    page.fill("#key-input", key)
    page.click("#login-form button[type=submit]")
    page.wait_for_function("window.__explorer.ready")
    page.fill("#ask-query", QUESTION)
    page.select_option("#ask-mode", "hipporag")
    page.click("#ask-form button[type=submit]")
    page.wait_for_function("window.__explorer.askCount >= 1", timeout=120_000)
    page.wait_for_timeout(300)
    return page


def shoot(url: str, key: str, out: Path) -> None:
    sys.path.insert(0, str(REPO))
    from hipporag_neo4j.common.text import make_phrase_id
    from tests.support.browser_support import launch_chromium, shrink_png

    out.mkdir(parents=True, exist_ok=True)
    with launch_chromium() as browser:
        ask(browser, url, key, (1280, 800)).screenshot(path=str(out / "explorer-ask-laptop.png"))
        page = ask(browser, url, key, (1400, 1000))
        page.screenshot(path=str(out / "explorer-ask.png"))
        page.click("#ask-results li >> nth=0")
        page.wait_for_function("window.__explorer.panel !== null")
        page.screenshot(path=str(out / "explorer-passage.png"))
        page.click("#panel-close")
        page.click("button[data-view=explore]")
        page.fill("#search-input", "stanford")
        page.click("#search-form button[type=submit]")
        page.click("#search-results li[data-key^='phrase:']")
        page.wait_for_function("window.__explorer.exploreCount >= 1 && window.__explorer.stable")
        keys = page.evaluate("window.__explorer.explore.nodes")
        helena = "phrase:" + make_phrase_id("helena várkonyi")
        target = helena if helena in keys else next(k for k in keys if k.startswith("phrase:"))
        position = page.evaluate("(k) => window.__explorer.domPosition('explore', k)", target)
        page.mouse.click(position["x"], position["y"])
        page.wait_for_function("window.__explorer.exploreCount >= 2 && window.__explorer.stable")
        page.wait_for_timeout(300)
        page.screenshot(path=str(out / "explorer-explore.png"))
        page.click("button[data-view=manage]")
        page.wait_for_selector("#passage-table tbody tr")
        page.fill("#index-title", "Marta Oyelaran")
        page.fill("#index-text", "Marta Oyelaran is a botanist at the Kesswick Herbarium.")
        page.screenshot(path=str(out / "explorer-manage.png"))
    for png in [
        "explorer-ask.png",
        "explorer-ask-laptop.png",
        "explorer-passage.png",
        "explorer-explore.png",
        "explorer-manage.png",
    ]:
        shrink_png(out / png)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    parser.add_argument("--url", help="photograph this running server instead of a demo one")
    parser.add_argument("--key", default="screenshot-key")
    args = parser.parse_args()
    if args.url:
        shoot(args.url, args.key, args.out)
        return
    with tempfile.TemporaryDirectory(prefix="explorer-shots-") as tmp:
        store = Path(tmp) / "kb"
        build_demo(store)
        proc, url = serve(store, args.key)
        try:
            shoot(url, args.key, args.out)
        finally:
            proc.terminate()
            proc.wait(timeout=60)


if __name__ == "__main__":
    main()
