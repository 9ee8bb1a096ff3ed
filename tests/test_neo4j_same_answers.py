"""Same answers on both stores (issue 17, part 5): the same data indexed into the embedded store and into
a Neo4j namespace (``local`` PPR engine, ``neo4j.vector_search = client``) gives every retrieval mode the
same per-question top 10, ids in order, and the same graph (synonym edges included).

The demo corpus runs with the ``neo4j`` marker; MuSiQue (1,890 passages, HippoRAG's published OpenIE)
also needs ``slow``. Both use the suite's hash embedder at :data:`TEST_EMBEDDING_DIM`, the dimension every
Neo4j test shares; the MiniLM figures are ``benchmarks/bench_neo4j_vs_embedded.py``'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import HashEmbedder
from neo4j_support import TEST_EMBEDDING_DIM, neo4j_settings_or_skip

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.demo.run import demo_file
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.neo4j import Neo4jStore

MODES = ("hipporag2", "hipporag", "dense", "hybrid", "ensemble")
TOP_K = 10
GRAPH_COUNTS = ("passages", "phrases", "facts", "relation_edges", "synonym_edges", "mentions")


def drop_namespace(store: Neo4jStore) -> None:
    """Every node of the test's namespace, its metadata node included."""
    with store.runner.driver.session(database=store.database) as session:
        session.run("MATCH (n {namespace: $namespace}) DETACH DELETE n", namespace=store.namespace).consume()


@pytest.fixture
def both_stores(tmp_path: Path) -> Iterator[tuple[HippoRAG, HippoRAG]]:
    """(embedded, Neo4j) memories with one hash embedder; the Neo4j namespace is dropped afterwards."""
    n4j = neo4j_settings_or_skip(ppr_engine="local", vector_search="client")
    embedder = HashEmbedder(TEST_EMBEDDING_DIM)
    base: dict[str, Any] = {"llm": {"model": None}}
    embedded = HippoRAG(
        load_settings(
            {**base, "store": {"backend": "embedded", "path": str(tmp_path / "kb")}}, env_file=None
        ),
        embedder=embedder,
    )
    store = Neo4jStore(n4j)
    neo4j = HippoRAG(
        load_settings({**base, "store": {"backend": "neo4j"}, "neo4j": n4j.model_dump()}, env_file=None),
        store=store,
        embedder=embedder,
    )
    try:
        yield embedded, neo4j
    finally:
        embedded.close()
        try:
            drop_namespace(store)
        finally:
            neo4j.close()


def differences(embedded: HippoRAG, neo4j: HippoRAG, questions: list[str]) -> list[str]:
    found = []
    for mode in MODES:
        for question in questions:
            a = embedded.retrieve(question, mode=mode, top_k=TOP_K)  # type: ignore[arg-type]
            b = neo4j.retrieve(question, mode=mode, top_k=TOP_K)  # type: ignore[arg-type]
            ids_a = [p.passage.id for p in a.passages]
            ids_b = [p.passage.id for p in b.passages]
            if ids_a != ids_b:
                found.append(f"{mode} {question!r}: embedded {ids_a} neo4j {ids_b}")
    return found


def graph_counts(memory: HippoRAG) -> dict[str, int]:
    stats = memory.stats()
    return {name: getattr(stats, name) for name in GRAPH_COUNTS}


def index_both(embedded: HippoRAG, neo4j: HippoRAG, openie: Path) -> None:
    for memory in (embedded, neo4j):
        report = memory.index_openie(openie)
        assert not report.failed
    assert graph_counts(neo4j) == graph_counts(embedded)


@pytest.mark.neo4j
def test_every_mode_gives_the_embedded_stores_top_10_on_the_demo(
    both_stores: tuple[HippoRAG, HippoRAG],
) -> None:
    embedded, neo4j = both_stores
    index_both(embedded, neo4j, demo_file("openie_demo.json"))
    questions = [q["question"] for q in json.loads(demo_file("questions.json").read_text(encoding="utf-8"))]
    assert differences(embedded, neo4j, questions) == []
    # a write moves the graph version: the next query reads the new graph on both stores alike
    extra = {"id": "extra-passage", "text": "Helena Várkonyi studies Alzheimer's disease at Stanford."}
    for memory in (embedded, neo4j):
        memory.index([extra["text"]])
    assert graph_counts(neo4j) == graph_counts(embedded)
    assert differences(embedded, neo4j, questions[:3]) == []


@pytest.mark.neo4j
@pytest.mark.slow
def test_every_mode_gives_the_embedded_stores_top_10_on_musique(
    both_stores: tuple[HippoRAG, HippoRAG], musique_dir: Path
) -> None:
    embedded, neo4j = both_stores
    index_both(embedded, neo4j, musique_dir / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json")
    records = json.loads((musique_dir / "musique_dev70.json").read_text(encoding="utf-8"))
    assert differences(embedded, neo4j, [r["question"] for r in records[:30]]) == []
