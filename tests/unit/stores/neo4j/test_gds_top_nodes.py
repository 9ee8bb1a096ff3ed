"""``neo4j.gds_top_nodes`` (opt-in, issue 35 item 4): the setting itself, without a server. What it does
on the ``gds-weighted`` engine (HippoRAG's passage scores aggregate only the walk's N best phrases,
``gds_passage_scores_top``; unset, the exact statement; the linear form ignores it) runs on real servers:
tests/neo4j/test_neo4j_engines_live.py and tests/neo4j/test_neo4j_gds_top_nodes.py."""

from __future__ import annotations

import pytest

from hipporag_neo4j.settings import Neo4jSettings

pytestmark = pytest.mark.unit


def test_the_setting_is_unset_by_default_and_refuses_zero() -> None:
    assert Neo4jSettings().gds_top_nodes is None
    with pytest.raises(ValueError, match="gds_top_nodes"):
        Neo4jSettings(gds_top_nodes=0)
