"""The Neo4j side of linking without a server: which statements run, with which parameters, in which
transactions (the recorded-result fake driver); the statements themselves are linted in
test_cypher_lint.py and run against a server in test_linking.py's Neo4j tests; retrieval over the joined
graph, on every engine, is tests/neo4j/test_neo4j_joined_live.py."""

from __future__ import annotations

from typing import Any

import pytest

from hipporag_neo4j.errors import InputError
from hipporag_neo4j.linking.model import SameAs
from hipporag_neo4j.linking.neo4j import Neo4jEnterpriseGraph
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.neo4j.store import Neo4jStore
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
