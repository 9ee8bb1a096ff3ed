from __future__ import annotations

import pytest

from hipporag_neo4j.common.text import fold_accents, make_passage_id, normalize_phrase
from hipporag_neo4j.extraction.base import clean_entities, validate_triples

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Radio City", "radio city"),
        ("  PlanetRadiocity.com ", "planetradiocity com"),
        ("Alzheimer's", "alzheimer s"),
        ("毛泽东", "毛泽东"),
        ("习近平", "习近平"),
        ("Crème Brûlée", "crème brûlée"),
        ("Ｆｕｌｌ-width", "full width"),
        ("हिन्दी", "हिन्दी"),
        ("---", ""),
    ],
)
def test_normalize_phrase_keeps_every_script(raw: str, expected: str) -> None:
    assert normalize_phrase(raw) == expected


def test_distinct_non_ascii_names_stay_distinct() -> None:
    # the reference implementation maps both to "" and so merges them into one node
    assert normalize_phrase("毛泽东") != normalize_phrase("习近平")


def test_fold_accents() -> None:
    assert fold_accents("Crème Brûlée") == "creme brulee"


def test_passage_id_is_stable_and_content_based() -> None:
    assert make_passage_id("text", "T") == make_passage_id("text", "T")
    assert make_passage_id("text", "T") != make_passage_id("text", None)


def test_validate_triples_keeps_good_and_says_why_others_dropped() -> None:
    triples, dropped = validate_triples(
        [
            ["Radio City", "located in", "India"],
            ["Radio City", "located  in", "India"],  # duplicate after normalisation
            ["Radio City", "", "India"],
            ["only", "two"],
            ["a", 1, "b"],
            "not a list",
            ["München", "is in", "Bayern"],
        ]
    )
    assert [t.as_tuple() for t in triples] == [
        ("radio city", "located in", "india"),
        ("münchen", "is in", "bayern"),
    ]
    assert len(dropped) == 4
    assert any("empty" in d for d in dropped)
    assert any("3-item" in d for d in dropped)
    assert any("non-string" in d for d in dropped)


def test_validate_triples_rejects_non_list() -> None:
    triples, dropped = validate_triples({"triples": []})
    assert triples == [] and "not a list" in dropped[0]


def test_clean_entities() -> None:
    assert clean_entities(["A", " A ", "", 3, "B", "!!"]) == ["A", "B"]
    assert clean_entities("A") == []
