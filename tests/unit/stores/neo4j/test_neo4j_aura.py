"""The ``aura`` PPR engine (Aura Graph Analytics sessions) against a fake at our session interface
(:class:`hipporag_neo4j.stores.neo4j.aura.SessionManager`), the engine decision for ``ppr_engine``
auto|gds|aura|local, and the signatures of every ``graphdatascience`` call the real manager makes, so an
upgrade of the client that renames one fails here. No Aura account is used.
"""

from __future__ import annotations

import inspect
from datetime import timedelta
from typing import Any

import pytest

from hipporag_neo4j.errors import CapabilityError, StoreError
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.neo4j.aura import (
    ALGORITHMS,
    SessionError,
    aura_problem,
    session_name,
)
from hipporag_neo4j.stores.neo4j.capabilities import decide
from hipporag_neo4j.stores.neo4j.engines import AuraPpr
from tests.support.aura_fakes import FakeSessions
from tests.support.neo4j_emulation import FakeServer
from tests.support.neo4j_engines import (
    DAMPING,
    NS,
    PASSAGE_SEEDS,
    PHRASE_SEEDS,
    Process,
    corpus,
    reference_passage_nodes,
    reference_passage_scores,
    reference_scores,
    store_on,
)

pytestmark = pytest.mark.unit


def aura_engine(g: Any, sessions: FakeSessions, **kw: Any) -> tuple[AuraPpr, Process]:
    process = Process(FakeServer(g), "local")
    engine = AuraPpr(
        process.copy,
        sessions,
        session=session_name("neo4j", NS),
        memory=kw.pop("memory", None),
        ttl=timedelta(minutes=30),
        **kw,
    )
    return engine, process


# --- the engine: same answers, one session, one graph per version -----------------------------------


def test_the_aura_engine_answers_the_three_questions_like_the_reference() -> None:
    g = corpus()
    sessions = FakeSessions()
    engine, _ = aura_engine(g, sessions)
    scores = engine.run(PHRASE_SEEDS, WalkParams(DAMPING, 300, 1e-13))
    reference = {k[1]: v for k, v in reference_scores(g, PHRASE_SEEDS).items() if v > 0}
    assert scores == pytest.approx(reference, abs=1e-9)
    found = engine.passage_scores(PHRASE_SEEDS, WalkParams(DAMPING, 300, 1e-13), 6, 2)
    assert [(s.passage_id, pytest.approx(s.score, abs=1e-9)) for s in found] == reference_passage_scores(
        g, PHRASE_SEEDS, 6
    )
    nodes = engine.passage_node_scores(PHRASE_SEEDS, PASSAGE_SEEDS, WalkParams(DAMPING, 300, 1e-13), 8, 3)
    expected = reference_passage_nodes(g, PHRASE_SEEDS, PASSAGE_SEEDS, 8, 3)
    assert [s.passage_id for s in nodes] == [s.passage_id for s in expected]
    assert [[n for n, _ in s.top_phrases] for s in nodes] == [[n for n, _ in s.top_phrases] for s in expected]
    assert all(sum(w for _, w in sources) == pytest.approx(1.0) for sources in sessions.sources)  # tolerance
    # one session for the namespace, sized by the estimate, one graph per kind for this version
    assert sessions.names == ["hipporag-neo4j-kb"] and sessions.memories == ["2GB"]
    assert sessions.ttls == [timedelta(minutes=30)] and len(sessions.estimates) == 1
    assert sessions.constructed == ["hipporag-phrases-v1", "hipporag-passages-v1"]


def test_a_new_graph_version_is_constructed_once_and_the_old_one_dropped() -> None:
    g = corpus()
    sessions = FakeSessions()
    engine, _ = aura_engine(g, sessions, memory="8GB")
    engine.run({"ph03": 1.0}, WalkParams(DAMPING, 100, 1e-8))
    engine.run({"ph07": 1.0}, WalkParams(DAMPING, 100, 1e-8))
    g.bump(NS)
    engine.run({"ph03": 1.0}, WalkParams(DAMPING, 100, 1e-8))
    assert sessions.constructed == ["hipporag-phrases-v1", "hipporag-phrases-v2"]
    assert sessions.dropped == ["hipporag-phrases-v1"]
    assert sessions.memories == ["8GB"] and sessions.estimates == []  # the setting wins over the estimate
    session = engine.session
    engine.close()
    assert session is not None and session.closed and "hipporag-phrases-v2" in sessions.dropped


