"""Fixtures of the integration tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hipporag_neo4j.stores.base import GraphStore
from tests.support.explorer_fixtures import demo_store, server  # noqa: F401  (fixtures of test_explorer)
from tests.support.store_corpus import _open_store


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    """A store of each kind, opened for EMB (test_store_conformance, test_reliability_protocol)."""
    s = _open_store(request.param, tmp_path)
    yield s
    s.close()
