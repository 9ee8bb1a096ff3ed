"""The Python around the Neo4j store's Cypher, against the recorded-result fake driver (no server):
loader, batching, transient retries, bookmarks, capability decisions (GDS absent, sandboxed, old),
doctor, over-fetching and exactly re-scored vector look-ups (phrases, passages, facts), ingestion and
delete sequencing. The PPR engines and projections run on a live server
(tests/neo4j/test_neo4j_engines_live.py)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from neo4j.exceptions import ClientError, ServiceUnavailable, TransientError

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
    PhraseRecord,
    SynonymEdge,
)
from hipporag_neo4j.stores.neo4j import Neo4jStore, graph_model, schema
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
from hipporag_neo4j.stores.neo4j.projection import graph_name
from hipporag_neo4j.stores.neo4j.runner import CypherRunner, batches
from tests.support.neo4j_fake import FakeDriver, server
from tests.support.neo4j_store_fakes import open_store, opened_driver, passage, settings, vec, write_driver

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[4]


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
        ("5.26.0", "2.3.1", "auto", "local", "procedure"),  # GDS without the Cypher aggregation projection
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
    too_old = decide("5.20.0", "enterprise", "2.5.0", None)
    assert not too_old.usable and "5.26+" in too_old.problems[0] and "dynamic labels" in too_old.problems[0]
    assert not decide("5.26.0", "community", None, None).problems
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


# --- the store ----------------------------------------------------------------------------------


def created_meanwhile() -> ClientError:
    """What Neo4j answers an ``IF NOT EXISTS`` create racing another transaction's create of that index
    (seen live on 2026.01.4 with processes opening the same new dimension at once)."""
    error = ClientError._hydrate_neo4j(
        code="Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
        message="An equivalent index already exists",
    )
    assert isinstance(error, ClientError)
    return error


def test_open_survives_other_processes_creating_the_same_indexes_one_after_another() -> None:
    """Another process creates the three vector indexes one statement after another while this one does:
    this open loses the race on the passage index, then (re-running the script) on the fact index, and
    still opens, each created index awaited. Before, a second lost race failed the open."""
    driver = opened_driver()
    driver.on("schema_vector_indexes#1", created_meanwhile(), [])
    driver.on("schema_vector_indexes#2", created_meanwhile(), [])
    open_store(driver)
    ran = [n for n in driver.names_run() if n.startswith("schema_vector_indexes")]
    assert ran == [
        "schema_vector_indexes#0",
        "schema_vector_indexes#1",  # lost
        "schema_vector_indexes#0",
        "schema_vector_indexes#1",
        "schema_vector_indexes#2",  # lost
        "schema_vector_indexes#0",
        "schema_vector_indexes#1",
        "schema_vector_indexes#2",
    ]
    assert len(driver.named("schema_await_index")) == 3


def test_a_schema_failure_that_is_not_a_lost_race_is_raised_after_one_retry() -> None:
    driver = opened_driver()
    driver.on("schema_vector_indexes#0", ClientError("Invalid input 'VECTOR'"))
    with pytest.raises(StoreError, match="schema_vector_indexes"):
        open_store(driver)
    assert len(driver.named("schema_vector_indexes#0")) == 2


def test_a_lost_race_that_never_ends_is_raised() -> None:
    driver = opened_driver()
    driver.on("schema_constraints#0", created_meanwhile())
    with pytest.raises(StoreError, match="equivalent index already exists"):
        open_store(driver)
    assert len(driver.named("schema_constraints#0")) == schema.SCHEMA_ATTEMPTS


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
    assert ran[:5] == [
        "server_components",
        "server_plugins",
        "server_gds_version",
        "server_gds_probe",
        "schema_constraints#0",
    ]
    assert [n for n in ran if n.startswith("schema_vector_indexes")] == [
        f"schema_vector_indexes#{i}" for i in range(3)
    ]
    assert {c.params["dimension"] for c in driver.calls if c.name.startswith("schema_vector_indexes")} == {
        384
    }
    awaited = [c.params["index_name"] for c in driver.named("schema_await_index")]
    assert awaited == [graph_model.vector_index_name(k, 384) for k in graph_model.EMBEDDED_KINDS]
    created = [text for name, text in driver.spliced if name.startswith("schema_vector_indexes")]
    assert len(created) == 3 and "hipporag_passage_embedding_384" in created[0]
    assert "FOR (n:PassageEmbedding384) ON n.embedding" in created[0]
    assert ran.index("meta_read") < ran.index("schema_vector_indexes#0") < ran.index("meta_create")
    create = driver.named("meta_create")[0].params
    assert create == {
        "namespace": "kb",
        "schema_version": SCHEMA_VERSION,
        "embedding_model": "all-MiniLM-L6-v2",
        "embedding_dim": 384,
        "vector_labels": "unlabelled",  # vector_search=client: the nodes stay out of the vector indexes
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
        [
            {"name": graph_model.vector_index_name(k, 384), "label": "x", "dimensions": 384}
            for k in graph_model.EMBEDDED_KINDS
        ],
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
    driver = opened_driver()  # a hand-made index with our name and another size
    driver.on(
        "schema_vector_index_dimensions",
        [{"name": "hipporag_phrase_embedding_384", "label": "PhraseEmbedding384", "dimensions": 768}],
    )
    with pytest.raises(ModelMismatchError, match="DROP INDEX"):
        open_store(driver)
    with pytest.raises(CapabilityError, match=r"5\.15"):
        open_store(opened_driver(version="5.12.0"))
    with pytest.raises(CapabilityError, match="not installed"):
        open_store(opened_driver(gds=None), ppr_engine="gds")


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
    # one transaction, committed (then the in-process copy, made to keep the vectors written, reads
    # which database it is valid for and looks for its on-disk cache (meta_read), outside it)
    [write_tx] = {c.tx for c in driver.calls if c.name not in ("server_database_id", "meta_read")}
    assert write_tx in driver.committed
    assert driver.calls[0].name == "meta_bump_version"  # the namespace lock comes first
    assert [len(c.params["rows"]) for c in driver.named("write_phrases")] == [2, 2, 1]
    # each node labelled with its dimension by the statement that writes it
    for name, kind in (("write_phrases", "Phrase"), ("write_passages", "Passage"), ("write_facts", "Fact")):
        assert {(tuple(c.params["labels"]), c.params["prefix_label"]) for c in driver.named(name)} == {
            ((f"{kind}Embedding384",), f"{kind}Embedding")
        }
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
    # the RELATION edge brought forward by the three new statements of its pair, not recomputed; the
    # passage counts by write_mentions (nothing is recounted on a write)
    assert [c.params["rows"] for c in driver.named("write_relations")] == [
        [{"subject_id": "ph0", "object_id": "ph1", "weight": 3, "predicates": ["born in", "lives in"]}]
    ]
    assert not driver.named("refresh_relations") and not driver.named("refresh_passage_counts")


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
    store = open_store(driver, vector_search="index")
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
    store = open_store(driver, vector_search="index")
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
    store = open_store(driver, vector_search="index")
    scores = store.view().dense_passage_scores(vec(1, 0, 0), 2)
    assert calls == [18, 72]
    assert [(s.passage_id, round(s.score, 6)) for s in scores] == [("p2", 0.9), ("p1", 0.8)]


# --- reads through the store -------------------------------------------------------------------


def test_reads_map_records() -> None:
    driver = opened_driver()
    driver.on("read_passages", [{"id": "p1", "title": None, "text": "hello", "metadata_json": '{"a": 1}'}])
    driver.on("read_phrases_by_name", [{"id": "ph1", "name": "paris", "passage_count": 3}])
    driver.on(
        "read_texts_passage",
        [{"id": "p1", "title": "T", "text": "x"}, {"id": "p2", "title": None, "text": "y"}],
        [],
    )
    # vector_search=index: the server answers phrases_by_name (with client, the in-process copy does)
    store = open_store(driver, vector_search="index")
    assert store.get_passages(["p1"]) == {"p1": Passage(id="p1", text="hello", metadata={"a": 1})}
    assert store.phrases_by_name(["paris"])["paris"].similarity == 1.0
    assert list(store.iter_texts("passage", 2)) == [[("p1", "T\nx"), ("p2", "y")]]
    assert driver.named("read_texts_passage")[1].params["after"] == "p2"


def test_open_of_another_dimension_adds_its_indexes_beside_the_others() -> None:
    """Namespaces of several dimensions share a database: a 768-d namespace gets its own indexes while
    the 384-d ones exist."""
    driver = opened_driver()
    driver.on(
        "schema_vector_index_dimensions",
        [
            {"name": graph_model.vector_index_name(k, 384), "label": "x", "dimensions": 384}
            for k in graph_model.EMBEDDED_KINDS
        ],
    )
    open_store(driver, dim=768)
    created = [text for name, text in driver.spliced if name.startswith("schema_vector_indexes")]
    assert len(created) == 3 and all("_embedding_768 IF NOT EXISTS" in text for text in created)
    assert not driver.named("schema_drop_vector_indexes#0")


def test_open_migrates_the_single_indexes_of_an_older_store() -> None:
    driver = opened_driver()
    legacy = [
        {"name": name, "label": kind.capitalize(), "dimensions": 384}
        for kind, name in graph_model.LEGACY_VECTOR_INDEXES.items()
    ]
    driver.on("schema_vector_index_dimensions", legacy, legacy, [])
    for kind in graph_model.EMBEDDED_KINDS:
        driver.on(f"migrate_embedding_labels_{kind}", [{"labelled": 7}], [{"labelled": 0}])
    open_store(driver)
    ran = driver.names_run()
    for kind in graph_model.EMBEDDED_KINDS:
        calls = driver.named(f"migrate_embedding_labels_{kind}")
        assert len(calls) == 2 and calls[0].params["label"] == f"{kind.capitalize()}Embedding384"
    assert ran.index("migrate_embedding_labels_fact") < ran.index("schema_vector_indexes#0")
    assert ran.index("schema_vector_indexes#0") < ran.index("schema_drop_legacy_vector_indexes#0")


def test_set_embedding_model_keeps_other_dimensions_and_drops_unused_indexes() -> None:
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
    driver.on("meta_dimensions", [{"embedding_dim": 384}, {"embedding_dim": 768}])  # another 384-d one
    driver.calls.clear()
    store.set_embedding_model("big", 768)
    assert {c.params["dimension"] for c in driver.calls if c.name.startswith("schema_vector_indexes")} == {
        768
    }
    assert not driver.named("schema_drop_vector_indexes#0")
    driver.on("meta_dimensions", [{"embedding_dim": 768}])  # the last 384-d namespace moved
    store.set_embedding_model("small", 384)
    store.set_embedding_model("big", 768)
    dropped = [text for name, text in driver.spliced if name.startswith("schema_drop_vector_indexes")]
    assert dropped and "hipporag_phrase_embedding_384" in "".join(dropped)


def test_cypher_query_dataclass_is_hashable_and_frozen() -> None:
    q = CypherQuery("x", "RETURN $a", frozenset({"a"}))
    assert q in {q}


# --- issue 9, item 5: causal consistency across the store's sessions -----------------------------


def test_every_session_shares_one_bookmark_manager_so_reads_follow_writes() -> None:
    """On a cluster or Aura a read routed to a follower sees the store's earlier writes only when its
    session starts from their bookmarks: one bookmark manager for every session of the store."""
    driver = write_driver(existing=set())
    driver.on("meta_graph_version", [{"graph_version": 2}])
    driver.on("read_passage_count", [{"passages": 1}])
    driver.on(
        "client_state", [{"graph_version": 2, "embedding_model": "all-MiniLM-L6-v2", "embedding_dim": 384}]
    )
    driver.on("client_phrases", [{"ids": ["ph0"], "names": ["p"], "passage_counts": [1], "written_in": [0]}])
    store = open_store(driver)
    store.write_passages([PhraseRecord("ph0", "p", vec(1, 0, 0))], [passage("p1", {"ph0": 1})])
    driver.calls.clear()
    store.meta()
    assert store.existing_passages(["p1"]) == set()
    assert store.passage_count() == 1
    reads = [c for c in driver.calls if c.access_mode == "READ"]
    assert reads and all(c.causal for c in reads), [c.name for c in reads if not c.causal]
    managers = {id(m) for m in driver.sessions_bookmark_managers}
    assert len(managers) == 1 and driver.sessions_bookmark_managers[0] is store.runner.bookmark_manager
    assert driver.latest_write_bookmark in store.runner.bookmark_manager.get_bookmarks()


def test_without_a_shared_bookmark_manager_the_fake_flags_stale_reads() -> None:
    """The fake's model of a lagging follower (so the test above can fail)."""
    driver = FakeDriver().on("meta_graph_version", [{"graph_version": 1}])
    with driver.session(default_access_mode="WRITE") as session, session.begin_transaction() as tx:
        tx.run(load_query("meta_graph_version").text, {"namespace": "kb"})
        tx.commit()
    with driver.session(default_access_mode="READ") as session, session.begin_transaction() as tx:
        tx.run(load_query("meta_graph_version").text, {"namespace": "kb"})
    assert [c.causal for c in driver.calls] == [True, False]


