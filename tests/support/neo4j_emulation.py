"""An emulation of what the shipped Cypher statements and GDS compute, over an in-memory graph, for the
unit tests a live server cannot replace (the live ones are in tests/neo4j/, run by CI on both pinned pairs).

:class:`FakeServer` answers the statements of a :class:`~tests.support.neo4j_fake.FakeDriver` from a
:class:`FakeGraph`, with GDS's PageRank loop as GDS runs it (:func:`pregel_pagerank`: Pregel supersteps, an
absolute per-node tolerance), the GDS catalog shared by several processes, vector indexes that return
quantized (approximate) scores, and hooks that commit a concurrent write between two statements of a
transaction (Neo4j reads at READ COMMITTED).

What depends on it, and why no live test shows it:

- Aura Graph Analytics sessions (unit/stores/neo4j/test_neo4j_aura.py): no Aura account here; the fake
  sessions rank with :func:`pregel_pagerank`.
- Interleavings a server does not produce on demand: a write committed between two reads of one query
  (test_neo4j_engines.py, test_neo4j_client_copy.py), projections made, dropped or vanished by another
  process meanwhile (test_neo4j_engines.py), threads pinned to graph versions (test_neo4j_query_pin.py).
- What the store sends, counted: one statement per warm query, one GDS PageRank per seed found, the
  projection memory doctor reports (test_neo4j_query_pin.py, test_neo4j_engines.py, test_neo4j_unit.py).
- Every engine on one server (gds-weighted, gds-linear, local: test_neo4j_engines.py,
  test_linking_neo4j_unit.py; a live server runs the engine of its pair), GDS and Neo4j versions beside
  the two CI pairs (2.17.0 on 2025.04, ``SEARCH`` on 2026.04), and the ``index`` vector search with
  quantized scores (the live tests use ``client``, the default).

The statements no test reaches are not emulated (the phrase vector search of the ``index`` mode is
tested on recorded answers in test_neo4j_unit.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from neo4j.exceptions import ClientError

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
    versions. ``commit_between`` runs a callback after a statement (a concurrent writer committing)."""

    def __init__(self) -> None:
        self.nodes: dict[int, FakeNode] = {}
        self.keys: dict[tuple[str, str, str], int] = {}
        self.mentions: dict[tuple[int, int], int] = {}
        self.relations: dict[tuple[int, int], float] = {}
        self.synonyms: dict[tuple[int, int], float] = {}
        self.versions: dict[str, int] = {}
        self.same_as: dict[tuple[int, int], float] = {}  # (phrase, your node) -> link score
        self.owned: list[tuple[int, str, int]] = []  # your relationships: (start, type, end)
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

    def fact(
        self,
        namespace: str,
        node_id: str,
        subject_id: str,
        predicate: str,
        object_id: str,
        embedding: Any,
        **props: Any,
    ) -> int:
        return self.add(
            "Fact",
            namespace,
            node_id,
            subject_id=subject_id,
            predicate=predicate,
            object_id=object_id,
            embedding=embedding,
            **props,
        )

    def own_node(self, label: str, name: str) -> int:
        """A node of the user's graph: no namespace (never ranked), addressed by elementId."""
        iid = self._next_iid
        self._next_iid += 1
        self.nodes[iid] = FakeNode(iid, label, "", {"name": name})
        return iid

    def link(self, namespace: str, phrase_id: str, node: int, score: float) -> None:
        p = self.iid("Phrase", namespace, phrase_id)
        assert p is not None
        self.same_as[(p, node)] = score

    def element_id(self, iid: int) -> str:
        return f"4:fake:{iid}"

    def joined_extra(self, namespace: str, types: list[str]) -> list[tuple[int, int, float]]:
        """The joined projection's extra edges: SAME_AS of the namespace's phrases (score), then the
        relationships of ``types`` with an end linked (weight 1), each once."""
        links = [(p, n, w) for (p, n), w in self.same_as.items() if self.nodes[p].namespace == namespace]
        linked = {n for _, n, _ in links}
        owned = [
            (a, b, 1.0) for a, t, b in self.owned if t in types and (a in linked or b in linked) and a != b
        ]
        return links + owned

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

    def delete(self, label: str, namespace: str, node_id: str) -> None:
        iid = self.keys.pop((label, namespace, node_id))
        del self.nodes[iid]
        for edges in (self.mentions, self.relations, self.synonyms):
            for key in [k for k in edges if iid in k]:
                del edges[key]

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

    def mentioned_by(self, passage_iid: int) -> list[int]:
        return [p for (d, p) in self.mentions if d == passage_iid]


