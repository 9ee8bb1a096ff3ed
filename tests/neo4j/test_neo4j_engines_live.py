"""The PPR engines and GDS projections of the Neo4j store on a real server (issue 34: what the emulated
server of ``tests/support/neo4j_emulation.py`` showed, shown where GDS and Neo4j really run).

Every engine (``gds-weighted``, ``gds-linear``, ``local``) is checked against an independent reference
(:mod:`hipporag_neo4j.graph.ppr` over the namespace's graph as raw Cypher reads it from the server) for
the three questions a store answers: phrase PPR, HippoRAG's passage scores, HippoRAG 2's Passage-node
ranking; then GDS's absolute tolerance and tiny seed weights, the projection catalog shared by several
processes (a projection made, dropped or left stale by another one meanwhile), the in-process engine
with writes committed between two statements of its read (READ COMMITTED, by another store), one
statement per ranking, ``close`` and ``neo4j.gds_top_nodes``.

The weighted GDS form needs GDS 2.17+ (the latest pair): its tests skip on GDS 2.13 (the LTS pair), where
the linear form and the in-process engine run. Each test leaves the server as it found it (its
namespaces dropped, with their projections; the user's own nodes and projections never touched).
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import (
    FactRecord,
    PassageRecord,
    PassageScore,
    PhraseRecord,
    SynonymEdge,
    WalkParams,
)
from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.client_copy import ClientCopy
from hipporag_neo4j.stores.neo4j.cypher import load_query
from hipporag_neo4j.stores.neo4j.engines import GdsPpr, LocalPpr, PprEngine, make_engine, read_graph_version
from hipporag_neo4j.stores.neo4j.engines.gds import MAX_ATTEMPTS
from hipporag_neo4j.stores.neo4j.projection import graph_name, graph_prefix, namespace_prefix
from tests.support.corpora import unit
from tests.support.live_driver import RecordingDriver, recorded_store
from tests.support.neo4j_support import (
    TEST_EMBEDDING_DIM,
    neo4j_server_or_skip,
    neo4j_settings_or_skip,
    run_cypher,
    server_has_gds,
)
from tests.support.reference_ppr import reference_passage_nodes, reference_passage_scores, reference_ppr

pytestmark = pytest.mark.neo4j

MODEL = "hash-embedder"
DIM = TEST_EMBEDDING_DIM
DAMPING = 0.5
ENGINES = ["gds-weighted", "gds-linear", "local"]
GDS_FORMS = ["gds-weighted", "gds-linear"]
EXACT = WalkParams(DAMPING, 200, 1e-12)
DEFAULTS = WalkParams(DAMPING, 100, 1e-8)  # the retrieval defaults

PHRASE_SEEDS = {"ph03": 0.5, "ph17": 0.3, "lonely": 0.2, "nope": 0.4}
PASSAGE_SEEDS = {"p04": 0.05, "p11": 0.02, "p29": 0.01, "missing": 0.03}
N_PASSAGES = 30
WEIGHTED_ONLY = "needs GDS 2.17+ (weighted source nodes); this server's GDS has only the linear form"

Server = tuple[str, str, str, str]


# --- a corpus written through the store ------------------------------------------------------------


@dataclass
class Corpus:
    phrases: dict[str, PhraseRecord]
    records: list[PassageRecord]
    synonyms: list[SynonymEdge]


def fact(fid: str, subject: str, predicate: str, obj: str) -> FactRecord:
    seed = int.from_bytes(fid.encode()[-6:], "big") % 100_000
    return FactRecord(fid, subject, predicate, obj, f"{subject} {predicate} {obj}", unit(20_000 + seed))


def passage(pid: str, mentions: dict[str, int], facts: list[FactRecord] | None = None) -> PassageRecord:
    seed = int.from_bytes(pid.encode()[-6:], "big") % 100_000
    return PassageRecord(Passage(id=pid, text=f"passage {pid}"), unit(200_000 + seed), mentions, facts or [])


def corpus(seed: int = 7, n_phrases: int = 40, n_passages: int = N_PASSAGES) -> Corpus:
    """Relations (weights 1 to 3: as many facts of the pair), synonyms, mention counts, a phrase
    mentioned without any edge (``lonely``) and one neither mentioned nor linked (``island``)."""
    rng = np.random.default_rng(seed)
    phrases = {
        f"ph{i:02d}": PhraseRecord(f"ph{i:02d}", f"phrase {i:02d}", unit(1000 + i)) for i in range(n_phrases)
    }
    phrases["lonely"] = PhraseRecord("lonely", "lonely phrase", unit(998))
    phrases["island"] = PhraseRecord("island", "island", unit(999))
    records = []
    for j in range(n_passages):
        mentioned = sorted(int(i) for i in rng.choice(n_phrases, size=int(rng.integers(2, 5)), replace=False))
        mentions = {f"ph{i:02d}": int(rng.integers(1, 3)) for i in mentioned}
        facts = [
            fact(f"f{j:02d}.{a}.{b}.{k}", f"ph{a:02d}", f"rel {k}", f"ph{b:02d}")
            for a, b in itertools.pairwise(mentioned)
            for k in range(int(rng.integers(1, 4)))
        ]
        if j == 0:
            mentions["lonely"] = 1
        records.append(passage(f"p{j:02d}", mentions, facts))
    synonyms = []
    for _ in range(6):
        a, b = sorted(int(i) for i in rng.choice(n_phrases, size=2, replace=False))
        synonyms.append(SynonymEdge(f"ph{a:02d}", f"ph{b:02d}", float(rng.uniform(0.8, 1.0))))
    return Corpus(phrases, records, synonyms)


def neighbour_corpus() -> Corpus:
    """The neighbouring namespace: the same ids, heavier mentions and edges; never to show up."""
    phrases = {f"ph{i:02d}": PhraseRecord(f"ph{i:02d}", f"other {i}", unit(3000 + i)) for i in range(5)}
    records = [
        passage(
            f"p{i:02d}",
            {f"ph{i:02d}": 3},
            [fact(f"o{i}.{k}", f"ph{i - 1:02d}", f"o {k}", f"ph{i:02d}") for k in range(5)] if i else [],
        )
        for i in range(5)
    ]
    return Corpus(phrases, records, [])


def write(store: Neo4jStore, c: Corpus) -> None:
    store.write_passages(list(c.phrases.values()), c.records)
    if c.synonyms:
        store.write_synonyms(c.synonyms)


# --- an independent reference, from the graph as the server holds it -----------------------------


def server_of(settings: Neo4jSettings) -> Server:
    return (settings.uri or "", settings.user, settings.password.get_secret_value(), settings.database)


@dataclass
class Graph:
    """The namespace's phrase graph, passages and mentions, read with raw Cypher."""

    phrases: dict[str, str]  # id -> name
    passages: list[str]
    edges: list[tuple[str, str, float]]  # RELATION (weight) and SYNONYM (score), no self-loop
    mentions: dict[tuple[str, str], int]  # (passage, phrase) -> count

    @classmethod
    def read(cls, settings: Neo4jSettings) -> Graph:
        server, ns = server_of(settings), settings.namespace
        phrases = run_cypher(
            server, "MATCH (p:Phrase {namespace: $ns}) RETURN p.id AS id, p.name AS name", ns=ns
        )
        passages = run_cypher(server, "MATCH (d:Passage {namespace: $ns}) RETURN d.id AS id", ns=ns)
        edges = run_cypher(
            server,
            "MATCH (a:Phrase {namespace: $ns})-[r:RELATION|SYNONYM]->(b:Phrase {namespace: $ns}) "
            "WHERE a <> b "
            "RETURN a.id AS s, b.id AS t, "
            "CASE type(r) WHEN 'RELATION' THEN toFloat(r.weight) ELSE toFloat(r.score) END AS w",
            ns=ns,
        )
        mentions = run_cypher(
            server,
            "MATCH (d:Passage {namespace: $ns})-[m:MENTIONS]->(p:Phrase {namespace: $ns}) "
            "RETURN d.id AS d, p.id AS p, m.count AS count",
            ns=ns,
        )
        return cls(
            {r["id"]: r["name"] for r in phrases},
            sorted(r["id"] for r in passages),
            [(r["s"], r["t"], float(r["w"])) for r in edges],
            {(r["d"], r["p"]): int(r["count"]) for r in mentions},
        )

    def scores(
        self, seeds: Mapping[str, float], passage_seeds: Mapping[str, float] | None = None
    ) -> dict[tuple[str, str], float]:
        """PPR (igraph semantics, converged) over the phrases, plus the passages (MENTIONS weight 1) when
        ``passage_seeds`` is given; keys (label, id)."""
        nodes = [("Phrase", p) for p in sorted(self.phrases)]
        if passage_seeds is not None:
            nodes += [("Passage", d) for d in self.passages]
        edges = [(("Phrase", s), ("Phrase", t), w) for s, t, w in self.edges]
        if passage_seeds is not None:
            edges += [(("Passage", d), ("Phrase", p), 1.0) for (d, p) in self.mentions]
        weights = {("Phrase", k): w for k, w in seeds.items()}
        weights.update({("Passage", k): w for k, w in (passage_seeds or {}).items()})
        return reference_ppr(nodes, edges, weights, DAMPING)

    def phrase_scores(self, seeds: Mapping[str, float]) -> dict[str, float]:
        return {node_id: s for (_, node_id), s in self.scores(seeds).items() if s > 0}

    def passage_scores(self, seeds: Mapping[str, float], limit: int) -> list[tuple[str, float]]:
        return self.aggregate(self.phrase_scores(seeds), limit)

    def aggregate(self, scores: Mapping[str, float], limit: int) -> list[tuple[str, float]]:
        mentions = [(d, p, count) for (d, p), count in self.mentions.items()]
        return reference_passage_scores(scores, mentions, limit)

    def passage_nodes(
        self, phrase_seeds: Mapping[str, float], passage_seeds: Mapping[str, float], limit: int, explain: int
    ) -> list[PassageScore]:
        scores = self.scores(phrase_seeds, passage_seeds)
        return reference_passage_nodes(scores, self.phrases, list(self.mentions), limit, explain)

    def cut(self, seeds: Mapping[str, float], top: int, limit: int) -> list[tuple[str, float]]:
        """HippoRAG's aggregation over the reference PPR's ``top`` best phrases (scores summing to 1 over
        all)."""
        ranked = sorted(self.phrase_scores(seeds).items(), key=lambda kv: -kv[1])
        assert ranked[top - 1][1] > ranked[top][1] + 1e-9  # no tie at the cut: the kept set is defined
        return self.aggregate(dict(ranked[:top]), limit)