# --- issue 9, item 6: exact re-scoring of vector-index candidates --------------------------------
# (the exact scores, thresholds and over-fetching on a server: tests/neo4j/test_neo4j_vector_doctor_live.py)


def test_a_quantized_lowest_score_just_under_the_threshold_fetches_again() -> None:
    from hipporag_neo4j.stores.neo4j.vector_search import SCORE_MARGIN, _row_complete

    row = {"matches": [], "fetched": 20, "lowest_score": 0.9 - SCORE_MARGIN / 2}
    assert not _row_complete(row, wanted=3, fetch=20, min_score=0.9)  # could still hide a match
    row["lowest_score"] = 0.9 - 2 * SCORE_MARGIN
    assert _row_complete(row, wanted=3, fetch=20, min_score=0.9)


# --- issue 7: fact search -------------------------------------------------------------------------


def test_nearest_facts_use_search_on_2026() -> None:
    """Neo4j 2026.04+ (neither live pair: 2026.01 and 5.26 use db.index.vector.queryNodes): the Cypher 25
    SEARCH statement, with the index of the query's dimension spliced in."""
    match = {"id": "f1", "subject_id": "ph01", "subject": "phrase 1", "predicate": "is", "object_id": "ph02",
             "object": "phrase 2", "score": 0.9}  # fmt: skip
    driver = opened_driver(version="2026.04.0", gds="2.26.0")
    driver.on("vector_facts_search", [{"fetched": 1, "matches": [match]}])
    store = open_store(driver, vector_search="index")
    hits = store.view().nearest_facts(np.ones(8, dtype=np.float32) / np.sqrt(8), 3)
    assert [h.id for h in hits] == ["f1"] and hits[0].similarity == pytest.approx(0.8)
    assert driver.named("vector_facts_search") and not driver.named("vector_facts")
    [call] = driver.named("vector_facts_search")
    assert call.params["namespace"] == "kb" and call.params["fetch"] == 19 and len(call.params["vector"]) == 8
    spliced = next(text for name, text in driver.spliced if name == "vector_facts_search")
    assert spliced.count("_embedding_8") == 1


