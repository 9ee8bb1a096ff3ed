"""The Neo4j side of linking without a server: which statements run, with which parameters, in which
transactions (the recorded-result fake driver); the statements themselves are linted in
test_cypher_lint.py and run against a server in test_linking.py's Neo4j tests."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from hipporag_neo4j.errors import InputError
from hipporag_neo4j.linking.model import SameAs
from hipporag_neo4j.linking.neo4j import Neo4jEnterpriseGraph
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import GraphJoin, PassageScore, WalkParams
from hipporag_neo4j.stores.neo4j.client_copy import ClientCopy
from hipporag_neo4j.stores.neo4j.engines import AuraPpr, GdsPpr, LocalPpr, PprEngine
from hipporag_neo4j.stores.neo4j.projection import ProjectionCatalog, ProjectionKind, join_infix
from hipporag_neo4j.stores.neo4j.runner import CypherRunner
from hipporag_neo4j.stores.neo4j.store import Neo4jStore
from tests.support.aura_fakes import FakeSessions
from tests.support.neo4j_emulation import FakeGraph, FakeServer
from tests.support.neo4j_fake import FakeDriver

pytestmark = pytest.mark.unit


def graph(driver: FakeDriver) -> Neo4jEnterpriseGraph:
    settings = Neo4jSettings(uri="neo4j://localhost:7687", namespace="kb")
    return Neo4jEnterpriseGraph(Neo4jStore(settings, driver=driver))  # type: ignore[arg-type]


def test_node_values_are_read_in_pages() -> None:
    nodes = [{"id": f"4:x:{i}", "value": f"Customer {i}"} for i in range(5)]
    driver = FakeDriver().on("link_node_values", lambda p: nodes[p["skip"] : p["skip"] + p["limit"]])
    batches = list(graph(driver).node_values("Customer", "name", 2))
    assert [len(b) for b in batches] == [2, 2, 1] and batches[0][0] == ("4:x:0", "Customer 0")
    params = [c.params for c in driver.named("link_node_values")]
    assert [(p["skip"], p["limit"]) for p in params] == [(0, 2), (2, 2), (4, 2)]
    assert all(p["label"] == "Customer" and p["property"] == "name" for p in params)


def test_links_are_merged_in_one_write_transaction_and_counted() -> None:
    driver = FakeDriver().on("link_write_same_as", [{"created": 1}])
    links = [SameAs("phrase-1", "4:x:1", 1.0, "exact"), SameAs("phrase-2", "4:x:2", 0.93, "embedding")]
    assert graph(driver).write_links(links, "Customer") == 1
    (call,) = driver.named("link_write_same_as")
    assert call.params["namespace"] == "kb"
    assert call.params["rows"][1] == {
        "phrase_id": "phrase-2",
        "node_id": "4:x:2",
        "score": 0.93,
        "method": "embedding",
    }


def test_unlink_passes_the_label_or_null() -> None:
    driver = FakeDriver().on("link_delete_same_as", [{"removed": 3}], [{"removed": 0}])
    g = graph(driver)
    assert g.delete_links("Customer") == 3 and g.delete_links() == 0
    assert [c.params["label"] for c in driver.named("link_delete_same_as")] == ["Customer", None]


def test_reads_map_records() -> None:
    driver = FakeDriver()
    driver.on(
        "link_to_nodes",
        [{"phrase_id": "phrase-1", "phrase": "acme", "passage_count": 2, "node_id": "4:x:1", "score": 1.0,
          "method": "exact"}],
    )  # fmt: skip
    driver.on(
        "link_of_passages",
        [{"passage_id": "d1", "phrase": "acme", "node_id": "4:x:1", "labels": ["Customer"], "name": "Acme",
          "score": 1.0, "method": "exact"}],
    )  # fmt: skip
    g = graph(driver)
    link = g.links_to_nodes(["4:x:1"])["4:x:1"][0]
    assert (link.phrase, link.passage_count, link.method) == ("acme", 2, "exact")
    entity = g.links_of_passages(["d1"])["d1"][0]
    assert (entity.node_id, entity.labels, entity.name, entity.via_phrase) == (
        "4:x:1",
        ["Customer"],
        "Acme",
        "acme",
    )
    assert driver.named("link_of_passages")[0].params["ids"] == ["d1"]


def test_linking_bumps_the_graph_version_in_its_transaction() -> None:
    """Joined graphs are cached per graph version: a link or unlink must move it on."""
    driver = (
        FakeDriver().on("link_write_same_as", [{"created": 1}]).on("link_delete_same_as", [{"removed": 1}])
    )
    driver.on("meta_bump_version", [{"graph_version": 8}])
    g = graph(driver)
    g.write_links([SameAs("phrase-1", "4:x:1", 1.0, "exact")], "Customer")
    g.delete_links("Customer")
    bumps = driver.named("meta_bump_version")
    assert [b.tx for b in bumps] == [
        driver.named("link_write_same_as")[0].tx,
        driver.named("link_delete_same_as")[0].tx,
    ]


def test_bad_identifiers_never_reach_the_server() -> None:
    driver = FakeDriver()
    g = graph(driver)
    bad: list[Any] = [
        lambda: list(g.node_values("Customer) DETACH DELETE n //", "name", 10)),
        lambda: list(g.node_values("Customer", "name`", 10)),
        lambda: g.delete_links("A B"),
    ]
    for call in bad:
        with pytest.raises(InputError, match="not a plain identifier"):
            call()
    assert driver.calls == []


# --- retrieval over the joined graph, on every engine (the emulated server of neo4j_fake) -------------

NS = "kb"
JOIN = GraphJoin(("SUBSIDIARY_OF",))


def joined_server() -> tuple[FakeServer, dict[str, int]]:
    """Three passages as in test_linking; Acme (a Customer) SUBSIDIARY_OF Globex (a Company), both linked;
    Initech linked to a Customer with no relationship of that type (it must stay out of reach)."""
    g = FakeGraph()
    passages = {"acme": ("acme robotics", "ohio"), "globex": ("globex holdings", "record profits"),
                "initech": ("initech", "new cfo")}  # fmt: skip
    for passage, (subject, obj) in passages.items():
        g.phrase(NS, subject)
        g.phrase(NS, obj)
        g.passage(NS, passage)
        g.mention(NS, passage, subject, 1)
        g.mention(NS, passage, obj, 1)
        g.relation(NS, subject, obj, 1.0)
    nodes = {"c1": g.own_node("Customer", "Acme Robotics"), "p1": g.own_node("Company", "Globex Holdings"),
             "c2": g.own_node("Customer", "Initech"), "x": g.own_node("Company", "Elsewhere")}  # fmt: skip
    g.link(NS, "acme robotics", nodes["c1"], 1.0)
    g.link(NS, "globex holdings", nodes["p1"], 1.0)
    g.link(NS, "initech", nodes["c2"], 0.95)
    g.owned += [(nodes["c1"], "SUBSIDIARY_OF", nodes["p1"]), (nodes["c2"], "KNOWS", nodes["p1"]),
                (nodes["x"], "SUBSIDIARY_OF", nodes["x"])]  # fmt: skip
    return FakeServer(g), nodes


SESSIONS = FakeSessions()  # an Aura Graph Analytics session manager (test_neo4j_aura's fake)


def engines(srv: FakeServer) -> dict[str, PprEngine]:
    driver = srv.install(FakeDriver())
    runner = CypherRunner(
        driver, "neo4j", batch_size=500, max_retries=1, sleep=lambda _: None, jitter=lambda: 0.0
    )  # type: ignore[arg-type]
    catalogs: dict[tuple[ProjectionKind, GraphJoin | None], ProjectionCatalog] = {}

    def catalog(kind: ProjectionKind, join: GraphJoin | None = None) -> ProjectionCatalog:
        return catalogs.setdefault((kind, join), ProjectionCatalog(runner, "neo4j", NS, kind, join))

    copy = ClientCopy(runner, NS)
    aura = AuraPpr(copy, SESSIONS, session="s", memory=None, ttl=timedelta(minutes=5))
    return {
        "local": LocalPpr(copy),
        "gds-weighted": GdsPpr(runner, catalog, NS, weighted=True),
        "gds-linear": GdsPpr(runner, catalog, NS, weighted=False),
        "aura": aura,
    }


def relative(scores: list[PassageScore]) -> list[tuple[str, float]]:
    """Passage ids with scores over the best one: the GDS statements divide by the mass on phrases and
    passages, the in-process engine by all of it (your nodes too); rankings and ratios agree."""
    return [(s.passage_id, round(s.score / scores[0].score, 6)) for s in scores]


def test_joined_walk_reaches_the_subsidiary_on_every_engine() -> None:
    srv, _ = joined_server()
    found: dict[str, list[list[tuple[str, float]]]] = {}
    for name, engine in engines(srv).items():
        globex = {"globex holdings": 1.0}  # the fake keys phrases by name
        plain = engine.passage_scores(globex, WalkParams(0.5, 300, 1e-12), 5, 2)
        joined = engine.passage_scores(globex, WalkParams(0.5, 300, 1e-12), 5, 2, JOIN)
        same_as_only = engine.passage_scores(globex, WalkParams(0.5, 300, 1e-12), 5, 2, GraphJoin())
        walk = engine.passage_node_scores(globex, {}, WalkParams(0.5, 300, 1e-12), 5, 2, JOIN)
        walk_plain = engine.passage_node_scores(globex, {}, WalkParams(0.5, 300, 1e-12), 5, 2)
        assert [s.passage_id for s in plain] == ["globex"] == [s.passage_id for s in same_as_only], name
        assert [s.passage_id for s in joined] == ["globex", "acme"], name  # not initech: KNOWS not followed
        assert [s.passage_id for s in walk] == ["globex", "acme"], name
        assert [s.passage_id for s in walk_plain] == ["globex"], name
        found[name] = [relative(joined), relative(walk)]
    assert found["local"] == found["gds-weighted"] == found["gds-linear"] == found["aura"]
    infix = join_infix(JOIN)[:-1]  # joined.<digest>
    assert {f"hipporag-phrases.{infix}-v1", f"hipporag-passages.{infix}-v1"} <= set(SESSIONS.constructed)
    joined_projections = [name for name in srv.catalog if join_infix(JOIN) in name]
    assert len(joined_projections) == 2  # one per kind, beside the plain ones and the SAME_AS-only ones
    sizes = sorted(len(srv.catalog[n].iids) for n in joined_projections)
    assert sizes == [6 + 3, 6 + 3 + 3]  # phrases (+ passages) + c1, p1, c2 (x touches no linked node)
