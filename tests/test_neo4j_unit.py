"""The Python around the Neo4j store's Cypher, against the recorded-result fake driver (no server):
loader, batching, transient retries, capability decisions, projection versioning, PPR engines (including
the GDS 2.13 linear fallback), over-fetching vector look-ups, ingestion and delete sequencing."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from neo4j.exceptions import ClientError, ServiceUnavailable, TransientError
from neo4j_fake import FakeDriver, server

from hipporag_neo4j import ppr
from hipporag_neo4j.errors import (
    CapabilityError,
    ConfigError,
    ModelMismatchError,
    SchemaVersionError,
    StoreError,
)
from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import (
    SCHEMA_VERSION,
    FactRecord,
    GraphStore,
    PassageRecord,
    PhraseRecord,
    SynonymEdge,
)
from hipporag_neo4j.stores.neo4j import Neo4jStore, graph_model
from hipporag_neo4j.stores.neo4j.capabilities import decide, detect, parse_version
from hipporag_neo4j.stores.neo4j.cypher import (
    CypherQuery,
    cypher_dir,
    load_query,
    load_script,
    parameters_of,
    query_names,
    safe_identifier,
    split_statements,
)
from hipporag_neo4j.stores.neo4j.ppr_engines import GdsPpr, LocalPpr
from hipporag_neo4j.stores.neo4j.projection import ProjectionCatalog, graph_name, graph_prefix
from hipporag_neo4j.stores.neo4j.writer import CypherRunner, batches

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]


def runner_for(
    driver: FakeDriver, *, batch_size: int = 500, max_retries: int = 3
) -> tuple[CypherRunner, list[float]]:
    slept: list[float] = []
    runner = CypherRunner(
        driver,  # type: ignore[arg-type]
        "neo4j",
        batch_size=batch_size,
        max_retries=max_retries,
        sleep=slept.append,
        jitter=lambda: 0.0,
    )
    return runner, slept


def vec(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


# --- loader -------------------------------------------------------------------------------------


def test_loader_finds_every_file_in_the_source_checkout() -> None:
    assert Path(str(cypher_dir())) == REPO / "cypher"
    names = query_names()
    assert {"gds_ppr_weighted", "gds_ppr_linear", "passage_scores", "schema_constraints"} <= set(names)
    assert len(load_script("schema_constraints")) == 4
    assert len(load_script("schema_vector_indexes")) == 3


def test_wheel_ships_the_cypher_directory_where_the_loader_looks() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    force = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert force == {"cypher": "hipporag_neo4j/cypher"}


def test_every_parameter_used_is_declared_for_the_lint() -> None:
    used = {p for name in query_names() for q in load_script(name) for p in q.parameters}
    assert used <= set(graph_model.PARAMETERS), used - set(graph_model.PARAMETERS)


def test_parameters_of_ignores_comments_and_strings() -> None:
    text = "// the namespace's $fake\nMATCH (n {id: $id}) WHERE n.name = '$not' RETURN n // $nope"
    assert parameters_of(text) == {"id"}


def test_split_statements_keeps_each_statement() -> None:
    script = "// header; not an end\nCREATE INDEX a IF NOT EXISTS FOR (n:Phrase) ON (n.id);\n\n"
    script += "MATCH (n:Phrase) WHERE n.name = 'a;b' RETURN n;\n// end;\n"
    assert split_statements(script) == [
        "// header; not an end\nCREATE INDEX a IF NOT EXISTS FOR (n:Phrase) ON (n.id)",
        "MATCH (n:Phrase) WHERE n.name = 'a;b' RETURN n",
    ]


def test_loader_rejects_unknown_and_unsafe_names() -> None:
    with pytest.raises(StoreError, match="invalid Cypher file name"):
        load_query("../pyproject")
    with pytest.raises(StoreError, match="no Cypher file"):
        load_query("no_such_query")
    with pytest.raises(StoreError, match="statements"):
        load_query("schema_constraints")


def test_parameters_must_match_the_statement() -> None:
    query = load_query("read_passage_count")
    query.check_parameters({"namespace"})
    with pytest.raises(StoreError, match="missing"):
        query.check_parameters(set())
    with pytest.raises(StoreError, match="unexpected"):
        query.check_parameters({"namespace", "label"})
    driver = FakeDriver()
    runner, _ = runner_for(driver)
    with pytest.raises(StoreError, match="parameters do not match"):
        runner.read("read_passage_count")
    assert driver.calls == []  # refused before reaching the server


@pytest.mark.parametrize("bad", ["a.b", "1abc", "x` DETACH DELETE n //", "", "a-b"])
def test_identifiers_spliced_anywhere_are_validated(bad: str) -> None:
    with pytest.raises(ConfigError):
        safe_identifier(bad, "namespace")
    with pytest.raises(ConfigError):
        graph_name("neo4j", bad, 1)


# --- batching and retries -----------------------------------------------------------------------


def test_batches_split_rows() -> None:
    assert [list(b) for b in batches(list(range(5)), 2)] == [[0, 1], [2, 3], [4]]
    assert list(batches([], 3)) == []
    with pytest.raises(ValueError):
        list(batches([1], 0))


def test_run_batched_splits_rows_in_one_transaction() -> None:
    driver = FakeDriver().on("read_existing_passages", lambda p: [{"id": i} for i in p["ids"] if i != "p3"])
    runner, _ = runner_for(driver, batch_size=2)
    found = runner.read_batched(
        "read_existing_passages", "ids", ["p1", "p2", "p3", "p4", "p5"], namespace="kb"
    )
    assert [r["id"] for r in found] == ["p1", "p2", "p4", "p5"]
    calls = driver.named("read_existing_passages")
    assert [c.params["ids"] for c in calls] == [["p1", "p2"], ["p3", "p4"], ["p5"]]
    assert {c.tx for c in calls} == {1} and driver.committed == [1]
    assert calls[0].access_mode == "READ" and calls[0].database == "neo4j"


def test_transient_error_is_retried_then_succeeds() -> None:
    driver = FakeDriver().on(
        "meta_graph_version",
        TransientError("deadlock detected"),
        ServiceUnavailable("leader switch"),
        [{"graph_version": 7}],
    )
    runner, slept = runner_for(driver)
    assert runner.read("meta_graph_version", namespace="kb") == [{"graph_version": 7}]
    assert driver.rolled_back == [1, 2] and driver.committed == [3]
    assert slept == [0.05, 0.1]  # base 0.1 * 2^(n-1), jitter factor 0.5 here
    assert runner.retries == 2


def test_non_transient_error_is_not_retried() -> None:
    driver = FakeDriver().on("meta_graph_version", ClientError("Invalid input"))
    runner, slept = runner_for(driver)
    with pytest.raises(StoreError, match="cypher meta_graph_version failed"):
        runner.read("meta_graph_version", namespace="kb")
    assert len(driver.calls) == 1 and slept == [] and driver.committed == []


def test_retries_are_bounded() -> None:
    driver = FakeDriver().on("meta_graph_version", TransientError("lock timeout"))
    runner, slept = runner_for(driver, max_retries=2)
    with pytest.raises(StoreError, match="after 2 retries"):
        runner.read("meta_graph_version", namespace="kb")
    assert len(driver.calls) == 3 and len(slept) == 2 and driver.committed == []


def test_backoff_is_capped_and_jittered() -> None:
    runner = CypherRunner(FakeDriver(), "neo4j", batch_size=1, max_retries=9, jitter=lambda: 1.0)  # type: ignore[arg-type]
    assert runner.delay(1) == pytest.approx(0.1)
    assert runner.delay(20) == pytest.approx(5.0)
    assert CypherRunner(FakeDriver(), "neo4j", batch_size=1, max_retries=1, jitter=lambda: 0.0).delay(
        3
    ) == pytest.approx(0.2)  # type: ignore[arg-type]


def test_a_retried_write_reruns_the_whole_transaction() -> None:
    driver = FakeDriver().on("meta_bump_version", [{"graph_version": 2}])
    driver.on("write_synonyms", TransientError("deadlock"), lambda p: [{"created": len(p["rows"])}])
    runner, _ = runner_for(driver)
    from hipporag_neo4j.stores.neo4j import ingest

    created = runner.write(lambda tx: ingest.write_synonyms(tx, "kb", [SynonymEdge("b", "a", 0.9)]))
    assert created == 1
    assert driver.names_run() == [
        "meta_bump_version",
        "write_synonyms",
        "meta_bump_version",
        "write_synonyms",
    ]
    assert driver.rolled_back == [1] and driver.committed == [2]


# --- capabilities -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("neo4j_version", "gds", "requested", "engine", "vector_query"),
    [
        ("5.26.0", "2.13.2", "auto", "gds-linear", "procedure"),  # 5.26 LTS + GDS 2.13
        ("5.26.12", "2.13.5", "gds", "gds-linear", "procedure"),
        ("2025.04.0", "2.17.0", "auto", "gds-weighted", "procedure"),
        ("2025.10.1", "2.22.0", "auto", "gds-weighted", "procedure"),
        ("2026.04.0", "2.26.0", "auto", "gds-weighted", "search"),
        ("2026.03.1", None, "auto", "local", "procedure"),
        ("5.27-aura", None, "auto", "local", "procedure"),  # Aura Free: no GDS
        ("5.26.0", "2.13.2", "local", "local", "procedure"),
        ("5.20.0", "2.3.1", "auto", "local", "procedure"),  # no Cypher aggregation projection yet
    ],
)
def test_capability_decisions(
    neo4j_version: str, gds: str | None, requested: Any, engine: str, vector_query: str
) -> None:
    caps = decide(neo4j_version, "community", gds, None, requested)
    assert caps.ppr_engine == engine
    assert caps.vector_query == vector_query
    assert caps.vector_index and caps.usable
    notes = " ".join(caps.notes)
    assert "PPR" in notes and "APOC" in notes
    if engine == "local":
        assert "in process" in notes
    if engine == "gds-linear":
        assert "one run per seed" in notes


def test_capability_problems() -> None:
    assert "5.15" in decide("5.13.0", "enterprise", "2.5.0", None).problems[0]
    missing = decide("5.26.0", "community", None, None, "gds")
    assert not missing.usable and "not installed" in missing.problems[0]
    assert not decide("5.26.0", "community", "2.3.0", None, "gds").usable


def test_parse_version() -> None:
    assert parse_version("5.26.0") == (5, 26, 0)
    assert parse_version("2025.04.0") == (2025, 4, 0)
    assert parse_version("5.27-aura") == (5, 27)
    assert parse_version("2025.04.0") > parse_version("5.26.99")
    with pytest.raises(ValueError):
        parse_version("unknown")


def test_detect_asks_plugins_before_calling_them() -> None:
    driver = server(FakeDriver(), version="2025.06.0", edition="enterprise", gds="2.19.0", apoc="2025.06.0")
    runner, _ = runner_for(driver)
    caps = detect(runner)
    assert (caps.neo4j_version, caps.edition, caps.gds_version, caps.apoc_version) == (
        "2025.06.0",
        "enterprise",
        "2.19.0",
        "2025.06.0",
    )
    assert caps.ppr_engine == "gds-weighted"
    bare = server(FakeDriver(), gds=None)
    runner, _ = runner_for(bare)
    assert detect(runner).ppr_engine == "local"
    assert "server_gds_version" not in bare.names_run() and "server_apoc_version" not in bare.names_run()


# --- projection versioning ----------------------------------------------------------------------


def test_projection_name_follows_version_and_old_ones_are_dropped() -> None:
    driver = FakeDriver()
    driver.on(
        "gds_project_phrase_graph",
        lambda p: [{"graph_name": p["graph_name"], "node_count": 5, "relationship_count": 8}],
    )
    driver.on(
        "gds_drop_stale_graphs",
        lambda p: [{"dropped": f"{p['prefix']}1"}] if p["graph_name"].endswith("v2") else [],
    )
    runner, _ = runner_for(driver)
    catalog = ProjectionCatalog(runner, "neo4j", "kb")

    first = catalog.ensure(1)
    assert first.name == "hipporag.neo4j.kb.v1" == graph_name("neo4j", "kb", 1)
    assert driver.names_run() == ["gds_graph_info", "gds_project_phrase_graph", "gds_drop_stale_graphs"]
    assert all(c.access_mode == "WRITE" for c in driver.calls)  # GDS calls go to the leader

    driver.calls.clear()
    assert catalog.ensure(1) is first  # warm: no round trip
    assert driver.calls == []

    second = catalog.ensure(2)
    assert second.name == "hipporag.neo4j.kb.v2"
    drop = driver.named("gds_drop_stale_graphs")[0].params
    assert drop == {"prefix": graph_prefix("neo4j", "kb"), "graph_name": "hipporag.neo4j.kb.v2"}
    assert catalog.projections_made == 2


def test_projection_made_meanwhile_is_reused() -> None:
    driver = FakeDriver()
    driver.on("gds_graph_info", [], [{"graph_name": "x", "node_count": 3, "relationship_count": 2}])
    driver.on(
        "gds_project_phrase_graph", ClientError("A graph with name 'hipporag.neo4j.kb.v4' already exists.")
    )
    runner, _ = runner_for(driver)
    projection = ProjectionCatalog(runner, "neo4j", "kb").ensure(4)
    assert (projection.node_count, projection.relationship_count) == (3, 2)


def test_existing_projection_is_not_projected_again() -> None:
    driver = FakeDriver().on(
        "gds_graph_info", [{"graph_name": "x", "node_count": 3, "relationship_count": 2}]
    )
    runner, _ = runner_for(driver)
    ProjectionCatalog(runner, "neo4j", "kb").ensure(9)
    assert "gds_project_phrase_graph" not in driver.names_run()


# --- PPR engines --------------------------------------------------------------------------------

# A small phrase graph: a-b-c-d path, c-e synonym, f-g pair; no isolated phrase.
EDGES = [("a", "b", 2.0), ("b", "c", 1.0), ("c", "d", 1.0), ("c", "e", 0.9), ("f", "g", 1.0)]
IDS = sorted({n for s, t, _ in EDGES for n in (s, t)})


def adjacency() -> Any:
    index = {n: i for i, n in enumerate(IDS)}
    s = np.array([index[a] for a, _, _ in EDGES])
    t = np.array([index[b] for _, b, _ in EDGES])
    w = np.array([x for _, _, x in EDGES], dtype=np.float64)
    return ppr.symmetric_adjacency(s, t, w, len(IDS))


def gds_pagerank(reset: dict[str, float], damping: float, iterations: int = 200) -> dict[str, float]:
    """What gds.pageRank.stream computes (unnormalised): x = (1-d) r + d A D^-1 x, biases as given."""
    transition, _ = ppr.transition_matrix(adjacency())
    r = np.array([reset.get(n, 0.0) for n in IDS])
    x = r.copy()
    for _ in range(iterations):
        x = (1 - damping) * r + damping * (transition @ x)
    return {n: float(x[i]) for i, n in enumerate(IDS)}


def gds_responder(weighted: bool, runs: list[int]) -> Any:
    """Emulates the two PPR statements on the graph above: weighted sources in one run, or one
    unweighted run per seed summed with the seed weights (what gds_ppr_linear.cypher does)."""

    def respond(params: dict[str, Any]) -> list[dict[str, Any]]:
        seeds = {s["id"]: s["weight"] for s in params["seeds"] if s["id"] in IDS}
        total = dict.fromkeys(IDS, 0.0)
        if weighted:
            runs.append(1)
            total = gds_pagerank(seeds, params["damping"])
        else:
            for seed, weight in seeds.items():
                runs.append(1)
                for n, score in gds_pagerank({seed: 1.0}, params["damping"]).items():
                    total[n] += weight * score
        return [{"id": n, "score": s} for n, s in total.items() if s > 0]

    return respond


def known_phrases(params: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"id": i} for i in params["ids"] if i in IDS]


def gds_driver(weighted: bool, runs: list[int]) -> FakeDriver:
    driver = FakeDriver().on("meta_graph_version", [{"graph_version": 3}])
    driver.on("read_existing_phrases", known_phrases)
    driver.on(
        "gds_graph_info", [{"graph_name": "g", "node_count": len(IDS), "relationship_count": 2 * len(EDGES)}]
    )
    driver.on("gds_ppr_weighted" if weighted else "gds_ppr_linear", gds_responder(weighted, runs))
    return driver


def reference(seeds: dict[str, float], damping: float) -> dict[str, float]:
    transition, dangling = ppr.transition_matrix(adjacency())
    reset = np.array([seeds.get(n, 0.0) for n in IDS])
    scores = ppr.personalized_pagerank(transition, dangling, reset, damping, 200, 1e-12)
    return {n: float(scores[i]) for i, n in enumerate(IDS) if scores[i] > 0}


SEEDS = {"a": 0.7, "d": 0.2, "g": 0.1, "zz-unknown": 0.5}


@pytest.mark.parametrize("weighted", [True, False])
def test_gds_engines_agree_with_the_in_process_engine(weighted: bool) -> None:
    runs: list[int] = []
    driver = gds_driver(weighted, runs)
    runner, _ = runner_for(driver)
    engine = GdsPpr(runner, ProjectionCatalog(runner, "neo4j", "kb"), "kb", weighted=weighted)
    scores = engine.run(SEEDS, 0.5, 100, 1e-8)
    assert sum(scores.values()) == pytest.approx(1.0)
    expected = reference({k: v for k, v in SEEDS.items() if k in IDS}, 0.5)
    assert scores.keys() == expected.keys()
    for n in expected:
        assert scores[n] == pytest.approx(expected[n], rel=1e-6)
    call = driver.named("gds_ppr_weighted" if weighted else "gds_ppr_linear")[0]
    assert call.params["seeds"] == [{"id": k, "weight": v} for k, v in sorted(SEEDS.items()) if k in IDS]
    assert call.params["graph_name"] == "hipporag.neo4j.kb.v3" and call.access_mode == "WRITE"
    assert len(runs) == (1 if weighted else 3)  # linear fallback: one GDS run per (existing) seed


def test_linear_fallback_statement_runs_gds_once_per_seed_and_sums_by_weight() -> None:
    text = load_query("gds_ppr_linear").text
    unwind, call = text.index("UNWIND $seeds AS seed"), text.index("CALL gds.pageRank.stream")
    assert unwind < call and "sourceNodes: [source]" in text
    assert "sum(seed.weight * score)" in text
    weighted = load_query("gds_ppr_weighted").text
    assert "collect([phrase, seed.weight])" in weighted and "size(sources) > 0" in weighted


def test_gds_engine_without_edges_returns_the_reset_distribution() -> None:
    driver = FakeDriver().on("meta_graph_version", [{"graph_version": 1}])
    driver.on("gds_graph_info", [{"graph_name": "g", "node_count": 3, "relationship_count": 0}])
    driver.on("read_existing_phrases", [{"id": "a"}, {"id": "b"}])
    runner, _ = runner_for(driver)
    engine = GdsPpr(runner, ProjectionCatalog(runner, "neo4j", "kb"), "kb", weighted=True)
    assert engine.run({"a": 3.0, "b": 1.0, "gone": 1.0, "zero": 0.0}, 0.5, 100, 1e-8) == {
        "a": 0.75,
        "b": 0.25,
    }
    assert "gds_ppr_weighted" not in driver.names_run()
    driver.calls.clear()
    assert engine.run({"a": 0.0}, 0.5, 100, 1e-8) == {}
    driver.on("read_existing_phrases", [])
    assert engine.run({"gone": 1.0}, 0.5, 100, 1e-8) == {}  # no seed in the graph: GDS never called
    assert driver.names_run() == ["read_existing_phrases"]


def test_gds_engine_recovers_once_from_a_vanished_projection() -> None:
    runs: list[int] = []
    driver = gds_driver(True, runs)
    driver.on(
        "gds_ppr_weighted",
        ClientError("Graph with name `hipporag.neo4j.kb.v3` does not exist"),
        gds_responder(True, runs),
    )
    runner, _ = runner_for(driver)
    engine = GdsPpr(runner, ProjectionCatalog(runner, "neo4j", "kb"), "kb", weighted=True)
    assert sum(engine.run({"a": 1.0}, 0.5, 100, 1e-8).values()) == pytest.approx(1.0)
    assert len(driver.named("gds_graph_info")) == 2  # looked at the catalog again


def local_driver(version: list[int]) -> FakeDriver:
    driver = FakeDriver().on("meta_graph_version", lambda p: [{"graph_version": version[0]}])
    driver.on("local_phrase_ids", [{"id": n} for n in IDS])
    driver.on("local_phrase_edges", [{"source": s, "target": t, "weight": w} for s, t, w in EDGES])
    return driver


def test_local_engine_reads_the_graph_once_per_version() -> None:
    version = [5]
    driver = local_driver(version)
    runner, _ = runner_for(driver)
    engine = LocalPpr(runner, "kb")
    seeds = {"a": 0.7, "d": 0.3}
    scores = engine.run(seeds, 0.5, 200, 1e-12)
    assert scores == pytest.approx(reference(seeds, 0.5))
    engine.run({"f": 1.0}, 0.5, 100, 1e-8)
    assert engine.graph_reads == 1 and len(driver.named("local_phrase_edges")) == 1
    version[0] = 6
    engine.run({"f": 1.0}, 0.5, 100, 1e-8)
    assert engine.graph_reads == 2
    assert engine.run({"nope": 1.0}, 0.5, 100, 1e-8) == {}


# --- the store ----------------------------------------------------------------------------------


def settings(**kw: Any) -> Neo4jSettings:
    return Neo4jSettings(uri="neo4j://localhost:7687", namespace="kb", **kw)


def opened_driver(meta: dict[str, Any] | None = None, **server_kw: Any) -> FakeDriver:
    driver = server(FakeDriver(), **server_kw)
    driver.on("meta_read", [meta] if meta else [])
    driver.on(
        "meta_create",
        lambda p: [
            {
                "schema_version": p["schema_version"],
                "embedding_model": p["embedding_model"],
                "embedding_dim": p["embedding_dim"],
                "graph_version": 0,
            }
        ],
    )
    driver.on("meta_bump_version", [{"graph_version": 1}])
    return driver


def open_store(driver: FakeDriver, **kw: Any) -> Neo4jStore:
    store = Neo4jStore(settings(**kw), driver=driver)  # type: ignore[arg-type]
    store.open("all-MiniLM-L6-v2", 384)
    return store


def test_constructor_does_no_io_and_satisfies_the_protocol() -> None:
    driver = FakeDriver()
    store = Neo4jStore(settings(), driver=driver)  # type: ignore[arg-type]
    assert isinstance(store, GraphStore) and store.backend == "neo4j"
    assert driver.calls == []
    with pytest.raises(StoreError, match="open"):
        store.write_synonyms([SynonymEdge("a", "b", 0.9)])


def test_open_creates_the_schema_then_records_meta() -> None:
    driver = opened_driver()
    store = open_store(driver)
    ran = driver.names_run()
    assert ran[:4] == ["server_components", "server_plugins", "server_gds_version", "schema_constraints#0"]
    assert [n for n in ran if n.startswith("schema_vector_indexes")] == [
        f"schema_vector_indexes#{i}" for i in range(3)
    ]
    assert {c.params["dimension"] for c in driver.calls if c.name.startswith("schema_vector_indexes")} == {
        384
    }
    awaited = [c.params["index_name"] for c in driver.named("schema_await_index")]
    assert awaited == sorted(graph_model.VECTOR_INDEXES.values())
    assert ran.index("meta_read") < ran.index("schema_vector_indexes#0") < ran.index("meta_create")
    create = driver.named("meta_create")[0].params
    assert create == {
        "namespace": "kb",
        "schema_version": SCHEMA_VERSION,
        "embedding_model": "all-MiniLM-L6-v2",
        "embedding_dim": 384,
    }
    assert store.capabilities().ppr_engine == "gds-linear"
    assert all(c.database == "neo4j" for c in driver.calls)


def test_open_skips_existing_vector_indexes_but_awaits_them() -> None:
    driver = opened_driver(
        meta={
            "schema_version": SCHEMA_VERSION,
            "embedding_model": "all-MiniLM-L6-v2",
            "embedding_dim": 384,
            "graph_version": 4,
        }
    )
    driver.on(
        "schema_vector_index_dimensions",
        [{"name": n, "dimensions": 384} for n in graph_model.VECTOR_INDEXES.values()],
    )
    open_store(driver)
    assert not any(n.startswith("schema_vector_indexes") for n in driver.names_run())
    assert len(driver.named("schema_await_index")) == 3 and not driver.named("meta_create")


def test_open_refuses_another_model_schema_or_index_dimension() -> None:
    other = {
        "schema_version": SCHEMA_VERSION,
        "embedding_model": "text-embedding-3-small",
        "embedding_dim": 1536,
        "graph_version": 1,
    }
    with pytest.raises(ModelMismatchError, match="text-embedding-3-small"):
        open_store(opened_driver(meta=other))
    newer = {
        "schema_version": SCHEMA_VERSION + 1,
        "embedding_model": "all-MiniLM-L6-v2",
        "embedding_dim": 384,
        "graph_version": 1,
    }
    with pytest.raises(SchemaVersionError):
        open_store(opened_driver(meta=newer))
    driver = opened_driver()
    driver.on("schema_vector_index_dimensions", [{"name": "hipporag_phrase_embedding", "dimensions": 768}])
    driver.on("meta_other_dimensions", [{"namespace": "other", "embedding_dim": 768}])
    with pytest.raises(ModelMismatchError, match="other"):
        open_store(driver)
    with pytest.raises(CapabilityError, match=r"5\.15"):
        open_store(opened_driver(version="5.12.0"))
    with pytest.raises(CapabilityError, match="not installed"):
        open_store(opened_driver(gds=None), ppr_engine="gds")


def passage(pid: str, mentions: dict[str, int], facts: list[FactRecord] | None = None) -> PassageRecord:
    return PassageRecord(
        Passage(id=pid, text=f"text {pid}", title=f"T{pid}", metadata={"k": pid}),
        vec(1, 0, 0),
        mentions,
        facts or [],
    )


def written(param: str) -> Any:
    return lambda p: [{"written": len(p["rows"])}]


def write_driver(existing: set[str]) -> FakeDriver:
    driver = opened_driver()
    driver.on("read_existing_passages", lambda p: [{"id": i} for i in p["ids"] if i in existing])
    for name in ("write_phrases", "write_passages", "write_mentions", "write_facts", "write_states"):
        driver.on(name, written("rows"))
    return driver


def test_write_passages_batches_in_one_transaction_and_skips_stored_passages() -> None:
    driver = write_driver(existing={"p0"})
    store = open_store(driver, batch_size=2)
    driver.calls.clear()
    phrases = [PhraseRecord(f"ph{i}", f"phrase {i}", vec(1, i, 0)) for i in range(5)]
    f1 = FactRecord("f1", "ph0", "born in", "ph1", "phrase 0 born in phrase 1", vec(0, 1, 0))
    f2 = FactRecord("f2", "ph0", "lives in", "ph1", "phrase 0 lives in phrase 1")
    records = [
        passage("p0", {"ph0": 1}),
        passage("p1", {"ph0": 2, "ph1": 1}, [f1, f2]),
        passage("p2", {"ph1": 1, "ph2": 1, "ph3": 1}, [f1]),
        passage("p1", {"ph4": 1}),  # duplicate id in one call: first wins
    ]
    store.write_passages(phrases, records)
    assert {c.tx for c in driver.calls} == {driver.committed[-1]}  # one transaction, committed
    assert driver.calls[0].name == "meta_bump_version"  # the namespace lock comes first
    assert [len(c.params["rows"]) for c in driver.named("write_phrases")] == [2, 2, 1]
    rows = [r for c in driver.named("write_passages") for r in c.params["rows"]]
    assert [r["id"] for r in rows] == ["p1", "p2"]
    assert json.loads(rows[0]["metadata_json"]) == {"k": "p1"} and len(rows[0]["embedding"]) == 3
    mentions = [
        (r["passage_id"], r["phrase_id"], r["count"])
        for c in driver.named("write_mentions")
        for r in c.params["rows"]
    ]
    assert mentions == [
        ("p1", "ph0", 2),
        ("p1", "ph1", 1),
        ("p2", "ph1", 1),
        ("p2", "ph2", 1),
        ("p2", "ph3", 1),
    ]
    facts = [r for c in driver.named("write_facts") for r in c.params["rows"]]
    assert [f["id"] for f in facts] == ["f1", "f2"] and facts[1]["embedding"] is None
    states = sorted(
        (r["passage_id"], r["fact_id"]) for c in driver.named("write_states") for r in c.params["rows"]
    )
    assert states == [("p1", "f1"), ("p1", "f2"), ("p2", "f1")]
    assert [c.params["pairs"] for c in driver.named("refresh_relations")] == [
        [{"subject_id": "ph0", "object_id": "ph1"}]
    ]
    counted = [i for c in driver.named("refresh_passage_counts") for i in c.params["ids"]]
    assert counted == ["ph0", "ph1", "ph2", "ph3"]


def test_write_passages_with_an_unknown_phrase_rolls_back() -> None:
    driver = write_driver(existing=set())
    driver.on("write_mentions", lambda p: [{"written": len(p["rows"]) - 1}])
    store = open_store(driver)
    before = list(driver.committed)
    with pytest.raises(StoreError, match="neither stored nor given"):
        store.write_passages([], [passage("p1", {"ph-missing": 1})])
    assert driver.committed == before and driver.rolled_back


def test_write_synonyms_stores_each_pair_once_in_canonical_direction() -> None:
    driver = opened_driver().on("write_synonyms", lambda p: [{"created": len(p["rows"]) - 1}])
    store = open_store(driver)
    edges = [
        SynonymEdge("b", "a", 0.91),
        SynonymEdge("a", "b", 0.91),
        SynonymEdge("c", "c", 1.0),
        SynonymEdge("a", "c", 0.85),
    ]
    assert store.write_synonyms(edges) == 1
    rows = driver.named("write_synonyms")[0].params["rows"]
    assert rows == [
        {"source_id": "a", "target_id": "b", "score": pytest.approx(0.91)},
        {"source_id": "a", "target_id": "c", "score": pytest.approx(0.85)},
    ]
    assert store.write_synonyms([SynonymEdge("x", "x", 1.0)]) == 0


def test_delete_passages_is_exact_and_reports() -> None:
    driver = opened_driver()
    driver.on(
        "delete_plan",
        [
            {
                "id": "p1",
                "phrase_ids": ["ph0", "ph1"],
                "facts": [{"id": "f1", "subject_id": "ph0", "object_id": "ph1"}],
            },
        ],
    )
    driver.on("delete_orphan_facts", [{"removed": 1}])
    driver.on("delete_orphan_phrases", [{"phrases_removed": 1, "synonym_edges_removed": 2}])
    store = open_store(driver)
    driver.calls.clear()
    report = store.delete_passages(["p1", "p9", "p1"])
    assert (report.passages, report.missing) == (["p1"], ["p9"])
    assert (report.facts_removed, report.phrases_removed, report.synonym_edges_removed) == (1, 1, 2)
    assert driver.names_run() == [
        "meta_bump_version",
        "delete_plan",
        "delete_passages",
        "delete_orphan_facts",
        "refresh_relations",
        "delete_orphan_phrases",
        "refresh_passage_counts",
    ]
    assert driver.named("delete_passages")[0].params["ids"] == ["p1"]
    assert driver.named("refresh_relations")[0].params["pairs"] == [{"subject_id": "ph0", "object_id": "ph1"}]
    assert driver.named("refresh_passage_counts")[0].params["ids"] == ["ph0", "ph1"]
    assert len({c.tx for c in driver.calls}) == 1


# --- vector look-ups ----------------------------------------------------------------------------


def index_responder(phrases: list[tuple[str, str, np.ndarray]], fetches: list[int]) -> Any:
    """Emulates vector_phrases.cypher over an index shared by namespaces: top $fetch by (1+cos)/2, then the
    statement's namespace / threshold / exclude filters."""

    def respond(params: dict[str, Any]) -> list[dict[str, Any]]:
        fetches.append(params["fetch"])
        out = []
        for row in params["rows"]:
            q = np.asarray(row["vector"])
            hits = sorted(((float((1 + q @ v) / 2), pid, ns) for pid, ns, v in phrases), key=lambda h: -h[0])[
                : params["fetch"]
            ]
            if not hits:
                continue
            matches = [
                {"id": pid, "name": pid.upper(), "passage_count": 2, "score": s}
                for s, pid, ns in hits
                if ns == params["namespace"] and s >= params["min_score"] and pid != row["exclude_id"]
            ]
            out.append(
                {
                    "row_index": row["index"],
                    "fetched": len(hits),
                    "lowest_score": hits[-1][0],
                    "matches": matches,
                }
            )
        return out

    return respond