# --- processes, stores and namespaces of one test --------------------------------------------------


class Process:
    """One process on the server: a store of its own (its driver records every statement), its
    projection catalogs and one engine built over them as the store builds it."""

    def __init__(self, settings: Neo4jSettings, engine: str) -> None:
        self.store, self.driver = recorded_store(settings, MODEL, DIM)
        self.namespace = settings.namespace
        caps = self.store.capabilities().ppr_engine
        self.engine: PprEngine
        if engine == "local":
            self.engine = LocalPpr(self.store.copy)
        else:
            if caps not in GDS_FORMS:
                self.close()
                pytest.skip("needs GDS on the server")
            if engine == "gds-weighted" and caps != "gds-weighted":
                self.close()
                pytest.skip(WEIGHTED_ONLY)
            weighted = engine == "gds-weighted"
            many_seeds = None if weighted else LocalPpr(self.store.copy)
            self.engine = GdsPpr(
                self.store.runner,
                self.store.projections,
                self.namespace,
                weighted=weighted,
                many_seeds=many_seeds,
            )
        self.driver.calls.clear()

    @property
    def copy(self) -> ClientCopy:
        return self.store.copy

    def version(self) -> int:
        return read_graph_version(self.store.runner, self.namespace)

    def names_run(self) -> list[str]:
        return [c.name for c in self.driver.calls]

    def close(self) -> None:
        self.store.close()
        self.driver.driver.close()


