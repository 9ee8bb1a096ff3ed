"""Retrieval over the joined graph (your graph linked to the namespace's phrases by SAME_AS) on a real
server, on every engine this server runs: the in-process one, both GDS forms where its GDS has them
(gds-weighted needs 2.17+), and the Aura engine's walk over the namespace read from this server (the
Aura Graph Analytics session itself is tests/support/aura_fakes.py's: no Aura account here).

Your graph is made with Cypher, under labels named after the test's namespace (deleted after the test by
the fixture and by tests/support/neo4j_support.py's clean-up); the relationship types followed are given
by the walk (``GraphJoin``), so a relationship of another type (KNOWS) leaves a linked node out of reach.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import pytest

from hipporag_neo4j.linking.model import SameAs
from hipporag_neo4j.linking.neo4j import Neo4jEnterpriseGraph
from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import (
    FactRecord,
    GraphJoin,
    PassageRecord,
    PassageScore,
    PhraseRecord,
    WalkParams,
)
from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.engines import AuraPpr, GdsPpr, LocalPpr, PprEngine
from hipporag_neo4j.stores.neo4j.projection import join_infix, namespace_prefix
from tests.support.aura_fakes import FakeSessions
from tests.support.fakes import HashEmbedder
from tests.support.neo4j_support import (
    TEST_EMBEDDING_DIM,
    neo4j_server_or_skip,
    neo4j_settings_or_skip,
    run_cypher,
    server_has_gds,
)

pytestmark = pytest.mark.neo4j

MODEL = "hash-embedder"
DIM = TEST_EMBEDDING_DIM
EMBEDDER = HashEmbedder(dim=DIM)
JOIN = GraphJoin(("SUBSIDIARY_OF",))
WALK = WalkParams(0.5, 300, 1e-12)
GLOBEX = {"globex holdings": 1.0}
ENGINES = ["local", "gds-weighted", "gds-linear", "aura"]


@dataclass
class Joined:
    settings: Neo4jSettings
    store: Neo4jStore
    nodes: dict[str, str]  # name -> elementId of your nodes

    @property
    def server(self) -> tuple[str, str, str, str]:
        s = self.settings
        return (s.uri or "", s.user, s.password.get_secret_value(), s.database)


def corpus() -> tuple[list[PhraseRecord], list[PassageRecord]]:
    """Three passages as in test_linking: each mentions a subject and an object (once) and states one
    fact between them (a RELATION of weight 1). Phrase ids are their names."""
    passages = {"acme": ("acme robotics", "ohio"), "globex": ("globex holdings", "record profits"),
                "initech": ("initech", "new cfo")}  # fmt: skip
    phrases, records = [], []
    for pid, (subject, obj) in passages.items():
        phrases += [PhraseRecord(name, name, EMBEDDER.encode([name])[0]) for name in (subject, obj)]
        text = f"{subject} {obj}"
        fact = FactRecord(f"{pid}-fact", subject, "in", obj, text, EMBEDDER.encode([text])[0])
        records.append(
            PassageRecord(
                Passage(id=pid, text=text), EMBEDDER.encode([text])[0], {subject: 1, obj: 1}, [fact]
            )
        )
    return phrases, records


@pytest.fixture
def joined() -> Iterator[Joined]:
    """Acme (a Customer) SUBSIDIARY_OF Globex (a Company), both linked; Initech linked to a Customer with
    only a KNOWS to Globex (it must stay out of reach); Elsewhere (a Company, SUBSIDIARY_OF itself) linked
    to nothing."""
    settings = neo4j_settings_or_skip(copy_cache=False)
    store = Neo4jStore(settings)
    customer, company = f"Customer_{settings.namespace}", f"Company_{settings.namespace}"
    server = (settings.uri or "", settings.user, settings.password.get_secret_value(), settings.database)
    try:
        store.open(MODEL, DIM)
        phrases, records = corpus()
        store.write_passages(phrases, records)
        nodes = run_cypher(
            server,
            "CREATE (c1:$($customer) {name: 'Acme Robotics'}), (p1:$($company) {name: 'Globex Holdings'}), "
            "(c2:$($customer) {name: 'Initech'}), (x:$($company) {name: 'Elsewhere'}), "
            "(c1)-[:SUBSIDIARY_OF]->(p1), (c2)-[:KNOWS]->(p1), (x)-[:SUBSIDIARY_OF]->(x) "
            "RETURN elementId(c1) AS c1, elementId(p1) AS p1, elementId(c2) AS c2, elementId(x) AS x",
            customer=customer,
            company=company,
        )[0]
        graph = Neo4jEnterpriseGraph(store)
        assert (
            graph.write_links(
                [
                    SameAs("acme robotics", nodes["c1"], 1.0, "exact"),
                    SameAs("initech", nodes["c2"], 0.95, "exact"),
                ],
                customer,
            )
            == 2
        )
        assert graph.write_links([SameAs("globex holdings", nodes["p1"], 1.0, "exact")], company) == 1
        yield Joined(settings, store, nodes)
    finally:
        store.drop_namespace()
        store.close()
        for label in (customer, company):
            run_cypher(server, "MATCH (n:$($label)) DETACH DELETE n", label=label)


SESSIONS = FakeSessions()  # an Aura Graph Analytics session manager (test_neo4j_aura's fake)


def engine_of(name: str, store: Neo4jStore) -> PprEngine:
    if name == "local":
        return LocalPpr(store.copy)
    if name == "aura":
        return AuraPpr(store.copy, SESSIONS, session="s", memory=None, ttl=timedelta(minutes=5))
    if not server_has_gds(neo4j_server_or_skip()):
        pytest.skip("needs the GDS plugin")
    if name == "gds-weighted" and store.capabilities().ppr_engine != "gds-weighted":
        pytest.skip("needs GDS 2.17+ (weighted source nodes)")
    return GdsPpr(store.runner, store.projections, store.namespace, weighted=name == "gds-weighted")


def relative(scores: list[PassageScore]) -> list[tuple[str, float]]:
    """Passage ids with scores over the best one: the GDS statements divide by the mass on phrases and
    passages, the in-process engine by all of it (your nodes too); rankings and ratios agree."""
    return [(s.passage_id, s.score / scores[0].score) for s in scores]


def assert_same(found: list[tuple[str, float]], expected: list[tuple[str, float]], name: str) -> None:
    """The same ids and ratios within 5e-7 (as strict as equal after rounding to 6 decimals)."""
    assert [p for p, _ in found] == [p for p, _ in expected], name
    for (_, a), (_, b) in zip(found, expected, strict=True):
        assert a == pytest.approx(b, abs=5e-7), name


@pytest.mark.parametrize("name", ENGINES)
def test_joined_walk_reaches_the_subsidiary_on_every_engine(joined: Joined, name: str) -> None:
    reference = LocalPpr(joined.store.copy)
    engine = engine_of(name, joined.store)
    plain = engine.passage_scores(GLOBEX, WALK, 5, 2)
    joined_scores = engine.passage_scores(GLOBEX, WALK, 5, 2, JOIN)
    same_as_only = engine.passage_scores(GLOBEX, WALK, 5, 2, GraphJoin())
    walk = engine.passage_node_scores(GLOBEX, {}, WALK, 5, 2, JOIN)
    walk_plain = engine.passage_node_scores(GLOBEX, {}, WALK, 5, 2)
    assert [s.passage_id for s in plain] == ["globex"] == [s.passage_id for s in same_as_only], name
    assert [s.passage_id for s in joined_scores] == ["globex", "acme"], (
        name
    )  # not initech: KNOWS not followed
    assert [s.passage_id for s in walk] == ["globex", "acme"], name
    assert [s.passage_id for s in walk_plain] == ["globex"], name
    # every engine agrees with the in-process one
    assert_same(relative(joined_scores), relative(reference.passage_scores(GLOBEX, WALK, 5, 2, JOIN)), name)
    assert_same(relative(walk), relative(reference.passage_node_scores(GLOBEX, {}, WALK, 5, 2, JOIN)), name)
    infix = join_infix(JOIN)
    version = joined.store.view().version
    if name == "aura":
        assert {
            f"hipporag-phrases.{infix[:-1]}-v{version}",
            f"hipporag-passages.{infix[:-1]}-v{version}",
        } <= set(SESSIONS.constructed)
    if name.startswith("gds"):
        listed = run_cypher(
            joined.server,
            "CALL gds.graph.list() YIELD graphName, nodeCount WHERE graphName STARTS WITH $prefix "
            "RETURN graphName, nodeCount",
            prefix=namespace_prefix(joined.settings.database, joined.settings.namespace),
        )
        joined_projections = [r for r in listed if infix in r["graphName"]]
        assert len(joined_projections) == 2  # one per kind, beside the plain ones and the SAME_AS-only ones
        # beside them: the plain phrase and passage graphs, and the SAME_AS-only phrase graph
        assert len(listed) == 5
        sizes = sorted(r["nodeCount"] for r in joined_projections)
        assert sizes == [6 + 3, 6 + 3 + 3]  # phrases (+ passages) + c1, p1, c2 (x touches no linked node)