def test_nearest_phrases_over_fetches_until_the_namespace_has_enough() -> None:
    ours = [(f"ours{i}", "kb", vec(1, 0.3 + 0.1 * i, 0)) for i in range(4)]
    theirs = [(f"theirs{i}", "other", vec(1, 0.01 * i, 0)) for i in range(40)]  # closer, other namespace
    fetches: list[int] = []
    driver = opened_driver().on("vector_phrases", index_responder(ours + theirs, fetches))
    store = open_store(driver)
    hits = store.nearest_phrases(np.stack([vec(1, 0, 0), vec(1, 0.3, 0)]), 3, 0.5, ["none", "ours0"])
    assert fetches == [20, 80]
    assert [h.id for h in hits[0]] == ["ours0", "ours1", "ours2"]
    assert [h.id for h in hits[1]] == ["ours1", "ours2", "ours3"]  # its own phrase excluded
    expected = float(vec(1, 0, 0) @ vec(1, 0.3, 0))
    assert hits[0][0].similarity == pytest.approx(expected, abs=1e-6)  # (1+cos)/2 converted back
    assert hits[0][0].name == "OURS0" and hits[0][0].passage_count == 2


def test_nearest_phrases_stops_when_the_threshold_is_passed_and_uses_search_on_2026() -> None:
    ours = [("near", "kb", vec(1, 0.1, 0)), ("far", "kb", vec(0, 1, 0))]
    theirs = [(f"t{i}", "other", vec(1, 0.01 * i, 0)) for i in range(30)]
    fetches: list[int] = []
    driver = opened_driver(version="2026.04.0", gds="2.26.0").on(
        "vector_phrases_search", index_responder(ours + theirs, fetches)
    )
    store = open_store(driver)
    hits = store.nearest_phrases(np.stack([vec(1, 0, 0)]), 5, 0.9, None)
    assert [h.id for h in hits[0]] == ["near"]  # 'far' is below the threshold
    assert len(fetches) == 2  # the second fetch reached scores below the threshold: done
    assert not driver.named("vector_phrases")


