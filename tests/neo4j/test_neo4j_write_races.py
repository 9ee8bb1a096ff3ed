"""Two writers racing on one Neo4j namespace with the same rows (phrases, facts, passages and their
MENTIONS / STATES edges, RELATION and SYNONYM edges) never store a row twice, whether the write statements
MERGE (as they do) or CREATE what they find missing behind the namespace's write lock (meta_bump_version;
measured in benchmarks/results/neo4j_write2_S_lts.md, not merged). Two stores (drivers of their own) write
overlapping batches at the same time; the namespace ends exactly as one serial write of the same batches
leaves another, and the creation counts of the two add up to what is stored. Live server.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord, SynonymEdge, WriteResult
from hipporag_neo4j.stores.neo4j import Neo4jStore
from tests.support.neo4j_support import (
    TEST_EMBEDDING_DIM,
    namespace_dump,
    neo4j_server_or_skip,
    neo4j_settings_or_skip,
    run_cypher,
)

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

PHRASES = 24
ROUNDS = 3


def vector(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(TEST_EMBEDDING_DIM).astype(np.float32)
    return np.asarray(v / np.linalg.norm(v), dtype=np.float32)


def phrase(i: int) -> PhraseRecord:
    return PhraseRecord(f"ph{i:02d}", f"phrase {i}", vector(i))


def fact(i: int, predicate: str) -> FactRecord:
    a, b = f"ph{i % PHRASES:02d}", f"ph{(i + 1) % PHRASES:02d}"
    return FactRecord(f"f{i:02d}-{predicate}", a, predicate, b, f"{a} {predicate} {b}", vector(1000 + i))


def batch(first: int, count: int) -> tuple[list[PhraseRecord], list[PassageRecord]]:
    """Passages ``first`` .. ``first + count - 1``, each mentioning three phrases and stating two facts
    (the second fact of a passage is also the first of the next: facts and RELATION pairs are shared);
    the phrases they name."""
    records = []
    for n in range(first, first + count):
        mentions = {f"ph{(n + k) % PHRASES:02d}": k + 1 for k in range(3)}
        facts = [fact(n, "precedes"), fact(n + 1, "precedes"), fact(n, "is near")]
        records.append(
            PassageRecord(Passage(id=f"p{n:02d}", text=f"passage {n}"), vector(2000 + n), mentions, facts)
        )
    named = sorted(
        {
            i
            for r in records
            for i in [*r.mentions, *(x for f in r.facts for x in (f.subject_id, f.object_id))]
        }
    )
    return [phrase(int(i[2:])) for i in named], records


#: overlapping batches: each writer's first batch shares passages, phrases and facts with the other's
BATCHES = ((0, 8), (4, 8), (8, 8), (12, 8))


def synonyms(batches: Sequence[tuple[int, int]]) -> list[SynonymEdge]:
    return [SynonymEdge(f"ph{a % PHRASES:02d}", f"ph{(a + 5) % PHRASES:02d}", 0.9) for a, _ in batches] + [
        SynonymEdge(f"ph{(a + 7) % PHRASES:02d}", f"ph{a % PHRASES:02d}", 0.85) for a, _ in batches
    ]


def open_store(namespace: str) -> Neo4jStore:
    store = Neo4jStore(
        neo4j_settings_or_skip(namespace=namespace, ppr_engine="local", vector_search="client")
    )
    store.open("race-model", TEST_EMBEDDING_DIM)
    return store


def write_all(
    store: Neo4jStore, batches: Sequence[tuple[int, int]], start: threading.Barrier | None
) -> list[Any]:
    if start is not None:
        start.wait()
    results: list[Any] = []
    for first, count in batches:
        phrases, records = batch(first, count)
        results.append(store.write_passages(phrases, records))
        results.append(store.write_synonyms(synonyms([(first, count)])))
    return results


def totals(results: Sequence[Any]) -> tuple[int, int, int, list[str]]:
    written = [r for r in results if isinstance(r, WriteResult)]
    synonyms_created = sum(r for r in results if isinstance(r, int))
    passages = [p for r in written for p in r.passages]
    return sum(r.phrases for r in written), sum(r.facts for r in written), synonyms_created, passages


def test_two_writers_racing_with_the_same_rows_store_each_once() -> None:
    server = neo4j_server_or_skip()
    serial_ns = neo4j_settings_or_skip().namespace
    serial = open_store(serial_ns)
    try:
        write_all(serial, BATCHES, None)
        write_all(serial, BATCHES, None)  # a re-run writes nothing more
    finally:
        serial.close()
    cypher: Callable[..., list[dict[str, Any]]] = lambda query, **params: run_cypher(server, query, **params)  # noqa: E731
    expected = namespace_dump(cypher, serial_ns)

    for round_ in range(ROUNDS):
        namespace = neo4j_settings_or_skip().namespace
        stores = [open_store(namespace), open_store(namespace)]
        start = threading.Barrier(2)
        try:
            with ThreadPoolExecutor(2) as pool:
                # the same batches in the same order on both: every row is raced for
                runs = [pool.submit(write_all, s, BATCHES, start) for s in stores]
                results = [r.result(timeout=300) for r in runs]
        finally:
            for s in stores:
                s.close()
        dump = namespace_dump(cypher, namespace)
        assert dump == expected, f"round {round_}: the raced namespace differs from the serial one"
        counts = run_cypher(
            server,
            "MATCH (n {namespace: $ns}) WITH count(CASE WHEN n:Phrase THEN 1 END) AS phrases, "
            "count(CASE WHEN n:Fact THEN 1 END) AS facts "
            "OPTIONAL MATCH (:Phrase {namespace: $ns})-[s:SYNONYM]->() "
            "RETURN phrases, facts, count(s) AS synonyms",
            ns=namespace,
        )[0]
        (p0, f0, s0, w0), (p1, f1, s1, w1) = totals(results[0]), totals(results[1])
        # each row created by exactly one of the two, each passage written by exactly one
        assert (p0 + p1, f0 + f1, s0 + s1) == (counts["phrases"], counts["facts"], counts["synonyms"])
        assert not set(w0) & set(w1) and sorted(w0 + w1) == sorted(
            {r.passage.id for b in BATCHES for r in batch(*b)[1]}
        )
