"""Same answers on both stores (issue 17, part 5): the same data indexed into the embedded store and into
a Neo4j namespace (``neo4j.vector_search = client``) gives every retrieval mode the same per-question top
10, ids in order, and the same graph (synonym edges included), with the ``local`` PPR engine and, where the
server has GDS, with the GDS engine the store picks there (``gds-weighted`` on GDS 2.17+, ``gds-linear``
on 2.13): a second store on the same namespace with ``neo4j.ppr_engine = gds``.

The demo corpus runs with the ``neo4j`` marker; MuSiQue (1,890 passages, HippoRAG's published OpenIE)
also needs ``slow``. Both use the suite's hash embedder at :data:`TEST_EMBEDDING_DIM`, the dimension every
Neo4j test shares; the MiniLM figures are ``benchmarks/bench_neo4j_vs_embedded.py``'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.demo.run import demo_file
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.neo4j import Neo4jStore
from tests.support.fakes import HashEmbedder
from tests.support.neo4j_support import (
    TEST_EMBEDDING_DIM,
    neo4j_server_or_skip,
    neo4j_settings_or_skip,
    server_has_gds,
)

MODES = ("hipporag2", "hipporag", "dense", "hybrid", "ensemble")
TOP_K = 10
GRAPH_COUNTS = ("passages", "phrases", "facts", "relation_edges", "synonym_edges", "mentions")


def drop_namespace(store: Neo4jStore) -> None:
    """Every node of the test's namespace, its metadata node included."""
    with store.runner.driver.session(database=store.database) as session:
        session.run("MATCH (n {namespace: $namespace}) DETACH DELETE n", namespace=store.namespace).consume()


@dataclass
class Stores:
    """The embedded memory, and Neo4j memories on one namespace by PPR engine (``local``, and the GDS one
    where the server has GDS); ``neo4j`` (the local engine's) is the one that indexes."""

    embedded: HippoRAG
    engines: dict[str, HippoRAG]

    @property
    def neo4j(self) -> HippoRAG:
        return self.engines["local"]


@pytest.fixture
def both_stores(tmp_path: Path) -> Iterator[Stores]:
    """Embedded and Neo4j memories with one hash embedder; the Neo4j namespace is dropped afterwards."""
    n4j = neo4j_settings_or_skip(ppr_engine="local", vector_search="client")
    embedder = HashEmbedder(TEST_EMBEDDING_DIM)
    base: dict[str, Any] = {"llm": {"model": None}}
    embedded = HippoRAG(
        load_settings(
            {**base, "store": {"backend": "embedded", "path": str(tmp_path / "kb")}}, env_file=None
        ),
        embedder=embedder,
    )
    variants = [n4j]
    if server_has_gds(neo4j_server_or_skip()):
        variants.append(n4j.model_copy(update={"ppr_engine": "gds"}))
    engines: dict[str, HippoRAG] = {}
    for settings in variants:
        store = Neo4jStore(settings)
        memory = HippoRAG(
            load_settings(
                {**base, "store": {"backend": "neo4j"}, "neo4j": settings.model_dump()}, env_file=None
            ),
            store=store,
            embedder=embedder,
        )
        engines[store.capabilities().ppr_engine] = memory
    try:
        yield Stores(embedded, engines)
    finally:
        embedded.close()
        try:
            drop_namespace(engines["local"].store)  # type: ignore[arg-type]
        finally:
            for memory in engines.values():
                memory.close()


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


def engine_differences(stores: Stores, questions: list[str]) -> dict[str, list[str]]:
    """Per PPR engine, the questions whose top 10 differs from the embedded store's (every mode)."""
    return {name: differences(stores.embedded, memory, questions) for name, memory in stores.engines.items()}


def graph_counts(memory: HippoRAG) -> dict[str, int]:
    stats = memory.stats()
    return {name: getattr(stats, name) for name in GRAPH_COUNTS}


def index_both(stores: Stores, openie: Path) -> None:
    for memory in (stores.embedded, stores.neo4j):
        report = memory.index_openie(openie)
        assert not report.failed
    assert graph_counts(stores.neo4j) == graph_counts(stores.embedded)


def no_differences(stores: Stores) -> dict[str, list[str]]:
    return {name: [] for name in stores.engines}


@pytest.mark.neo4j
def test_every_mode_gives_the_embedded_stores_top_10_on_the_demo(both_stores: Stores) -> None:
    stores = both_stores
    index_both(stores, demo_file("openie_demo.json"))
    questions = [q["question"] for q in json.loads(demo_file("questions.json").read_text(encoding="utf-8"))]
    assert engine_differences(stores, questions) == no_differences(stores)
    # a write moves the graph version: the next query reads the new graph on both stores alike (and the
    # GDS engine re-projects)
    extra = {"id": "extra-passage", "text": "Helena Várkonyi studies Alzheimer's disease at Stanford."}
    for memory in (stores.embedded, stores.neo4j):
        memory.index([extra["text"]])
    assert graph_counts(stores.neo4j) == graph_counts(stores.embedded)
    assert engine_differences(stores, questions[:3]) == no_differences(stores)


@pytest.mark.neo4j
@pytest.mark.slow
def test_every_mode_gives_the_embedded_stores_top_10_on_musique(
    both_stores: Stores, musique_dir: Path
) -> None:
    stores = both_stores
    index_both(stores, musique_dir / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json")
    records = json.loads((musique_dir / "musique_dev70.json").read_text(encoding="utf-8"))
    assert engine_differences(stores, [r["question"] for r in records[:30]]) == no_differences(stores)