def test_dense_passage_scores_over_fetch_and_convert_scores() -> None:
    calls: list[int] = []

    def respond(p: dict[str, Any]) -> list[dict[str, Any]]:
        calls.append(p["fetch"])
        hits = [{"id": f"o{i}", "ns": "other", "score": 0.99} for i in range(30)] + [
            {"id": "p1", "ns": "kb", "score": 0.9},
            {"id": "p2", "ns": "kb", "score": 0.95},
        ]
        hits = hits[: p["fetch"]]
        return [
            {
                "fetched": len(hits),
                "matches": [{"id": h["id"], "score": h["score"]} for h in hits if h["ns"] == p["namespace"]],
            }
        ]

    driver = opened_driver().on("vector_passages", respond)
    store = open_store(driver)
    scores = store.dense_passage_scores(vec(1, 0, 0), 2)
    assert calls == [18, 72]
    assert [(s.passage_id, round(s.score, 6)) for s in scores] == [("p2", 0.9), ("p1", 0.8)]


# --- retrieval through the store ----------------------------------------------------------------


def test_graph_passage_scores_send_ppr_scores_to_the_cypher_aggregation() -> None:
    runs: list[int] = []
    driver = opened_driver(version="2025.04.0", gds="2.17.0")
    driver.on("meta_graph_version", [{"graph_version": 3}])
    driver.on("gds_graph_info", [{"graph_name": "g", "node_count": len(IDS), "relationship_count": 10}])
    driver.on("gds_ppr_weighted", gds_responder(True, runs))
    driver.on("read_existing_phrases", known_phrases)
    driver.on(
        "passage_scores",
        lambda p: [
            {"passage_id": "p1", "score": 0.4, "top_phrases": [{"phrase": "alpha", "contribution": 0.3}]}
        ],
    )
    store = open_store(driver)
    result = store.graph_passage_scores({"a": 1.0}, 0.5, 100, 1e-8, limit=5, explain_phrases=2)
    assert result[0].passage_id == "p1" and result[0].top_phrases == [("alpha", 0.3)]
    call = driver.named("passage_scores")[0].params
    assert (call["limit"], call["explain_phrases"]) == (5, 2)
    assert sum(s["score"] for s in call["scores"]) == pytest.approx(1.0)
    assert store.graph_passage_scores({}, 0.5, 100, 1e-8, 5, 2) == []


