"""The passage rows the Neo4j store's in-process copy holds per graph version (``client_copy.PassageRows``)
are bounded. The view of one graph version itself (one version check per warm query, a write between
queries seen by the next, threads each at their own version, the GDS engines using the view's version) is
tested live, on both pinned pairs: tests/neo4j/test_neo4j_view_live.py."""

from __future__ import annotations

import pytest

from hipporag_neo4j.stores.neo4j.client_copy import PassageRows

pytestmark = pytest.mark.unit


def test_passage_rows_are_bounded() -> None:
    from hipporag_neo4j.models import Passage

    rows = PassageRows(limit=3)
    rows.add({f"p{i}": Passage(id=f"p{i}", text=str(i)) for i in range(5)})
    assert len(rows) == 3 and set(rows.get(["p0", "p1", "p2", "p3", "p4"])) == {"p2", "p3", "p4"}