# --- issue 9, item 8: one synonym rule on both stores --------------------------------------------


def test_an_existing_synonym_keeps_its_score_and_the_last_edge_of_a_call_wins() -> None:
    text = load_query("write_synonyms").text
    assert "ON CREATE SET e.score = row.score" in text
    assert "\nSET e.score" not in text  # an unconditional SET overwrote stored scores
    driver = opened_driver().on("write_synonyms", lambda p: [{"created": len(p["rows"])}])
    store = open_store(driver)
    store.write_synonyms([SynonymEdge("b", "a", 0.9), SynonymEdge("a", "b", 0.8)])
    assert driver.named("write_synonyms")[0].params["rows"] == [
        {"source_id": "a", "target_id": "b", "score": pytest.approx(0.8)}
    ]


# --- GDS present but not allowed to run ------------------------------------------------------------


def test_gds_restricted_by_the_sandbox_is_told_apart_from_no_gds() -> None:
    driver = server(FakeDriver(), gds="2.13.2")
    driver.on(
        "server_gds_probe",
        ClientError(
            "gds.graph.list is unavailable because it is sandboxed and has dependencies outside of the "
            "sandbox. Sandboxing is controlled by the dbms.security.procedures.unrestricted setting."
        ),
    )
    runner, _ = runner_for(driver)
    caps = detect(runner)
    assert caps.gds_status == "restricted" and caps.ppr_engine == "local" and caps.usable
    notes = " ".join(caps.notes)
    assert "dbms.security.procedures.unrestricted" in notes
    assert "NEO4J_dbms_security_procedures_unrestricted=gds.*" in notes
    strict = detect(runner, "gds")
    assert not strict.usable and "dbms.security.procedures.unrestricted" in strict.problems[0]
    absent = detect(runner_for(server(FakeDriver(), gds=None))[0])
    assert absent.gds_status == "absent" and "not installed" in " ".join(absent.notes)
    assert "dbms.security.procedures.allowlist" in " ".join(absent.notes)
    other = server(FakeDriver(), gds="2.13.2").on("server_gds_probe", ClientError("Invalid input"))
    with pytest.raises(StoreError):
        detect(runner_for(other)[0])


