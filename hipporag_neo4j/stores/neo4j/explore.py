"""The graph explorer's reads on Neo4j (:class:`~hipporag_neo4j.stores.base.GraphExplorer`): each a
named ``cypher/explorer_*.cypher`` statement, bounded by ``$limit`` (one more than asked, to tell when
the neighbourhood was cut)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hipporag_neo4j.common.captions import passage_caption
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.stores.base import (
    Candidate,
    GraphEdge,
    GraphNode,
    GraphNodeKind,
    Neighbourhood,
    bounded_neighbourhood,
)
from hipporag_neo4j.stores.neo4j.runner import CypherRunner


def _phrase(r: Any) -> GraphNode:
    return GraphNode("phrase", str(r["id"]), str(r["name"]), passage_count=int(r["passage_count"] or 0))


def _passage(r: Any) -> GraphNode:
    return GraphNode("passage", str(r["id"]), passage_caption(str(r["id"]), r["title"]))


def _entity(r: Any) -> GraphNode:
    name = r["name"]
    return GraphNode(
        "entity", str(r["id"]), str(r["id"]) if name is None else str(name), labels=tuple(sorted(r["labels"]))
    )


def _predicates(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return "; ".join(sorted(str(v) for v in value))


def search_nodes(runner: CypherRunner, namespace: str, text: str, limit: int) -> list[GraphNode]:
    if not text.strip():
        raise InputError("search text is empty")
    params: dict[str, Any] = {"namespace": namespace, "text": text.strip(), "limit": limit}
    phrases = [_phrase(r) for r in runner.read("explorer_search_phrases", **params)]
    return phrases + [_passage(r) for r in runner.read("explorer_search_passages", **params)]


def neighbourhood(
    runner: CypherRunner, namespace: str, kind: GraphNodeKind, node_id: str, limit: int
) -> Neighbourhood:
    if kind == "phrase":
        return _phrase_neighbourhood(runner, namespace, node_id, limit)
    if kind == "passage":
        return _passage_neighbourhood(runner, namespace, node_id, limit)
    return _entity_neighbourhood(runner, namespace, node_id, limit)


def _phrase_neighbourhood(runner: CypherRunner, namespace: str, phrase_id: str, limit: int) -> Neighbourhood:
    rows = runner.read("explorer_phrase", namespace=namespace, phrase_id=phrase_id)
    if not rows:
        return Neighbourhood(center=None)
    center = _phrase(rows[0])
    me: tuple[GraphNodeKind, str] = ("phrase", phrase_id)
    params: dict[str, Any] = {"namespace": namespace, "phrase_id": phrase_id, "limit": limit + 1}

    def ends(r: Any) -> tuple[tuple[GraphNodeKind, str], tuple[GraphNodeKind, str]]:
        other: tuple[GraphNodeKind, str] = ("phrase", str(r["id"]))
        return (me, other) if r["outgoing"] else (other, me)

    relations: list[Candidate] = [
        (_phrase(r), GraphEdge("RELATION", *ends(r), float(r["weight"] or 0), _predicates(r["predicates"])))
        for r in runner.read("explorer_phrase_relations", **params)
    ]
    synonyms: list[Candidate] = [
        (_phrase(r), GraphEdge("SYNONYM", *ends(r), float(r["score"] or 0)))
        for r in runner.read("explorer_phrase_synonyms", **params)
    ]
    links: list[Candidate] = [
        (_entity(r), GraphEdge("SAME_AS", me, ("entity", str(r["id"])), float(r["score"]), str(r["method"])))
        for r in runner.read("explorer_phrase_same_as", **params)
    ]
    passages: list[Candidate] = [
        (_passage(r), GraphEdge("MENTIONS", ("passage", str(r["id"])), me, float(r["count"] or 0)))
        for r in runner.read("explorer_phrase_passages", **params)
    ]
    result = bounded_neighbourhood(center, [relations, synonyms, links, passages], limit)
    counts = rows[0]
    result.totals = {
        "RELATION": int(counts["relations"]),
        "SYNONYM": int(counts["synonyms"]),
        "SAME_AS": int(counts["links"]),
        "MENTIONS": int(counts["passages"]),
    }
    return result


def _passage_neighbourhood(
    runner: CypherRunner, namespace: str, passage_id: str, limit: int
) -> Neighbourhood:
    rows = runner.read("explorer_passage", namespace=namespace, passage_id=passage_id)
    if not rows:
        return Neighbourhood(center=None)
    center = _passage(rows[0])
    me: tuple[GraphNodeKind, str] = ("passage", passage_id)
    mentioned = runner.read(
        "explorer_passage_phrases", namespace=namespace, passage_id=passage_id, limit=limit + 1
    )
    group: list[Candidate] = [
        (_phrase(r), GraphEdge("MENTIONS", me, ("phrase", str(r["id"])), float(r["count"] or 0)))
        for r in mentioned
    ]
    result = bounded_neighbourhood(center, [group], limit)
    result.totals = {"MENTIONS": int(rows[0]["phrases"])}
    shown = {n.id for n in result.nodes}
    merged: dict[tuple[str, str], tuple[set[str], int]] = {}
    for r in runner.read("explorer_passage_facts", namespace=namespace, passage_id=passage_id):
        key = (str(r["subject_id"]), str(r["object_id"]))
        predicates, weight = merged.get(key, (set(), 0))
        merged[key] = (predicates | {str(r["predicate"])}, weight + 1)
    result.edges += [
        GraphEdge("RELATION", ("phrase", s), ("phrase", o), float(w), "; ".join(sorted(p)))
        for (s, o), (p, w) in sorted(merged.items())
        if s in shown and o in shown
    ]
    return result


def _entity_neighbourhood(runner: CypherRunner, namespace: str, node_id: str, limit: int) -> Neighbourhood:
    rows = runner.read("explorer_node", namespace=namespace, node_id=node_id)
    if not rows:
        return Neighbourhood(center=None)
    center = _entity(rows[0])
    me: tuple[GraphNodeKind, str] = ("entity", node_id)
    params: dict[str, Any] = {"namespace": namespace, "node_id": node_id, "limit": limit + 1}
    links: list[Candidate] = [
        (_phrase(r), GraphEdge("SAME_AS", ("phrase", str(r["id"])), me, float(r["score"]), str(r["method"])))
        for r in runner.read("explorer_node_links", **params)
    ]
    own: list[Candidate] = []
    for r in runner.read("explorer_node_relationships", node_id=node_id, limit=limit + 1):
        other: tuple[GraphNodeKind, str] = ("entity", str(r["id"]))
        source, target = (me, other) if r["outgoing"] else (other, me)
        own.append((_entity(r), GraphEdge("LINKED", source, target, 1.0, str(r["type"]))))
    result = bounded_neighbourhood(center, [links, own], limit)
    result.totals = {"SAME_AS": int(rows[0]["links"]), "LINKED": int(rows[0]["related"])}
    return result


def edges_among(
    runner: CypherRunner, namespace: str, phrase_ids: Sequence[str], passage_ids: Sequence[str]
) -> list[GraphEdge]:
    phrases = sorted(set(phrase_ids))
    if not phrases:
        return []
    edges = [
        GraphEdge(
            "RELATION" if r["type"] == "RELATION" else "SYNONYM",
            ("phrase", str(r["source"])),
            ("phrase", str(r["target"])),
            float(r["weight"] or 0),
            _predicates(r["predicates"]) if r["type"] == "RELATION" else "",
        )
        for r in runner.read("explorer_edges_among", namespace=namespace, phrase_ids=phrases)
    ]
    passages = sorted(set(passage_ids))
    if passages:
        edges += [
            GraphEdge(
                "MENTIONS",
                ("passage", str(r["passage_id"])),
                ("phrase", str(r["phrase_id"])),
                float(r["count"]),
            )
            for r in runner.read(
                "explorer_mentions_among", namespace=namespace, ids=passages, phrase_ids=phrases
            )
        ]
    return edges


def namespaces(runner: CypherRunner) -> list[str]:
    return [str(r["namespace"]) for r in runner.read("explorer_namespaces")]