class Lab:
    """The stores, processes and namespaces of one test: all closed, every namespace dropped (with its
    projections) at the end."""

    def __init__(self) -> None:
        self.stores: list[Neo4jStore] = []
        self.processes: list[Process] = []
        self.drivers: list[RecordingDriver] = []
        self.namespaces: list[Neo4jSettings] = []

    def settings(self, **overrides: Any) -> Neo4jSettings:
        settings = neo4j_settings_or_skip(**overrides)
        self.namespaces.append(settings)
        return settings

    def store(self, settings: Neo4jSettings) -> Neo4jStore:
        store = Neo4jStore(settings)
        self.stores.append(store)
        store.open(MODEL, DIM)
        return store

    def recorded(self, settings: Neo4jSettings) -> tuple[Neo4jStore, RecordingDriver]:
        """A store whose driver records every statement (closed, with its driver, at the end)."""
        store, driver = recorded_store(settings, MODEL, DIM)
        self.drivers.append(driver)
        self.stores.append(store)
        return store, driver

    def process(self, settings: Neo4jSettings, engine: str) -> Process:
        process = Process(settings, engine)
        self.processes.append(process)
        return process

    def written(self, c: Corpus | None = None, **overrides: Any) -> Neo4jSettings:
        """A fresh namespace holding ``c`` (the default corpus)."""
        settings = self.settings(**overrides)
        store = Neo4jStore(settings)
        store.open(MODEL, DIM)
        write(store, c or corpus())
        store.close()
        return settings

    def close(self) -> None:
        for process in self.processes:
            with contextlib.suppress(Exception):
                process.close()
        for store in self.stores:
            with contextlib.suppress(Exception):
                store.close()
        for driver in self.drivers:
            driver.driver.close()
        for settings in self.namespaces:
            dropper = Neo4jStore(settings)
            dropper.open(MODEL, DIM)
            dropper.drop_namespace()


@pytest.fixture
def lab() -> Iterator[Lab]:
    made = Lab()
    yield made
    made.close()


@dataclass
class Shared:
    """The default corpus in one namespace and its neighbour in another, for the tests that only read."""

    settings: Neo4jSettings
    graph: Graph


@pytest.fixture(scope="module")
def shared() -> Iterator[Shared]:
    settings = neo4j_settings_or_skip()
    neighbour_settings = neo4j_settings_or_skip()
    stores = [Neo4jStore(settings), Neo4jStore(neighbour_settings)]
    for store, c in zip(stores, (corpus(), neighbour_corpus()), strict=True):
        store.open(MODEL, DIM)
        write(store, c)
    yield Shared(settings, Graph.read(settings))
    for store in stores:
        store.drop_namespace()


def projections_on_server(settings: Neo4jSettings) -> set[str]:
    rows = run_cypher(
        server_of(settings),
        "CALL gds.graph.list() YIELD graphName WHERE graphName STARTS WITH $prefix RETURN graphName",
        prefix=namespace_prefix(settings.database, settings.namespace),
    )
    return {str(r["graphName"]) for r in rows}


def needs_gds() -> None:
    """Skip on a server without the GDS plugin (CI's LTS run without GDS): the store refuses
    ``ppr_engine=gds`` there, before any engine is built."""
    if not server_has_gds(neo4j_server_or_skip()):
        pytest.skip("needs GDS on the server")


def gds_form(store: Neo4jStore) -> str:
    caps = store.capabilities().ppr_engine
    if caps not in GDS_FORMS:
        pytest.skip("needs GDS on the server")
    return caps.removeprefix("gds-")


def linear_engine(store: Neo4jStore, top_nodes: int | None = None) -> PprEngine:
    """The store's engine when the server's GDS has only the linear form (settings ``ppr_engine=gds``),
    else the linear form built as the store builds it (``make_engine``)."""
    if gds_form(store) == "linear":
        return store.ppr_engine()
    return make_engine(
        "gds-linear", store.runner, store.projections, store.namespace, store.copy, top_nodes=top_nodes
    )


# --- the three questions, every engine -----------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_phrase_ppr_matches_the_reference(shared: Shared, lab: Lab, engine: str) -> None:
    process = lab.process(shared.settings, engine)
    scores = process.engine.run(PHRASE_SEEDS, EXACT)
    reference = shared.graph.phrase_scores(PHRASE_SEEDS)
    assert scores.keys() == reference.keys()
    assert sum(scores.values()) == pytest.approx(1.0)
    for node_id, s in reference.items():
        assert scores[node_id] == pytest.approx(s, abs=1e-9)


@pytest.mark.parametrize("engine", ENGINES)
def test_passage_scores_match_the_reference(shared: Shared, lab: Lab, engine: str) -> None:
    process = lab.process(shared.settings, engine)
    found = process.engine.passage_scores(PHRASE_SEEDS, EXACT, limit=8, explain_phrases=2)
    expected = shared.graph.passage_scores(PHRASE_SEEDS, 8)
    assert [s.passage_id for s in found] == [p for p, _ in expected]
    for item, (_, score) in zip(found, expected, strict=True):
        assert item.score == pytest.approx(score, abs=1e-9)
        assert 1 <= len(item.top_phrases) <= 2
        assert item.top_phrases[0][1] >= item.top_phrases[-1][1]


@pytest.mark.parametrize("engine", ENGINES)
def test_passage_node_scores_match_the_reference(shared: Shared, lab: Lab, engine: str) -> None:
    process = lab.process(shared.settings, engine)
    found = process.engine.passage_node_scores(
        PHRASE_SEEDS, PASSAGE_SEEDS, EXACT, limit=10, explain_phrases=3
    )
    expected = shared.graph.passage_nodes(PHRASE_SEEDS, PASSAGE_SEEDS, 10, 3)
    assert [s.passage_id for s in found] == [s.passage_id for s in expected]
    for item, ref in zip(found, expected, strict=True):
        assert item.score == pytest.approx(ref.score, abs=1e-9)
        assert [n for n, _ in item.top_phrases] == [n for n, _ in ref.top_phrases]
        for (_, a), (_, b) in zip(item.top_phrases, ref.top_phrases, strict=True):
            assert a == pytest.approx(b, abs=1e-9)
    # never a node of the neighbouring namespace (same ids there): every phrase named is one of ours
    assert all(n in shared.graph.phrases.values() for s in found for n, _ in s.top_phrases)
    assert {s.passage_id for s in found} <= set(shared.graph.passages)


