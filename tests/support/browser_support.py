"""Debian's Chromium driven by Playwright through its executable path (never a downloaded browser): the one
launcher the browser tests (tests/e2e/test_explorer_browser.py, tests/e2e/test_neo4j_browser.py, through
tests/e2e/conftest.py's
``chromium`` fixture) and scripts/explorer_screenshots.py share."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# Debian's package here; elsewhere (the GitHub runner ships Google Chrome) name the binary
CHROMIUM = Path(os.environ.get("HIPPORAG_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def chromium_missing() -> str | None:
    """Why Chromium cannot be driven here, or None when it can."""
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set HIPPORAG_TEST_CHROMIUM)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    return None


def shrink_png(path: Path) -> None:
    """A 256-colour palette PNG: a fraction of the size, the same look for a page's flat colours."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


@contextmanager
def launch_chromium() -> Iterator[Any]:
    """A headless Chromium (a Playwright ``Browser``), closed on leaving; RuntimeError naming what is
    missing when it cannot be launched."""
    problem = chromium_missing()
    if problem is not None:
        raise RuntimeError(problem)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
