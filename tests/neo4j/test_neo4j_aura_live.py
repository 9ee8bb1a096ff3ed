"""The ``aura`` engine's graphdatascience calls against the live self-managed GDS (issue 26, item 4).

An Aura Graph Analytics session hands the engine an ``AuraGraphDataScience`` object; its ``graph.construct``,
``graph.get``, ``page_rank.stream``, ``graph.drop`` and ``close`` are the client's abstract endpoints
(``graphdatascience.procedure_surface.api``), served over Arrow Flight in a session. A
``graphdatascience.GraphDataScience`` connected to our server offers the same endpoints with the same
signatures, served over Cypher (``gds.graph.project`` as an aggregation over the client's data frames, then
``gds.pageRank.stream``). So here the store runs the real :class:`AuraPpr` engine and the real
:class:`~hipporag_neo4j.stores.neo4j.aura._ClientSession` (every client call ``aura.py`` makes during a
query) with a ``GraphDataScience`` standing in for the session, and compares the scores with the GDS
plugin engine's on the same namespace. What stays emulated: the Aura API (``GdsSessions``: estimate,
get_or_create, list, delete) and the Arrow transport, since OpenGDS has no Arrow server (the client's probe,
``gds.debug.arrow``, is not even registered: it falls back to Cypher).

GDS 2.13 (the LTS pair) parses no weighted ``sourceNodes``; the engine always sends ``[(node, weight)]``, so
there the PageRank call fails, as a :class:`SessionError` naming GDS's reason (asserted), and the score
comparison runs on GDS 2.17+ (the latest pair) only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest

from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import SynonymEdge, WalkParams
from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.aura import GdsSession, SessionError, SessionSummary, _ClientSession
from hipporag_neo4j.stores.neo4j.capabilities import MIN_GDS_WEIGHTED_SOURCES, parse_version
from hipporag_neo4j.stores.neo4j.engines import AuraPpr, LocalPpr
from tests.support.corpora import chain_corpus
from tests.support.neo4j_support import (
    TEST_EMBEDDING_DIM,
    neo4j_server_or_skip,
    neo4j_settings_or_skip,
    server_has_gds,
)

pytestmark = [pytest.mark.neo4j, pytest.mark.integration]

MODEL = "hash-embedder"
SEEDS = {"ph0": 0.7, "ph6": 0.3}
PASSAGE_SEEDS = {"p4": 0.05, "p9": 0.02}
DAMPING, ITERATIONS, TOLERANCE = 0.5, 200, 1e-10


class RecordedSession(_ClientSession):
    """:class:`_ClientSession` unchanged, noting the graphs it was asked to construct and drop."""

    def __init__(self, gds: Any, manager: SelfManagedGds) -> None:
        super().__init__(gds)
        self.manager = manager

    def construct(
        self,
        graph_name: str,
        node_count: int,
        sources: Sequence[int],
        targets: Sequence[int],
        weights: Sequence[float],
    ) -> None:
        super().construct(graph_name, node_count, sources, targets, weights)
        self.manager.constructed.append((graph_name, node_count, len(sources)))

    def drop(self, graph_name: str) -> None:
        super().drop(graph_name)
        self.manager.dropped.append(graph_name)


class SelfManagedGds:
    """Our :class:`SessionManager` with a ``GraphDataScience`` on the live server in place of a session
    (``get_or_create``); there is no Aura API to ask, so ``estimate``, ``list`` and ``delete`` say so."""

    def __init__(self, settings: Neo4jSettings) -> None:
        self.settings = settings
        self.clients: list[Any] = []
        self.constructed: list[tuple[str, int, int]] = []
        self.dropped: list[str] = []

    def estimate(self, node_count: int, relationship_count: int) -> str:
        raise AssertionError("neo4j.aura.session_memory is set: the engine must not estimate")

    def get_or_create(self, name: str, memory: str, ttl: timedelta) -> GdsSession:
        from graphdatascience import GraphDataScience

        s = self.settings
        gds = GraphDataScience(
            s.uri,
            auth=(s.user, s.password.get_secret_value()),
            database=s.database,
            arrow=True,  # as a session's client would: here it finds no Arrow server and uses Cypher
            show_progress=False,
        )
        self.clients.append(gds)
        return RecordedSession(gds, self)

    def list(self) -> list[SessionSummary]:
        return []

    def delete(self, name: str) -> bool:
        return False


def session_graphs(settings: Neo4jSettings) -> dict[str, tuple[int, int]]:
    """The engine's graphs in GDS's catalog (``hipporag-<kind>-v<n>``): name -> (nodes, relationships),
    through a client of its own (the engine closes its client when a session call fails)."""
    session = SelfManagedGds(settings).get_or_create("check", "4GB", timedelta(minutes=1))
    assert isinstance(session, _ClientSession)
    try:
        return {
            g.graph_name: (g.node_count, g.relationship_count)
            for g in session.gds.graph.list()
            if g.graph_name.startswith("hipporag-")
        }
    finally:
        session.close()


def test_the_aura_engine_through_graphdatascience_on_the_live_gds() -> None:
    pytest.importorskip("graphdatascience", reason="the [aura] extra is not installed")
    if not server_has_gds(neo4j_server_or_skip()):
        pytest.skip("the Neo4j test server has no GDS plugin (HIPPORAG_TEST_NEO4J_GDS=0)")
    base = neo4j_settings_or_skip(ppr_engine="gds")
    plugin = Neo4jStore(base)
    plugin.open(MODEL, TEST_EMBEDDING_DIM)
    aura_settings = base.model_copy(
        update={"ppr_engine": "aura", "aura": base.aura.model_copy(update={"session_memory": "4GB"})}
    )
    sessions = SelfManagedGds(aura_settings)
    aura = Neo4jStore(aura_settings, aura_sessions=sessions)
    try:
        phrases, records = chain_corpus(10)
        plugin.write_passages(phrases, records)
        plugin.write_synonyms([SynonymEdge("ph2", "ph8", 0.9).canonical()], ["ph2", "ph8"])
        aura.open(MODEL, TEST_EMBEDDING_DIM)
        caps = plugin.capabilities()
        assert caps.gds_version is not None
        assert aura.capabilities().ppr_engine == "aura"
        engine = aura.ppr_engine()
        assert isinstance(engine, AuraPpr)

        weighted = parse_version(caps.gds_version) >= MIN_GDS_WEIGHTED_SOURCES
        if not weighted:
            with pytest.raises(SessionError, match="sourceNodes"):
                aura.view().personalized_pagerank(SEEDS, WalkParams(DAMPING, ITERATIONS, TOLERANCE))
            assert sessions.clients[0]._arrow_client is None, "OpenGDS served Arrow"
            # the phrase graph was constructed through the client, then dropped when PageRank refused
            assert sessions.constructed == [("hipporag-phrases-v2", 11, 22)]
            assert sessions.dropped == ["hipporag-phrases-v2"] and session_graphs(base) == {}
            pytest.skip(
                f"GDS {caps.gds_version} takes no weighted sourceNodes (2.17+): the aura engine's PageRank "
                "call is refused (asserted above); scores compared on the latest pair"
            )

        assert caps.ppr_engine == "gds-weighted"
        local = LocalPpr(plugin.copy)
        want = plugin.view().personalized_pagerank(SEEDS, WalkParams(DAMPING, ITERATIONS, TOLERANCE))
        got = aura.view().personalized_pagerank(SEEDS, WalkParams(DAMPING, ITERATIONS, TOLERANCE))
        assert got.keys() == want.keys() and got == pytest.approx(want, abs=1e-6)
        assert got == pytest.approx(local.run(SEEDS, WalkParams(DAMPING, 1000, 1e-15)), abs=1e-6)

        want_passages = plugin.view().graph_passage_scores(
            SEEDS, WalkParams(DAMPING, ITERATIONS, TOLERANCE), 6, 2
        )
        got_passages = aura.view().graph_passage_scores(
            SEEDS, WalkParams(DAMPING, ITERATIONS, TOLERANCE), 6, 2
        )
        assert [s.passage_id for s in got_passages] == [s.passage_id for s in want_passages]
        for g, w in zip(got_passages, want_passages, strict=True):
            assert g.score == pytest.approx(w.score, abs=1e-6)

        want_nodes = plugin.view().passage_node_scores(
            SEEDS, PASSAGE_SEEDS, WalkParams(DAMPING, ITERATIONS, TOLERANCE), 6, 2
        )
        got_nodes = aura.view().passage_node_scores(
            SEEDS, PASSAGE_SEEDS, WalkParams(DAMPING, ITERATIONS, TOLERANCE), 6, 2
        )
        assert [s.passage_id for s in got_nodes] == [s.passage_id for s in want_nodes]
        for g, w in zip(got_nodes, want_nodes, strict=True):
            assert g.score == pytest.approx(w.score, abs=1e-6)

        # one client ("session"), one graph per kind and graph version, built through graph.construct
        assert len(sessions.clients) == 1
        assert sessions.clients[0]._arrow_client is None, "OpenGDS served Arrow"
        built = {"hipporag-phrases-v2": (11, 22), "hipporag-passages-v2": (21, 62)}
        assert session_graphs(base) == built
        assert [(n, c, r) for n, c, r in sessions.constructed] == [(n, c, r) for n, (c, r) in built.items()]
        aura.close()  # drops the engine's graphs and closes the client
        assert sorted(sessions.dropped) == sorted(built) and session_graphs(base) == {}
    finally:
        aura.close()
        plugin.close()
