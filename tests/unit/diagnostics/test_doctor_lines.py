"""``doctor`` on Neo4j printed its store check as one line of over a thousand characters (issue 37 item
6): a check longer than ``doctor.WIDTH`` is broken after each "; " into indented lines, and the lines
joined again give the one line (what ``--json`` and docs/aura.md keep)."""

from __future__ import annotations

import pytest

from hipporag_neo4j.diagnostics import doctor
from tests.support.doctor_examples import CASES, doctor_store_lines

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("case", CASES, ids=[c.title for c in CASES])
def test_the_neo4j_store_check_prints_as_readable_lines(case: object) -> None:
    lines = doctor_store_lines(case)  # type: ignore[arg-type]
    assert len(lines) >= 3, lines
    assert all(len(line) <= doctor.WIDTH for line in lines), [len(line) for line in lines]
    assert lines[0].startswith("[   ok] store: Neo4j ") or lines[0].startswith("[ warn] store: Neo4j ")
    assert all(line.startswith(doctor.INDENT) and line.strip() for line in lines[1:])
    assert any(line.strip().startswith("PPR engine: ") for line in lines)


def test_a_short_check_stays_one_line_and_a_long_word_stays_whole() -> None:
    assert doctor.check_lines("[   ok] spacy: ", "spaCy pipeline 'en_core_web_sm' loads") == [
        "[   ok] spacy: spaCy pipeline 'en_core_web_sm' loads"
    ]
    url = "neo4j+s://" + "a" * 120 + ".databases.neo4j.io"
    lines = doctor.check_lines("[   ok] store: ", f"Neo4j 5.27 at {url}; GDS not installed")
    assert " ".join([lines[0], *(line.strip() for line in lines[1:])]) == (
        f"[   ok] store: Neo4j 5.27 at {url}; GDS not installed"
    )
    assert any(url in line for line in lines)
