"""The benchmark scale suite's smoke size (XS) on Neo4j: the namespace written through ``index_openie``
in the store's batches, both PPR engines, then dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.neo4j_support import neo4j_env, neo4j_server_or_skip, random_namespace, server_has_gds
from tests.support.scale_suite import check_smoke, run_smoke

pytestmark = [pytest.mark.neo4j, pytest.mark.integration]


def test_scale_suite_xs_neo4j(tmp_path: Path) -> None:
    server = neo4j_server_or_skip()
    engines = ["local", "gds"] if server_has_gds(server) else ["local"]
    env = neo4j_env()
    data = run_smoke(
        tmp_path,
        "--store",
        "neo4j",
        "--uri",
        env["HIPPORAG_NEO4J_URI"],
        "--namespace",
        random_namespace(),
        "--engines",
        ",".join(engines),
        env=env,
    )
    check_smoke(data, engines)
