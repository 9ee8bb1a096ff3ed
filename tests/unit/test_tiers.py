"""The tests are laid out by tier: every test file sits in a tier folder of tests/ (unit/, integration/,
neo4j/, slow/, e2e/), every collected test carries a tier marker (tests/conftest.py adds the folder's), no
unit test carries the marker of a slower tier (it would run in ``-m "unit and not slow"``), and no test
module imports another (shared helpers live in tests/support/)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.tiers import NOT_TESTS, NOT_UNIT, TESTS, TIER_MARKERS, TIERS, tier_of

pytestmark = pytest.mark.unit

TEST_FILES = sorted(p for p in TESTS.rglob("test_*.py") if p.relative_to(TESTS).parts[0] not in NOT_TESTS)


def test_every_test_file_sits_in_a_tier_folder() -> None:
    assert len(TEST_FILES) > 100
    outside = [str(p.relative_to(TESTS)) for p in TEST_FILES if tier_of(p) is None]
    assert not outside, f"test files outside the tier folders {sorted(TIERS)}: {outside}"
    loose = sorted(p.name for p in TESTS.glob("*.py") if p.name not in ("__init__.py", "conftest.py"))
    assert not loose, f"modules loose in tests/ (helpers go to tests/support/): {loose}"


def test_the_folder_gives_the_marker() -> None:
    for tier, marker in TIERS.items():
        assert tier_of(TESTS / tier / "test_x.py") == tier
        assert marker in TIER_MARKERS
    assert tier_of(TESTS / "support" / "fakes.py") is None
    assert tier_of(TESTS.parent / "hipporag_neo4j" / "api.py") is None


def test_every_collected_test_has_a_tier_marker(request: pytest.FixtureRequest) -> None:
    """Over the tests collected in this run (every tier under ``make test``)."""
    items = request.session.items
    assert items
    unmarked = [i.nodeid for i in items if not {m.name for m in i.iter_markers()} & TIER_MARKERS]
    assert not unmarked, f"tests without a tier marker: {unmarked}"
    wrong = []
    for item in items:
        tier, names = tier_of(Path(item.path)), {m.name for m in item.iter_markers()}
        if tier is not None and TIERS[tier] not in names:
            wrong.append(f"{item.nodeid}: not marked {TIERS[tier]}")
        if tier == "unit" and names & NOT_UNIT:
            wrong.append(f"{item.nodeid}: a unit test marked {sorted(names & NOT_UNIT)}")
        if tier not in (None, "unit") and "unit" in names:
            wrong.append(f"{item.nodeid}: marked unit outside tests/unit")
    assert not wrong, "\n".join(wrong)


def test_no_test_module_imports_another() -> None:
    """Test modules import helpers from tests.support, never another test module or a conftest."""
    bad = []
    for path in [*TEST_FILES, *TESTS.rglob("conftest.py"), *(TESTS / "support").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            for name in names:
                last = name.rsplit(".", 1)[-1]
                if (
                    last.startswith("test_")
                    or last == "conftest"
                    or (name.startswith("tests.") and not name.startswith("tests.support"))
                ):
                    bad.append(f"{path.relative_to(TESTS)}: imports {name}")
    assert not bad, "\n".join(bad)