@pytest.mark.parametrize("engine", ENGINES)
def test_passage_nodes_with_only_passage_seeds_and_the_limits(shared: Shared, lab: Lab, engine: str) -> None:
    process = lab.process(shared.settings, engine)
    found = process.engine.passage_node_scores({}, {"p07": 1.0}, EXACT, 3, 0)
    assert found[0].passage_id == "p07" and len(found) == 3 and found[0].top_phrases == []
    assert process.engine.passage_node_scores({}, {}, EXACT, 3, 2) == []
    assert process.engine.passage_node_scores({"ph01": 1.0}, {}, EXACT, 0, 2) == []


# --- issue 9, item 1: GDS's absolute tolerance and tiny seed weights -----------------------------


def tiny(seeds: Mapping[str, float], scale: float) -> dict[str, float]:
    return {k: w * scale for k, w in seeds.items()}


@pytest.mark.parametrize("form", GDS_FORMS)
@pytest.mark.parametrize("scale", [1e-3, 1e-5])
def test_gds_is_accurate_for_tiny_seed_weights(shared: Shared, lab: Lab, form: str, scale: float) -> None:
    """Seeds of 1 / passage count are 1e-3 and less; GDS stops propagating from a node once its change
    is <= tolerance on the unnormalised scale, so unnormalised tiny biases lose accuracy: the seeds are
    sent summing to 1."""
    seeds = tiny(PHRASE_SEEDS, scale)
    process = lab.process(shared.settings, form)
    suffix = form.removeprefix("gds-")
    scores = process.engine.run(seeds, DEFAULTS)
    reference = {k[1]: v for k, v in shared.graph.scores(seeds).items()}
    assert max(abs(scores.get(k, 0.0) - v) for k, v in reference.items()) < 1e-6
    sent = process.driver.named(f"gds_ppr_{suffix}")[0].params["seeds"]
    assert sum(s["weight"] for s in sent) == pytest.approx(1.0)

    passage_seeds = tiny(PASSAGE_SEEDS, scale)
    nodes = process.engine.passage_node_scores(seeds, passage_seeds, DEFAULTS, limit=30, explain_phrases=0)
    expected = {s.passage_id: s.score for s in shared.graph.passage_nodes(seeds, passage_seeds, 30, 0)}
    assert nodes and max(abs(s.score - expected[s.passage_id]) for s in nodes) < 1e-6
    sent = process.driver.named(f"gds_passage_nodes_{suffix}")[0].params["seeds"]
    assert sum(s["weight"] for s in sent) == pytest.approx(1.0)


PAGERANK = """
UNWIND $seeds AS seed
MATCH (phrase:Phrase {namespace: $namespace, id: seed.id})
WITH collect([phrase, seed.weight]) AS found
CALL gds.pageRank.stream($graph_name, {
  sourceNodes: found, dampingFactor: $damping, maxIterations: $max_iterations, tolerance: $tolerance,
  concurrency: 1, relationshipWeightProperty: 'weight', logProgress: false
})
YIELD nodeId, score
RETURN gds.util.asNode(nodeId).id AS id, score
"""


def test_gds_itself_shows_why_normalisation_is_needed(shared: Shared, lab: Lab) -> None:
    """GDS's own PageRank on the engine's projection: raw tiny biases stop early, the same biases scaled
    to sum 1 do not (the issue's simulation: errors of 3e-4 at seeds ~1e-3 and 9e-3 at ~1e-5)."""
    process = lab.process(shared.settings, "gds-weighted")
    process.engine.run({"ph03": 1.0}, DEFAULTS)  # makes the projection
    projection = process.store.projections("phrases").current
    assert projection is not None
    found = {k: w for k, w in PHRASE_SEEDS.items() if k in shared.graph.phrases}
    bias = tiny(found, 1e-5)
    total = sum(bias.values())

    def pagerank(weights: dict[str, float], iterations: int, tolerance: float) -> np.ndarray:
        rows = run_cypher(
            server_of(shared.settings),
            PAGERANK,
            seeds=[{"id": k, "weight": w} for k, w in sorted(weights.items())],
            namespace=shared.settings.namespace,
            graph_name=projection.name,
            damping=DAMPING,
            max_iterations=iterations,
            tolerance=tolerance,
        )
        by_id = {r["id"]: float(r["score"]) for r in rows}
        return np.array([by_id.get(k, 0.0) for k in sorted(shared.graph.phrases)])

    exact = pagerank(bias, 5000, 0.0)
    exact /= exact.sum()
    raw = pagerank(bias, 100, 1e-8)
    scaled = pagerank({k: v / total for k, v in bias.items()}, 100, 1e-8)
    assert np.abs(raw / raw.sum() - exact).max() > 1e-4
    assert np.abs(scaled / scaled.sum() - exact).max() < 1e-6


def pagerank_calls(settings: Neo4jSettings, statement: str, params: dict[str, Any]) -> int:
    """How many times ``statement`` (a shipped one) calls its procedure with ``params``: the rows into
    its ProcedureCall operator, from the server's PROFILE of the statement."""
    import neo4j

    server = server_of(settings)
    with (
        neo4j.GraphDatabase.driver(server[0], auth=(server[1], server[2])) as driver,
        driver.session(database=server[3]) as session,
    ):
        summary = session.run("PROFILE " + load_query(statement).text, params).consume()
    calls: list[int] = []

    def walk(op: dict[str, Any]) -> None:
        if str(op.get("operatorType", "")).startswith("ProcedureCall"):
            calls.append(sum(int(child.get("rows", 0)) for child in op.get("children", [])))
        for child in op.get("children", []):
            walk(child)

    assert summary.profile is not None
    walk(summary.profile)
    assert len(calls) == 1, summary.profile
    return calls[0]


