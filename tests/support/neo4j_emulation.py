"""The graph reads of the Neo4j store's in-process copy, and GDS's PageRank loop, emulated for the Aura
tests: no Aura account here (tests/unit/stores/neo4j/test_neo4j_aura.py; the live tests of everything
else a server computes are in tests/neo4j/, run by CI on both pinned pairs).

:class:`FakeServer` answers the ``client_*`` statements of a :class:`~tests.support.neo4j_fake.FakeDriver`
from a :class:`FakeGraph` (the graph an Aura Graph Analytics session is built from), and
:func:`pregel_pagerank` is GDS's PageRank loop as GDS runs it (Pregel supersteps, an absolute per-node
tolerance): the fake sessions of tests/support/aura_fakes.py rank with it. ``tests/neo4j/
test_neo4j_engines_live.py::test_gds_itself_shows_why_normalisation_is_needed`` shows the same behaviour
on real GDS 2.26.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support.neo4j_fake import FakeDriver, Records


def pregel_pagerank(
    n_nodes: int,
    relationships: list[tuple[int, int, float]],
    bias: dict[int, float] | None,
    damping: float,
    max_iterations: int,
    tolerance: float,
) -> list[float]:
    """GDS PageRank as GDS runs it: ``PageRankComputation`` on Pregel (graph-data-science,
    algo/src/main/java/org/neo4j/gds/pagerank/PageRankComputation.java; initial values from
    ``InitialProbabilityFactory``: alpha = 1 - dampingFactor, times the bias of a weighted source, alpha
    for a listed source, 0 elsewhere, alpha everywhere without sources).

    Superstep 0 sends each node's value / weighted degree along each relationship (times its weight);
    later supersteps add ``damping`` x the sum of the messages received to the node's value and send that
    change on only while it is ``> tolerance`` (an absolute threshold), else the node votes to halt.
    ``relationships`` are directed; an undirected projection holds each edge in both directions. At most
    ``max_iterations`` supersteps. Returns the unnormalised scores."""
    alpha = 1.0 - damping
    out: list[list[tuple[int, float]]] = [[] for _ in range(n_nodes)]
    for u, v, w in relationships:
        out[u].append((v, w))
    degree = [sum(w for _, w in out[u]) for u in range(n_nodes)]
    rank = [alpha * bias.get(u, 0.0) for u in range(n_nodes)] if bias is not None else [alpha] * n_nodes
    inbox: dict[int, float] = {}

    def send(u: int, delta: float) -> None:
        if degree[u] > 0:
            for v, w in out[u]:
                inbox[v] = inbox.get(v, 0.0) + delta / degree[u] * w

    for u in range(n_nodes):  # the initial superstep sends whatever the value
        send(u, rank[u])
    for _ in range(1, max_iterations):
        if not inbox:
            break
        messages, inbox = inbox, {}
        for u, total in messages.items():
            delta = damping * total
            rank[u] += delta
            if delta > tolerance:
                send(u, delta)
    return rank


@dataclass
class FakeNode:
    iid: int  # the internal id GDS's nodeId refers to
    label: str
    namespace: str
    props: dict[str, Any]


class FakeGraph:
    """The database: nodes with a namespace, MENTIONS counts, RELATION weights, SYNONYM scores, graph
    versions."""

    def __init__(self) -> None:
        self.nodes: dict[int, FakeNode] = {}
        self.keys: dict[tuple[str, str, str], int] = {}
        self.mentions: dict[tuple[int, int], int] = {}
        self.relations: dict[tuple[int, int], float] = {}
        self.synonyms: dict[tuple[int, int], float] = {}
        self.versions: dict[str, int] = {}
        self._next_iid = 100

    # building
    def add(self, label: str, namespace: str, node_id: str, **props: Any) -> int:
        self.versions.setdefault(namespace, 1)
        iid = self._next_iid
        self._next_iid += 1
        self.nodes[iid] = FakeNode(iid, label, namespace, {"id": node_id, **props})
        self.keys[(label, namespace, node_id)] = iid
        return iid

    def phrase(
        self, namespace: str, node_id: str, name: str | None = None, embedding: Any = None, **props: Any
    ) -> int:
        return self.add("Phrase", namespace, node_id, name=name or node_id, embedding=embedding, **props)

    def passage(self, namespace: str, node_id: str, embedding: Any = None, **props: Any) -> int:
        return self.add("Passage", namespace, node_id, embedding=embedding, **props)

    def iid(self, label: str, namespace: str, node_id: str) -> int | None:
        return self.keys.get((label, namespace, node_id))

    def mention(self, namespace: str, passage_id: str, phrase_id: str, count: int = 1) -> None:
        d, p = self.iid("Passage", namespace, passage_id), self.iid("Phrase", namespace, phrase_id)
        assert d is not None and p is not None
        self.mentions[(d, p)] = count

    def relation(self, namespace: str, source: str, target: str, weight: float) -> None:
        s, t = self.iid("Phrase", namespace, source), self.iid("Phrase", namespace, target)
        assert s is not None and t is not None
        self.relations[(s, t)] = weight

    def synonym(self, namespace: str, source: str, target: str, score: float) -> None:
        s, t = self.iid("Phrase", namespace, source), self.iid("Phrase", namespace, target)
        assert s is not None and t is not None
        self.synonyms[(s, t)] = score

    def bump(self, namespace: str) -> None:
        self.versions[namespace] = self.versions.get(namespace, 0) + 1

    # reading
    def of(self, label: str, namespace: str) -> list[FakeNode]:
        return sorted(
            (n for n in self.nodes.values() if n.label == label and n.namespace == namespace),
            key=lambda n: str(n.props["id"]),
        )

    def phrase_edges(self, namespace: str) -> list[tuple[int, int, float]]:
        """RELATION (weight) and SYNONYM (score) edges between phrases of the namespace, no self-loop."""
        edges = []
        for table in (self.relations, self.synonyms):
            for (s, t), w in table.items():
                if s != t and self.nodes[s].namespace == namespace and self.nodes[t].namespace == namespace:
                    edges.append((s, t, float(w)))
        return edges


class FakeServer:
    """Answers the in-process copy's graph reads (``client_*``) over a :class:`FakeGraph`."""

    def __init__(self, graph: FakeGraph) -> None:
        self.graph = graph
        self.driver: FakeDriver | None = None

    def install(self, driver: FakeDriver) -> FakeDriver:
        """Answer every emulated statement that ``driver`` knows (others keep their programmed answers)."""
        self.driver = driver
        shipped = set(driver.names.values())
        for name in dir(self):
            if name.startswith("q_") and name[2:] in shipped:
                driver.on(name[2:], getattr(self, name))
        return driver

    # --- the in-process copy (client_copy.py): parallel lists, one record each -------------------------
    def q_client_state(self, p: dict[str, Any]) -> Records:
        ns = p["namespace"]
        version = self.graph.versions.get(ns)
        if version is None:
            return []
        dims = [
            len(n.props["embedding"])
            for n in self.graph.nodes.values()
            if n.namespace == ns and n.props.get("embedding") is not None
        ]
        return [
            {"graph_version": version, "embedding_model": "fake-model", "embedding_dim": max(dims, default=0)}
        ]

    def _passage_count(self, phrase_iid: int) -> int:
        return sum(1 for (_, q) in self.graph.mentions if q == phrase_iid)

    def q_client_phrases(self, p: dict[str, Any]) -> Records:
        phrases = self.graph.of("Phrase", p["namespace"])
        return [
            {
                "ids": [n.props["id"] for n in phrases],
                "names": [n.props["name"] for n in phrases],
                "passage_counts": [self._passage_count(n.iid) for n in phrases],
                "written_in": [n.props.get("written_in", 0) for n in phrases],
            }
        ]

    def q_client_passage_ids(self, p: dict[str, Any]) -> Records:
        passages = self.graph.of("Passage", p["namespace"])
        return [
            {
                "ids": [n.props["id"] for n in passages],
                "written_in": [n.props.get("written_in", 0) for n in passages],
            }
        ]

    def q_client_mentions(self, p: dict[str, Any]) -> Records:
        ns, wanted = p["namespace"], set(p["ids"])
        rows = [
            (self.graph.nodes[d].props["id"], self.graph.nodes[q].props["id"], count)
            for (d, q), count in self.graph.mentions.items()
            if self.graph.nodes[d].namespace == ns
            and self.graph.nodes[q].namespace == ns
            and self.graph.nodes[d].props["id"] in wanted
        ]
        return [
            {
                "passage_ids": [r[0] for r in rows],
                "phrase_ids": [r[1] for r in rows],
                "counts": [r[2] for r in rows],
            }
        ]

    def q_client_edges(self, p: dict[str, Any]) -> Records:
        ns, wanted = p["namespace"], set(p["ids"])
        edges = []
        relation_edges = 0
        for table in (self.graph.relations, self.graph.synonyms):
            for (s, t), w in table.items():
                if (
                    self.graph.nodes[s].namespace == ns
                    and self.graph.nodes[t].namespace == ns
                    and self.graph.nodes[s].props["id"] in wanted
                ):
                    edges.append((s, t, float(w)))
                    relation_edges += table is self.graph.relations
        return [
            {
                "sources": [self.graph.nodes[s].props["id"] for s, _, _ in edges],
                "targets": [self.graph.nodes[t].props["id"] for _, t, _ in edges],
                "weights": [w for _, _, w in edges],
                "relation": [k < relation_edges for k in range(len(edges))],
                "relation_edges": relation_edges,
            }
        ]
