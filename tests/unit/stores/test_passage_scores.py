"""Passage scores and seeds as arrays (``stores.memory.scores``, and retrieval's ``ScoreMap`` over them or
over a plain list): the same values, bit for bit, as the lists and dicts of Python floats they replace on
the query path (the dict fusion below, as ``retrieval.fusion`` computed it, and ``passage_seed_weights``),
and a retriever that uses them ranks as one that does not."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from hipporag_neo4j.retrieval import fusion
from hipporag_neo4j.retrieval.fusion import ScoreMap
from hipporag_neo4j.retrieval.hipporag2_walk import passage_seed_weights
from hipporag_neo4j.stores.base import PassageScore
from hipporag_neo4j.stores.memory.scores import PassageScores, PassageSeeds, same_table
from hipporag_neo4j.stores.memory.strings import StringTable

pytestmark = pytest.mark.unit


# The fusion of Python floats in dicts keyed by id, as retrieval computed it before its one score type
# (ScoreMap): what the arrays must equal, bit for bit.
def min_max(scores: dict[str, float], floor: float | None = None) -> dict[str, float]:
    if not scores:
        return {}
    low = min(scores.values()) if floor is None else min(floor, *scores.values())
    high = max(scores.values())
    if high <= low:
        return {k: (1.0 if high > 0 else 0.0) for k in scores}
    return {k: (v - low) / (high - low) for k, v in scores.items()}


def mix(graph: dict[str, float], dense: dict[str, float], graph_weight: float) -> dict[str, float]:
    keys = set(graph) | set(dense)
    return {k: graph_weight * graph.get(k, 0.0) + (1.0 - graph_weight) * dense.get(k, 0.0) for k in keys}


def rank_fusion(graph: dict[str, float], dense: dict[str, float], graph_weight: float) -> dict[str, float]:
    def ranks(scores: dict[str, float]) -> dict[str, int]:
        ordered = sorted(scores, key=lambda k: (-scores[k], k))
        return {key: rank for rank, key in enumerate(ordered, start=1)}

    graph_ranks, dense_ranks = ranks(graph), ranks(dense)
    graph_missing, dense_missing = len(graph_ranks) + 1, len(dense_ranks) + 1
    return {
        key: graph_weight / (fusion.RRF_K + graph_ranks.get(key, graph_missing))
        + (1.0 - graph_weight) / (fusion.RRF_K + dense_ranks.get(key, dense_missing))
        for key in graph_ranks.keys() | dense_ranks.keys()
    }


def seed_weights(dense: list[PassageScore], seeded: int, weight: float) -> dict[str, float]:
    if seeded <= 0:
        return {}
    normalised = min_max({p.passage_id: p.score for p in dense})
    best = (p.passage_id for p in dense[:seeded])
    return {pid: normalised[pid] * weight for pid in best if normalised[pid] > 0}


def table(n: int) -> StringTable:
    return StringTable.of([f"passage-{i:04d}" for i in reversed(range(n))], searchable=True)


def array_scores(ids: StringTable, rng: np.random.Generator, k: int) -> PassageScores:
    """``k`` passages at random positions with float32 cosines (as the store computes them), best first
    with ties by position, and a few exact ties."""
    positions = rng.permutation(len(ids))[:k]
    values = rng.uniform(-0.2, 0.9, k).astype(np.float32).astype(np.float64)
    values[1::7] = values[0]  # ties
    order = np.lexsort((positions, -values))
    return PassageScores(ids, positions[order].astype(np.intp), values[order])


def as_list(scores: PassageScores) -> list[PassageScore]:
    ids = scores.table.take(scores.positions)
    return [PassageScore(pid, float(s)) for pid, s in zip(ids, scores.scores.tolist(), strict=True)]


@pytest.mark.parametrize("seed", range(5))
def test_array_scores_read_as_the_list_they_stand_for(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = table(300)
    scores = array_scores(ids, rng, 120)
    plain = as_list(scores)
    assert scores == plain and list(scores) == plain and len(scores) == 120
    assert scores[3] == plain[3] and scores[-1] == plain[-1]
    assert list(scores[:10]) == plain[:10]
    lookup = ScoreMap.of(scores)
    expected = {p.passage_id: p.score for p in plain}
    assert all(lookup[pid] == value for pid, value in expected.items())
    assert dict(lookup) == expected and len(lookup) == len(expected)
    assert (
        "passage-9999" not in lookup
        and lookup.get(ids[int(np.setdiff1d(range(300), scores.positions)[0])]) is None
    )
    wanted = [plain[5].passage_id, "passage-9999", plain[0].passage_id]
    assert scores.of(wanted) == {p: next(x for x in plain if x.passage_id == p) for p in wanted[::2]}
    for listed in (lookup, ScoreMap.of(plain)):  # a plain list: the same map, over a table of its ids
        assert dict(listed) == expected and listed.ids() == [p.passage_id for p in plain]
        assert listed.rows(wanted) == scores.of(wanted)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("seeded", [0, 1, 50, 120, 500])
def test_array_seeds_are_passage_seed_weights_bit_for_bit(seed: int, seeded: int) -> None:
    rng = np.random.default_rng(seed)
    scores = array_scores(table(300), rng, 120)
    seeds = passage_seed_weights(ScoreMap.of(scores), seeded, 0.05)
    expected = passage_seed_weights(ScoreMap.of(as_list(scores)), seeded, 0.05)
    assert isinstance(seeds, PassageSeeds)
    assert dict(seeds) == expected and list(seeds) == list(expected)  # same floats, same order
    assert dict(expected) == seed_weights(as_list(scores), seeded, 0.05)
    assert list(expected) == list(seed_weights(as_list(scores), seeded, 0.05))
    assert len(seeds) == len(expected)
    # title seeds added on top: a passage in both gets the sum (in the same order of additions)
    extra = {p.passage_id: 0.25 for p in as_list(scores)[::9]} | {"passage-9999": 1.0}
    summed = dict(expected)
    for pid, weight in extra.items():
        summed[pid] = summed.get(pid, 0.0) + weight
    del summed["passage-9999"]  # not in the table: no node to seed
    plus = seeds.plus(extra)
    assert dict(plus) == summed and len(plus) == len(summed)
    reset = np.zeros(400)
    plus.add_to(reset, 100)
    by_loop = np.zeros(400)
    for pid, weight in summed.items():
        position = plus.table.find(pid)
        assert position is not None
        by_loop[100 + position] += weight
    assert np.array_equal(reset, by_loop)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("weight", [0.5, 0.3])
def test_mixed_arrays_are_fusion_mix_of_min_max_bit_for_bit(seed: int, weight: float) -> None:
    rng = np.random.default_rng(seed)
    ids = table(200)
    graph = array_scores(ids, rng, 60)
    graph = PassageScores(ids, graph.positions, np.abs(graph.scores) + 1e-3)  # walk scores: positive
    dense = array_scores(ids, rng, 200 if seed % 2 else 150)
    floor = None if len(dense) == 200 else float(dense.scores.min())
    graph_raw = {p.passage_id: p.score for p in as_list(graph)}
    dense_raw = {p.passage_id: p.score for p in as_list(dense)}
    expected = mix(min_max(graph_raw, floor=0.0), min_max(dense_raw, floor), weight)
    for g, d in (
        (ScoreMap.of(graph), ScoreMap.of(dense)),  # the store's array scores: one table
        (ScoreMap.of(as_list(graph)), ScoreMap.of(as_list(dense))),  # plain lists: a table each
    ):
        mixed = fusion.mix(fusion.min_max(g, floor=0.0), fusion.min_max(d, floor), weight)
        assert dict(mixed) == expected
        for k in (1, 5, 10, 150, 500):
            assert mixed.top(k) == sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        assert fusion.floor_below(d, 200) == floor
        fused = fusion.rank_fusion(g, d, weight)
        assert dict(fused) == rank_fusion(graph_raw, dense_raw, weight)


def test_top_breaks_ties_by_id_as_sorted_does() -> None:
    ids = table(50)
    values = np.array([0.5] * 20 + [0.9, 0.1] * 15, dtype=np.float64)
    scores = ScoreMap(ids, np.arange(50, dtype=np.intp), values)
    items = dict(scores).items()
    for k in (1, 2, 3, 10, 21, 35, 50, 60):
        assert scores.top(k) == sorted(items, key=lambda kv: (-kv[1], kv[0]))[:k]


def test_seeds_over_another_table_take_the_lookup_by_id() -> None:
    ids = table(10)
    seeds = PassageSeeds(ids, np.array([3, 1], dtype=np.intp), np.array([0.5, 0.25]))
    assert same_table(seeds, ids) and not same_table(seeds, table(10)) and not same_table({}, ids)


def test_explained_scores_work_out_their_phrases_when_read_and_pickle_as_plain_scores() -> None:
    ids = table(5)
    asked: list[int] = []

    def explain(position: int) -> list[tuple[str, float]]:
        asked.append(position)
        return [(f"phrase {position}", 0.5)]

    scores = PassageScores(ids, np.array([4, 2], dtype=np.intp), np.array([0.75, 0.5]), explain)
    first = scores[0]
    assert asked == []
    assert first == PassageScore(ids[4], 0.75, [("phrase 4", 0.5)]) and asked == [4]
    assert pickle.loads(pickle.dumps(scores[1])) == PassageScore(ids[2], 0.5, [("phrase 2", 0.5)])
    assert scores.of([ids[2]])[ids[2]].top_phrases == [("phrase 2", 0.5)]
