"""hipporag2's title seeds (issue 28): a passage whose title is a phrase a query entity links to is seeded
with that phrase's weight, so the page of an entity the question names is not pushed below passages the
walk only reaches (docs/offline-quality.md)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from hipporag_neo4j.models import LinkedPhrase, Passage
from hipporag_neo4j.retrieval.hipporag2_walk import TITLE_CANDIDATES, named_passage_seeds, title_key
from hipporag_neo4j.settings import RetrievalSettings
from hipporag_neo4j.stores.base import PassageScore
from tests.support.pipeline_support import make_memory

pytestmark = pytest.mark.unit


class TitledStore:
    """The one store read named_passage_seeds makes: passages by id, with titles."""

    def __init__(self, titles: dict[str, str | None]) -> None:
        self.titles = titles
        self.asked: list[str] = []

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        self.asked = list(ids)
        return {i: Passage(id=i, text="...", title=self.titles[i]) for i in ids if i in self.titles}


def link(phrase: str, weight: float) -> LinkedPhrase:
    return LinkedPhrase(
        query_entity=phrase, phrase_id=f"ph-{phrase}", phrase=phrase, similarity=1.0, weight=weight
    )


def test_a_title_is_keyed_as_the_phrase_that_names_it() -> None:
    assert title_key("Twins (group)") == "twins"
    assert title_key("The Brisbane Institute") == "brisbane institute"
    assert title_key("the dandy warhols") == title_key("The Dandy Warhols") == "dandy warhols"
    assert title_key("Alexandria International Airport (Louisiana)") == "alexandria international airport"
    assert title_key("(group)") == "group"  # nothing but the parenthesis: kept
    assert title_key("Theodore Roosevelt") == "theodore roosevelt"  # "The" only as a word


def test_named_passages_get_their_phrases_weight() -> None:
    store = TitledStore({"p1": "Twins (group)", "p2": "Edison Chen", "p3": None, "p4": "Hong Kong"})
    dense = [PassageScore(p, 1.0 - i / 10) for i, p in enumerate(["p2", "p1", "p3", "p4"])]
    seeds = named_passage_seeds(store, dense, [link("twins", 0.25), link("hong kong", 0.01)])  # type: ignore[arg-type]
    assert seeds == {"p1": 0.25, "p4": 0.01}
    assert named_passage_seeds(store, dense, []) == {}  # type: ignore[arg-type]


def test_only_the_best_dense_candidates_are_read() -> None:
    titles: dict[str, str | None] = {f"p{i}": f"Town {i}" for i in range(TITLE_CANDIDATES + 10)}
    store = TitledStore(titles)
    dense = [PassageScore(f"p{i}", 1.0) for i in range(TITLE_CANDIDATES + 10)]
    seeds = named_passage_seeds(
        store, dense, [link(f"town {TITLE_CANDIDATES + 5}", 1.0), link("town 3", 0.5)]
    )  # type: ignore[arg-type]
    assert seeds == {"p3": 0.5}
    assert len(store.asked) == TITLE_CANDIDATES


def test_on_by_default_and_the_named_page_gains(tmp_path: Path) -> None:
    assert RetrievalSettings().title_seeds is True
    table = {
        "Kim grows tomatoes in Lisbon.": [["kim", "grows", "tomatoes"], ["kim", "grows in", "lisbon"]],
        "Lisbon is the capital of Portugal and Kim sells tomatoes there.": [
            ["lisbon", "is capital of", "portugal"],
            ["kim", "sells", "tomatoes"],
            ["kim", "sells in", "lisbon"],
        ],
    }
    first, second = table
    scores: dict[bool, dict[str, float]] = {}
    for on in (True, False):
        memory = make_memory(
            tmp_path / f"store-{on}", table, {"What does Kim grow?": ["Kim"]}, title_seeds=on
        )
        try:
            memory.index([{"id": "kim", "title": "Kim", "text": first}, {"id": "other", "text": second}])
            result = memory.retrieve("What does Kim grow?", mode="hipporag2", top_k=2)
            scores[on] = {p.passage.id: p.score for p in result.passages}
        finally:
            memory.close()
    assert next(iter(scores[True])) == "kim"
    # the page titled "Kim" gains against the passage that only mentions kim
    assert scores[True]["kim"] / scores[True]["other"] > scores[False]["kim"] / scores[False]["other"]
