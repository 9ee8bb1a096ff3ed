"""Bring a persisted snapshot forward by the write batches committed since, instead of rebuilding it.

A write transaction that only appends (``write_passages``: new passages, phrases, facts, mentions and
states; ``write_synonyms``: new synonym edges) says so in its row of ``snapshot_log`` (same transaction).
When every version after a persisted snapshot's did, the new state is the old one plus the delta read
here (:class:`~hipporag_neo4j.stores.memory.delta.WriteDelta`), applied by the in-process engine's one
:func:`~hipporag_neo4j.stores.memory.delta.apply`:

- phrases, passages (and facts) with rowids above the ones the snapshot was built from, in rowid order,
  so they take the next positions exactly as a rebuild (``ORDER BY rowid``) would place them;
- mentions and relation edges of the new passages (found through them: the primary-key prefix of
  ``mentions`` / ``states``), which may reach old phrases and add to old phrase pairs;
- the synonym edges the log rows carry (the ones those commits inserted, so none counted twice).

With the pair look-ups answered from SQLite (:class:`~hipporag_neo4j.stores.memory.delta.History`), every
array equals a rebuild's bit for bit (tested). Deletes, re-embedding and anything else are logged as
'full': rebuild.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy.typing as npt

from hipporag_neo4j.stores.base import Matrix
from hipporag_neo4j.stores.embedded import schema
from hipporag_neo4j.stores.embedded.snapshot import blob_to_matrix
from hipporag_neo4j.stores.embedded.snapshot_files import Appended
from hipporag_neo4j.stores.memory import delta
from hipporag_neo4j.stores.memory.graph import GraphSnapshot

ROWIDS = "rowids"  # manifest key: {"phrases": int, "passages": int, "facts": int} the snapshot was built from


def read_rowids(conn: sqlite3.Connection) -> dict[str, int]:
    phrases, passages, facts = conn.execute(schema.MAX_ROWIDS).fetchone()
    return {"phrases": int(phrases), "passages": int(passages), "facts": int(facts)}


def _log_since(
    conn: sqlite3.Connection, version: int, token: str | None, values: dict[str, str]
) -> list[tuple[Any, ...]] | None:
    """The ``snapshot_log`` rows from ``version`` to the current one when every commit since was
    append-only and the log says (``version``, ``token``) is this database's history; else None."""
    current = int(values.get("graph_version", 0))
    rows = conn.execute(schema.LOG_SINCE, (version,)).fetchall()
    if (
        len(rows) != current - version + 1
        or [r[0] for r in rows] != list(range(version, current + 1))
        or rows[0][1] != token
        or rows[-1][1] != values.get("graph_token")
        or any(r[2] not in (schema.LOG_APPEND, schema.LOG_SYNONYMS) for r in rows[1:])
    ):
        return None
    return rows


def append_only_since(conn: sqlite3.Connection, version: int, token: str, values: dict[str, str]) -> bool:
    """Whether every commit after (``version``, ``token``) up to the state ``values`` describes only
    appended rows (so what was read at that version is still there, unchanged)."""
    return _log_since(conn, version, token, values) is not None


def logged_synonyms(
    conn: sqlite3.Connection, manifest: dict[str, Any], values: dict[str, str]
) -> list[tuple[str, str, float]] | None:
    """The synonym edges committed after the snapshot of ``manifest`` when every commit since was
    append-only and the log says the snapshot's (version, token) is this database's history; else None."""
    if ROWIDS not in manifest:
        return None
    rows = _log_since(conn, int(manifest["graph_version"]), manifest.get("graph_token"), values)
    if rows is None:
        return None
    edges: list[tuple[str, str, float]] = []
    for _, _, kind, payload in rows[1:]:
        if kind == schema.LOG_SYNONYMS and payload:
            edges.extend((str(s), str(t), float(w)) for s, t, w in json.loads(payload))
    return edges


@dataclass
class Update:
    """The arrays of the new version (vectors as rows to append) and its manifest extras."""

    arrays: dict[str, npt.NDArray[Any]]
    appended: dict[str, Appended]
    extra: dict[str, Any]


@dataclass
class Delta:
    """The new version's graph (its phrase and passage vectors left empty), the vectors of the rows
    written since its base, and the rowids it reflects."""

    graph: GraphSnapshot
    phrase_rows: Matrix
    passage_rows: Matrix
    rowids: dict[str, int]


def brought_forward(
    conn: sqlite3.Connection,
    base_arrays: dict[str, npt.NDArray[Any]],
    manifest: dict[str, Any],
    synonyms: list[tuple[str, str, float]],
    dim: int,
) -> Update:
    """The snapshot of the state ``conn``'s read transaction sees, from the snapshot ``base_arrays`` /
    ``manifest`` and the rows committed since (see the module docstring), as files to write."""
    base = GraphSnapshot.from_arrays(base_arrays, manifest)
    n_old, n_old_passages = len(base.phrases.ids), len(base.passage_ids)
    delta = carried_forward(conn, base, manifest[ROWIDS], synonyms, dim)
    arrays, extra = delta.graph.arrays()
    del arrays["phrase_vectors"], arrays["passage_vectors"]
    extra["n_phrases"], extra["n_passages"] = len(delta.graph.phrases.ids), len(delta.graph.passage_ids)
    extra[ROWIDS] = delta.rowids
    vector_files = {name: spec["data"] for name, spec in manifest["files"].items() if "data" in spec}
    appended = {
        "phrase_vectors": Appended(delta.phrase_rows, vector_files["phrase_vectors"], n_old),
        "passage_vectors": Appended(delta.passage_rows, vector_files["passage_vectors"], n_old_passages),
    }
    return Update(arrays, appended, extra)


def carried_forward(
    conn: sqlite3.Connection,
    base: GraphSnapshot,
    rowids: dict[str, int],
    synonyms: list[tuple[str, str, float]],
    dim: int,
) -> Delta:
    """The graph of the state ``conn``'s read transaction sees, from ``base`` (built from the rows up to
    ``rowids``; its phrase and id tables without appended strings) and the rows committed since."""
    new_phrases = conn.execute(schema.DELTA_PHRASES, (rowids["phrases"],)).fetchall()
    new_passages = conn.execute(schema.DELTA_PASSAGES, (rowids["passages"],)).fetchall()
    passage_of = {r[0]: r[1] for r in new_passages}
    changes = delta.WriteDelta(
        phrases=[(r[1], r[2]) for r in new_phrases],
        passages=[r[1] for r in new_passages],
        mentions=[
            (passage_of[r[0]], r[1], r[2])
            for r in conn.execute(schema.DELTA_MENTIONS, (rowids["passages"],)).fetchall()
        ],
        relations=conn.execute(schema.DELTA_RELATION_EDGES, (rowids["passages"],)).fetchall(),
        synonyms=synonyms,
    )

    def relation_before(subject_id: str, object_id: str) -> bool:
        row = conn.execute(schema.RELATION_PAIR_BEFORE, (subject_id, object_id, rowids["passages"]))
        return row.fetchone() is not None

    def synonym_score(source_id: str, target_id: str) -> float | None:
        found = conn.execute(schema.SYNONYM_SCORE, (source_id, target_id)).fetchone()
        return float(found[0]) if found is not None else None

    graph = delta.apply(base, changes, delta.History(relation_before, synonym_score), dim)
    return Delta(
        graph,
        blob_to_matrix([r[-1] for r in new_phrases], dim),
        blob_to_matrix([r[-1] for r in new_passages], dim),
        read_rowids(conn),
    )