def test_reads_map_records() -> None:
    driver = opened_driver()
    driver.on("read_passages", [{"id": "p1", "title": None, "text": "hello", "metadata_json": '{"a": 1}'}])
    driver.on("read_phrases_by_name", [{"id": "ph1", "name": "paris", "passage_count": 3}])
    driver.on(
        "read_texts_passage",
        [{"id": "p1", "title": "T", "text": "x"}, {"id": "p2", "title": None, "text": "y"}],
        [],
    )
    store = open_store(driver)
    assert store.get_passages(["p1"]) == {"p1": Passage(id="p1", text="hello", metadata={"a": 1})}
    assert store.phrases_by_name(["paris"])["paris"].similarity == 1.0
    assert list(store.iter_texts("passage", 2)) == [[("p1", "T\nx"), ("p2", "y")]]
    assert driver.named("read_texts_passage")[1].params["after"] == "p2"


def test_set_embedding_model_recreates_indexes_only_for_a_new_dimension() -> None:
    meta = {
        "schema_version": SCHEMA_VERSION,
        "embedding_model": "all-MiniLM-L6-v2",
        "embedding_dim": 384,
        "graph_version": 1,
    }
    driver = opened_driver(meta=meta)
    store = open_store(driver)
    driver.calls.clear()
    store.set_embedding_model("other-384", 384)
    assert driver.names_run()[-1] == "meta_set_model" and not driver.named("schema_drop_vector_indexes#0")
    driver.on("meta_other_dimensions", [{"namespace": "b", "embedding_dim": 384}])
    with pytest.raises(ModelMismatchError, match="b"):
        store.set_embedding_model("big", 768)
    driver.on("meta_other_dimensions", [])
    store.set_embedding_model("big", 768)
    assert {c.params["dimension"] for c in driver.calls if c.name.startswith("schema_vector_indexes")} == {
        768
    }


def test_cypher_query_dataclass_is_hashable_and_frozen() -> None:
    q = CypherQuery("x", "RETURN $a", frozenset({"a"}))
    assert q in {q}