def test_a_session_that_expires_mid_query_is_an_error_or_the_allowed_fallback() -> None:
    g = corpus()
    sessions = FakeSessions()
    engine, _ = aura_engine(g, sessions)
    engine.run({"ph03": 1.0}, WalkParams(DAMPING, 100, 1e-8))
    sessions.expired = True
    with pytest.raises(StoreError, match="session expired"):
        engine.run({"ph03": 1.0}, WalkParams(DAMPING, 100, 1e-8))
    assert engine.session is None  # the next query gets (or creates) the session again
    assert sessions.dropped == ["hipporag-phrases-v1"]  # what it had constructed: dropped as far as it can
    assert engine.run({"ph03": 1.0}, WalkParams(DAMPING, 100, 1e-8))
    assert sessions.names == ["hipporag-neo4j-kb"] * 2

    fallback, _ = aura_engine(g, FakeSessions(), fallback_local=True)
    fallback.run({"ph03": 1.0}, WalkParams(DAMPING, 100, 1e-8))
    fallback.sessions.expired = True  # type: ignore[attr-defined]
    scores = fallback.passage_node_scores(PHRASE_SEEDS, PASSAGE_SEEDS, WalkParams(DAMPING, 300, 1e-13), 5, 2)
    expected = reference_passage_nodes(g, PHRASE_SEEDS, PASSAGE_SEEDS, 5, 2)
    assert [s.passage_id for s in scores] == [s.passage_id for s in expected]  # never wrong scores
    assert fallback.fallbacks == 1


# --- the store: setting, decision, deletion, doctor ---------------------------------------------------


def test_the_store_runs_aura_when_asked_and_deletes_the_session_on_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    g = corpus()
    sessions = FakeSessions()
    srv = FakeServer(g)
    from hipporag_neo4j.stores.neo4j import Neo4jStore
    from tests.support.neo4j_fake import FakeDriver, server

    driver = server(FakeDriver(), version="5.27-aura", gds=None)
    driver.on(
        "meta_read", [{"schema_version": 1, "embedding_model": "m", "embedding_dim": 3, "graph_version": 1}]
    )
    driver.on("schema_vector_index_dimensions", [])
    srv.install(driver)
    settings = Neo4jSettings(uri="neo4j+s://x.databases.neo4j.io", namespace=NS, ppr_engine="aura")
    store = Neo4jStore(settings, driver=driver, aura_sessions=sessions)  # type: ignore[arg-type]
    store.open("m", 3)
    assert store.capabilities().ppr_engine == "aura"
    found = store.view().passage_node_scores(
        PHRASE_SEEDS, PASSAGE_SEEDS, WalkParams(DAMPING, 300, 1e-13), 4, 2
    )
    assert [s.passage_id for s in found] == [
        s.passage_id for s in reference_passage_nodes(g, PHRASE_SEEDS, PASSAGE_SEEDS, 4, 2)
    ]
    assert store.aura_sessions().list()[0].name == store.aura_session_name() == "hipporag-neo4j-kb"
    assert store.delete_aura_session() and sessions.deleted == ["hipporag-neo4j-kb"]
    store.close()


def test_auto_never_starts_a_session_and_aura_needs_the_extra_and_credentials() -> None:
    auto = decide("5.27-aura", "enterprise", None, None, "auto")
    assert auto.ppr_engine == "local"
    assert "neo4j.ppr_engine=aura" in " ".join(auto.notes)  # told, never started
    assert decide("2025.04.0", "community", "2.17.0", None, "auto").ppr_engine == "gds-weighted"
    aura = decide("5.27-aura", "enterprise", None, None, "aura")
    assert aura.ppr_engine == "aura" and aura.usable and "billed" in " ".join(aura.notes)
    blocked = decide("5.27-aura", "enterprise", None, None, "aura", aura_problem="needs credentials")
    assert not blocked.usable and blocked.problems == ["needs credentials"]
    problem = aura_problem(Neo4jSettings(uri="neo4j+s://x", ppr_engine="aura"))
    assert problem is not None and "client_id" in problem and "HIPPORAG_NEO4J__AURA__CLIENT_ID" in problem
    ready = Neo4jSettings(
        uri="neo4j+s://x", ppr_engine="aura", aura={"client_id": "id", "client_secret": "hunter2"}
    )
    assert aura_problem(ready) is None
    assert "hunter2" not in repr(ready.aura)  # a SecretStr


def test_the_store_refuses_aura_without_credentials() -> None:
    from hipporag_neo4j.stores.neo4j import Neo4jStore
    from tests.support.neo4j_fake import FakeDriver, server

    driver = server(FakeDriver(), version="5.27-aura", gds=None)
    store = Neo4jStore(Neo4jSettings(uri="neo4j+s://x", namespace=NS, ppr_engine="aura"), driver=driver)  # type: ignore[arg-type]
    with pytest.raises(CapabilityError, match="client_id"):
        store.open("m", 3)