def test_linear_fallback_runs_one_gds_pagerank_per_seed_found(shared: Shared, lab: Lab) -> None:
    process = lab.process(shared.settings, "gds-linear")
    scores = process.engine.run(PHRASE_SEEDS, DEFAULTS)
    call = process.driver.named("gds_ppr_linear")[0]
    assert pagerank_calls(shared.settings, "gds_ppr_linear", call.params) == 3  # "nope" is no phrase here
    assert sum(scores.values()) == pytest.approx(1.0)
    process.engine.passage_node_scores(PHRASE_SEEDS, PASSAGE_SEEDS, DEFAULTS, 5, 2)
    call = process.driver.named("gds_passage_nodes_linear")[0]
    # 3 phrases + 3 passages ("missing" is no passage here)
    assert pagerank_calls(shared.settings, "gds_passage_nodes_linear", call.params) == 6


# --- issue 9, item 9: GDS and the in-process engine agree, isolated phrases included -------------


@pytest.mark.parametrize("form", GDS_FORMS)
def test_gds_equals_the_in_process_engine_after_normalisation_with_isolated_phrases(
    shared: Shared, lab: Lab, form: str
) -> None:
    """GDS keeps the mass of a node without edges where hipporag_neo4j.graph.ppr returns it to the reset
    vector; that only scales the solution, so the normalised scores are equal (dampingFactor is
    igraph's damping). ``island`` has no edge and no mention, ``lonely`` a mention and no edge."""
    seeds = {"island": 0.5, "lonely": 0.3, "ph03": 0.2}
    gds = lab.process(shared.settings, form).engine.run(seeds, WalkParams(DAMPING, 3000, 0.0))
    local = lab.process(shared.settings, "local").engine.run(seeds, WalkParams(DAMPING, 3000, 1e-15))
    assert gds.keys() == local.keys()
    assert max(abs(gds[k] - local[k]) for k in local) < 1e-12
    assert gds["island"] == pytest.approx(0.5)


# --- projections: names, kinds, versions ---------------------------------------------------------


def test_projection_names_follow_kind_and_version_and_older_ones_are_dropped(lab: Lab) -> None:
    settings = lab.written()
    process = lab.process(settings, "gds-linear")
    db, ns = settings.database, settings.namespace
    version = process.version()
    process.driver.calls.clear()
    catalog = process.store.projections("phrases")
    first = catalog.ensure(version)
    assert first.name == f"hipporag.{db}.{ns}.v{version}" == graph_name(db, ns, version)
    assert process.names_run() == ["gds_graph_info", "gds_project_phrase_graph", "gds_drop_stale_graphs"]
    assert all(c.access_mode == "WRITE" for c in process.driver.calls)  # GDS calls go to the leader
    process.driver.calls.clear()
    assert catalog.ensure(version) is first and process.driver.calls == []  # warm: no round trip

    passages = process.store.projections("passages").ensure(version)
    assert (
        passages.name == f"hipporag.{db}.{ns}.passages.v{version}" == graph_name(db, ns, version, "passages")
    )
    assert passages.node_count == first.node_count + N_PASSAGES
    assert projections_on_server(settings) == {first.name, passages.name}  # kinds never drop each other

    second = catalog.ensure(version + 1)
    assert second.name == f"hipporag.{db}.{ns}.v{version + 1}"
    drop = process.driver.named("gds_drop_stale_graphs")[-1].params
    assert drop == {"prefix": graph_prefix(db, ns), "version": version + 1}
    assert projections_on_server(settings) == {second.name, passages.name}
    assert catalog.projections_made == 2
    assert namespace_prefix(db, ns) == f"hipporag.{db}.{ns}."
    assert not graph_name(db, f"{ns}2", 1).startswith(graph_prefix(db, ns))


def test_a_projection_made_meanwhile_is_reused(lab: Lab) -> None:
    settings = lab.written()
    process = lab.process(settings, "gds-linear")
    other = lab.process(settings, "gds-linear")
    version = process.version()
    process.driver.calls.clear()
    other.store.projections("phrases").ensure(version)
    made = process.store.projections("phrases").ensure(version)  # finds it in the catalog
    assert "gds_project_phrase_graph" not in process.names_run()
    assert made.node_count == len(Graph.read(settings).phrases)

    # made by the other process between our look-up and our projection: ours fails, the catalog has it
    def project_there() -> None:
        other.store.projections("phrases").ensure(version + 1)

    ran = process.driver.after("gds_graph_info", project_there)
    again = process.store.projections("phrases").ensure(version + 1)
    assert ran == [1] and again.name == graph_name(settings.database, settings.namespace, version + 1)
    assert process.names_run()[-4:] == [
        "gds_graph_info",
        "gds_project_phrase_graph",  # failed: the graph exists
        "gds_graph_info",
        "gds_drop_stale_graphs",
    ]
    assert again.node_count == made.node_count and process.store.projections("phrases").projections_made == 0


def bump(writer: Neo4jStore, k: int = 0) -> None:
    """A write by another store: one passage mentioning ph01 and ph02 (a new graph version)."""
    writer.write_passages([], [passage(f"bump{k}", {"ph01": 1, "ph02": 1})])


def test_an_older_process_never_drops_a_newer_projection(lab: Lab) -> None:
    """Issue 9, item 3: process A read version v, process B version v + 1 (a write came in between). A
    projecting v must not drop v + 1, which B is using; B keeps its warm projection."""
    settings = lab.written()
    a, b = lab.process(settings, "gds-linear"), lab.process(settings, "gds-linear")
    writer = lab.store(settings)
    version = a.version()
    b_projection = b.store.projections("phrases").ensure(version + 1)
    a.store.projections("phrases").ensure(version)
    assert b_projection.name in projections_on_server(settings)  # the old rule dropped it here
    bump(writer)
    assert a.version() == version + 1
    made = b.store.projections("phrases").projections_made
    assert b.engine.run({"ph03": 1.0}, DEFAULTS)
    assert b.store.projections("phrases").projections_made == made  # no re-projection for B
    assert a.engine.run({"ph03": 1.0}, DEFAULTS)  # A moves on to v + 1 and drops v
    assert projections_on_server(settings) == {b_projection.name}


