"""What the embedded store reads of the enterprise graph beside it (``enterprise.sqlite``, written by
:mod:`hipporag_neo4j.linking.embedded`): the SAME_AS links and relationships the joined walk adds."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.graph.joined import JoinEdges
from hipporag_neo4j.models import check_identifier

#: The enterprise graph's database file in the embedded store's directory.
DB_FILE = "enterprise.sqlite"


def read_join_edges(store_path: str | Path, rel_types: Sequence[str], known: int | None) -> JoinEdges | None:
    """The links and the ``rel_types`` relationships touching linked nodes, from ``enterprise.sqlite`` in
    the store's directory; None when its version is ``known`` (nothing changed since)."""
    path = Path(store_path) / DB_FILE
    if not path.is_file():  # nothing imported or linked yet: as empty as a new file (version 0)
        return None if known == 0 else JoinEdges(0, [], [])
    types = [check_identifier(t, "relationship type") for t in rel_types]
    try:
        conn = sqlite3.connect(path.absolute().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the enterprise graph at {path}: {exc}") from exc
    try:
        with conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            version = int(row[0]) if row else 0
            if version == known:
                return None
            same_as = [
                (p, n, float(x)) for p, n, x in conn.execute("SELECT phrase_id, node_id, score FROM same_as")
            ]
            edges: list[tuple[str, str]] = []
            if types:
                marks = ",".join("?" * len(types))
                edges = conn.execute(
                    f"SELECT e.source, e.target FROM edges e WHERE e.type IN ({marks}) AND ("
                    "EXISTS (SELECT 1 FROM same_as s WHERE s.node_id = e.source) OR "
                    "EXISTS (SELECT 1 FROM same_as s WHERE s.node_id = e.target)) "
                    "ORDER BY e.source, e.type, e.target",
                    types,
                ).fetchall()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the enterprise graph at {path}: {exc}") from exc
    finally:
        conn.close()
    return JoinEdges(version, same_as, [(s, t) for s, t in edges])
