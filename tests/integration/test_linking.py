"""Linking to an enterprise graph: import, link, seeded retrieval, unlink. The same tests on the embedded
store (an imported JSONL entity graph) and on Neo4j where a server is reachable (nodes created in the
database under labels unique to the run)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.errors import ConfigError, InputError
from hipporag_neo4j.linking.embedded import EmbeddedEnterpriseGraph
from hipporag_neo4j.linking.graph_file import load_entity_graph
from hipporag_neo4j.linking.linker import LinkReport, link_nodes, unlink_nodes
from hipporag_neo4j.linking.model import EnterpriseGraph
from hipporag_neo4j.models import RetrievalMode, RetrievalResult
from hipporag_neo4j.stores.embedded.enterprise import DB_FILE
from tests.support.fakes import FixedQueryNER, HashEmbedder, TableExtractor
from tests.support.pipeline_support import make_memory

pytestmark = pytest.mark.integration  # stores with data (hash embedder, table extraction)

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


PARENT_QUESTION = "What did Globex Holdings report?"


@dataclass
class Linked:
    """A HippoRAG over TABLE, the ENTITIES graph beside it, and the backend's ids and labels for them."""

    memory: HippoRAG
    graph: EnterpriseGraph
    ids: dict[str, str]  # ENTITIES' node names -> node ids on this backend
    snapshot: Callable[[], object]  # the user's nodes and relationships, to show they are only read
    asking: Callable[[dict[str, list[str]]], HippoRAG]  # a HippoRAG on the same store with query entities
    labels: dict[str, str] = field(default_factory=dict)  # ENTITIES' labels -> labels on this backend

    def node(self, name: str) -> str:
        return self.ids[name]

    def label(self, name: str) -> str:
        return self.labels.get(name, name)

    def link(self, label: str, **kw: float) -> LinkReport:
        return link_nodes(
            self.memory.store, self.memory.embedder, self.graph, self.label(label), "name", **kw
        )


def _docs() -> list[dict[str, str]]:
    return [{"id": text.split()[0].lower(), "text": text} for text in TABLE]


def _embedded(tmp_path: Path) -> Iterator[Linked]:
    memory = make_memory(tmp_path / "kb", TABLE, mode="hipporag")
    memory.index(_docs())
    graph_file = tmp_path / "entities.jsonl"
    graph_file.write_text("\n".join(json.dumps(x) for x in ENTITIES), encoding="utf-8")
    graph = EmbeddedEnterpriseGraph(tmp_path / "kb")
    assert graph.import_graph(load_entity_graph(graph_file)) == {"nodes": 5, "relationships_added": 1}

    def snapshot() -> object:
        conn = sqlite3.connect(tmp_path / "kb" / DB_FILE)
        try:
            return sorted(
                conn.execute("SELECT * FROM nodes").fetchall()
                + conn.execute("SELECT * FROM edges").fetchall()
            )
        finally:
            conn.close()

    ids = {str(x["node"]): str(x["node"]) for x in ENTITIES if "node" in x}
    yield Linked(
        memory, graph, ids, snapshot, lambda q: make_memory(tmp_path / "kb", TABLE, q, mode="hipporag")
    )
    graph.close()
    memory.close()


def _neo4j() -> Iterator[Linked]:
    import neo4j

    from hipporag_neo4j.linking.neo4j import Neo4jEnterpriseGraph
    from hipporag_neo4j.settings import load_settings
    from hipporag_neo4j.stores.neo4j.store import Neo4jStore
    from tests.support.neo4j_support import neo4j_settings_or_skip

    n4j = neo4j_settings_or_skip()
    password = n4j.password.get_secret_value()
    neo4j_group = {**n4j.model_dump(), "password": password}
    settings = load_settings({"neo4j": neo4j_group, "retrieval": {"mode": "hipporag"}})

    def asking(queries: dict[str, list[str]]) -> HippoRAG:
        return HippoRAG(
            settings,
            embedder=HashEmbedder(),
            extractor=TableExtractor(TABLE),
            query_ner=FixedQueryNER(queries),
        )

    memory = asking({})
    memory.index(_docs())
    labels = {"Customer": f"Customer_{n4j.namespace}", "Company": f"Company_{n4j.namespace}"}  # database-wide
    driver = neo4j.GraphDatabase.driver(n4j.uri or "", auth=(n4j.user, password))
    ids: dict[str, str] = {}
    with driver.session(database=n4j.database) as session:
        for x in ENTITIES:
            if "node" in x:
                record = session.run(
                    "CREATE (n:$($label)) SET n = $properties RETURN elementId(n) AS id",
                    label=labels[x["labels"][0]],
                    properties=x["properties"],
                ).single()
                assert record is not None
                ids[str(x["node"])] = record["id"]
        for x in ENTITIES:
            if "source" in x:
                session.run(
                    "MATCH (a), (b) WHERE elementId(a) = $a AND elementId(b) = $b "
                    "CREATE (a)-[:$($type)]->(b)",
                    a=ids[str(x["source"])],
                    b=ids[str(x["target"])],
                    type=x["type"],
                )

    def snapshot() -> object:
        with driver.session(database=n4j.database) as session:
            rows = session.run(
                "MATCH (n) WHERE elementId(n) IN $ids OPTIONAL MATCH (n)-[r]->(m) WHERE NOT m:Phrase "
                "RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props, "
                "collect(type(r)) AS out",
                ids=list(ids.values()),
            ).data()
        return sorted(json.dumps(r, sort_keys=True) for r in rows)

    store = memory.store
    assert isinstance(store, Neo4jStore)
    yield Linked(memory, Neo4jEnterpriseGraph(store), ids, snapshot, asking, labels)
    with driver.session(database=n4j.database) as session:
        session.run("MATCH (n) WHERE elementId(n) IN $ids DETACH DELETE n", ids=list(ids.values()))
    driver.close()
    memory.close()


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Linked]:
    yield from (_embedded(tmp_path) if request.param == "embedded" else _neo4j())