@pytest.mark.parametrize("form", GDS_FORMS)
def test_a_vanished_projection_is_looked_up_again(lab: Lab, form: str) -> None:
    settings = lab.written()
    process = lab.process(settings, form)
    server = server_of(settings)
    process.engine.run({"ph03": 1.0}, DEFAULTS)
    current = process.store.projections("phrases").current
    assert current is not None
    # dropped by another process (or gone with a server restart)
    run_cypher(server, "CALL gds.graph.drop($name) YIELD graphName RETURN graphName", name=current.name)
    scores = process.engine.run({"ph03": 1.0}, DEFAULTS)
    assert sum(scores.values()) == pytest.approx(1.0)
    assert len(process.driver.named("gds_graph_info")) == 2  # looked at the catalog again
    assert projections_on_server(settings) == {current.name}  # made again

    def drop_it() -> None:
        run_cypher(server, "CALL gds.graph.drop($name) YIELD graphName RETURN graphName", name=current.name)

    drop_it()
    ran = process.driver.after("gds_project_phrase_graph", drop_it, times=10)  # gone before every run
    process.driver.calls.clear()
    with pytest.raises(StoreError):
        process.engine.run({"ph03": 1.0}, DEFAULTS)  # bounded: gives up after a few looks
    assert len(process.driver.named(f"gds_ppr_{form.removeprefix('gds-')}")) == MAX_ATTEMPTS
    assert ran == list(range(1, MAX_ATTEMPTS))


# --- issue 9, item 7: empty projections and nodes deleted after projecting ------------------------


@pytest.mark.parametrize("form", GDS_FORMS)
def test_an_empty_namespace_gives_empty_results(lab: Lab, form: str) -> None:
    settings = lab.settings()
    process = lab.process(settings, form)
    version = process.version()
    process.driver.calls.clear()
    assert process.engine.run({"ph01": 1.0}, DEFAULTS) == {}
    assert process.engine.passage_scores({"ph01": 1.0}, DEFAULTS, 5, 2) == []
    assert process.engine.passage_node_scores({"ph01": 1.0}, {"p1": 1.0}, DEFAULTS, 5, 2) == []
    project = process.driver.named("gds_project_phrase_graph")[0]
    assert project.params["graph_name"] == graph_name(settings.database, settings.namespace, version)
    assert projections_on_server(settings) == set()  # the null projection was handled: no graph made


@pytest.mark.parametrize("form", GDS_FORMS)
def test_nodes_deleted_after_the_projection_are_left_out(lab: Lab, form: str) -> None:
    """Deleted by another store after this query read the graph version: its projection of that version
    still has them."""
    settings = lab.written()
    process = lab.process(settings, form)
    writer = lab.store(settings)
    graph = Graph.read(settings)
    mentioning = {p: {d for (d, q) in graph.mentions if q == p} for p in graph.phrases}
    seed, neighbour = next((s, t) for s, t, _ in graph.edges if mentioning[s] - mentioning[t])
    process.engine.run({seed: 1.0}, DEFAULTS)  # projections of this version made
    process.engine.passage_node_scores({seed: 1.0}, {"p05": 1.0}, DEFAULTS, 40, 3)

    def delete_neighbour() -> None:
        report = writer.delete_passages(sorted(mentioning[neighbour]))
        assert report.phrases_removed >= 1

    ran = process.driver.after("meta_graph_version", delete_neighbour)
    scores = process.engine.run({seed: 1.0}, DEFAULTS)
    assert ran == [1] and neighbour not in Graph.read(settings).phrases
    assert None not in scores and "None" not in scores and neighbour not in scores
    assert set(scores) <= set(Graph.read(settings).phrases)
    assert sum(scores.values()) == pytest.approx(1.0)

    left = Graph.read(settings).passages  # sorted; p04 and p05 unless the delete above took one
    gone, other = ("p04", "p05") if {"p04", "p05"} <= set(left) else (left[0], left[1])
    process.engine.passage_node_scores({seed: 1.0}, {other: 1.0}, DEFAULTS, 40, 3)  # this version's

    def delete_passage() -> None:
        writer.delete_passages([gone])

    ran = process.driver.after("meta_graph_version", delete_passage)
    found = process.engine.passage_node_scores({seed: 1.0}, {gone: 1.0, other: 1.0}, DEFAULTS, 40, 3)
    assert ran == [1] and gone not in Graph.read(settings).passages
    assert all(s.passage_id != gone for s in found) and found


@pytest.mark.parametrize("form", GDS_FORMS)
def test_a_graph_without_edges_gives_the_reset_vector(lab: Lab, form: str) -> None:
    phrases = {i: PhraseRecord(i, i, unit(ord(i))) for i in ("a", "b", "c")}
    settings = lab.written(Corpus(phrases, [passage("p1", {}), passage("p2", {})], []))
    process = lab.process(settings, form)
    assert process.engine.run({"a": 3.0, "b": 1.0, "gone": 1.0, "zero": 0.0}, DEFAULTS) == (
        pytest.approx({"a": 0.75, "b": 0.25})
    )
    ranked = process.engine.passage_node_scores({"a": 1.0}, {"p2": 2.0, "p1": 1.0}, DEFAULTS, 5, 2)
    assert [(s.passage_id, round(s.score, 6)) for s in ranked] == [("p2", 0.5), ("p1", 0.25)]
    assert not any(n.startswith("gds_ppr") or n.startswith("gds_passage") for n in process.names_run())


# --- issue 9, item 2: the in-process engine at READ COMMITTED -------------------------------------


