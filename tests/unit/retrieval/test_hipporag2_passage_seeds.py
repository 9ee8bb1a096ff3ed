"""hipporag2's passage seeds: every passage in a store of at most ``passage_seed_top_n`` passages (HippoRAG
2's rule, unchanged), only the best n beyond, normalised over the best n + 1 the store returns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.retrieval.fusion import ScoreMap
from hipporag_neo4j.retrieval.hipporag2_walk import passage_seed_count, passage_seed_weights
from hipporag_neo4j.settings import RetrievalSettings
from hipporag_neo4j.stores.base import PassageScore
from tests.support.pipeline_support import make_memory

pytestmark = pytest.mark.unit

TABLE = {
    f"Passage {i} says that city {i} lies on river {i % 3} near town {i + 1}.": [
        [f"city {i}", "lies on", f"river {i % 3}"],
        [f"city {i}", "is near", f"town {i + 1}"],
    ]
    for i in range(12)
}
QUESTION = "Which city lies on river 1?"


def scores(*values: float) -> ScoreMap:
    return ScoreMap.of([PassageScore(f"p{i}", v) for i, v in enumerate(values)])


def min_max(scores: dict[str, float]) -> dict[str, float]:
    """Min-max over Python floats, as retrieval computed it before its one score type (ScoreMap)."""
    low, high = min(scores.values()), max(scores.values())
    if high <= low:
        return {k: (1.0 if high > 0 else 0.0) for k in scores}
    return {k: (v - low) / (high - low) for k, v in scores.items()}


def test_every_passage_is_seeded_up_to_the_threshold_and_the_best_n_beyond() -> None:
    assert RetrievalSettings().passage_seed_top_n == 2000  # above MuSiQue's 1,890 and HotpotQA's 994
    every = RetrievalSettings(passage_seed_top_n=None)
    assert passage_seed_count(every, 125_000) == 125_000
    top = RetrievalSettings(passage_seed_top_n=50)
    assert passage_seed_count(top, 49) == 49
    assert passage_seed_count(top, 50) == 50
    assert passage_seed_count(top, 51) == 50
    assert passage_seed_count(top, 125_000) == 50


def test_with_every_passage_the_weights_are_the_min_max_of_all_of_them() -> None:
    dense = scores(0.61, 0.5, 0.43, 0.2, -0.07)
    weights = passage_seed_weights(dense, 5, 0.05)
    expected = {k: v * 0.05 for k, v in min_max(dict(dense)).items() if v > 0}
    assert weights == expected  # bit for bit: HippoRAG 2's rule as before
    assert "p4" not in weights  # the lowest normalises to 0: not seeded
    assert list(weights) == ["p0", "p1", "p2", "p3"]


def test_the_best_n_are_normalised_over_the_n_plus_one_the_store_returned() -> None:
    # a store of 1,000 passages gives its best 4 (3 seeded + the floor)
    dense = scores(0.9, 0.7, 0.5, 0.4)
    weights = passage_seed_weights(dense, 3, 1.0)
    assert weights == pytest.approx({"p0": 1.0, "p1": 0.6, "p2": 0.2})
    assert min(weights.values()) > 0  # the weakest seed keeps a weight: the floor is the one after it
    # all equal: each scores 1 when positive, none when not
    assert passage_seed_weights(scores(0.3, 0.3, 0.3), 2, 0.05) == {"p0": 0.05, "p1": 0.05}
    assert passage_seed_weights(scores(-0.1, -0.1), 1, 0.05) == {}
    assert passage_seed_weights(ScoreMap.of([]), 3, 0.05) == {}


class Spy:
    """Wraps the dense_passage_scores of each view the store hands a query, to record the limit the
    retriever asks for."""

    def __init__(self, views: Any) -> None:
        self.views = views
        self.limits: list[int] = []

    def __call__(self) -> Any:
        view = self.views()
        inner = view.dense_passage_scores

        def dense(vector: Any, limit: int) -> list[PassageScore]:
            self.limits.append(limit)
            result: list[PassageScore] = inner(vector, limit)
            return result

        view.dense_passage_scores = dense
        return view


def retrieve(tmp_path: Path, name: str, **retrieval: object) -> tuple[Any, Spy]:
    memory = make_memory(tmp_path / name, TABLE, {QUESTION: ["river 1"]}, **retrieval)
    memory.index(list(TABLE))
    spy = Spy(memory.store.view)
    memory.store.view = spy  # type: ignore[method-assign]
    result = memory.retrieve(QUESTION, mode="hipporag2", top_k=3)
    memory.close()
    return result, spy


def test_a_small_store_ranks_as_with_every_passage_and_a_large_one_seeds_the_best_n(tmp_path: Path) -> None:
    every, every_spy = retrieve(tmp_path, "every", passage_seed_top_n=None)
    default, default_spy = retrieve(tmp_path, "default")  # 12 passages <= 2,000: every passage
    assert every_spy.limits == default_spy.limits == [12]
    assert [(p.passage.id, p.score) for p in default.passages] == [
        (p.passage.id, p.score) for p in every.passages
    ]
    seeded = every.passages[0].explanation.passage_seeds
    assert seeded == 11  # 12 passages, the lowest normalises to 0
    assert default.passages[0].explanation.passage_seeds == seeded

    top, top_spy = retrieve(tmp_path, "top", passage_seed_top_n=4)  # a "large" store: 12 > 4
    assert top_spy.limits == [5]  # the best 4 and the floor, not every passage
    assert top.passages[0].explanation.passage_seeds == 4  # the explanation says how many were seeded
    assert top.passages and all(p.explanation.graph_score is not None for p in top.passages)
