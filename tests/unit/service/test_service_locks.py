"""Every store method is classified for the service's lock (its behaviour is tested end to end in
test_server.py: queries during a job, readers never see half a chunk)."""

from __future__ import annotations

import inspect

import pytest

from hipporag_neo4j.service.locks import READ_METHODS, WRITE_METHODS
from hipporag_neo4j.stores.base import GraphStore

pytestmark = pytest.mark.unit


def test_every_store_method_is_classified_as_read_or_write() -> None:
    methods = {
        name for name, _ in inspect.getmembers(GraphStore, inspect.isfunction) if not name.startswith("_")
    }
    unclassified = methods - READ_METHODS - WRITE_METHODS
    assert not unclassified, (
        f"classify {sorted(unclassified)} in hipporag_neo4j/service/locks.py: a read method left out holds "
        "the write lock through extraction, so queries wait for the whole step"
    )
    assert not READ_METHODS & WRITE_METHODS
