"""Driving Neo4j Browser (5.24.0, served by the server ``scripts/neo4j_server.py`` builds) in Chromium
through Playwright: what tests/e2e/test_neo4j_browser.py and scripts/ticket_screenshots.py share.

Text is pasted into Browser's editor (a paste event), not typed: Monaco closes brackets as they are
typed, and a ``:style`` typed key by key gains a stray ``}``, an empty rule that crashes Browser 5.24.0
("Cannot read properties of undefined (reading 'replace')") when it next draws a graph.
"""

from __future__ import annotations

from typing import Any

TIMEOUT = 180_000  # ms: Browser is a heavy single-page app and the machine may be loaded


def browser_login(page: Any, url: str, uri: str, user: str, password: str) -> None:
    """Open Browser at ``url`` and connect to ``uri`` through its form."""
    page.goto(url)
    page.fill('input[data-testid="boltaddress"]', uri)
    page.fill('input[data-testid="username"]', user)
    page.fill('input[data-testid="password"]', password)
    page.click('button[data-testid="connect"]')
    page.locator('input[data-testid="boltaddress"]').wait_for(state="detached")
    page.locator('[data-testid="frameCommand"]', has_text=":play start").wait_for()


def browser_run(page: Any, text: str) -> Any:
    """Paste ``text`` into the main editor, run it, and return its frame (the newest, on top)."""
    frames = page.locator('[data-testid="frame"]')
    before = frames.count()
    page.click("#monaco-main-editor")
    page.evaluate(
        """text => {
            const data = new DataTransfer();
            data.setData('text/plain', text);
            document.querySelector('#monaco-main-editor textarea').dispatchEvent(
                new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
        }""",
        text,
    )
    page.locator('[data-testid="editor-Run"]').first.click()
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=\"frame\"]').length > n", arg=before, timeout=TIMEOUT
    )
    frame = frames.first
    command = " ".join(text.split())
    assert " ".join(frame.locator('[data-testid="frameCommand"]').inner_text().split()) == command
    return frame
