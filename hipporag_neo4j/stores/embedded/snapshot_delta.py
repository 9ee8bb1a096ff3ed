"""Bring a persisted snapshot forward by the write batches committed since, instead of rebuilding it.

A write transaction that only appends (``write_passages``: new passages, phrases, facts, mentions and
states; ``write_synonyms``: new synonym edges) says so in its row of ``snapshot_log`` (same transaction).
When every version after a persisted snapshot's did, the new state is the old one plus:

- phrases, passages (and facts) with rowids above the ones the snapshot was built from, in rowid order,
  so they take the next positions exactly as a rebuild (``ORDER BY rowid``) would place them;
- mentions and relation edges of the new passages (found through them: the primary-key prefix of
  ``mentions`` / ``states``), which may reach old phrases and add to old phrase pairs;
- the synonym edges the log rows carry (the ones those commits inserted, so none counted twice).

Only the rows of the phrase graph that these touch are rebuilt; each entry is recomputed as the full
build computes it (``snapshot.canonical_adjacency``: the integer relation count, then the synonym score,
rounded once), the old count recovered exactly from the old entry and the pair's stored synonym score;
the other rows are copied in runs (``snapshot.spliced``). Strengths and transition matrices (of the
phrase graph and of HippoRAG 2's walk graph, when the base had built it) are the base's with the rows
whose entries change recomputed by the same products as a rebuild (the touched nodes and their
neighbours: ``snapshot.carried_transition`` / ``carried_walk``), passage counts the old ones plus the
new mentions', so every array equals a rebuild's bit for bit (tested). Deletes, re-embedding and
anything else are logged as 'full': rebuild.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from hipporag_neo4j.stores.base import Matrix
from hipporag_neo4j.stores.embedded import schema
from hipporag_neo4j.stores.embedded.snapshot import (
    Carry,
    GraphSnapshot,
    PhraseIndex,
    _compact,
    blob_to_matrix,
    spliced,
)
from hipporag_neo4j.stores.embedded.snapshot_files import Appended

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
    stamp = rowids
    n_old, n_old_passages = len(base.phrases.ids), len(base.passage_ids)

    new_phrases = conn.execute(schema.DELTA_PHRASES, (stamp["phrases"],)).fetchall()
    new_passages = conn.execute(schema.DELTA_PASSAGES, (stamp["passages"],)).fetchall()
    ids = base.phrases.ids.extended([r[1] for r in new_phrases])
    names = base.phrases.names.extended([r[2] for r in new_phrases])
    passage_ids = base.passage_ids.extended([r[1] for r in new_passages])
    n = len(ids)
    m = conn.execute(schema.DELTA_MENTIONS, (stamp["passages"],)).fetchall()
    relation = conn.execute(schema.DELTA_RELATION_EDGES, (stamp["passages"],)).fetchall()
    # every phrase the delta names: new ones by their rows, old ones in one search of the old ids
    fresh = {r[1]: n_old + k for k, r in enumerate(new_phrases)}
    named = {r[1] for r in m} | {p for r in relation for p in r[:2]} | {p for e in synonyms for p in e[:2]}
    old_named = sorted(named - fresh.keys())
    found = base.phrases.ids.find_all(old_named)
    if any(f is None for f in found):
        raise RuntimeError("a phrase of the delta is in no snapshot row")
    fresh.update(zip(old_named, (int(f) for f in found if f is not None), strict=True))

    def position(phrase_id: str) -> int:
        return fresh[phrase_id]

    # mentions: the new passages' rows, after the old ones (a rebuild's coo -> csr gives the same rows)
    passage_at = {r[0]: n_old_passages + k for k, r in enumerate(new_passages)}
    delta_mentions = sp.csr_matrix(
        (
            np.array([r[2] for r in m], dtype=np.float64),
            (
                np.array([passage_at[r[0]] - n_old_passages for r in m], dtype=np.int64),
                np.array([position(r[1]) for r in m], dtype=np.int64),
            ),
        ),
        shape=(len(new_passages), n),
    )
    old_mentions = sp.csr_matrix(
        (base.mentions.data, base.mentions.indices, base.mentions.indptr), shape=(n_old_passages, n)
    )
    mentions = _compact(sp.csr_matrix(sp.vstack([old_mentions, delta_mentions], format="csr")))
    # counts are integers: the old ones plus the new passages' (a bincount of every mention is the same)
    passage_counts = np.bincount(delta_mentions.indices, minlength=n).astype(np.int32)
    passage_counts[:n_old] += base.passage_counts

    adjacency, n_new_relation, touched = _adjacency(
        conn, base.adjacency, n, stamp["passages"], relation, synonyms, position
    )
    walk = base._passage_graph
    graph = GraphSnapshot.derived(
        PhraseIndex(ids, names, np.zeros((0, dim), dtype=np.float32)),
        passage_ids,
        mentions,
        passage_counts,
        adjacency,
        base.n_relation_edges + n_new_relation,
        base.n_synonym_edges + len(synonyms),
        carry=Carry(
            base.adjacency,
            base.transition,
            base.strength,
            touched,
            None if walk is None or base._passage_strength is None else (walk[0], base._passage_strength),
            n_old_passages,
        ),
    )
    return Delta(
        graph,
        blob_to_matrix([r[-1] for r in new_phrases], dim),
        blob_to_matrix([r[-1] for r in new_passages], dim),
        read_rowids(conn),
    )


def _entry(matrix: sp.csr_matrix, i: int, j: int) -> float | None:
    """``matrix[i, j]`` if stored (sorted indices: a binary search of row i), else None."""
    start, end = int(matrix.indptr[i]), int(matrix.indptr[i + 1])
    at = start + int(np.searchsorted(matrix.indices[start:end], j))
    return float(matrix.data[at]) if at < end and int(matrix.indices[at]) == j else None


def _adjacency(
    conn: sqlite3.Connection,
    old: sp.csr_matrix,
    n: int,
    passage_stamp: int,
    relation: list[tuple[str, str, int]],
    synonyms: list[tuple[str, str, float]],
    position: Any,
) -> tuple[sp.csr_matrix, int, npt.NDArray[np.int64]]:
    """The phrase graph with the new relation counts and synonym edges: the touched rows rebuilt, each
    touched entry ``R + S`` as ``canonical_adjacency`` computes it; how many (subject, object) pairs
    are new; and the touched rows."""
    # per unordered pair {i, j} (i < j): relation count added, synonym score added, ids for the lookup
    added_r: dict[tuple[int, int], float] = {}
    pair_ids: dict[tuple[int, int], tuple[str, str]] = {}
    n_old = old.shape[0]
    n_new_relation = 0
    for subject_id, object_id, weight in relation:
        i, j = position(subject_id), position(object_id)
        # a RELATION_KEY_EDGES row (self-loops included) is new unless its phrases were joined before and
        # a passage before the delta states it
        # (a self-loop is no graph entry: always asked)
        joined = i < n_old and j < n_old and (i == j or _entry(old, i, j) is not None)
        if (
            not joined
            or conn.execute(schema.RELATION_PAIR_BEFORE, (subject_id, object_id, passage_stamp)).fetchone()
            is None
        ):
            n_new_relation += 1
        if i == j:
            continue  # self-loops are dropped from the graph, as in a rebuild
        key = (i, j) if i < j else (j, i)
        added_r[key] = added_r.get(key, 0.0) + float(weight)
        pair_ids[key] = (subject_id, object_id) if subject_id < object_id else (object_id, subject_id)
    added_s: dict[tuple[int, int], float] = {}
    for source_id, target_id, score in synonyms:
        i, j = position(source_id), position(target_id)
        if i != j:
            added_s[(i, j) if i < j else (j, i)] = score
    keys = sorted(set(added_r) | set(added_s))
    padded = sp.csr_matrix(
        (old.data, old.indices, np.concatenate([old.indptr, np.full(n - n_old, old.indptr[-1])])),
        shape=(n, n),
    )
    if not keys:
        return _compact(padded.copy()), 0, np.zeros(0, dtype=np.int64)

    pairs = np.array(keys, dtype=np.int64).reshape(-1, 2)
    touched = np.unique(pairs.ravel())
    # the touched rows as they were (row-sliced from the old matrix), as coordinate entries
    rows_before = padded[touched].tocoo()
    before_rows = touched[rows_before.row]
    before_key = before_rows * n + rows_before.col
    old_value = dict(zip(before_key.tolist(), rows_before.data.tolist(), strict=True))

    p_rows: list[int] = []
    p_cols: list[int] = []
    p_vals: list[float] = []
    for (i, j), r_added, s_added in zip(
        keys, (added_r.get(k, 0.0) for k in keys), (added_s.get(k, 0.0) for k in keys), strict=True
    ):
        before = old_value.get(i * n + j)
        s_old = 0.0
        r_old = 0.0
        if before is not None:
            if (i, j) in added_r and (i, j) not in added_s:
                # a synonym stored before the base snapshot shares this entry: R = entry - S exactly
                found = conn.execute(schema.SYNONYM_SCORE, pair_ids[(i, j)]).fetchone()
                s_old = float(found[0]) if found is not None else 0.0
            r_old = float(np.rint(before - s_old)) if s_old else before
        value = (r_old + r_added) + (s_old + s_added)  # one rounding, as canonical_adjacency's R + S
        p_rows += [i, j]
        p_cols += [j, i]
        p_vals += [value, value]

    patch_key = np.array(p_rows, dtype=np.int64) * n + np.array(p_cols, dtype=np.int64)
    keep = ~np.isin(before_key, patch_key, kind="sort")
    # the touched rows rebuilt: their other entries as they were, the patched ones recomputed
    order = np.searchsorted(touched, np.concatenate([before_rows[keep], np.array(p_rows, dtype=np.int64)]))
    patch = sp.csr_matrix(
        (
            np.concatenate([rows_before.data[keep], np.array(p_vals, dtype=np.float64)]),
            (
                order,
                np.concatenate([rows_before.col[keep].astype(np.int64), np.array(p_cols, dtype=np.int64)]),
            ),
        ),
        shape=(len(touched), n),
    )
    patch.sum_duplicates()  # sorted columns per row (there are no duplicates)
    # every other row as it was, copied in runs between the touched ones
    return spliced(old, (n, n), [(0, n_old, 0)], touched, patch), n_new_relation, touched