def test_doctor_names_the_aura_session(monkeypatch: pytest.MonkeyPatch) -> None:
    import neo4j

    from hipporag_neo4j.diagnostics import doctor
    from hipporag_neo4j.settings import Settings, StoreSettings
    from tests.support.neo4j_fake import FakeDriver, server

    driver = server(FakeDriver(), version="5.27-aura", gds=None)
    monkeypatch.setattr(neo4j.GraphDatabase, "driver", lambda *a, **k: driver)
    settings = Settings(
        store=StoreSettings(backend="neo4j"),
        neo4j=Neo4jSettings(
            uri="neo4j+s://x",
            namespace=NS,
            ppr_engine="aura",
            aura={"client_id": "id", "client_secret": "s", "session_ttl_minutes": 45},
        ),
    )
    status, detail, data = doctor._neo4j_store(settings)
    assert "PPR engine: aura" in detail and "hipporag-neo4j-kb" in detail and "45 min" in detail
    assert data["aura_session"]["name"] == "hipporag-neo4j-kb" and status == "ok"


def test_store_on_a_gds_server_still_prefers_the_plugin_for_auto() -> None:
    store = store_on(FakeServer(corpus()))
    assert store.capabilities().ppr_engine == "gds-weighted"


# --- the installed client: every call we make still exists with these arguments ----------------------


def test_the_graphdatascience_calls_we_make_have_these_signatures() -> None:
    graphdatascience = pytest.importorskip("graphdatascience", reason="the [aura] extra is not installed")
    from graphdatascience.procedure_surface.api.centrality.pagerank_endpoints import PageRankEndpoints
    from graphdatascience.procedure_surface.arrow.catalog.catalog_arrow_endpoints import CatalogArrowEndpoints
    from graphdatascience.session import (
        AuraAPICredentials,
        CloudLocation,
        DbmsConnectionInfo,
        GdsSessions,
        SessionInfo,
    )
    from graphdatascience.session.aura_graph_data_science import AuraGraphDataScience

    major = int(graphdatascience.__version__.split(".")[0])
    assert major == 2, f"hipporag-neo4j targets graphdatascience 2.x, found {graphdatascience.__version__}"

    def binds(fn: Any, *args: Any, **kwargs: Any) -> None:
        inspect.signature(fn).bind(*args, **kwargs)  # raises TypeError on a renamed or removed argument

    binds(AuraAPICredentials, client_id="i", client_secret="s", project_id=None)
    binds(GdsSessions, api_credentials=object())
    binds(
        GdsSessions.estimate,
        object(),
        node_count=1,
        relationship_count=1,
        relationship_property_count=1,
        algorithms=ALGORITHMS,
    )
    binds(DbmsConnectionInfo, uri="u", username="n", password="p", database="d", aura_instance_id=None)
    binds(CloudLocation, provider="gcp", region="europe-west1")
    binds(
        GdsSessions.get_or_create,
        object(),
        session_name="s",
        memory="2GB",
        db_connection=object(),
        ttl=timedelta(1),
        cloud_location=None,
        timeout=600,
        show_progress=False,
    )
    binds(GdsSessions.list, object())
    binds(GdsSessions.delete, object(), session_name="s")
    binds(CatalogArrowEndpoints.construct, object(), "g", object(), object(), overwrite=True)
    binds(CatalogArrowEndpoints.get, object(), "g")
    binds(CatalogArrowEndpoints.drop, object(), "g", fail_if_missing=False)
    binds(
        PageRankEndpoints.stream,
        object(),
        object(),
        damping_factor=0.5,
        tolerance=1e-8,
        max_iterations=100,
        relationship_weight_property="weight",
        source_nodes=[(0, 1.0)],
    )
    assert isinstance(inspect.getattr_static(AuraGraphDataScience, "graph"), property)
    assert isinstance(inspect.getattr_static(AuraGraphDataScience, "page_rank"), property)
    binds(AuraGraphDataScience.close, object())
    assert {"name", "memory", "status", "expiry_date", "ttl"} <= set(SessionInfo.__dataclass_fields__)
    from graphdatascience.session import SessionMemory

    assert str(SessionMemory.m_2GB.value) == "2GB"  # estimate() returns SessionMemory; we keep its text


