"""Linking to an enterprise graph on the embedded store: import, link, seeded retrieval, unlink."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import HashEmbedder
from pipeline_support import make_memory

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.linking.embedded import DB_FILE, EmbeddedEnterpriseGraph
from hipporag_neo4j.linking.graph_file import load_entity_graph
from hipporag_neo4j.linking.linker import link_nodes, unlink_nodes
from hipporag_neo4j.linking.seeded import linked_nodes_of, retrieve_from_nodes

pytestmark = pytest.mark.integration  # embedded store on disk (hash embedder, table extraction)

TABLE = {
    "Acme Robotics opened a plant in Ohio.": [["acme robotics", "opened plant in", "ohio"]],
    "Globex Holdings reported record profits.": [["globex holdings", "reported", "record profits"]],
    "Initech hired a new CFO.": [["initech", "hired", "new cfo"]],
}
ENTITIES = [
    {"node": "c1", "labels": ["Customer"], "properties": {"name": "Acme Robotics", "tier": "gold"}},
    {"node": "c2", "labels": ["Customer"], "properties": {"name": "Initech variant"}},  # near-duplicate name
    {"node": "c3", "labels": ["Customer"], "properties": {"name": "Nobody Corp"}},
    {"node": "c4", "labels": ["Customer"], "properties": {"region": "EMEA"}},  # no name: not a candidate
    {"node": "p1", "labels": ["Company"], "properties": {"name": "Globex Holdings"}},
    {"source": "c1", "type": "SUBSIDIARY_OF", "target": "p1"},
]


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[HippoRAG, EmbeddedEnterpriseGraph, Path]]:
    memory = make_memory(tmp_path / "kb", TABLE, mode="hipporag")
    memory.index([{"id": text.split()[0].lower(), "text": text} for text in TABLE])
    graph_file = tmp_path / "entities.jsonl"
    graph_file.write_text("\n".join(json.dumps(x) for x in ENTITIES), encoding="utf-8")
    graph = EmbeddedEnterpriseGraph(tmp_path / "kb")
    assert graph.import_graph(load_entity_graph(graph_file)) == {"nodes": 5, "relationships_added": 1}
    yield memory, graph, tmp_path
    graph.close()
    memory.close()


def _nodes(store_dir: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(store_dir / DB_FILE)
    try:
        return sorted(
            conn.execute("SELECT * FROM nodes").fetchall() + conn.execute("SELECT * FROM edges").fetchall()
        )
    finally:
        conn.close()


def test_link_by_exact_name_then_embedding_idempotent_and_read_only(
    setup: tuple[HippoRAG, EmbeddedEnterpriseGraph, Path],
) -> None:
    memory, graph, tmp = setup
    before = _nodes(tmp / "kb")
    report = link_nodes(memory.store, memory.embedder, graph, "Customer", "name", min_similarity=0.9)
    assert (report.nodes, report.exact, report.embedding, report.unmatched, report.new_links) == (
        3,
        1,
        1,
        1,
        2,
    )
    links = graph.links_to_nodes(["c1", "c2", "c3"])
    assert [(x.method, x.score) for x in links["c1"]] == [("exact", 1.0)]
    assert links["c2"][0].method == "embedding" and 0.9 <= links["c2"][0].score < 1.0
    assert "c3" not in links
    again = link_nodes(memory.store, memory.embedder, graph, "Customer", "name", min_similarity=0.9)
    assert again.new_links == 0 and (again.exact, again.embedding) == (1, 1)
    strict = link_nodes(memory.store, memory.embedder, graph, "Customer", "name", min_similarity=0.9999)
    assert (strict.exact, strict.embedding) == (1, 0)  # the threshold is honoured
    assert _nodes(tmp / "kb") == before  # the user's nodes and relationships are only read


def test_seeding_from_a_node_and_through_its_relationships(
    setup: tuple[HippoRAG, EmbeddedEnterpriseGraph, Path],
) -> None:
    memory, graph, _ = setup
    link_nodes(memory.store, memory.embedder, graph, "Customer", "name")
    link_nodes(memory.store, memory.embedder, graph, "Company", "name")

    about_acme = retrieve_from_nodes(memory, graph, ["c1"], top_k=3)
    assert about_acme.passages[0].passage_id == "acme"
    assert [(n.node_id, n.via_phrase) for n in about_acme.passages[0].linked_nodes] == [
        ("c1", "acme robotics")
    ]

    parent_only = retrieve_from_nodes(memory, graph, ["p1"], top_k=3)
    assert [p.passage_id for p in parent_only.passages] == ["globex"]
    with_subsidiaries = retrieve_from_nodes(memory, graph, ["p1"], rel_types=["SUBSIDIARY_OF"], top_k=3)
    ids = [p.passage_id for p in with_subsidiaries.passages]
    assert ids[0] == "globex" and "acme" in ids  # the enterprise relationship brought the subsidiary in
    hop = next(s for s in with_subsidiaries.seeds if s.hop == 1)
    assert hop.from_node == "c1" and hop.weight == 0.5

    assert retrieve_from_nodes(memory, graph, ["c3"]).passages == []  # unlinked: nothing, with a note


def test_query_results_list_the_linked_nodes(setup: tuple[HippoRAG, EmbeddedEnterpriseGraph, Path]) -> None:
    memory, graph, tmp = setup
    link_nodes(memory.store, memory.embedder, graph, "Customer", "name")
    memory2 = make_memory(
        tmp / "kb", TABLE, {"Where did Acme Robotics open a plant?": ["acme robotics"]}, mode="hipporag"
    )
    try:
        result = memory2.retrieve("Where did Acme Robotics open a plant?", top_k=1)
    finally:
        memory2.close()
    nodes = linked_nodes_of(result, graph)
    assert [n.node_id for n in nodes["acme"]] == ["c1"] and nodes["acme"][0].name == "Acme Robotics"


def test_unlink_removes_links_only(setup: tuple[HippoRAG, EmbeddedEnterpriseGraph, Path]) -> None:
    memory, graph, tmp = setup
    before = _nodes(tmp / "kb")
    link_nodes(memory.store, memory.embedder, graph, "Customer", "name")
    link_nodes(memory.store, memory.embedder, graph, "Company", "name")
    assert unlink_nodes(graph, "Customer") == 2
    assert set(graph.links_to_nodes(["c1", "c2", "p1"])) == {"p1"}
    assert unlink_nodes(graph) == 1 and graph.links_to_nodes(["p1"]) == {}
    assert _nodes(tmp / "kb") == before


def test_identifiers_are_validated(setup: tuple[HippoRAG, EmbeddedEnterpriseGraph, Path]) -> None:
    memory, graph, tmp = setup
    with pytest.raises(InputError, match="not a plain identifier"):
        link_nodes(memory.store, memory.embedder, graph, "Customer`) DETACH DELETE n //", "name")
    with pytest.raises(InputError, match="property"):
        link_nodes(memory.store, memory.embedder, graph, "Customer", "name; DROP")
    with pytest.raises(InputError, match="relationship type"):
        retrieve_from_nodes(memory, graph, ["p1"], rel_types=["SUBSIDIARY OF"])
    bad = tmp / "bad.jsonl"
    bad.write_text(
        '{"node": "x", "labels": ["Customer"], "properties": {}}\n{"node": "y", "labels": ["Bad-Label"]}\n'
    )
    with pytest.raises(InputError, match=r"bad.jsonl:2: label 'Bad-Label'"):
        load_entity_graph(bad)
    bad.write_text('{"source": "x", "type": "KNOWS", "target": "nowhere"}\n')
    with pytest.raises(InputError, match="unknown node"):
        load_entity_graph(bad)


def test_hash_embedder_variant_is_a_near_duplicate() -> None:
    # the fixture's embedding link relies on this property of the test embedder
    a, b = HashEmbedder().encode(["initech", "initech variant"])
    assert float(a @ b) > 0.9
