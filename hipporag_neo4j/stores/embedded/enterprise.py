"""What the embedded store reads of the enterprise graph beside it (``enterprise.sqlite``, written by
:mod:`hipporag_neo4j.linking.embedded`): the SAME_AS links and relationships the joined walk adds."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.graph.joined import JoinEdges
from hipporag_neo4j.models import check_identifier

#: The enterprise graph's database file in the embedded store's directory.
DB_FILE = "enterprise.sqlite"


@contextmanager
def opened(store_path: str | Path) -> Iterator[sqlite3.Connection | None]:
    """``enterprise.sqlite`` in the store's directory, opened read-only (never created); None when there
    is none."""
    path = Path(store_path) / DB_FILE
    if not path.is_file():
        yield None
        return
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the enterprise graph at {path}: {exc}") from exc
    try:
        yield conn
    finally:
        conn.close()


def read_join_edges(store_path: str | Path, rel_types: Sequence[str], known: int | None) -> JoinEdges | None:
    """The links and the ``rel_types`` relationships touching linked nodes, from ``enterprise.sqlite`` in
    the store's directory; None when its version is ``known`` (nothing changed since)."""
    with opened(store_path) as conn:
        if conn is None:  # nothing imported or linked yet: as empty as a new file (version 0)
            return None if known == 0 else JoinEdges(0, [], [])
        types = [check_identifier(t, "relationship type") for t in rel_types]
        try:
            with conn:
                row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
                version = int(row[0]) if row else 0
                if version == known:
                    return None
                same_as = [
                    (p, n, float(x))
                    for p, n, x in conn.execute("SELECT phrase_id, node_id, score FROM same_as")
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
            raise StoreError(
                f"cannot read the enterprise graph at {Path(store_path) / DB_FILE}: {exc}"
            ) from exc
    return JoinEdges(version, same_as, [(s, t) for s, t in edges])
