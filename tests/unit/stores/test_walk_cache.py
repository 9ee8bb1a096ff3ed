"""The in-process engine's cache of HippoRAG 2 walk results (``GraphSnapshot.passage_walk_ppr``): a repeated
question is served from it, and it holds at most ``retrieval.ppr_cache_mib`` of vectors, whatever the
graph's size (at 1.4M nodes one result is 11 MB: a cache counted in entries held gigabytes)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.sparse as sp

from hipporag_neo4j.settings import RetrievalSettings
from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.memory.graph import GraphSnapshot, PhraseIndex
from hipporag_neo4j.stores.memory.strings import StringTable

pytestmark = pytest.mark.unit

N_PHRASES, N_PASSAGES = 6, 3  # a walk result is 9 float64 values: 72 bytes


def snapshot() -> GraphSnapshot:
    ids = [f"phrase-{i}" for i in range(N_PHRASES)]
    ring = sp.coo_matrix(
        (np.ones(N_PHRASES), (np.arange(N_PHRASES), (np.arange(N_PHRASES) + 1) % N_PHRASES)),
        shape=(N_PHRASES, N_PHRASES),
    )
    adjacency = sp.csr_matrix(ring + ring.T)
    mentions = sp.csr_matrix(
        (np.ones(N_PHRASES), (np.arange(N_PHRASES) // 2, np.arange(N_PHRASES))), shape=(N_PASSAGES, N_PHRASES)
    )
    phrases = PhraseIndex(
        StringTable.of(ids, searchable=True),
        StringTable.of(ids),
        np.eye(N_PHRASES, 4, dtype=np.float32),
    )
    return GraphSnapshot.derived(
        phrases,
        StringTable.of([f"passage-{i}" for i in range(N_PASSAGES)], searchable=True),
        mentions,
        np.ones(N_PHRASES, dtype=np.int32),
        adjacency,
        N_PHRASES,
        0,
    )


def reset(seed: int) -> np.ndarray:
    vector = np.zeros(N_PHRASES + N_PASSAGES)
    vector[seed] = 1.0
    return vector


def test_a_repeated_question_is_served_from_the_cache() -> None:
    graph, lock = snapshot(), threading.Lock()
    walk = WalkParams(0.5, 100, 1e-10)
    first = graph.passage_walk_ppr(lock, reset(0), walk)
    assert len(graph.ppr_cache) == 1
    assert graph.passage_walk_ppr(lock, reset(0), walk) is first


def test_the_cache_holds_at_most_its_bytes_dropping_the_least_recently_used() -> None:
    graph, lock = snapshot(), threading.Lock()
    walk = WalkParams(0.5, 100, 1e-10, cache_bytes=2 * (N_PHRASES + N_PASSAGES) * 8)  # two results
    first = graph.passage_walk_ppr(lock, reset(0), walk)
    graph.passage_walk_ppr(lock, reset(1), walk)
    assert graph.passage_walk_ppr(lock, reset(0), walk) is first  # now the most recently used
    graph.passage_walk_ppr(lock, reset(2), walk)
    assert len(graph.ppr_cache) == 2
    assert sum(v.nbytes for v in graph.ppr_cache.values()) <= walk.cache_bytes
    assert graph.passage_walk_ppr(lock, reset(0), walk) is first  # kept; reset(1)'s was dropped
    again = graph.passage_walk_ppr(lock, reset(1), walk)
    np.testing.assert_array_equal(again, graph.passage_walk_ppr(lock, reset(1), WalkParams(0.5, 100, 1e-10)))


def test_a_cache_of_zero_bytes_keeps_nothing_and_gives_the_same_scores() -> None:
    graph, lock = snapshot(), threading.Lock()
    off = WalkParams(0.5, 100, 1e-10, cache_bytes=0)
    first = graph.passage_walk_ppr(lock, reset(3), off)
    assert not graph.ppr_cache
    second = graph.passage_walk_ppr(lock, reset(3), off)
    assert second is not first
    np.testing.assert_array_equal(first, second)


def test_the_setting_reaches_the_walk_in_bytes() -> None:
    assert WalkParams.of(RetrievalSettings()).cache_bytes == 64 << 20
    assert WalkParams.of(RetrievalSettings(ppr_cache_mib=0)).cache_bytes == 0
    assert WalkParams.of(RetrievalSettings(ppr_cache_mib=0.5)).cache_bytes == 1 << 19
    with pytest.raises(ValueError, match="ppr_cache_mib"):
        RetrievalSettings(ppr_cache_mib=-1)
