"""Issue 37 on its kind of corpus: the generated ticket archive (tests/data/tickets), indexed as a user
without an LLM indexes it (spaCy extraction, the real all-MiniLM-L6-v2), once with the synonym rule of
``retrieval.synonym_same_numbers`` off (the cosine alone decides, as before the issue) and once with the
default. Without the rule nearly every synonym edge joins two ticket numbers, dates or serial numbers."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.evaluation.loaders import load_corpus
from hipporag_neo4j.indexing.synonyms import may_be_synonyms, numbers
from hipporag_neo4j.settings import load_settings
from tests.support.fakes import FixedQueryNER

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

TICKETS = Path(__file__).resolve().parents[1] / "data" / "tickets" / "corpus.json"
PASSAGES = 120  # the first half of the archive: enough tickets, dates and serials to flood the graph


def _synonym_names(tmp: Path, minilm: Any, same_numbers: bool) -> list[tuple[str, str]]:
    settings = load_settings(
        {"store": {"path": str(tmp)}, "retrieval": {"synonym_same_numbers": same_numbers}}, env_file=None
    )
    memory = HippoRAG(settings, embedder=minilm, query_ner=FixedQueryNER({}))
    corpus = load_corpus(TICKETS)[:PASSAGES]
    report = memory.index([{"text": p.text, "title": p.title} for p in corpus])
    assert len(report.indexed) == PASSAGES and not report.failed
    assert memory.stats().synonym_edges == report.new_synonym_edges
    memory.close()
    conn = sqlite3.connect(tmp / "graph.sqlite")
    try:
        return conn.execute(
            "SELECT a.name, b.name FROM synonyms s JOIN phrases a ON a.key = s.source_key "
            "JOIN phrases b ON b.key = s.target_key"
        ).fetchall()
    finally:
        conn.close()


def test_the_rule_keeps_ticket_numbers_dates_and_serials_apart(tmp_path: Path, minilm: Any) -> None:
    before = _synonym_names(tmp_path / "off", minilm, same_numbers=False)
    after = _synonym_names(tmp_path / "on", minilm, same_numbers=True)
    joined_numbers = [(a, b) for a, b in before if not may_be_synonyms(a, b)]
    # the flood the issue reports: most edges join names whose numbers differ
    assert len(before) > 1000
    assert len(joined_numbers) > 0.9 * len(before)
    assert len(after) <= 0.1 * len(before)  # issue 37's target
    assert all(numbers(a) == numbers(b) for a, b in after)
    # the edges the rule keeps are the ones the cosine alone made between names with the same numbers
    assert set(map(frozenset, after)) <= set(map(frozenset, before))
    assert after, "names with the same numbers (or none) are still joined by their cosine"