def test_capability_notes_make_no_claim_that_gds_and_the_local_engine_disagree() -> None:
    caps = decide("2025.04.0", "community", "2.17.0", None)
    notes = " ".join(caps.notes)
    assert "loses the mass" not in notes and "isolated" not in notes
    assert "normalised" in notes and caps.gds_status == "ok"
    from hipporag_neo4j.stores.neo4j import capabilities, engines

    assert not hasattr(capabilities, "DANGLING_NOTE")
    assert "lets the mass of a dangling node" not in (engines.__doc__ or "")


def test_doctor_warns_when_gds_is_sandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """No live server here sandboxes GDS; doctor's report of a usable GDS (the engine auto runs, the
    projections' memory) is tests/neo4j/test_neo4j_vector_doctor_live.py."""
    import neo4j

    from hipporag_neo4j.diagnostics import doctor
    from hipporag_neo4j.settings import Settings, StoreSettings

    settings = Settings(
        store=StoreSettings(backend="neo4j"), neo4j=Neo4jSettings(uri="neo4j://x:7687", namespace="kb")
    )
    restricted = server(FakeDriver(), gds="2.13.2").on(
        "server_gds_probe", ClientError("... is sandboxed ...")
    )
    monkeypatch.setattr(neo4j.GraphDatabase, "driver", lambda *a, **k: restricted)
    status, detail, _ = doctor._neo4j_store(settings)
    assert status == "warn" and "sandboxed" in detail and "dbms.security.procedures.unrestricted" in detail


