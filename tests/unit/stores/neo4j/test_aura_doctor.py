"""``auto`` picks the engine each capability set allows, and ``doctor`` says which engine runs and why:
the GDS plugin present (gds-weighted, gds-linear, or local for a namespace of at most
AUTO_LOCAL_MAX_EDGES graph edges, with the namespace's size said), absent (local), Aura without the plugin
(local, never a session, and told how to start one), Aura with neo4j.ppr_engine=aura. Runs the real
doctor code against the fake driver; docs/aura.md (the README's Aura page) shows the same lines and must
not drift from them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.doctor_examples import CASES, Case, doctor_store_line

pytestmark = pytest.mark.unit

AURA_DOC = Path(__file__).resolve().parents[4] / "docs" / "aura.md"

#: Why each engine runs, as doctor says it.
WHY = {
    "gds-weighted": "gds.pageRank.stream with weighted sourceNodes",
    "gds-linear": "takes only unweighted sourceNodes",
    "aura": "an Aura Graph Analytics session",
}


def squash(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("case", CASES, ids=[c.title for c in CASES])
def test_doctor_names_the_engine_and_why(case: Case) -> None:
    line = doctor_store_line(case)
    requested = case.neo4j.get("ppr_engine", "auto")
    assert f"PPR engine: {case.engine} (neo4j.ppr_engine={requested}): " in line
    why = line.split(f"PPR engine: {case.engine} (neo4j.ppr_engine={requested}): ", 1)[1]
    if case.gds is not None and requested == "auto":  # the namespace's size decides, and doctor says so
        first = why.split("; ")[0]
        assert f"the namespace has {case.edges:,} graph edges" in first
        assert first.startswith(
            "auto runs in process" if case.engine == "local" else f"auto runs {case.engine}"
        )
        gds_engine = "gds-weighted" if case.gds == "2.17.0" else "gds-linear"
        assert WHY[gds_engine] in why  # the GDS engine that runs (above the size)
        assert ("above that size: " in why) == (case.engine == "local")
    elif case.engine != "local":
        assert WHY[case.engine] in why.split("; ")[0]
    elif case.uri.endswith(".databases.neo4j.io"):
        assert why.startswith("no GDS (this Aura instance has no GDS plugin")
        assert "neo4j.ppr_engine=aura" in why and "auto never starts one" in why
    else:
        assert why.startswith("no GDS (the Graph Data Science plugin is not installed")
        assert "Aura Graph Analytics" not in why


def test_auto_covers_plugin_present_absent_and_aura_without_sessions() -> None:
    """The capability sets the cases above must include, with the engine auto picks for each (the
    parametrised test checks that doctor reports exactly that engine)."""
    from hipporag_neo4j.stores.neo4j.capabilities import AUTO_LOCAL_MAX_EDGES

    auto = {
        (c.gds, c.uri.endswith(".databases.neo4j.io")): c.engine
        for c in CASES
        if not c.neo4j and c.edges > AUTO_LOCAL_MAX_EDGES
    }
    assert auto[("2.17.0", False)] == "gds-weighted"  # self-managed with the plugin
    assert auto[("2.13.2", False)] == "gds-linear"  # Neo4j 5.26 LTS's GDS: unweighted sources only
    assert auto[(None, False)] == "local"  # self-managed without it
    assert auto[(None, True)] == "local"  # Aura without the plugin: no session unless asked for
    assert auto[("2.17.0", True)] == "gds-weighted"  # AuraDB Professional with the plugin, AuraDS
    small = [c for c in CASES if c.gds is not None and not c.neo4j and c.edges <= AUTO_LOCAL_MAX_EDGES]
    assert small and all(c.engine == "local" for c in small)  # a small namespace runs in process


@pytest.mark.parametrize("gds", ["2.17.0", "2.13.2"])
def test_doctor_says_which_engine_auto_picks_for_the_namespace(gds: str) -> None:
    """Either side of AUTO_LOCAL_MAX_EDGES: the engine the store will run for this namespace (the store's
    own rule, Neo4jStore.engine_choice), with the namespace's size and the limit in the reason."""
    from hipporag_neo4j.stores.neo4j.capabilities import AUTO_LOCAL_MAX_EDGES

    version = "2025.04.0" if gds == "2.17.0" else "5.26.0"
    gds_engine = "gds-weighted" if gds == "2.17.0" else "gds-linear"
    for edges, engine in ((AUTO_LOCAL_MAX_EDGES, "local"), (AUTO_LOCAL_MAX_EDGES + 1, gds_engine)):
        case = Case("size", version, "community", gds, "neo4j://localhost:7687", engine, edges=edges)
        line = squash(doctor_store_line(case))
        assert f"PPR engine: {engine} (neo4j.ppr_engine=auto): auto runs " in line
        assert f"the namespace has {edges:,} graph edges" in line and f"{AUTO_LOCAL_MAX_EDGES:,}" in line
    forced = Case(
        "forced", version, "community", gds, "neo4j://localhost:7687", gds_engine, {"ppr_engine": "gds"}, 10
    )
    line = doctor_store_line(forced)
    assert f"PPR engine: {gds_engine} (neo4j.ppr_engine=gds): " in line and "graph edges" not in line


def test_the_readme_shows_what_doctor_prints() -> None:
    readme = squash(AURA_DOC.read_text(encoding="utf-8"))
    for case in CASES:
        assert squash(doctor_store_line(case)) in readme, (
            f"docs/aura.md's doctor output for {case.title!r} is stale: run tests/support/doctor_examples.py"
        )
    assert re.search(r"hipporag-neo4j aura sessions list", readme)


def test_aura_is_told_apart_by_its_version_or_its_uri() -> None:
    from hipporag_neo4j.stores.neo4j.capabilities import decide, is_aura

    assert is_aura("5.27-aura") and is_aura("2025.10.0", "neo4j+s://abcd1234.databases.neo4j.io:7687")
    assert not is_aura("2025.10.0", "neo4j://localhost:7687") and not is_aura("5.26.0")
    assert not is_aura("2025.10.0", "neo4j://databases.neo4j.io.example.com")
    by_uri = decide("2025.10.0", "enterprise", None, None, uri="neo4j+s://abcd1234.databases.neo4j.io")
    assert by_uri.ppr_engine == "local" and "this Aura instance has no GDS plugin" in by_uri.ppr_notes[0]
    self_managed = decide("2025.10.0", "enterprise", None, None, uri="neo4j://db.internal:7687")
    assert "Aura" not in " ".join(self_managed.notes)
