"""What ``hipporag-neo4j doctor`` prints for the store on each kind of server, from the real doctor code
with the fake driver programmed with each capability set (``tests/support/neo4j_fake.server``).

docs/aura.md shows these lines; ``tests/unit/stores/neo4j/test_aura_doctor.py`` fails when they drift.
Regenerate them with ``PYTHONPATH=. python tests/support/doctor_examples.py``. The version numbers are
examples
(what a real Aura instance reports changes with its releases); the decisions are what is shown.
"""

from __future__ import annotations

import contextlib
import io
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: tests.support is importable

from tests.support.neo4j_fake import FakeDriver, server

AURA_URI = "neo4j+s://abcd1234.databases.neo4j.io"
LOCAL_URI = "neo4j://localhost:7687"
CREDENTIALS = {"client_id": "my-client-id", "client_secret": "my-client-secret"}


@dataclass(frozen=True)
class Case:
    title: str
    version: str
    edition: str
    gds: str | None
    uri: str
    engine: str  # what auto (or the requested engine) runs
    neo4j: dict[str, Any] = field(default_factory=dict)  # settings of the neo4j group
    edges: int = 400_000  # the namespace's phrase-graph edges (auto runs GDS above AUTO_LOCAL_MAX_EDGES)


CASES = [
    Case(
        "AuraDB Free, or an AuraDB without the GDS plugin", "5.27-aura", "enterprise", None, AURA_URI, "local"
    ),
    Case(
        "AuraDB Professional, Business Critical or Virtual Dedicated Cloud with neo4j.ppr_engine=aura",
        "5.27-aura",
        "enterprise",
        None,
        AURA_URI,
        "aura",
        {"ppr_engine": "aura", "aura": {**CREDENTIALS, "session_ttl_minutes": 30}},
    ),
    Case(
        "AuraDB Professional with the Graph Analytics plugin, or AuraDS",
        "5.27-aura",
        "enterprise",
        "2.17.0",
        AURA_URI,
        "gds-weighted",
    ),
    Case(
        "Self-managed Neo4j 2025.04+ with GDS 2.17+",
        "2025.04.0",
        "community",
        "2.17.0",
        LOCAL_URI,
        "gds-weighted",
    ),
    Case(
        "Self-managed Neo4j 5.26 LTS with GDS 2.13", "5.26.0", "community", "2.13.2", LOCAL_URI, "gds-linear"
    ),
    Case(
        "Self-managed Neo4j 5.26 LTS with GDS 2.13, a namespace of MuSiQue's size",
        "5.26.0",
        "community",
        "2.13.2",
        LOCAL_URI,
        "local",
        edges=28_222,
    ),
    Case("Self-managed Neo4j without GDS", "2025.04.0", "community", None, LOCAL_URI, "local"),
]


def doctor_store_lines(case: Case) -> list[str]:
    """The ``store`` check of ``hipporag-neo4j doctor`` for a server with this capability set, as printed
    (wrapped at ``doctor.WIDTH``)."""
    import neo4j

    from hipporag_neo4j.diagnostics import doctor
    from hipporag_neo4j.settings import Neo4jSettings, Settings, StoreSettings
    from hipporag_neo4j.stores.neo4j import store

    driver = server(FakeDriver(), version=case.version, edition=case.edition, gds=case.gds)
    driver.on("gds_graph_memory", [])  # no projection made yet
    driver.on("read_graph_size", [{"phrases": case.edges // 3, "edges": case.edges}])
    settings = Settings(
        store=StoreSettings(backend="neo4j"),
        neo4j=Neo4jSettings(uri=case.uri, namespace="default", **case.neo4j),
    )
    out = io.StringIO()
    with (
        mock.patch.object(neo4j.GraphDatabase, "driver", lambda *a, **k: driver),
        mock.patch.object(store, "AuraSessions", side_effect=AssertionError("doctor called the Aura API")),
    ):
        check = doctor._check("store", lambda: doctor._store(settings))
    assert check["status"] != "error", check  # the cases are servers the store can run on
    with contextlib.redirect_stdout(out):
        doctor.print_doctor({"backend": "neo4j", "checks": [check]})
    return out.getvalue().splitlines()[1:]  # after "backend: neo4j"


def doctor_store_line(case: Case) -> str:
    """The ``store`` check as one line: the printed lines joined as they were broken (at single spaces)."""
    first, *rest = doctor_store_lines(case)
    return " ".join([first, *(line.strip() for line in rest)])


def markdown() -> str:
    """The docs/aura.md block: one wrapped ``doctor`` line per case."""
    parts = []
    for case in CASES:
        wrapped = textwrap.fill(
            doctor_store_line(case),
            110,
            subsequent_indent="    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        parts.append(f"{case.title}:\n\n```text\n{wrapped}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    print(markdown())
