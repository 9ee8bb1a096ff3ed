"""Fixtures of the end-to-end tests: Chromium for the browser tests, the demo store and ``serve`` for the
explorer's (shared with tests/integration/test_explorer.py through tests/support/explorer_fixtures.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.explorer_fixtures import demo_store, server  # noqa: F401  (fixtures)


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    """Debian's headless Chromium through Playwright (tests/support/browser_support.py), one per test module;
    skipped with the reason where it or Playwright is absent."""
    from tests.support.browser_support import chromium_missing, launch_chromium

    problem = chromium_missing()
    if problem is not None:
        pytest.skip(problem)
    with launch_chromium() as browser:
        yield browser
