"""The graph explorer's reads on the embedded store (:class:`~hipporag_neo4j.stores.base.GraphExplorer`).

Plain SQL over the store's database; SAME_AS links and your own nodes are read from ``enterprise.sqlite``
beside it (opened read-only, only when it exists: exploring never creates it).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from hipporag_neo4j.common.captions import passage_caption
from hipporag_neo4j.common.sqlite import chunks, placeholders
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.stores.base import (
    Candidate,
    GraphEdge,
    GraphNode,
    GraphNodeKind,
    Neighbourhood,
    bounded_neighbourhood,
)
from hipporag_neo4j.stores.embedded.enterprise import opened as _enterprise
from hipporag_neo4j.stores.embedded.schema import PASSAGE_COUNT, keys_of


def _like(text: str) -> str:
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _phrase(row: tuple[str, str, int]) -> GraphNode:
    return GraphNode("phrase", row[0], row[1], passage_count=int(row[2]))


def _passage(pid: str, title: str | None) -> GraphNode:
    return GraphNode("passage", pid, passage_caption(pid, title))


_PHRASE_COLUMNS = f"p.id, p.name, {PASSAGE_COUNT}"
# a fact's subject and object phrase ids (the fact as f)
_FACT_ENDS = "JOIN phrases a ON a.key = f.subject_key JOIN phrases b ON b.key = f.object_key"


def search_nodes(conn: sqlite3.Connection, text: str, limit: int) -> list[GraphNode]:
    if not text.strip():
        raise InputError("search text is empty")
    pattern = _like(text.strip())
    phrases = conn.execute(
        f"SELECT {_PHRASE_COLUMNS} AS n FROM phrases p WHERE lower(p.name) LIKE ? ESCAPE '\\' "
        "ORDER BY n DESC, p.name LIMIT ?",
        (pattern, limit),
    ).fetchall()
    passages = conn.execute(
        "SELECT id, title FROM passages WHERE lower(coalesce(title, '')) LIKE ? ESCAPE '\\' "
        "OR lower(id) LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
        (pattern, pattern, limit),
    ).fetchall()
    return [_phrase(r) for r in phrases] + [_passage(pid, title) for pid, title in passages]


def _entity(node_id: str, properties: str, labels: str | None) -> GraphNode:
    name = json.loads(properties).get("name")
    return GraphNode(
        "entity",
        node_id,
        node_id if name is None else str(name),
        labels=tuple(sorted(labels.split(","))) if labels else (),
    )


_ENTITY_COLUMNS = (
    "n.id, n.properties, (SELECT group_concat(label, ',') FROM node_labels WHERE node_id = n.id)"
)


def neighbourhood(
    conn: sqlite3.Connection, store_path: Path, kind: GraphNodeKind, node_id: str, limit: int
) -> Neighbourhood:
    if kind == "phrase":
        return _phrase_neighbourhood(conn, store_path, node_id, limit)
    if kind == "passage":
        return _passage_neighbourhood(conn, node_id, limit)
    return _entity_neighbourhood(conn, store_path, node_id, limit)


def _relations(rows: Sequence[tuple[str, str, str, int]]) -> dict[tuple[str, str], tuple[list[str], int]]:
    """(subject, object, predicate, weight) rows -> (subject, object) -> (predicates, total weight)."""
    merged: dict[tuple[str, str], tuple[list[str], int]] = {}
    for subject, obj, predicate, weight in rows:
        predicates, total = merged.get((subject, obj), ([], 0))
        merged[(subject, obj)] = (sorted({*predicates, predicate}), total + int(weight))
    return merged


def _phrase_neighbourhood(
    conn: sqlite3.Connection, store_path: Path, phrase_id: str, limit: int
) -> Neighbourhood:
    row = conn.execute(
        f"SELECT {_PHRASE_COLUMNS}, p.key FROM phrases p WHERE p.id = ?", (phrase_id,)
    ).fetchone()
    if row is None:
        return Neighbourhood(center=None)
    center = _phrase(row[:3])
    key = int(row[3])
    me: tuple[GraphNodeKind, str] = ("phrase", phrase_id)
    fetch = limit + 1
    relations = _relations(
        conn.execute(
            f"SELECT a.id, b.id, f.predicate, COUNT(*) FROM facts f JOIN states s ON s.fact_key = f.key "
            f"{_FACT_ENDS} WHERE f.subject_key = ?1 OR f.object_key = ?1 "
            "GROUP BY f.subject_key, f.object_key, f.predicate",
            (key,),
        ).fetchall()
    )

    def other_end(pair: tuple[str, str]) -> str:
        return pair[0] if pair[1] == phrase_id else pair[1]

    # heaviest first, ties by the other phrase's id (as the Neo4j statement orders them)
    strongest = sorted(relations.items(), key=lambda item: (-item[1][1], other_end(item[0]), item[0]))[:fetch]
    others = _phrases_by_id(conn, [s if o == phrase_id else o for (s, o), _ in strongest])
    rel_group: list[Candidate] = []
    for (subject, obj), (predicates, weight) in strongest:
        other = others.get(obj if subject == phrase_id else subject)
        if other is not None:
            edge = GraphEdge(
                "RELATION", ("phrase", subject), ("phrase", obj), float(weight), "; ".join(predicates)
            )
            rel_group.append((other, edge))
    synonyms = conn.execute(
        "SELECT a.id, b.id, s.score FROM synonyms s "
        "JOIN phrases a ON a.key = s.source_key JOIN phrases b ON b.key = s.target_key "
        "WHERE s.source_key = ?1 OR s.target_key = ?1 "
        "ORDER BY s.score DESC, CASE WHEN s.source_key = ?1 THEN b.id ELSE a.id END LIMIT ?2",
        (key, fetch),
    ).fetchall()
    syn_others = _phrases_by_id(conn, [t if s == phrase_id else s for s, t, _ in synonyms])
    syn_group: list[Candidate] = [
        (syn_others[t if s == phrase_id else s], GraphEdge("SYNONYM", ("phrase", s), ("phrase", t), float(x)))
        for s, t, x in synonyms
        if (t if s == phrase_id else s) in syn_others
    ]
    passages = conn.execute(
        "SELECT d.id, d.title, m.count FROM mentions m JOIN passages d ON d.key = m.passage_key "
        "WHERE m.phrase_key = ? ORDER BY m.count DESC, d.id LIMIT ?",
        (key, fetch),
    ).fetchall()
    passage_group: list[Candidate] = [
        (_passage(pid, title), GraphEdge("MENTIONS", ("passage", pid), me, float(count)))
        for pid, title, count in passages
    ]
    link_group: list[Candidate] = []
    links = 0
    with _enterprise(store_path) as enterprise:
        if enterprise is not None:
            links = int(
                enterprise.execute(
                    "SELECT COUNT(DISTINCT node_id) FROM same_as WHERE phrase_id = ?", (phrase_id,)
                ).fetchone()[0]
            )
            for nid, props, labels, score, method in enterprise.execute(
                f"SELECT {_ENTITY_COLUMNS}, s.score, s.method FROM same_as s "
                "JOIN nodes n ON n.id = s.node_id "
                "WHERE s.phrase_id = ? ORDER BY s.score DESC, n.id LIMIT ?",
                (phrase_id, fetch),
            ):
                link_group.append(
                    (
                        _entity(nid, props, labels),
                        GraphEdge("SAME_AS", me, ("entity", nid), float(score), method),
                    )
                )
    result = bounded_neighbourhood(center, [rel_group, syn_group, link_group, passage_group], limit)
    synonym_count = conn.execute(
        "SELECT COUNT(*) FROM synonyms WHERE source_key = ?1 OR target_key = ?1", (key,)
    ).fetchone()[0]
    result.totals = {
        "RELATION": len({other_end(pair) for pair in relations}),
        "SYNONYM": int(synonym_count),
        "SAME_AS": links,
        "MENTIONS": center.passage_count or 0,
    }
    return result


def _phrases_by_id(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, GraphNode]:
    found: dict[str, GraphNode] = {}
    for chunk in chunks(list(dict.fromkeys(ids))):
        sql = f"SELECT {_PHRASE_COLUMNS} FROM phrases p WHERE p.id IN ({placeholders(len(chunk))})"
        for row in conn.execute(sql, list(chunk)):
            found[row[0]] = _phrase(row)
    return found


def _passage_neighbourhood(conn: sqlite3.Connection, passage_id: str, limit: int) -> Neighbourhood:
    row = conn.execute("SELECT id, title, key FROM passages WHERE id = ?", (passage_id,)).fetchone()
    if row is None:
        return Neighbourhood(center=None)
    center = _passage(row[0], row[1])
    key = int(row[2])
    me: tuple[GraphNodeKind, str] = ("passage", passage_id)
    mentioned = conn.execute(
        f"SELECT {_PHRASE_COLUMNS}, m.count FROM mentions m JOIN phrases p ON p.key = m.phrase_key "
        "WHERE m.passage_key = ? ORDER BY m.count DESC, p.name LIMIT ?",
        (key, limit + 1),
    ).fetchall()
    phrase_group: list[Candidate] = [
        (_phrase(r[:3]), GraphEdge("MENTIONS", me, ("phrase", r[0]), float(r[3]))) for r in mentioned
    ]
    nodes = {r[0] for r in mentioned[:limit]}
    stated = _relations(
        conn.execute(
            "SELECT a.id, b.id, f.predicate, 1 FROM states s "
            f"JOIN facts f ON f.key = s.fact_key {_FACT_ENDS} WHERE s.passage_key = ?",
            (key,),
        ).fetchall()
    )
    result = bounded_neighbourhood(center, [phrase_group], limit)
    mention_count = conn.execute("SELECT COUNT(*) FROM mentions WHERE passage_key = ?", (key,)).fetchone()
    result.totals = {"MENTIONS": int(mention_count[0])}
    result.edges += [
        GraphEdge("RELATION", ("phrase", s), ("phrase", o), float(w), "; ".join(preds))
        for (s, o), (preds, w) in sorted(stated.items())
        if s in nodes and o in nodes
    ]
    return result


def _entity_neighbourhood(
    conn: sqlite3.Connection, store_path: Path, node_id: str, limit: int
) -> Neighbourhood:
    with _enterprise(store_path) as enterprise:
        if enterprise is None:
            return Neighbourhood(center=None)
        row = enterprise.execute(
            f"SELECT {_ENTITY_COLUMNS} FROM nodes n WHERE n.id = ?", (node_id,)
        ).fetchone()
        if row is None:
            return Neighbourhood(center=None)
        center = _entity(*row)
        me: tuple[GraphNodeKind, str] = ("entity", node_id)
        fetch = limit + 1
        links = enterprise.execute(
            "SELECT phrase_id, score, method FROM same_as WHERE node_id = ? "
            "ORDER BY score DESC, phrase_id LIMIT ?",
            (node_id, fetch),
        ).fetchall()
        own = enterprise.execute(
            f"SELECT e.source, e.type, e.target, {_ENTITY_COLUMNS} FROM edges e "
            "JOIN nodes n ON n.id = CASE WHEN e.source = ?1 THEN e.target ELSE e.source END "
            "WHERE e.source = ?1 OR e.target = ?1 ORDER BY e.type, n.id LIMIT ?2",
            (node_id, fetch),
        ).fetchall()
        link_count, own_count = enterprise.execute(
            "SELECT (SELECT COUNT(DISTINCT phrase_id) FROM same_as WHERE node_id = ?1), "
            "(SELECT COUNT(DISTINCT CASE WHEN source = ?1 THEN target ELSE source END) FROM edges "
            "WHERE source = ?1 OR target = ?1)",
            (node_id,),
        ).fetchone()
    phrases = _phrases_by_id(conn, [p for p, _, _ in links])
    link_group: list[Candidate] = [
        (phrases[p], GraphEdge("SAME_AS", ("phrase", p), me, float(score), method))
        for p, score, method in links
        if p in phrases
    ]
    own_group: list[Candidate] = [
        (_entity(nid, props, labels), GraphEdge("LINKED", ("entity", s), ("entity", t), 1.0, rel_type))
        for s, rel_type, t, nid, props, labels in own
    ]
    result = bounded_neighbourhood(center, [link_group, own_group], limit)
    result.totals = {"SAME_AS": int(link_count), "LINKED": int(own_count)}
    return result


def edges_among(
    conn: sqlite3.Connection, phrase_ids: Sequence[str], passage_ids: Sequence[str]
) -> list[GraphEdge]:
    phrases = sorted(keys_of(conn, "phrases", phrase_ids).values())
    if not phrases:
        return []
    ph = placeholders(len(phrases))
    rows = conn.execute(
        "SELECT a.id, b.id, f.predicate, COUNT(*) FROM facts f "
        f"JOIN states s ON s.fact_key = f.key {_FACT_ENDS} "
        f"WHERE f.subject_key IN ({ph}) AND f.object_key IN ({ph}) "
        "GROUP BY f.subject_key, f.object_key, f.predicate",
        phrases + phrases,
    ).fetchall()
    edges = [
        GraphEdge("RELATION", ("phrase", s), ("phrase", o), float(w), "; ".join(preds))
        for (s, o), (preds, w) in sorted(_relations(rows).items())
    ]
    edges += [
        GraphEdge("SYNONYM", ("phrase", s), ("phrase", t), float(x))
        for s, t, x in conn.execute(
            "SELECT a.id, b.id, s.score FROM synonyms s "
            "JOIN phrases a ON a.key = s.source_key JOIN phrases b ON b.key = s.target_key "
            f"WHERE s.source_key IN ({ph}) AND s.target_key IN ({ph}) ORDER BY a.id, b.id",
            phrases + phrases,
        )
    ]
    passages = sorted(keys_of(conn, "passages", passage_ids).values())
    if passages:
        edges += [
            GraphEdge("MENTIONS", ("passage", d), ("phrase", p), float(n))
            for d, p, n in conn.execute(
                "SELECT d.id, p.id, m.count FROM mentions m "
                "JOIN passages d ON d.key = m.passage_key JOIN phrases p ON p.key = m.phrase_key "
                f"WHERE m.passage_key IN ({placeholders(len(passages))}) "
                f"AND m.phrase_key IN ({ph}) ORDER BY d.id, p.id",
                passages + phrases,
            )
        ]
    return edges


def namespaces(store_root: Path) -> list[str]:
    """'default' (the store's own directory) and each ``namespaces/<name>`` holding a store."""
    found = {"default"}
    folder = store_root / "namespaces"
    if folder.is_dir():
        found.update(p.name for p in folder.iterdir() if (p / "graph.sqlite").exists())
    return sorted(found)
