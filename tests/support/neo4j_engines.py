"""The Aura tests' corpus, reference scores and emulated store (unit/stores/neo4j/test_neo4j_aura.py)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import PassageScore
from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.client_copy import ClientCopy
from hipporag_neo4j.stores.neo4j.engines import LocalPpr, PprEngine
from hipporag_neo4j.stores.neo4j.runner import CypherRunner
from tests.support import reference_ppr as reference
from tests.support.neo4j_emulation import FakeGraph, FakeServer
from tests.support.neo4j_fake import FakeDriver, server
from tests.support.reference_ppr import reference_ppr

NS = "kb"


DAMPING = 0.5


class Process:
    """One process talking to the emulated server: its driver, runner, copy and in-process engine."""

    def __init__(self, srv: FakeServer, engine: str) -> None:
        assert engine == "local", "the GDS engines run on the live servers (tests/neo4j/)"
        self.server = srv
        self.driver = srv.install(FakeDriver())
        self.runner = runner_for(self.driver)
        self.copy = ClientCopy(self.runner, NS)
        self.engine: PprEngine = LocalPpr(self.copy)


def corpus(seed: int = 7, n_phrases: int = 40, n_passages: int = 30) -> FakeGraph:
    """A namespace with relations, synonyms, mention counts, an isolated phrase (mentioned, no edge),
    and a neighbouring namespace whose phrases and passages must never show up."""
    rng = np.random.default_rng(seed)
    g = FakeGraph()
    for i in range(n_phrases):
        g.phrase(NS, f"ph{i:02d}", f"phrase {i:02d}")
    g.phrase(NS, "lonely", "lonely phrase")
    for j in range(n_passages):
        g.passage(NS, f"p{j:02d}")
        mentioned = sorted(rng.choice(n_phrases, size=int(rng.integers(2, 5)), replace=False))
        for i in mentioned:
            g.mention(NS, f"p{j:02d}", f"ph{i:02d}", int(rng.integers(1, 3)))
        for a, b in itertools.pairwise(mentioned):
            g.relation(NS, f"ph{a:02d}", f"ph{b:02d}", float(rng.integers(1, 4)))
    g.mention(NS, "p00", "lonely", 1)
    for _ in range(6):
        a, b = sorted(rng.choice(n_phrases, size=2, replace=False))
        g.synonym(NS, f"ph{a:02d}", f"ph{b:02d}", float(rng.uniform(0.8, 1.0)))
    for i in range(5):  # the neighbour: same ids, other namespace
        g.phrase("other", f"ph{i:02d}", f"other {i}")
        g.passage("other", f"p{i:02d}")
        g.mention("other", f"p{i:02d}", f"ph{i:02d}", 3)
        if i:
            g.relation("other", f"ph{i - 1:02d}", f"ph{i:02d}", 5.0)
    return g


def reference_scores(
    g: FakeGraph, seeds: dict[str, float], passage_seeds: dict[str, float] | None = None
) -> dict[tuple[str, str], float]:
    """PPR (igraph semantics, converged) over the namespace's phrases, plus its passages (MENTIONS
    weight 1) when ``passage_seeds`` is given; keys (label, id)."""

    def key(iid: int) -> tuple[str, str]:
        node = g.nodes[iid]
        return node.label, str(node.props["id"])

    nodes = [key(n.iid) for n in g.of("Phrase", NS)]
    if passage_seeds is not None:
        nodes += [key(n.iid) for n in g.of("Passage", NS)]
    edges = [(key(s), key(t), w) for s, t, w in g.phrase_edges(NS)]
    if passage_seeds is not None:
        mine = [(d, q) for (d, q) in g.mentions if g.nodes[d].namespace == g.nodes[q].namespace == NS]
        edges += [(key(d), key(q), 1.0) for (d, q) in mine]
    seeds_by_node = {("Phrase", k): w for k, w in seeds.items()}
    seeds_by_node.update({("Passage", k): w for k, w in (passage_seeds or {}).items()})
    return reference_ppr(nodes, edges, seeds_by_node, DAMPING)


def _mentions(g: FakeGraph) -> list[tuple[str, str, int]]:
    """The namespace's (passage id, phrase id, count) mentions."""
    return [
        (g.nodes[d].props["id"], g.nodes[q].props["id"], count)
        for (d, q), count in g.mentions.items()
        if g.nodes[d].namespace == g.nodes[q].namespace == NS
    ]


def reference_passage_scores(g: FakeGraph, seeds: dict[str, float], limit: int) -> list[tuple[str, float]]:
    scores = {node_id: s for (label, node_id), s in reference_scores(g, seeds).items() if label == "Phrase"}
    return reference.reference_passage_scores(scores, _mentions(g), limit)


def reference_passage_nodes(
    g: FakeGraph, phrase_seeds: dict[str, float], passage_seeds: dict[str, float], limit: int, explain: int
) -> list[PassageScore]:
    names = {n.props["id"]: n.props["name"] for n in g.of("Phrase", NS)}
    mentions = [(d, p) for d, p, _ in _mentions(g)]
    scores = reference_scores(g, phrase_seeds, passage_seeds)
    return reference.reference_passage_nodes(scores, names, mentions, limit, explain)


PHRASE_SEEDS = {"ph03": 0.5, "ph17": 0.3, "lonely": 0.2, "nope": 0.4}


PASSAGE_SEEDS = {"p04": 0.05, "p11": 0.02, "p29": 0.01, "missing": 0.03}


def store_on(
    srv: FakeServer, *, gds: str | None = "2.17.0", version: str = "2025.04.0", **kw: Any
) -> Neo4jStore:
    driver = server(FakeDriver(), version=version, gds=gds)
    if gds is not None:
        # these tests are about the GDS engines: auto would run a graph this small in process
        kw.setdefault("ppr_engine", "gds")
    meta = {"schema_version": 1, "embedding_model": "m", "embedding_dim": 3, "graph_version": 1}
    driver.on("meta_read", [meta])
    driver.on("schema_vector_index_dimensions", [])
    srv.install(driver)
    store = Neo4jStore(settings(**kw), driver=driver)  # type: ignore[arg-type]
    store.open("m", 3)
    return store


def runner_for(driver: FakeDriver) -> CypherRunner:
    return CypherRunner(
        driver,  # type: ignore[arg-type]
        "neo4j",
        batch_size=500,
        max_retries=3,
        sleep=lambda _: None,
        jitter=lambda: 0.0,
    )


def settings(**kw: Any) -> Neo4jSettings:
    return Neo4jSettings(uri="neo4j://localhost:7687", namespace=NS, **kw)