def test_list_and_chunk_reads_map_records() -> None:
    driver = opened_driver()
    driver.on(
        "list_passages",
        [{"id": "d#0", "title": "T", "metadata_json": '{"parent_id": "d", "chunk": 0}', "chars": 7}],
    )
    driver.on(
        "read_passages_by_parent",
        [
            {"parent": "d", "id": "d#1", "metadata_json": '{"parent_id": "d", "chunk": 1}'},
            {"parent": "d", "id": "d#0", "metadata_json": '{"parent_id": "d", "chunk": 0}'},
            {"parent": "d", "id": "d#own", "metadata_json": "{}"},  # a user's id that only looks alike
        ],
    )
    store = open_store(driver)
    [info] = store.list_passages("c", 10)
    assert (info.id, info.parent_id, info.chunk, info.chars) == ("d#0", "d", 0, 7)
    call = driver.named("list_passages")[0].params
    assert (call["after"], call["limit"], call["namespace"]) == ("c", 10, "kb")
    assert store.passages_by_parent(["d", "d"]) == {"d": ["d#0", "d#1"]}
    assert driver.named("read_passages_by_parent")[0].params["ids"] == ["d"]
    assert store.passages_by_parent([]) == {}


def test_drop_namespace_runs_projections_nodes_in_batches_meta_last_then_unused_indexes() -> None:
    meta = {"schema_version": SCHEMA_VERSION, "embedding_model": "all-MiniLM-L6-v2", "embedding_dim": 384}
    driver = opened_driver(meta)
    store = open_store(driver)
    counts = dict.fromkeys(("passages", "phrases", "facts", "relation_edges", "synonym_edges", "mentions"), 0)
    driver.on("read_stats", [{**counts, "passages": 12_000, "phrases": 9_000, "facts": 5}])
    driver.on("meta_graph_version", [{"graph_version": 3}])
    driver.on("gds_drop_namespace_graphs", [{"dropped": "hipporag.neo4j.kb.phrases.v3"}])
    driver.on("drop_namespace_relationships", [{"deleted": 50_000}], [{"deleted": 7}], [{"deleted": 0}])
    driver.on(
        "drop_namespace_nodes",
        [{"deleted": 10_000}],
        [{"deleted": 10_000}],
        [{"deleted": 1_005}],
        [{"deleted": 0}],
    )
    driver.on("meta_dimensions", [])  # no namespace records 384 any more

    report = store.drop_namespace()

    assert report.removed is not None and report.removed.passages == 12_000
    assert report.projections_dropped == ["hipporag.neo4j.kb.phrases.v3"]
    assert report.vector_index_dims_dropped == [384]
    ran = driver.names_run()
    assert ran.count("drop_namespace_nodes") == 4  # until a batch deletes nothing
    assert {c.params["limit"] for c in driver.named("drop_namespace_nodes")} == {10_000}
    # the relationships first, in batches of their own (a batch of nodes was bounded by nodes, not degree)
    assert ran.count("drop_namespace_relationships") == 3
    assert {c.params["limit"] for c in driver.named("drop_namespace_relationships")} == {50_000}
    last_relationships = max(i for i, n in enumerate(ran) if n == "drop_namespace_relationships")
    assert last_relationships < ran.index("drop_namespace_nodes")
    assert driver.named("gds_drop_namespace_graphs")[0].params["prefix"] == "hipporag.neo4j.kb."
    order = [ran.index(n) for n in ("gds_drop_namespace_graphs", "drop_namespace_nodes")]
    assert order == sorted(order)
    assert ran.index("drop_namespace_meta") > max(i for i, n in enumerate(ran) if n == "drop_namespace_nodes")
    assert ran.index("schema_drop_vector_indexes#0") > ran.index("drop_namespace_meta")
    # each batch is its own write transaction
    txs = {c.tx for c in driver.named("drop_namespace_nodes")}
    assert len(txs) == 4