def test_link_by_exact_name_then_embedding_idempotent_and_read_only(setup: Linked) -> None:
    before = setup.snapshot()
    report = setup.link("Customer", min_similarity=0.9)
    assert (report.nodes, report.exact, report.embedding, report.unmatched, report.new_links) == (
        3,
        1,
        1,
        1,
        2,
    )
    c1, c2, c3 = (setup.node(n) for n in ("c1", "c2", "c3"))
    links = setup.graph.links_to_nodes([c1, c2, c3])
    assert [(x.method, x.score) for x in links[c1]] == [("exact", 1.0)]
    assert links[c2][0].method == "embedding" and 0.9 <= links[c2][0].score < 1.0
    assert c3 not in links
    again = setup.link("Customer", min_similarity=0.9)
    assert again.new_links == 0 and (again.exact, again.embedding) == (1, 1)
    strict = setup.link("Customer", min_similarity=0.9999)
    assert (strict.exact, strict.embedding) == (1, 0)  # the threshold is honoured
    assert setup.snapshot() == before  # the user's nodes and relationships are only read


def _ids(result: RetrievalResult) -> list[str]:
    return [item.passage.id for item in result.passages]


def _score(result: RetrievalResult, passage_id: str) -> float:
    return next((item.score for item in result.passages if item.passage.id == passage_id), 0.0)


@pytest.mark.parametrize("mode", ["hipporag", "hipporag2"])
def test_seed_nodes_and_the_joined_graph(setup: Linked, mode: RetrievalMode) -> None:
    setup.link("Customer")
    setup.link("Company")
    memory = setup.memory
    c1, p1 = setup.node("c1"), setup.node("p1")

    about_acme = memory.retrieve(seed_nodes=[c1], mode=mode, top_k=3)
    assert _ids(about_acme)[0] == "acme"
    assert [(x.query_entity, x.phrase) for x in about_acme.seed_links] == [(c1, "acme robotics")]
    acme = about_acme.passages[0].linked_entities
    assert [(n.node_id, n.via_phrase, n.name, n.method) for n in acme] == [
        (c1, "acme robotics", "Acme Robotics", "exact")
    ]

    parent = memory.retrieve(seed_nodes=[p1], mode=mode, top_k=3)
    assert _ids(parent) == ["globex"] and parent.joined is None
    same_as_only = memory.retrieve(seed_nodes=[p1], mode=mode, top_k=3, joined=True)
    assert _ids(same_as_only) == ["globex"] and same_as_only.joined == []
    via = memory.retrieve(seed_nodes=[p1], mode=mode, top_k=3, via=["SUBSIDIARY_OF"])
    assert via.joined == ["SUBSIDIARY_OF"]
    # the walk went globex holdings -SAME_AS- p1 -SUBSIDIARY_OF- c1 -SAME_AS- acme robotics -> acme
    assert _ids(via)[0] == "globex" and "acme" in _ids(via) and "initech" not in _ids(via)
    about = memory.about([p1], via=["SUBSIDIARY_OF"], top_k=3)  # a thin wrapper, in the default mode
    default = memory.retrieve(seed_nodes=[p1], via=["SUBSIDIARY_OF"], top_k=3)
    assert about.model_dump(exclude={"timings"}) == default.model_dump(exclude={"timings"})

    unlinked = memory.retrieve(seed_nodes=[setup.node("c3")], mode=mode)
    assert (
        unlinked.passages == [] and unlinked.note == f"no phrase is linked to seed node(s) {setup.node('c3')}"
    )


