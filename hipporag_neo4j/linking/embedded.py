"""The enterprise graph and its links on the embedded store: ``enterprise.sqlite`` beside the store's
own database, so linking never changes the knowledge graph's tables (and can be removed by deleting it)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.linking.graph_file import EntityGraph
from hipporag_neo4j.linking.model import EnterpriseEdge, LinkedNode, SameAs, check_identifier

DB_FILE = "enterprise.sqlite"
_CHUNK = 900  # SQLite's default limit of bound parameters is 999

SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes (id TEXT PRIMARY KEY, properties TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS node_labels (
    node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE, label TEXT NOT NULL,
    PRIMARY KEY (node_id, label));
CREATE INDEX IF NOT EXISTS node_labels_by_label ON node_labels(label);
CREATE TABLE IF NOT EXISTS edges (
    source TEXT NOT NULL, type TEXT NOT NULL, target TEXT NOT NULL, PRIMARY KEY (source, type, target));
CREATE INDEX IF NOT EXISTS edges_by_target ON edges(target);
CREATE TABLE IF NOT EXISTS same_as (
    phrase_id TEXT NOT NULL, node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    score REAL NOT NULL, method TEXT NOT NULL, PRIMARY KEY (phrase_id, node_id));
CREATE INDEX IF NOT EXISTS same_as_by_node ON same_as(node_id);
"""


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


class EmbeddedEnterpriseGraph:
    """An imported entity graph (see :mod:`.graph_file`) and the SAME_AS links into it."""

    def __init__(self, store_path: str | Path) -> None:
        path = Path(store_path)
        try:
            path.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path / DB_FILE, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.executescript(SCHEMA)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise StoreError(f"cannot open the enterprise graph at {path / DB_FILE}: {exc}") from exc

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> EmbeddedEnterpriseGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def import_graph(self, graph: EntityGraph) -> dict[str, int]:
        """Add or update nodes (labels and properties replaced) and add relationships; idempotent."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            for node in graph.nodes:
                conn.execute(
                    "INSERT INTO nodes(id, properties) VALUES (?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET properties = excluded.properties",
                    (node.id, json.dumps(node.properties, ensure_ascii=False, default=str)),
                )
                conn.execute("DELETE FROM node_labels WHERE node_id = ?", (node.id,))
                conn.executemany(
                    "INSERT INTO node_labels(node_id, label) VALUES (?, ?)",
                    [(node.id, x) for x in node.labels],
                )
            before = conn.total_changes
            conn.executemany(
                "INSERT OR IGNORE INTO edges(source, type, target) VALUES (?, ?, ?)",
                [(e.source, e.type, e.target) for e in graph.edges],
            )
            new_edges = conn.total_changes - before
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return {"nodes": len(graph.nodes), "relationships_added": new_edges}

    def node_values(self, label: str, prop: str, batch_size: int) -> Iterator[list[tuple[str, str]]]:
        check_identifier(label, "label")
        check_identifier(prop, "property")
        rows = self._conn.execute(
            "SELECT n.id, n.properties FROM nodes n JOIN node_labels l ON l.node_id = n.id "
            "WHERE l.label = ? ORDER BY n.id",
            (label,),
        ).fetchall()
        batch: list[tuple[str, str]] = []
        for node_id, properties in rows:
            value = json.loads(properties).get(prop)
            if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value).strip():
                batch.append((node_id, str(value)))
            if len(batch) >= batch_size:
                yield batch
                batch = []
        if batch:
            yield batch

    def write_links(self, links: Sequence[SameAs], label: str) -> int:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            existing = {
                (p, n)
                for p, n in conn.execute(
                    "SELECT s.phrase_id, s.node_id FROM same_as s "
                    "JOIN node_labels l ON l.node_id = s.node_id WHERE l.label = ?",
                    (label,),
                )
            }
            conn.executemany(
                "INSERT INTO same_as(phrase_id, node_id, score, method) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(phrase_id, node_id) "
                "DO UPDATE SET score = excluded.score, method = excluded.method",
                [(x.phrase_id, x.node_id, x.score, x.method) for x in links],
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return len({(x.phrase_id, x.node_id) for x in links} - existing)

    def delete_links(self, label: str | None = None) -> int:
        if label is None:
            return self._conn.execute("DELETE FROM same_as").rowcount
        check_identifier(label, "label")
        return self._conn.execute(
            "DELETE FROM same_as WHERE node_id IN (SELECT node_id FROM node_labels WHERE label = ?)", (label,)
        ).rowcount

    def links_from_phrases(self, phrase_ids: Sequence[str]) -> dict[str, list[LinkedNode]]:
        found: dict[str, list[LinkedNode]] = {}
        for chunk in _chunks(list(phrase_ids)):
            rows = self._conn.execute(
                "SELECT s.phrase_id, s.node_id, s.score, s.method, n.properties, "
                "(SELECT group_concat(label, ',') FROM node_labels WHERE node_id = n.id) "
                "FROM same_as s JOIN nodes n ON n.id = s.node_id "
                f"WHERE s.phrase_id IN ({','.join('?' * len(chunk))}) "
                "ORDER BY s.score DESC, s.node_id",
                list(chunk),
            ).fetchall()
            for phrase_id, node_id, score, method, properties, labels in rows:
                name = json.loads(properties).get("name")
                found.setdefault(phrase_id, []).append(
                    LinkedNode(node_id, tuple(sorted(labels.split(","))), name, score, method)
                )
        return found

    def links_to_nodes(self, node_ids: Sequence[str]) -> dict[str, list[SameAs]]:
        found: dict[str, list[SameAs]] = {}
        for chunk in _chunks(list(node_ids)):
            rows = self._conn.execute(
                "SELECT phrase_id, node_id, score, method FROM same_as "
                f"WHERE node_id IN ({','.join('?' * len(chunk))}) ORDER BY score DESC, phrase_id",
                list(chunk),
            ).fetchall()
            for phrase_id, node_id, score, method in rows:
                found.setdefault(node_id, []).append(SameAs(phrase_id, node_id, score, method))
        return found

    def neighbours(self, node_ids: Sequence[str], rel_types: Sequence[str]) -> list[EnterpriseEdge]:
        types = [check_identifier(t, "relationship type") for t in rel_types]
        if not types or not node_ids:
            return []
        edges: set[EnterpriseEdge] = set()
        marks = ",".join("?" * len(types))
        for chunk in _chunks(list(node_ids)):
            ids = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT source, type, target FROM edges WHERE type IN ({marks}) "
                f"AND (source IN ({ids}) OR target IN ({ids}))",
                [*types, *chunk, *chunk],
            ).fetchall()
            edges.update(EnterpriseEdge(s, t, o) for s, t, o in rows)
        return sorted(edges, key=lambda e: (e.source, e.type, e.target))