@dataclass
class FakeProjection:
    name: str
    iids: list[int]  # projection node index -> internal id
    relationships: list[tuple[int, int, float]]  # by projection index, both directions

    @property
    def index(self) -> dict[int, int]:
        return {iid: i for i, iid in enumerate(self.iids)}


#: How the vector statements re-score a candidate exactly (the expression, not a mention in a comment).
RESCORE = "score: vector.similarity.cosine(h.node.embedding"


class FakeServer:
    """Emulates the shipped statements over a :class:`FakeGraph` and a GDS catalog (shared by every
    driver installed on it, like the server several processes talk to). Vector indexes return scores
    quantized to ``quantum`` (vector indexes quantize by default); ``vector.similarity.cosine`` is exact."""

    def __init__(self, graph: FakeGraph, *, quantum: float = 1 / 64) -> None:
        self.graph = graph
        self.catalog: dict[str, FakeProjection] = {}
        self.quantum = quantum
        self.pagerank_runs = 0
        self.driver: FakeDriver | None = None

    def install(self, driver: FakeDriver) -> FakeDriver:
        """Answer every emulated statement that ``driver`` knows (others keep their programmed answers)."""
        self.driver = driver
        shipped = set(driver.names.values())
        for name in dir(self):
            if name.startswith("q_") and name[2:] in shipped:
                driver.on(name[2:], getattr(self, name))
        return driver

    def text(self, name: str) -> str:
        assert self.driver is not None
        return self.driver.text(name)

    # --- metadata and plain reads ---------------------------------------------------------------
    def q_meta_graph_version(self, p: dict[str, Any]) -> Records:
        version = self.graph.versions.get(p["namespace"])
        return [] if version is None else [{"graph_version": version}]

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

    def _client_vectors(self, label: str, p: dict[str, Any]) -> Records:
        found = [self.graph.iid(label, p["namespace"], i) for i in p["ids"]]
        nodes = [self.graph.nodes[iid] for iid in found if iid is not None]
        return [
            {
                "ids": [n.props["id"] for n in nodes],
                "vectors": [
                    None if n.props.get("embedding") is None else [float(x) for x in n.props["embedding"]]
                    for n in nodes
                ],
            }
        ]

    def q_client_vectors_phrase(self, p: dict[str, Any]) -> Records:
        return self._client_vectors("Phrase", p)

    def q_client_vectors_fact(self, p: dict[str, Any]) -> Records:
        return self._client_vectors("Fact", p)

    def q_read_passage_count(self, p: dict[str, Any]) -> Records:
        return [{"passages": len(self.graph.of("Passage", p["namespace"]))}]

    def q_client_passage_ids(self, p: dict[str, Any]) -> Records:
        passages = self.graph.of("Passage", p["namespace"])
        return [
            {
                "ids": [n.props["id"] for n in passages],
                "written_in": [n.props.get("written_in", 0) for n in passages],
            }
        ]

    def q_client_vectors_passage(self, p: dict[str, Any]) -> Records:
        return self._client_vectors("Passage", p)

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

    def q_read_graph_size(self, p: dict[str, Any]) -> Records:
        ns = p["namespace"]
        edges = sum(
            1
            for table in (self.graph.relations, self.graph.synonyms)
            for (s, t) in table
            if self.graph.nodes[s].namespace == ns and self.graph.nodes[t].namespace == ns
        )
        return [
            {
                "phrases": len(self.graph.of("Phrase", ns)),
                "edges": edges,
                "facts": len(self.graph.of("Fact", ns)),
                "passages": len(self.graph.of("Passage", ns)),
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

    def q_client_facts(self, p: dict[str, Any]) -> Records:
        facts = [n for n in self.graph.of("Fact", p["namespace"]) if n.props.get("embedding") is not None]
        return [
            {
                "ids": [n.props["id"] for n in facts],
                "subject_ids": [n.props["subject_id"] for n in facts],
                "predicates": [n.props["predicate"] for n in facts],
                "object_ids": [n.props["object_id"] for n in facts],
                "written_in": [n.props.get("written_in", 0) for n in facts],
            }
        ]

    def _existing(self, label: str, p: dict[str, Any]) -> Records:
        return [{"id": i} for i in p["ids"] if self.graph.iid(label, p["namespace"], i) is not None]

    def q_read_existing_phrases(self, p: dict[str, Any]) -> Records:
        return self._existing("Phrase", p)

    def q_read_existing_passages(self, p: dict[str, Any]) -> Records:
        return self._existing("Passage", p)

    def q_read_passages(self, p: dict[str, Any]) -> Records:
        rows = []
        for i in p["ids"]:
            iid = self.graph.iid("Passage", p["namespace"], i)
            if iid is not None:
                props = self.graph.nodes[iid].props
                text = props.get("text", f"text of {i}")
                rows.append({"id": i, "title": props.get("title"), "text": text, "metadata_json": None})
        return rows

    def q_read_phrase_names(self, p: dict[str, Any]) -> Records:
        rows = []
        for i in p["ids"]:
            iid = self.graph.iid("Phrase", p["namespace"], i)
            if iid is not None:
                rows.append({"id": i, "name": self.graph.nodes[iid].props["name"]})
        return rows

    def q_local_phrase_graph(self, p: dict[str, Any]) -> Records:
        ns = p["namespace"]
        edges: dict[int, list[dict[str, Any]]] = {}
        for s, t, w in self.graph.phrase_edges(ns):
            edges.setdefault(s, []).append({"target": self.graph.nodes[t].props["id"], "weight": w})
        return [{"id": n.props["id"], "edges": edges.get(n.iid, [])} for n in self.graph.of("Phrase", ns)]

    def q_local_joined_edges(self, p: dict[str, Any]) -> Records:
        rows = []
        for s, t, w in self.graph.joined_extra(p["namespace"], p["types"]):
            if self.graph.nodes[s].label == "Phrase" and self.graph.nodes[s].namespace == p["namespace"]:
                rows.append(
                    {
                        "phrase_id": self.graph.nodes[s].props["id"],
                        "source": self.graph.element_id(t),
                        "target": None,
                        "score": w,
                    }
                )
            else:
                rows.append(
                    {
                        "phrase_id": None,
                        "source": self.graph.element_id(s),
                        "target": self.graph.element_id(t),
                        "score": 1.0,
                    }
                )
        return rows

    def q_local_passage_graph(self, p: dict[str, Any]) -> Records:
        ns = p["namespace"]
        return [
            {
                "id": d.props["id"],
                "phrases": [
                    self.graph.nodes[q].props["id"]
                    for q in self.graph.mentioned_by(d.iid)
                    if self.graph.nodes[q].namespace == ns
                ],
            }
            for d in self.graph.of("Passage", ns)
        ]

    def _aggregate(self, ns: str, ppr: dict[int, float], limit: int, explain: int) -> Records:
        """HippoRAG's MENTIONS aggregation (passage_scores and the fused gds_passage_scores_*)."""
        per_passage: dict[int, list[tuple[float, str]]] = {}
        for (d, q), count in self.graph.mentions.items():
            if q in ppr and self.graph.nodes[d].namespace == ns:
                per_passage.setdefault(d, []).append((ppr[q] * count, self.graph.nodes[q].props["name"]))
        rows = []
        for d, contributions in per_passage.items():
            contributions.sort(key=lambda c: (-c[0], c[1]))
            score = sum(c for c, _ in contributions)
            if score > 0:
                rows.append(
                    {
                        "passage_id": self.graph.nodes[d].props["id"],
                        "score": score,
                        "top_phrases": [{"phrase": n, "contribution": c} for c, n in contributions[:explain]],
                    }
                )
        rows.sort(key=lambda r: (-r["score"], r["passage_id"]))
        return rows[:limit]

    def q_passage_scores(self, p: dict[str, Any]) -> Records:
        ppr = {}
        for s in p["scores"]:
            iid = self.graph.iid("Phrase", p["namespace"], s["id"])
            if iid is not None:
                ppr[iid] = s["score"]
        return self._aggregate(p["namespace"], ppr, p["limit"], p["explain_phrases"])

    # --- the GDS catalog -------------------------------------------------------------------------
    def _info(self, projection: FakeProjection) -> dict[str, Any]:
        return {
            "graph_name": projection.name,
            "node_count": len(projection.iids),
            "relationship_count": len(projection.relationships),
        }

    def q_gds_graph_info(self, p: dict[str, Any]) -> Records:
        projection = self.catalog.get(p["graph_name"])
        return [] if projection is None else [self._info(projection)]

    def _project(self, p: dict[str, Any], with_passages: bool, joined: bool = False) -> Records:
        name, ns = p["graph_name"], p["namespace"]
        if name in self.catalog:
            raise ClientError(f"Graph {name} already exists")
        nodes = self.graph.of("Phrase", ns) + (self.graph.of("Passage", ns) if with_passages else [])
        if not nodes:  # the aggregation saw no row: gds.graph.project returns null
            return [{"graph_name": None, "node_count": None, "relationship_count": None}]
        iids = [n.iid for n in nodes]
        extra = self.graph.joined_extra(ns, p["types"]) if joined else []
        for s, t, _ in extra:  # your nodes join the projection as the aggregation meets them
            iids += [x for x in (s, t) if x not in iids]
        index = {iid: i for i, iid in enumerate(iids)}
        edges = self.graph.phrase_edges(ns) + extra
        if with_passages:
            edges += [(d, q, 1.0) for (d, q) in self.graph.mentions if d in index and q in index]
        relationships = []
        for s, t, w in edges:
            relationships += [(index[s], index[t], w), (index[t], index[s], w)]
        self.catalog[name] = FakeProjection(name, iids, relationships)
        return [self._info(self.catalog[name])]

    def q_gds_project_phrase_graph(self, p: dict[str, Any]) -> Records:
        return self._project(p, with_passages=False)

    def q_gds_project_passage_graph(self, p: dict[str, Any]) -> Records:
        return self._project(p, with_passages=True)

    def q_gds_project_phrase_graph_joined(self, p: dict[str, Any]) -> Records:
        return self._project(p, with_passages=False, joined=True)

    def q_gds_project_passage_graph_joined(self, p: dict[str, Any]) -> Records:
        return self._project(p, with_passages=True, joined=True)

    def q_gds_drop_stale_graphs(self, p: dict[str, Any]) -> Records:
        """Which projections the shipped statement drops, read from its WHERE clause: versions lower
        than $version, every version but $version, or (before issue 9) every name but $graph_name."""
        text, prefix = self.text("gds_drop_stale_graphs"), p["prefix"]
        stale = []
        for name in list(self.catalog):
            if not name.startswith(prefix):
                continue
            suffix = name[len(prefix) :]
            version = int(suffix) if suffix.isdigit() else None  # toInteger() of anything else: null
            if "< $version" in text:
                drop = version is not None and version < p["version"]
            elif "<> $version" in text:
                drop = version is not None and version != p["version"]
            else:
                drop = name != p["graph_name"]
            if drop:
                stale.append(name)
        for name in stale:
            del self.catalog[name]
        return [{"dropped": name} for name in stale]

    def q_gds_drop_graph(self, p: dict[str, Any]) -> Records:
        return [{"dropped": p["graph_name"]}] if self.catalog.pop(p["graph_name"], None) else []

    def q_gds_graph_memory(self, p: dict[str, Any]) -> Records:
        return [
            {
                **self._info(proj),
                "memory_usage": f"{len(proj.iids)} KiB",
                "size_in_bytes": 1024 * len(proj.iids),
            }
            for name, proj in sorted(self.catalog.items())
            if name.startswith(p["prefix"])
        ]

    # --- PageRank ------------------------------------------------------------------------------
    def _graph_of(self, p: dict[str, Any]) -> FakeProjection:
        projection = self.catalog.get(p["graph_name"])
        if projection is None:
            raise ClientError(f"Graph with name `{p['graph_name']}` does not exist on database `neo4j`.")
        return projection

    def _seed_nodes(self, p: dict[str, Any]) -> list[tuple[int, float]]:
        found = []
        for seed in p["seeds"]:
            label = "Passage" if seed.get("kind") == "passage" else "Phrase"
            iid = self.graph.iid(label, p["namespace"], seed["id"])
            if iid is not None:
                found.append((iid, float(seed["weight"])))
        return found

    def _pagerank(self, name: str, p: dict[str, Any]) -> dict[int, float]:
        """The statement's PageRank: internal id -> unnormalised score summed as the statement does."""
        projection = self._graph_of(p)
        index = projection.index
        seeds = self._seed_nodes(p)
        missing = [iid for iid, _ in seeds if iid not in index]
        if missing:
            raise ClientError(f"Source nodes {missing} do not exist in the in-memory graph")
        if not seeds:
            return {}
        n = len(projection.iids)
        args = (p["damping"], p["max_iterations"], p["tolerance"])
        scores = [0.0] * n
        if name.endswith(("_weighted", "_top")):  # _top: gds_passage_scores_top, a weighted walk
            total = sum(w for _, w in seeds)
            normalises = "/ total_weight" in self.text(name) or "pair[1] / total" in self.text(name)
            bias: dict[int, float] = {}
            for iid, w in seeds:
                bias[index[iid]] = w / total if normalises else w
            self.pagerank_runs += 1
            scores = pregel_pagerank(n, projection.relationships, bias, *args)
        else:
            for iid, w in seeds:  # one unweighted run per seed, weighted sum
                self.pagerank_runs += 1
                run = pregel_pagerank(n, projection.relationships, {index[iid]: 1.0}, *args)
                scores = [a + w * b for a, b in zip(scores, run, strict=True)]
        return {projection.iids[i]: s for i, s in enumerate(scores) if s > 0}

    def _alive(self, iid: int, ns: str, label: str | None) -> FakeNode | None:
        """gds.util.asNode(nodeId) with the statement's filters: null for a deleted node."""
        node = self.graph.nodes.get(iid)
        if node is None or node.namespace != ns or (label is not None and node.label != label):
            return None
        return node

    def _ppr(self, name: str, p: dict[str, Any]) -> Records:
        rows = []
        guarded = "node IS NOT NULL" in self.text(name)
        for iid, score in self._pagerank(name, p).items():
            node = self._alive(iid, p["namespace"], "Phrase")
            if node is not None:
                rows.append({"id": node.props["id"], "score": score})
            elif not guarded:  # gds.util.asNode(nodeId).id of a deleted node
                rows.append({"id": None, "score": score})
        return rows

    def q_gds_ppr_weighted(self, p: dict[str, Any]) -> Records:
        return self._ppr("gds_ppr_weighted", p)

    def q_gds_ppr_linear(self, p: dict[str, Any]) -> Records:
        return self._ppr("gds_ppr_linear", p)

    def _passage_scores(self, name: str, p: dict[str, Any]) -> Records:
        ns = p["namespace"]
        hits = {iid: s for iid, s in self._pagerank(name, p).items() if self._alive(iid, ns, "Phrase")}
        total = sum(hits.values())
        ppr = {iid: s / total for iid, s in hits.items()}
        return self._aggregate(ns, ppr, p["limit"], p["explain_phrases"])

    def q_gds_passage_scores_weighted(self, p: dict[str, Any]) -> Records:
        return self._passage_scores("gds_passage_scores_weighted", p)

    def q_gds_passage_scores_linear(self, p: dict[str, Any]) -> Records:
        return self._passage_scores("gds_passage_scores_linear", p)

    def q_gds_passage_scores_top(self, p: dict[str, Any]) -> Records:
        """The aggregation over the walk's ``top_nodes`` best nodes only, divided by the sum over all
        (ties at the cut by internal id: the statement takes any of them)."""
        ns = p["namespace"]
        reached = self._pagerank("gds_passage_scores_top", p)
        total = sum(reached.values())
        best = sorted(reached.items(), key=lambda h: (-h[1], h[0]))[: p["top_nodes"]]
        ppr = {iid: s / total for iid, s in best if self._alive(iid, ns, "Phrase")}
        return self._aggregate(ns, ppr, p["limit"], p["explain_phrases"])

    def _passage_nodes(self, name: str, p: dict[str, Any]) -> Records:
        ns = p["namespace"]
        hits = {iid: s for iid, s in self._pagerank(name, p).items() if self._alive(iid, ns, None)}
        total = sum(hits.values())
        passages = [(iid, s) for iid, s in hits.items() if self.graph.nodes[iid].label == "Passage"]
        passages.sort(key=lambda h: (-h[1], self.graph.nodes[h[0]].props["id"]))
        rows = []
        for iid, raw in passages[: p["limit"]]:
            mine = [
                (hits[q], self.graph.nodes[q].props["name"])
                for q in self.graph.mentioned_by(iid)
                if q in hits and self.graph.nodes[q].label == "Phrase" and self.graph.nodes[q].namespace == ns
            ]
            mine.sort(key=lambda m: (-m[0], m[1]))
            rows.append(
                {
                    "passage_id": self.graph.nodes[iid].props["id"],
                    "score": raw / total,
                    "top_phrases": [
                        {"phrase": n, "score": s / total} for s, n in mine[: p["explain_phrases"]]
                    ],
                }
            )
        rows.sort(key=lambda r: (-r["score"], r["passage_id"]))
        return rows

    def q_gds_passage_nodes_weighted(self, p: dict[str, Any]) -> Records:
        return self._passage_nodes("gds_passage_nodes_weighted", p)

    def q_gds_passage_nodes_linear(self, p: dict[str, Any]) -> Records:
        return self._passage_nodes("gds_passage_nodes_linear", p)

    # --- vector indexes ----------------------------------------------------------------------------
    @staticmethod
    def exact(a: Any, b: Any) -> float:
        """vector.similarity.cosine: (1 + cosine) / 2."""
        x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        return float((1.0 + x @ y / (np.linalg.norm(x) * np.linalg.norm(y))) / 2.0)

    def _index(self, label: str, vector: Any, fetch: int) -> list[tuple[FakeNode, float]]:
        """The index's approximate neighbours over every namespace: scores quantized to ``quantum``."""
        scored = [
            (n, round(self.exact(n.props["embedding"], vector) / self.quantum) * self.quantum)
            for n in self.graph.nodes.values()
            if n.label == label and n.props.get("embedding") is not None
        ]
        scored.sort(key=lambda h: (-h[1], h[0].iid))
        return scored[:fetch]

    def _vector_passages(self, name: str, p: dict[str, Any]) -> Records:
        rescored = RESCORE in self.text(name)
        hits = self._index("Passage", p["vector"], p["fetch"])
        matches = [
            {
                "id": node.props["id"],
                "score": self.exact(node.props["embedding"], p["vector"]) if rescored else approx,
            }
            for node, approx in hits
            if node.namespace == p["namespace"]
        ]
        return [{"fetched": len(hits), "matches": matches}]

    def q_vector_passages(self, p: dict[str, Any]) -> Records:
        return self._vector_passages("vector_passages", p)

    def _vector_facts(self, p: dict[str, Any]) -> Records:
        hits = self._index("Fact", p["vector"], p["fetch"])
        matches = []
        for node, _ in hits:
            if node.namespace != p["namespace"]:
                continue
            names = {}
            for key in ("subject_id", "object_id"):
                iid = self.graph.iid("Phrase", p["namespace"], node.props[key])
                names[key] = self.graph.nodes[iid].props["name"] if iid is not None else None
            matches.append(
                {
                    "id": node.props["id"],
                    "subject_id": node.props["subject_id"],
                    "subject": names["subject_id"],
                    "predicate": node.props["predicate"],
                    "object_id": node.props["object_id"],
                    "object": names["object_id"],
                    "score": self.exact(node.props["embedding"], p["vector"]),
                }
            )
        return [{"fetched": len(hits), "matches": matches}]

    def q_vector_facts(self, p: dict[str, Any]) -> Records:
        return self._vector_facts(p)

    def q_vector_facts_search(self, p: dict[str, Any]) -> Records:
        return self._vector_facts(p)