@pytest.mark.parametrize("mode", ["hipporag", "hipporag2"])
def test_a_question_over_the_joined_graph(setup: Linked, mode: RetrievalMode) -> None:
    setup.link("Customer")
    setup.link("Company")
    asking = setup.asking({PARENT_QUESTION: ["globex holdings"]})
    try:
        plain = asking.retrieve(PARENT_QUESTION, mode=mode, top_k=3)
        joined = asking.retrieve(PARENT_QUESTION, mode=mode, top_k=3, via=["SUBSIDIARY_OF"])
        seeded = asking.retrieve(PARENT_QUESTION, mode=mode, top_k=3, seed_nodes=[setup.node("c1")])
    finally:
        asking.close()
    assert _ids(plain)[0] == _ids(joined)[0] == "globex"
    assert all(item.linked_entities == [] for item in plain.passages)  # not asked for: not computed
    assert _score(joined, "acme") > _score(plain, "acme")  # the subsidiary came up through your graph
    assert _score(joined, "initech") <= _score(plain, "initech")
    globex = joined.passages[0].linked_entities
    assert [(n.node_id, n.labels) for n in globex] == [(setup.node("p1"), [setup.label("Company")])]
    assert _score(seeded, "acme") > _score(plain, "acme") and seeded.linked == plain.linked


def test_joined_graph_from_the_settings(setup: Linked, monkeypatch: pytest.MonkeyPatch) -> None:
    from hipporag_neo4j.settings import load_settings

    monkeypatch.setenv("HIPPORAG_RETRIEVAL__JOINED_GRAPH", "true")
    monkeypatch.setenv("HIPPORAG_RETRIEVAL__JOINED_REL_TYPES", '["SUBSIDIARY_OF", "SUBSIDIARY_OF"]')
    retrieval = load_settings(env_file=None).retrieval
    assert retrieval.joined_graph and retrieval.joined_rel_types == ["SUBSIDIARY_OF"]
    setup.link("Customer")
    setup.link("Company")
    memory, p1 = setup.memory, setup.node("p1")
    memory.settings.retrieval.joined_graph = True
    memory.settings.retrieval.joined_rel_types = ["SUBSIDIARY_OF"]
    by_default = memory.retrieve(seed_nodes=[p1], top_k=3)
    assert by_default.joined == ["SUBSIDIARY_OF"] and "acme" in _ids(by_default)
    assert _ids(memory.retrieve(seed_nodes=[p1], top_k=3, joined=False)) == ["globex"]  # the call decides
    monkeypatch.setenv("HIPPORAG_RETRIEVAL__JOINED_REL_TYPES", '["NOT OK"]')
    with pytest.raises(ConfigError, match="not plain identifiers"):
        load_settings(env_file=None)


def test_joined_walk_follows_link_and_unlink(setup: Linked) -> None:
    """Joined graphs are cached; a link or unlink is seen by the next query."""
    memory, p1 = setup.memory, setup.node("p1")
    setup.link("Company")
    before = memory.retrieve(seed_nodes=[p1], via=["SUBSIDIARY_OF"], top_k=3)
    assert _ids(before) == ["globex"]  # Acme is not linked yet
    setup.link("Customer")
    assert "acme" in _ids(memory.retrieve(seed_nodes=[p1], via=["SUBSIDIARY_OF"], top_k=3))
    unlink_nodes(setup.graph, setup.label("Customer"))
    assert _ids(memory.retrieve(seed_nodes=[p1], via=["SUBSIDIARY_OF"], top_k=3)) == ["globex"]


def test_joined_graph_without_links_changes_nothing(setup: Linked) -> None:
    asking = setup.asking({PARENT_QUESTION: ["globex holdings"]})
    try:
        for mode in ("hipporag", "hipporag2"):
            plain = asking.retrieve(PARENT_QUESTION, mode=mode)
            joined = asking.retrieve(PARENT_QUESTION, mode=mode, via=["SUBSIDIARY_OF"])
            assert [(i.passage.id, round(i.score, 9)) for i in joined.passages] == [
                (i.passage.id, round(i.score, 9)) for i in plain.passages
            ]
    finally:
        asking.close()


def test_seed_nodes_and_joins_are_checked(setup: Linked) -> None:
    memory = setup.memory
    with pytest.raises(InputError, match="need a graph mode"):
        memory.retrieve("anything", mode="dense", seed_nodes=[setup.node("c1")])
    with pytest.raises(InputError, match="empty query"):
        memory.retrieve("  ")
    with pytest.raises(InputError, match="relationship type"):
        memory.retrieve(seed_nodes=[setup.node("p1")], via=["SUBSIDIARY OF"])


