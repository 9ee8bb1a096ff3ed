"""The enterprise graph and its links on the embedded store: ``enterprise.sqlite`` beside the store's
own database, so linking never changes the knowledge graph's tables (and can be removed by deleting it)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

from hipporag_neo4j.common.sqlite import begin_immediate, chunks, placeholders
from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.linking.graph_file import EntityGraph
from hipporag_neo4j.linking.model import NodeLink, SameAs
from hipporag_neo4j.models import LinkedEntity, check_identifier
from hipporag_neo4j.stores.embedded.enterprise import DB_FILE

STORE_FILE = "graph.sqlite"  # the embedded store's own database, attached read-only for phrase names

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
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
_BUMP = "INSERT INTO meta(key, value) VALUES ('version', 1) ON CONFLICT(key) DO UPDATE SET value = value + 1"


class EmbeddedEnterpriseGraph:
    """An imported entity graph (see :mod:`.graph_file`) and the SAME_AS links into it."""

    def __init__(self, store_path: str | Path) -> None:
        path = self._path = Path(store_path)
        try:
            path.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                (path / DB_FILE).absolute().as_uri(), uri=True, check_same_thread=False, isolation_level=None
            )
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
        begin_immediate(conn)
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
            conn.execute(_BUMP)
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
        begin_immediate(conn)
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
            conn.execute(_BUMP)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return len({(x.phrase_id, x.node_id) for x in links} - existing)

    def delete_links(self, label: str | None = None) -> int:
        conn = self._conn
        begin_immediate(conn)
        try:
            if label is None:
                removed = conn.execute("DELETE FROM same_as").rowcount
            else:
                check_identifier(label, "label")
                removed = conn.execute(
                    "DELETE FROM same_as WHERE node_id IN (SELECT node_id FROM node_labels WHERE label = ?)",
                    (label,),
                ).rowcount
            conn.execute(_BUMP)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return removed

    def _attach_store(self) -> None:
        """The store's database as ``kg`` (phrase names, mentions), read only; once per connection."""
        if not any(row[1] == "kg" for row in self._conn.execute("PRAGMA database_list")):
            uri = (self._path / STORE_FILE).absolute().as_uri() + "?mode=ro"
            try:
                self._conn.execute("ATTACH DATABASE ? AS kg", (uri,))
            except sqlite3.OperationalError as exc:
                raise StoreError(f"cannot read the store beside {self._path / DB_FILE}: {exc}") from exc

    def links_to_nodes(self, node_ids: Sequence[str]) -> dict[str, list[NodeLink]]:
        self._attach_store()
        found: dict[str, list[NodeLink]] = {}
        for chunk in chunks(list(node_ids)):
            rows = self._conn.execute(
                "SELECT s.phrase_id, p.name, "
                "(SELECT COUNT(*) FROM kg.mentions m WHERE m.phrase_key = p.key), "
                "s.node_id, s.score, s.method FROM same_as s JOIN kg.phrases p ON p.id = s.phrase_id "
                f"WHERE s.node_id IN ({placeholders(len(chunk))}) ORDER BY s.score DESC, s.phrase_id",
                list(chunk),
            ).fetchall()
            for phrase_id, name, count, node_id, score, method in rows:
                found.setdefault(node_id, []).append(NodeLink(phrase_id, name, count, node_id, score, method))
        return found

    def links_of_passages(self, passage_ids: Sequence[str]) -> dict[str, list[LinkedEntity]]:
        self._attach_store()
        found: dict[str, list[LinkedEntity]] = {}
        for chunk in chunks(list(passage_ids)):
            rows = self._conn.execute(
                "SELECT d.id, p.name, s.node_id, s.score, s.method, n.properties, "
                "(SELECT group_concat(label, ',') FROM node_labels WHERE node_id = n.id) "
                "FROM kg.passages d JOIN kg.mentions m ON m.passage_key = d.key "
                "JOIN kg.phrases p ON p.key = m.phrase_key "
                "JOIN same_as s ON s.phrase_id = p.id JOIN nodes n ON n.id = s.node_id "
                f"WHERE d.id IN ({placeholders(len(chunk))}) "
                "ORDER BY d.id, s.score DESC, s.node_id, p.name",
                list(chunk),
            ).fetchall()
            for passage_id, phrase, node_id, score, method, properties, labels in rows:
                name = json.loads(properties).get("name")
                found.setdefault(passage_id, []).append(
                    LinkedEntity(
                        node_id=node_id,
                        labels=sorted(labels.split(",")) if labels else [],
                        name=None if name is None else str(name),
                        via_phrase=phrase,
                        score=score,
                        method=method,
                    )
                )
        return found
