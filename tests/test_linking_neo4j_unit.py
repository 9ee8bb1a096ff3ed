"""The Neo4j side of linking without a server: which statements run, with which parameters, in which
transactions (the recorded-result fake driver); the statements themselves are linted in
test_cypher_lint.py and run against a server in test_linking.py's Neo4j tests."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j_fake import FakeDriver

from hipporag_neo4j.errors import InputError
from hipporag_neo4j.linking.model import SameAs
from hipporag_neo4j.linking.neo4j import Neo4jEnterpriseGraph
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.neo4j.store import Neo4jStore

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
        "link_from_phrases",
        [{"phrase_id": "phrase-1", "node_id": "4:x:1", "labels": ["Customer"], "name": "Acme", "score": 1.0,
          "method": "exact"}],
    )  # fmt: skip
    driver.on(
        "link_to_nodes", [{"phrase_id": "phrase-1", "node_id": "4:x:1", "score": 1.0, "method": "exact"}]
    )
    driver.on("link_neighbours", [{"source": "4:x:1", "type": "SUBSIDIARY_OF", "target": "4:x:9"}])
    g = graph(driver)
    assert g.links_from_phrases(["phrase-1"])["phrase-1"][0].name == "Acme"
    assert g.links_to_nodes(["4:x:1"])["4:x:1"][0].method == "exact"
    assert g.neighbours(["4:x:1"], ["SUBSIDIARY_OF"])[0].target == "4:x:9"
    assert driver.named("link_neighbours")[0].params["types"] == ["SUBSIDIARY_OF"]


def test_bad_identifiers_never_reach_the_server() -> None:
    driver = FakeDriver()
    g = graph(driver)
    bad: list[Any] = [
        lambda: list(g.node_values("Customer) DETACH DELETE n //", "name", 10)),
        lambda: list(g.node_values("Customer", "name`", 10)),
        lambda: g.delete_links("A B"),
        lambda: g.neighbours(["4:x:1"], ["KNOWS|LIKES"]),
    ]
    for call in bad:
        with pytest.raises(InputError, match="not a plain identifier"):
            call()
    assert driver.calls == []