def test_unlink_removes_links_only(setup: Linked) -> None:
    before = setup.snapshot()
    setup.link("Customer")
    setup.link("Company")
    c1, c2, p1 = (setup.node(n) for n in ("c1", "c2", "p1"))
    assert unlink_nodes(setup.graph, setup.label("Customer")) == 2
    assert set(setup.graph.links_to_nodes([c1, c2, p1])) == {p1}
    assert unlink_nodes(setup.graph) == 1 and setup.graph.links_to_nodes([p1]) == {}
    assert setup.snapshot() == before


def test_identifiers_are_validated(setup: Linked) -> None:
    memory, graph = setup.memory, setup.graph
    with pytest.raises(InputError, match="not a plain identifier"):
        link_nodes(memory.store, memory.embedder, graph, "Customer`) DETACH DELETE n //", "name")
    with pytest.raises(InputError, match="property"):
        link_nodes(memory.store, memory.embedder, graph, "Customer", "name; DROP")
    with pytest.raises(InputError, match="own labels"):
        link_nodes(memory.store, memory.embedder, graph, "Phrase", "name")


def test_entity_graph_file_errors_name_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"node": "x", "labels": ["Customer"], "properties": {}}\n{"node": "y", "labels": ["Bad-Label"]}\n'
    )
    with pytest.raises(InputError, match=r"bad.jsonl:2: label 'Bad-Label'"):
        load_entity_graph(bad)
    bad.write_text('{"source": "x", "type": "KNOWS", "target": "nowhere"}\n')
    with pytest.raises(InputError, match="unknown node"):
        load_entity_graph(bad)
    bad.write_text("not json\n")
    with pytest.raises(InputError, match=r"bad\.jsonl:1: not JSON"):
        load_entity_graph(bad)


def test_hash_embedder_variant_is_a_near_duplicate() -> None:
    # the embedding link in these tests relies on this property of the test embedder
    a, b = HashEmbedder().encode(["initech", "initech variant"])
    assert float(a @ b) > 0.9


def test_link_about_unlink_from_the_cli(tmp_path: Path) -> None:
    """The commands as a user runs them: real models, spaCy extraction, an imported entity graph."""
    from click.testing import CliRunner

    from hipporag_neo4j.cli.main import main

    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps(d) for d in _docs()), encoding="utf-8")
    graph_file = tmp_path / "entities.jsonl"
    graph_file.write_text("\n".join(json.dumps(x) for x in ENTITIES), encoding="utf-8")
    store = ["--store", str(tmp_path / "kb"), "--json"]

    def run(*args: str) -> dict[str, Any]:
        result = CliRunner().invoke(main, [*store, *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        out: dict[str, Any] = json.loads(result.stdout)
        return out

    assert run("index", str(docs))["failed"] == []
    linked = run("link", "--label", "Customer", "--graph", str(graph_file))
    assert linked["imported"]["nodes"] == 5 and linked["exact"] >= 1  # "Acme Robotics" is a phrase by name
    assert run("link", "--label", "Company")["exact"] == 1

    def ids(out: dict[str, Any]) -> list[str]:
        return [p["passage"]["id"] for p in out["passages"]]

    alone = ids(run("about", "p1"))
    via = run("about", "p1", "--via", "SUBSIDIARY_OF")
    assert alone[:1] == ["globex"] and "acme" not in alone
    assert "acme" in ids(via)  # the company's own relationship (Acme SUBSIDIARY_OF Globex) changed the result
    query = run("query", "--seed-node", "p1", "--via", "SUBSIDIARY_OF", "--mode", "hipporag")
    assert "acme" in ids(query) and query["joined"] == ["SUBSIDIARY_OF"]
    acme = next(p for p in query["passages"] if p["passage"]["id"] == "acme")
    assert [n["node_id"] for n in acme["linked_entities"]] == ["c1"]
    human = CliRunner().invoke(main, [*store[:2], "query", "--seed-node", "p1", "--via", "SUBSIDIARY_OF"])
    assert human.exit_code == 0 and "linked: Acme Robotics (acme robotics)" in human.output
    assert "joined graph, through: SUBSIDIARY_OF" in human.output
    assert run("unlink", "--label", "Company")["removed"] == 1
    assert run("about", "p1")["passages"] == []
    bad = CliRunner().invoke(main, [*store, "link", "--label", "Bad Label"])
    assert bad.exit_code == 1 and "not a plain identifier" in bad.output
