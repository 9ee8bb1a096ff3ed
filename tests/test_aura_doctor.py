"""``auto`` picks the engine each capability set allows, and ``doctor`` says which engine runs and why:
the GDS plugin present (gds-weighted, gds-linear), absent (local), Aura without the plugin (local, never a
session, and told how to start one), Aura with neo4j.ppr_engine=aura. Runs the real doctor code against
the fake driver; docs/aura.md (the README's Aura page) shows the same lines and must not drift from them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doctor_examples import CASES, Case, doctor_store_line

pytestmark = pytest.mark.unit

AURA_DOC = Path(__file__).resolve().parents[1] / "docs" / "aura.md"

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
    if case.engine != "local":
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
    auto = {(c.gds, c.uri.endswith(".databases.neo4j.io")): c.engine for c in CASES if not c.neo4j}
    assert auto[("2.17.0", False)] == "gds-weighted"  # self-managed with the plugin
    assert auto[("2.13.2", False)] == "gds-linear"  # Neo4j 5.26 LTS's GDS: unweighted sources only
    assert auto[(None, False)] == "local"  # self-managed without it
    assert auto[(None, True)] == "local"  # Aura without the plugin: no session unless asked for
    assert auto[("2.17.0", True)] == "gds-weighted"  # AuraDB Professional with the plugin, AuraDS


def test_the_readme_shows_what_doctor_prints() -> None:
    readme = squash(AURA_DOC.read_text(encoding="utf-8"))
    for case in CASES:
        assert squash(doctor_store_line(case)) in readme, (
            f"docs/aura.md's doctor output for {case.title!r} is stale: run tests/doctor_examples.py"
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