def test_drop_namespace_keeps_indexes_another_namespace_uses_and_skips_gds_without_it() -> None:
    meta = {"schema_version": SCHEMA_VERSION, "embedding_model": "all-MiniLM-L6-v2", "embedding_dim": 384}
    driver = opened_driver(meta, gds=None)
    store = open_store(driver)
    driver.on(
        "read_stats",
        [dict.fromkeys(("passages", "phrases", "facts", "relation_edges", "synonym_edges", "mentions"), 1)],
    )
    driver.on("meta_graph_version", [{"graph_version": 1}])
    driver.on("drop_namespace_relationships", [{"deleted": 0}])
    driver.on("drop_namespace_nodes", [{"deleted": 3}], [{"deleted": 0}])
    driver.on("meta_dimensions", [{"embedding_dim": 384}])

    report = store.drop_namespace()

    assert report.vector_index_dims_dropped == [] and report.projections_dropped == []
    ran = driver.names_run()
    assert "gds_drop_namespace_graphs" not in ran
    assert not any(n.startswith("schema_drop_vector_indexes") for n in ran)


def test_stats_reads_the_counts_again_when_a_commit_straddled_them() -> None:
    """Neo4j reads are READ COMMITTED: one statement's counts can straddle a writer's commit (seen live on
    2026.01 in the reader-during-indexing test). stats() brackets them with the graph version, which every
    write transaction bumps first, and reads again until no commit fell in between."""
    meta = {"schema_version": SCHEMA_VERSION, "embedding_model": "all-MiniLM-L6-v2", "embedding_dim": 384}
    driver = opened_driver(meta)
    store = open_store(driver)
    names = ("passages", "phrases", "facts", "relation_edges", "synonym_edges", "mentions")
    straddled = {**dict.fromkeys(names, 0), "passages": 12, "mentions": 64, "facts": 36}
    whole = {**dict.fromkeys(names, 0), "passages": 16, "mentions": 64, "facts": 48}
    driver.on("read_stats", [straddled], [whole])
    # before / after the first read (a commit in between), then before / after the second, then stats' own
    driver.on("meta_graph_version", *([{"graph_version": v}] for v in (4, 5, 5, 5, 5)))

    stats = store.stats()

    assert (stats.passages, stats.mentions, stats.facts) == (16, 64, 48)
    assert driver.names_run().count("read_stats") == 2


# --- issue 35: writes at size: transactions bounded, rows sorted by their MERGE key ----------------


