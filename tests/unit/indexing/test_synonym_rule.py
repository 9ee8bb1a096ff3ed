"""Issue 37's synonym rule: phrases whose numbers differ are never synonyms, whatever their cosine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from hipporag_neo4j.common.text import normalize_phrase
from hipporag_neo4j.indexing.synonyms import may_be_synonyms, numbers, synonym_edges
from hipporag_neo4j.stores.base import PhraseHit, PhraseRecord

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("FH-1939", "FH-1940"),
        ("Ticket FH-1939", "ticket fh 1941"),
        ("2024-03-01", "2024-03-02"),
        ("SN 4471-2291", "SN 4471-2292"),
        ("seal kit SK-2210", "seal kit SK-2201"),
        ("Apollo 11", "Apollo 12"),
        ("Apollo 11", "Apollo"),  # a number on one side only
        # also "X" / "X + year": letting them join measured worse (tickets_synonyms.md, "Variant measured")
        ("Eurovision Song Contest", "Eurovision Song Contest 1991"),
        ("ticket fh 1939", "ticket fh 1940"),
        ("1990s", "1890s"),
        ("12 34", "1234"),  # the runs, not the digits: two numbers are not one
        # also names whose other words differ: leaving those to the cosine was measured and let back
        # mostly different dates (tickets_synonyms.md, "block only names that differ only in their numbers")
        ("june 15 1963", "4 april 1963"),
        ("2023 04 07 status", "2023 11 04"),
        ("2011 census", "2010 census"),
        ("2023 09 06", "2023 08 06"),
        ("1923", "1920"),
    ],
)
def test_names_with_different_numbers_are_never_synonyms(a: str, b: str) -> None:
    assert not may_be_synonyms(normalize_phrase(a), normalize_phrase(b))
    assert not may_be_synonyms(normalize_phrase(b), normalize_phrase(a))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Marie Curie", "marie curie"),
        ("Marie Curie", "Curie"),  # no numbers: the cosine decides, as before
        ("Route 66", "route 66"),
        ("Route 66", "Route 66 highway"),
        ("2024-03-01", "2024-3-1"),  # the same values: leading zeros do not count
        ("2024 03 01", "2024 3 1"),
        ("FH-1939", "ticket fh 1939"),
        ("٢٠٢٤", "2024"),  # decimal digits of any script, by value
    ],
)
def test_names_with_the_same_numbers_are_left_to_the_cosine(a: str, b: str) -> None:
    assert may_be_synonyms(normalize_phrase(a), normalize_phrase(b))


def test_numbers_are_the_digit_runs_in_order_by_value() -> None:
    assert numbers("ticket fh 1939") == ["1939"]
    assert numbers("2024 03 01") == ["2024", "3", "1"]
    assert numbers("route 66 and 1 000") == ["66", "1", "0"]
    assert numbers("marie curie") == []


class _NeighbourStore:
    """nearest_phrases answers every phrase with all the others at cosine 0.95 (an encoder for which
    every name looks alike): what is kept is what the rule lets through."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)

    def nearest_phrases(
        self, vectors: Any, top_k: int, min_similarity: float, exclude_ids: Sequence[str] | None = None
    ) -> list[list[PhraseHit]]:
        assert exclude_ids is not None
        return [
            [PhraseHit(name, name, 0.95, 1) for name in self.names if name != own][:top_k]
            for own in exclude_ids
        ]


NAMES = [
    "ticket fh 1939",
    "ticket fh 1940",
    "fh 1939",
    "marie curie",
    "curie",
    "route 66",
    "route 66 highway",
]


def _edges(same_numbers: bool) -> set[frozenset[str]]:
    store = _NeighbourStore(NAMES)
    records = [PhraseRecord(name, name, np.ones(4, dtype=np.float32) / 2) for name in NAMES]
    edges = synonym_edges(store, records, top_k=100, threshold=0.8, same_numbers=same_numbers)  # type: ignore[arg-type]
    return {frozenset((e.source_id, e.target_id)) for e in edges}


def test_synonym_edges_apply_the_rule_and_the_setting_turns_it_off() -> None:
    kept = _edges(same_numbers=True)
    assert kept == {
        frozenset(("ticket fh 1939", "fh 1939")),
        frozenset(("marie curie", "curie")),
        frozenset(("route 66", "route 66 highway")),
    }
    everything = _edges(same_numbers=False)
    assert len(everything) == len(NAMES) * (len(NAMES) - 1) // 2
    assert frozenset(("ticket fh 1939", "ticket fh 1940")) in everything


def test_the_setting_is_on_by_default_and_reaches_the_indexer() -> None:
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.settings import load_settings

    settings = load_settings({}, env_file=None)
    assert settings.retrieval.synonym_same_numbers is True
    off = load_settings({"retrieval": {"synonym_same_numbers": False}}, env_file=None)
    assert HippoRAG(off)._indexing_options().synonym_same_numbers is False
    assert HippoRAG(settings)._indexing_options().synonym_same_numbers is True
