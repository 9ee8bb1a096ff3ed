"""The embedded store's snapshot read from SQLite: the in-process engine's structures
(:mod:`hipporag_neo4j.stores.memory.graph`) built from the rows of one read transaction."""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from hipporag_neo4j.stores.base import Matrix
from hipporag_neo4j.stores.embedded.schema import FACT_ROWS, MENTION_KEYS, RELATION_KEY_EDGES, SYNONYM_KEYS
from hipporag_neo4j.stores.memory.graph import (
    FactIndex,
    GraphSnapshot,
    PhraseIndex,
    canonical_adjacency,
    compact,
)
from hipporag_neo4j.stores.memory.strings import StringTable

_FETCH = 20_000  # rows per fetch when streaming vectors out of SQLite
_LAST_FACT_KEY = "SELECT IFNULL(MAX(key), 0) FROM facts"


def blob_to_matrix(blobs: list[bytes], dim: int) -> Matrix:
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim).copy()


def _rows_with_vectors(
    conn: sqlite3.Connection, count_sql: str, sql: str, dim: int
) -> tuple[list[tuple[Any, ...]], Matrix, Matrix]:
    """Rows of ``sql`` whose last column is a vector: the other columns as tuples, the vectors as one
    matrix filled batch by batch (no list of a million blobs held at once), and its buffer, which has
    spare rows for appending (untouched: address space, not memory)."""
    n = int(conn.execute(count_sql).fetchone()[0])
    vectors = np.empty((n + n // 4 + 64, dim), dtype=np.float32)
    rows: list[tuple[Any, ...]] = []
    cursor = conn.execute(sql)
    while batch := cursor.fetchmany(_FETCH):
        start = len(rows)
        if start + len(batch) > n:
            raise RuntimeError("rows changed during a read transaction")
        vectors[start : start + len(batch)] = np.frombuffer(
            b"".join(r[-1] for r in batch), np.float32
        ).reshape(len(batch), dim)
        rows.extend(r[:-1] for r in batch)
    return rows, vectors[: len(rows)], vectors


def load_phrases(conn: sqlite3.Connection, dim: int) -> PhraseIndex:
    """Every phrase, in rowid order (the snapshot's positions)."""
    rows, vectors, buffer = _rows_with_vectors(
        conn,
        "SELECT COUNT(*) FROM phrases",
        "SELECT id, name, embedding FROM phrases ORDER BY rowid",
        dim,
    )
    return PhraseIndex(
        StringTable.of([r[0] for r in rows], searchable=True),
        StringTable.of([r[1] for r in rows]),
        buffer,
        len(vectors),
    )


def load_facts(conn: sqlite3.Connection, dim: int) -> FactIndex:
    """Every embedded fact, in key order."""
    rows, vectors, buffer = _rows_with_vectors(
        conn,
        "SELECT COUNT(*) FROM facts WHERE embedding IS NOT NULL",
        f"{FACT_ROWS} WHERE f.embedding IS NOT NULL ORDER BY f.key",
        dim,
    )
    last_key = int(conn.execute(_LAST_FACT_KEY).fetchone()[0])
    return FactIndex.of(rows, vectors, last_key, buffer)  # spare rows: an extension copies nothing


def extend_facts(facts: FactIndex, conn: sqlite3.Connection) -> FactIndex:
    """``facts`` and the embedded facts written after it (keys above ``last_key``), in key order:
    what :meth:`load` reads when every commit since only appended rows (the caller checks the log),
    for the cost of the new rows (:meth:`FactIndex.appended`)."""
    last_key = int(conn.execute(_LAST_FACT_KEY).fetchone()[0])
    rows = conn.execute(
        f"{FACT_ROWS} WHERE f.key > ? AND f.embedding IS NOT NULL ORDER BY f.key", (facts.last_key,)
    ).fetchall()
    dim = facts.vectors.shape[1]
    vectors = blob_to_matrix([r[-1] for r in rows], dim) if rows else np.zeros((0, dim), dtype=np.float32)
    return facts.appended(rows, vectors, last_key)


def _keys(conn: sqlite3.Connection, table: str, n: int) -> npt.NDArray[np.int64]:
    """The integer keys of ``table`` in order; as many as the rows already read in this transaction."""
    keys = np.array([r[0] for r in conn.execute(f"SELECT key FROM {table} ORDER BY key")], dtype=np.int64)
    if len(keys) != n:
        raise RuntimeError("rows changed during a read transaction")
    return keys


def _int_rows(conn: sqlite3.Connection, sql: str, width: int) -> npt.NDArray[np.int64]:
    return np.array(conn.execute(sql).fetchall(), dtype=np.int64).reshape(-1, width)


def _positions(keys: npt.NDArray[np.int64], wanted: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Positions of ``wanted`` keys in the sorted ``keys`` (every one is there: foreign keys)."""
    found = np.searchsorted(keys, wanted).astype(np.int64)
    if len(wanted) and (found.max() >= len(keys) or not np.array_equal(keys[found], wanted)):
        raise RuntimeError("a link names a row the snapshot did not read")
    return found


def load_graph(conn: sqlite3.Connection, dim: int, phrases: PhraseIndex) -> GraphSnapshot:
    """The snapshot of the state ``conn``'s read transaction sees, built from its rows."""
    n_phrases = len(phrases.ids)
    rows, passage_vectors, passage_room = _rows_with_vectors(
        conn, "SELECT COUNT(*) FROM passages", "SELECT id, embedding FROM passages ORDER BY rowid", dim
    )
    passage_list = [r[0] for r in rows]
    del rows
    # positions are ranks of the integer keys (rows are read in key order)
    phrase_keys = _keys(conn, "phrases", n_phrases)
    passage_keys = _keys(conn, "passages", len(passage_list))

    m = _int_rows(conn, MENTION_KEYS, 3)
    mentions = compact(
        sp.csr_matrix(
            (
                m[:, 2].astype(np.float64),
                (_positions(passage_keys, m[:, 0]), _positions(phrase_keys, m[:, 1])),
            ),
            shape=(len(passage_list), n_phrases),
        )
    )
    del m
    passage_counts = np.bincount(mentions.indices, minlength=n_phrases).astype(np.int32)

    # The phrase graph: RELATION counts (integers, so their sums are exact in any order) and SYNONYM
    # scores (one per pair) summed once per entry by canonical_adjacency, the order a snapshot brought
    # forward by a write batch (snapshot_delta) reproduces bit for bit.
    relations = _int_rows(conn, RELATION_KEY_EDGES, 3)
    synonyms = conn.execute(SYNONYM_KEYS).fetchall()
    syn_weights = np.array([r[2] for r in synonyms], dtype=np.float64)
    syn = np.array([r[:2] for r in synonyms], dtype=np.int64).reshape(-1, 2)
    del synonyms
    n_relation, n_synonym = len(relations), len(syn)
    sources = np.concatenate([_positions(phrase_keys, relations[:, 0]), _positions(phrase_keys, syn[:, 0])])
    targets = np.concatenate([_positions(phrase_keys, relations[:, 1]), _positions(phrase_keys, syn[:, 1])])
    weights = np.concatenate([relations[:, 2].astype(np.float64), syn_weights])
    del relations, syn, syn_weights
    adjacency = canonical_adjacency(sources, targets, weights, n_relation, n_phrases)
    del sources, targets, weights
    graph = GraphSnapshot.derived(
        phrases,
        StringTable.of(passage_list, searchable=True),
        mentions,
        passage_counts,
        adjacency,
        n_relation,
        n_synonym,
        passage_vectors,
    )
    graph._passage_room = passage_room
    return graph