def test_transaction_groups_keep_each_passage_whole_with_the_phrases_it_needs_first() -> None:
    from hipporag_neo4j.stores.neo4j.ingest import transaction_groups

    phrases = [PhraseRecord(f"ph{i}", f"phrase {i}", vec(1, i, 0)) for i in range(6)]
    f = FactRecord("f1", "ph2", "in", "ph5", "phrase 2 in phrase 5")
    records = [
        passage("p0", {"ph0": 1, "ph1": 1}),
        passage("p1", {"ph1": 1, "ph2": 1}, [f]),  # names ph5 through its fact only
        passage("p2", {"ph3": 1}),
    ]
    # dim 16 -> a vector weighs one row: p0 costs 2 + 2 + 2 x 2 = 8, p1 2 + 2 + 4 + 2 x 2 = 12, p2 6
    groups = transaction_groups(phrases, records, 16, budget=12)
    assert [[r.passage.id for r in g] for _, g in groups] == [["p0"], ["p1"], ["p2"]]
    assert [[p.id for p in ph] for ph, _ in groups] == [["ph4", "ph0", "ph1"], ["ph2", "ph5"], ["ph3"]]
    # one group when it fits, in the order given
    [(all_phrases, all_records)] = transaction_groups(phrases, records, 16, budget=100)
    assert sorted(p.id for p in all_phrases) == [p.id for p in phrases] and all_records == records
    # a passage bigger than the budget still goes, alone
    assert [len(g) for _, g in transaction_groups(phrases, records, 16, budget=1)] == [1, 1, 1]


def test_a_write_too_big_for_one_transaction_commits_whole_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    from hipporag_neo4j.stores.neo4j import ingest

    monkeypatch.setattr(ingest, "TRANSACTION_ROWS", 1)
    driver = write_driver(existing=set())
    store = open_store(driver, dim=3)
    driver.calls.clear()
    phrases = [PhraseRecord(f"ph{i}", f"phrase {i}", vec(1, i, 0)) for i in (2, 0, 1)]
    records = [passage("p1", {"ph1": 1, "ph0": 1}), passage("p0", {"ph2": 1})]
    result = store.write_passages(phrases, records)
    assert result.passages == ["p1", "p0"]
    txs = list(dict.fromkeys(c.tx for c in driver.calls if c.name not in ("server_database_id", "meta_read")))
    assert len(txs) == 2 and all(tx in driver.committed for tx in txs)
    for tx in txs:  # each takes the namespace's lock first and writes its own passage and phrases
        calls = [c for c in driver.calls if c.tx == tx]
        assert calls[0].name == "meta_bump_version"
    rows = [[r["id"] for r in c.params["rows"]] for c in driver.named("write_phrases")]
    assert rows == [["ph0", "ph1"], ["ph2"]]  # sorted by the MERGE key within each transaction
    mentions = [
        [(r["passage_id"], r["phrase_id"]) for r in c.params["rows"]] for c in driver.named("write_mentions")
    ]
    assert mentions == [[("p1", "ph0"), ("p1", "ph1")], [("p0", "ph2")]]


def test_synonyms_in_several_transactions_clear_the_pending_marks_in_the_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hipporag_neo4j.stores.neo4j import ingest

    monkeypatch.setattr(ingest, "SYNONYM_ROWS", 2)
    driver = opened_driver().on("write_synonyms", lambda p: [{"created": len(p["rows"])}])
    driver.on("synonyms_pending_clear", lambda p: [{"cleared": len(p["ids"])}])
    store = open_store(driver)
    driver.calls.clear()
    edges = [SynonymEdge("c", "a", 0.9), SynonymEdge("b", "a", 0.85), SynonymEdge("a", "c", 0.95)]
    edges.append(SynonymEdge("d", "b", 0.8))
    assert store.write_synonyms(edges, done=["a", "b", "c", "d"]) == 3
    writes = driver.named("write_synonyms")
    assert [[(r["source_id"], r["target_id"], r["score"]) for r in c.params["rows"]] for c in writes] == [
        [("a", "b", pytest.approx(0.85)), ("a", "c", pytest.approx(0.95))],  # the last edge of a pair wins
        [("b", "d", pytest.approx(0.8))],
    ]
    assert len({c.tx for c in writes}) == 2 and all(c.tx in driver.committed for c in writes)
    [clear] = driver.named("synonyms_pending_clear")
    assert clear.tx == writes[-1].tx and clear.params["ids"] == ["a", "b", "c", "d"]
