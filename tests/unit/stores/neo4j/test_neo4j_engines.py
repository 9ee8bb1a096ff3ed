"""The rule ``neo4j.ppr_engine=auto`` follows (``capabilities.auto_engine``), without a server.

The PPR engines and GDS projections themselves (every engine against an independent reference, GDS's
tolerance and tiny seeds, the projection catalog shared by processes, the in-process engine at READ
COMMITTED, one statement per ranking, ``close``, and the store's ``auto`` decision from the namespace's
size) run on real servers: tests/neo4j/test_neo4j_engines_live.py.
"""

from __future__ import annotations

import pytest

from hipporag_neo4j.stores.neo4j.capabilities import AUTO_LOCAL_MAX_EDGES, auto_engine

pytestmark = pytest.mark.unit


def test_auto_runs_in_process_up_to_the_measured_size_and_gds_above() -> None:
    """neo4j.ppr_engine=auto with usable GDS: the in-process engine while the namespace's phrase graph
    has at most AUTO_LOCAL_MAX_EDGES edges (where it measured faster), the server's GDS engine above.
    The store's decision on its first PPR (read_graph_size) is
    tests/neo4j/test_neo4j_engines_live.py::test_auto_runs_in_process_up_to_the_measured_size_and_gds_above."""
    for gds in ("gds-weighted", "gds-linear"):
        assert auto_engine(gds, 0)[0] == "local"
        assert auto_engine(gds, AUTO_LOCAL_MAX_EDGES)[0] == "local"
        assert auto_engine(gds, AUTO_LOCAL_MAX_EDGES + 1)[0] == gds
    assert auto_engine("local", 10**9)[0] == "local"