def commit_after(process: Process, writer: Neo4jStore, statement: str, times: int = 1) -> list[int]:
    """After each run of ``statement`` (the copy's read of the graph), another store commits: a new
    phrase, an edge from ph03 to it (a fact), a version bump. Returns the versions committed."""
    committed: list[int] = []

    def commit() -> None:
        k = len(committed)
        new = PhraseRecord(f"new{k}", f"new {k}", unit(7000 + k))
        link = fact(f"fnew{k}", "ph03", "links", new.id)
        writer.write_passages([new], [passage(f"pnew{k}", {"ph03": 1, new.id: 1}, [link])])
        committed.append(read_graph_version(writer.runner, writer.namespace))

    process.driver.after(statement, commit, times=times)
    return committed


def test_the_local_engine_survives_a_write_committed_between_its_reads(lab: Lab) -> None:
    settings = lab.written()
    process = lab.process(settings, "local")
    writer = lab.store(settings)
    before = process.version()
    committed = commit_after(process, writer, "client_passage_ids")  # between mentions and edges
    scores = process.engine.run({"ph03": 1.0}, EXACT)
    assert committed == [before + 1]
    graph = process.copy.reading().part("graph")  # read again whole, at the version it now holds
    assert graph.version == before + 1 and graph.graph is not None
    assert graph.graph.phrases.position("new0") is not None
    assert scores == pytest.approx(Graph.read(settings).phrase_scores({"ph03": 1.0}))
    assert process.copy.reads["graph"] == 2


def test_the_local_engine_uses_a_read_once_when_writers_keep_committing(lab: Lab) -> None:
    settings = lab.written()
    process = lab.process(settings, "local")
    writer = lab.store(settings)
    committed = commit_after(process, writer, "client_edges", times=10)
    scores = process.engine.run({"ph03": 1.0}, EXACT)
    assert sum(scores.values()) == pytest.approx(1.0)
    assert (
        len(committed) == 3 and process.copy.reads["graph"] == 3
    )  # a read that saw a commit is used, never kept
    assert process.copy._view is None or process.copy._view.graph is None


def test_the_local_engine_reads_the_graph_once_per_version(lab: Lab) -> None:
    settings = lab.written()
    process = lab.process(settings, "local")
    writer = lab.store(settings)
    process.engine.run({"ph03": 1.0}, DEFAULTS)
    process.engine.run({"ph07": 1.0}, DEFAULTS)
    process.engine.passage_node_scores({"ph07": 1.0}, {}, DEFAULTS, 3, 1)
    process.engine.passage_node_scores({"ph03": 1.0}, {}, DEFAULTS, 3, 1)
    assert process.copy.reads["graph"] == 1  # HippoRAG 2's walk graph is built from the same read
    bump(writer)
    process.engine.run({"ph03": 1.0}, DEFAULTS)
    assert process.copy.reads["graph"] == 2
    assert process.engine.run({"nope": 1.0}, DEFAULTS) == {}
    graph_reads = process.driver.named("client_edges")
    assert len({c.tx for c in graph_reads}) == 2  # each read in one transaction with its version reads
    states = {c.tx for c in process.driver.named("client_state")}
    assert {c.tx for c in graph_reads} <= states


# --- issue 9, item 10: one statement per ranking on GDS; projections dropped on close -------------


def test_passage_rankings_on_gds_are_one_statement_each(shared: Shared, lab: Lab) -> None:
    needs_gds()
    store, driver = lab.recorded(shared.settings.model_copy(update={"ppr_engine": "gds"}))
    form = gds_form(store)
    store.view().graph_passage_scores({"ph03": 1.0}, DEFAULTS, 5, 2)  # projects
    driver.calls.clear()
    found = store.view().graph_passage_scores(PHRASE_SEEDS, EXACT, 5, 2)
    # the view's one version check, then the ranking on the warm projection of that version
    assert [c.name for c in driver.calls] == ["client_state", f"gds_passage_scores_{form}"]
    assert "scores" not in driver.calls[-1].params  # PPR scores never leave the server
    expected = shared.graph.passage_scores(PHRASE_SEEDS, 5)
    assert [(s.passage_id, pytest.approx(s.score)) for s in found] == expected
    driver.calls.clear()
    store.view().passage_node_scores(PHRASE_SEEDS, PASSAGE_SEEDS, DEFAULTS, 5, 2)
    names = [c.name for c in driver.calls]
    assert names[-1] == f"gds_passage_nodes_{form}"
    assert "gds_project_passage_graph" in names


def test_close_drops_the_projections_this_process_made_only(lab: Lab) -> None:
    needs_gds()
    settings = lab.written(ppr_engine="gds")
    ours = lab.store(settings)
    gds_form(ours)
    ours.view().graph_passage_scores({"ph03": 1.0}, DEFAULTS, 5, 2)
    ours.view().passage_node_scores({"ph03": 1.0}, {}, DEFAULTS, 5, 2)
    theirs = lab.store(settings)
    theirs.view().graph_passage_scores({"ph03": 1.0}, DEFAULTS, 5, 2)  # reuses ours
    held = projections_on_server(settings)
    assert len(held) == 2
    memory = theirs.gds_projections()
    assert [m["graph_name"] for m in memory] == sorted(held) and memory[0]["memory_usage"]
    theirs.close()
    assert projections_on_server(settings) == held  # it made none
    ours.close()
    assert projections_on_server(settings) == set()
    assert ours.runner is not None  # a closed store can be used again (reconnects lazily)


