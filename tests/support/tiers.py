"""The test tiers: each top folder of ``tests/`` is one, and names the marker its tests carry.

``tests/conftest.py`` adds the marker from the folder; ``tests/unit/test_tiers.py`` checks that no test
sits outside a tier folder and that none is left without a tier marker.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

#: tier folder -> the marker every test in it carries (on top of the marks it sets itself)
TIERS: dict[str, str] = {
    "unit": "unit",  # fast: no on-disk store, no model, no external service; folders mirror hipporag_neo4j/
    "integration": "integration",  # embedded store on disk, real models
    "neo4j": "neo4j",  # needs a live Neo4j server (skipped with the reason without one)
    "slow": "slow",  # data tests over ../shared/data (MuSiQue, HotpotQA)
    "e2e": "e2e",  # browser, wheel, README, notebook, the real local LLM
}

#: what a plain ``pytest`` (no path, no ``-m``) runs; ``make test`` runs every tier
FAST_TIERS = ("unit", "integration")

#: the markers that name a tier (the folders' and the finer ones tests set themselves)
TIER_MARKERS = frozenset(TIERS.values()) | {"browser", "llm_live", "aura"}

#: markers a unit test must not carry: they would put a slower test into ``-m "unit and not slow"``
NOT_UNIT = frozenset({"integration", "neo4j", "slow", "browser", "llm_live", "aura", "e2e"})

#: folders of tests/ that hold no tests
NOT_TESTS = ("support", "data", "cypher_lint")


def tier_of(path: Path) -> str | None:
    """The tier folder ``path`` (a file or folder under tests/) sits in, or None."""
    try:
        parts = Path(path).resolve().relative_to(TESTS).parts
    except ValueError:
        return None
    return parts[0] if parts and parts[0] in TIERS else None