def test_the_client_wrappers_translate_our_calls_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    pd = pytest.importorskip("pandas", reason="the [aura] extra is not installed")
    pytest.importorskip("graphdatascience", reason="the [aura] extra is not installed")
    import graphdatascience.session as client

    from hipporag_neo4j.stores.neo4j import aura

    calls: dict[str, Any] = {}

    class Graphs:
        def construct(self, name: str, nodes: Any, relationships: Any, overwrite: bool) -> None:
            calls["construct"] = (name, list(nodes["nodeId"]), relationships.to_dict("list"), overwrite)

        def get(self, name: str) -> str:
            return f"G:{name}"

        def drop(self, name: str, fail_if_missing: bool) -> None:
            calls["drop"] = (name, fail_if_missing)

    class PageRank:
        def stream(self, graph: str, **kw: Any) -> Any:
            calls["stream"] = (graph, kw)
            if graph == "G:broken":
                raise RuntimeError("Arrow flight: session expired")
            return pd.DataFrame({"nodeId": [0, 1], "score": [0.3, 0.2]})

    class Gds:
        graph = Graphs()
        page_rank = PageRank()

        def close(self) -> None:
            calls["close"] = True

    session = aura._ClientSession(Gds())
    session.construct("g1", 3, [0, 1], [1, 2], [2.0, 1.0])
    assert calls["construct"] == (
        "g1",
        [0, 1, 2],
        {"sourceNodeId": [0, 1], "targetNodeId": [1, 2], "weight": [2.0, 1.0]},
        True,
    )
    assert session.page_rank("g1", [(0, 1.0)], 0.5, 100, 1e-8) == {0: 0.3, 1: 0.2}
    assert calls["stream"][1] == {
        "damping_factor": 0.5,
        "tolerance": 1e-8,
        "max_iterations": 100,
        "relationship_weight_property": "weight",
        "source_nodes": [(0, 1.0)],
    }
    with pytest.raises(SessionError, match="session expired"):
        session.page_rank("broken", [(0, 1.0)], 0.5, 100, 1e-8)
    session.drop("g1")
    session.close()
    assert calls["drop"] == ("g1", False) and calls["close"]

    made: dict[str, Any] = {}

    class Sessions:
        def __init__(self, api_credentials: Any) -> None:
            made["credentials"] = api_credentials

        def estimate(self, **kw: Any) -> Any:
            made["estimate"] = kw
            return client.SessionMemory.m_4GB

        def get_or_create(self, **kw: Any) -> Gds:
            made["get_or_create"] = kw
            return Gds()

        def list(self) -> list[Any]:
            return [
                client.SessionInfo(
                    "id", "hipporag-neo4j-kb", "4GB", None, "Ready", None, None, None, None, None, None, None
                )
            ]  # type: ignore[arg-type]

        def delete(self, session_name: str) -> bool:
            made["delete"] = session_name
            return True

    monkeypatch.setattr(client, "GdsSessions", Sessions)
    settings = Neo4jSettings(
        uri="neo4j+s://x", password="pw", ppr_engine="aura", aura={"client_id": "id", "client_secret": "sec"}
    )
    manager = aura.AuraSessions(settings)
    assert made["credentials"].client_secret == "sec"
    assert manager.estimate(10, 20) == "4GB" and made["estimate"]["algorithms"] == ["pageRank"]
    assert made["estimate"]["relationship_property_count"] == 1  # the weight
    manager.get_or_create("hipporag-neo4j-kb", "4GB", timedelta(minutes=5))
    connection = made["get_or_create"]["db_connection"]
    assert (connection.uri, connection.username, connection.password, connection.database) == (
        "neo4j+s://x",
        "neo4j",
        "pw",
        "neo4j",
    )
    assert made["get_or_create"]["ttl"] == timedelta(minutes=5)
    assert made["get_or_create"]["cloud_location"] is None  # AuraDB: the client refuses a location
    assert made["get_or_create"]["show_progress"] is False and connection.aura_instance_id is None
    assert made["get_or_create"]["timeout"] == 600  # never the client's default: wait forever
    self_managed = Neo4jSettings(
        uri="neo4j://db.example:7687",
        ppr_engine="aura",
        aura={
            "client_id": "id",
            "client_secret": "sec",
            "cloud_provider": "gcp",
            "cloud_region": "europe-west1",
        },
    )
    aura.AuraSessions(self_managed).get_or_create("hipporag-neo4j-kb", "4GB", timedelta(minutes=5))
    assert made["get_or_create"]["cloud_location"] == client.CloudLocation("gcp", "europe-west1")
    attached = Neo4jSettings(
        uri="neo4j+s://abcd1234.databases.neo4j.io",
        ppr_engine="aura",
        aura={"client_id": "id", "client_secret": "sec", "instance_id": "abcd1234"},
    )
    aura.AuraSessions(attached).get_or_create("hipporag-neo4j-kb", "4GB", timedelta(minutes=5))
    assert made["get_or_create"]["db_connection"].aura_instance_id == "abcd1234"
    assert [s.name for s in manager.list()] == ["hipporag-neo4j-kb"]
    assert manager.delete("hipporag-neo4j-kb") and made["delete"] == "hipporag-neo4j-kb"


# --- a real session (skipped unless Aura API credentials and a database are given) -------------------