class Proxy:
    """A TCP forwarder to the server: once closed, whoever connected through it finds the server
    unreachable (its connections cut, new ones refused)."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := a.recv(65536):
                b.sendall(data)
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        for s in (self.listener, *self.sockets):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def test_closing_survives_an_unreachable_server(lab: Lab) -> None:
    needs_gds()
    settings = lab.written(ppr_engine="gds")
    host, port = (settings.uri or "").removeprefix("bolt://").removeprefix("neo4j://").rsplit(":", 1)
    proxy = Proxy(host, int(port))
    try:
        store = Neo4jStore(settings.model_copy(update={"uri": f"bolt://127.0.0.1:{proxy.port}"}))
        store.open(MODEL, DIM)
        gds_form(store)
        store.view().graph_passage_scores({"ph03": 1.0}, DEFAULTS, 5, 2)
        held = projections_on_server(settings)
        assert held
        store.runner.max_retries = 0
        proxy.close()
        store.close()  # no exception
        assert projections_on_server(settings) == held  # it could not drop them (the clean-up does)
    finally:
        proxy.close()


def test_the_linear_fallback_hands_many_seeds_to_the_in_process_engine(lab: Lab) -> None:
    """One GDS run per seed is fine for a few phrase seeds; HippoRAG 2 may seed every passage."""
    needs_gds()
    settings = lab.written(corpus(n_passages=80), ppr_engine="gds")
    store, driver = lab.recorded(settings)
    engine = linear_engine(store)
    assert engine.name == "gds-linear"
    driver.calls.clear()
    passage_seeds = {f"p{j:02d}": 0.01 * (j + 1) for j in range(70)}
    found = engine.passage_node_scores(PHRASE_SEEDS, passage_seeds, EXACT, 5, 2)
    expected = Graph.read(settings).passage_nodes(PHRASE_SEEDS, passage_seeds, 5, 2)
    assert [s.passage_id for s in found] == [s.passage_id for s in expected]
    assert not driver.named("gds_passage_nodes_linear") and driver.named("client_mentions")
    engine.passage_node_scores(PHRASE_SEEDS, {"p01": 1.0}, EXACT, 5, 2)
    assert driver.named("gds_passage_nodes_linear")  # few seeds: GDS


def test_auto_runs_in_process_up_to_the_measured_size_and_gds_above(
    shared: Shared, lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """neo4j.ppr_engine=auto with usable GDS: the in-process engine while the namespace's phrase graph
    has at most AUTO_LOCAL_MAX_EDGES edges, the server's GDS engine above; the store decides on its first
    PPR from the namespace's size (read_graph_size). The rule itself: the unit test of auto_engine."""
    from hipporag_neo4j.stores.neo4j import capabilities

    edges = len(shared.graph.edges)  # the neighbouring namespace has edges too: not counted
    small = lab.store(shared.settings.model_copy(update={"ppr_engine": "auto"}))
    caps = gds_form(small)
    assert isinstance(small.ppr_engine(), LocalPpr)
    assert small.auto_reason is not None and f"{edges:,} graph edges" in small.auto_reason
    monkeypatch.setattr(capabilities, "AUTO_LOCAL_MAX_EDGES", edges - 1)
    large = lab.store(shared.settings.model_copy(update={"ppr_engine": "auto"}))
    engine = large.ppr_engine()
    assert isinstance(engine, GdsPpr) and engine.weighted == (caps == "weighted")
    asked = lab.store(shared.settings.model_copy(update={"ppr_engine": "gds"}))
    assert isinstance(asked.ppr_engine(), GdsPpr) and asked.auto_reason is None  # gds asked: no size rule


# --- neo4j.gds_top_nodes (issue 35 item 4) -----------------------------------------------------------


def top_store(lab: Lab, shared: Shared, top: int | None) -> tuple[Neo4jStore, RecordingDriver]:
    return lab.recorded(shared.settings.model_copy(update={"ppr_engine": "gds", "gds_top_nodes": top}))


@pytest.mark.parametrize("top", [3, 8])
def test_the_cut_aggregates_only_the_walks_best_phrases(shared: Shared, lab: Lab, top: int) -> None:
    needs_gds()
    store, driver = top_store(lab, shared, top)
    if gds_form(store) != "weighted":
        pytest.skip(WEIGHTED_ONLY)
    found = store.view().graph_passage_scores(PHRASE_SEEDS, EXACT, 6, 2)
    assert driver.calls[-1].name == "gds_passage_scores_top"
    assert driver.calls[-1].params["top_nodes"] == top
    expected = shared.graph.cut(PHRASE_SEEDS, top, 6)
    assert [s.passage_id for s in found] == [p for p, _ in expected]
    for item, (_, score) in zip(found, expected, strict=True):
        assert item.score == pytest.approx(score, abs=1e-9)
    exact = shared.graph.passage_scores(PHRASE_SEEDS, 6)
    assert [(s.passage_id, pytest.approx(s.score)) for s in found] != exact  # the cut changes scores


def test_a_cut_above_the_nodes_reached_gives_the_exact_scores(shared: Shared, lab: Lab) -> None:
    needs_gds()
    store, driver = top_store(lab, shared, 10_000)
    if gds_form(store) != "weighted":
        pytest.skip(WEIGHTED_ONLY)
    found = store.view().graph_passage_scores(PHRASE_SEEDS, EXACT, 8, 2)
    assert driver.calls[-1].name == "gds_passage_scores_top"
    expected = shared.graph.passage_scores(PHRASE_SEEDS, 8)
    assert [(s.passage_id, pytest.approx(s.score, abs=1e-9)) for s in found] == expected


def test_unset_runs_the_exact_statement_and_the_linear_form_ignores_the_setting(
    shared: Shared, lab: Lab
) -> None:
    needs_gds()
    unset, unset_driver = top_store(lab, shared, None)
    if gds_form(unset) == "weighted":
        unset.view().graph_passage_scores(PHRASE_SEEDS, EXACT, 5, 2)
        assert unset_driver.calls[-1].name == "gds_passage_scores_weighted"
    linear, linear_driver = top_store(lab, shared, 3)
    engine = linear_engine(linear, top_nodes=3)
    assert isinstance(engine, GdsPpr) and engine.top_nodes is None
    found = engine.passage_scores(PHRASE_SEEDS, EXACT, 5, 2)
    assert linear_driver.calls[-1].name == "gds_passage_scores_linear"
    assert [(s.passage_id, pytest.approx(s.score)) for s in found] == shared.graph.passage_scores(
        PHRASE_SEEDS, 5
    )
