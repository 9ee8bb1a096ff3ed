"""SQLite schema of the embedded store. Vectors are float32 BLOBs in the same rows, so a batch of
passages, phrases and facts is written in one transaction and a crash never leaves vectors without rows.

Passages, phrases and facts are named by their md5 text ids everywhere outside this package, but linked
inside the database by integer keys assigned in insertion order (``key``, the rowid): the link tables and
their indexes then grow at their right edge, so a commit writes few pages however large the store is (the
text-keyed B-trees of schema version 1 took one page per inserted row at scale). Only the text id -> key
indexes stay random. Every query that reads the link tables and hands text ids on is in this module.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from hipporag_neo4j.common.sqlite import chunks, placeholders

#: the embedded store's schema version, recorded in ``meta``; version 1 (text ids in the link tables) is
#: upgraded on open (:mod:`migrate`)
SCHEMA_VERSION = 2

TABLES = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS passages (
    key INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    title TEXT,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    embedding BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS phrases (
    key INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    embedding BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS mentions (
    passage_key INTEGER NOT NULL REFERENCES passages(key),
    phrase_key INTEGER NOT NULL REFERENCES phrases(key),
    count INTEGER NOT NULL CHECK (count > 0),
    PRIMARY KEY (passage_key, phrase_key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS facts (
    key INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    subject_key INTEGER NOT NULL REFERENCES phrases(key),
    predicate TEXT NOT NULL,
    object_key INTEGER NOT NULL REFERENCES phrases(key),
    text TEXT NOT NULL,
    embedding BLOB
);
CREATE TABLE IF NOT EXISTS states (
    passage_key INTEGER NOT NULL REFERENCES passages(key),
    fact_key INTEGER NOT NULL REFERENCES facts(key),
    PRIMARY KEY (passage_key, fact_key)
) WITHOUT ROWID;
-- one row per pair, source = the phrase whose text id sorts first (as SynonymEdge.canonical())
CREATE TABLE IF NOT EXISTS synonyms (
    source_key INTEGER NOT NULL REFERENCES phrases(key),
    target_key INTEGER NOT NULL REFERENCES phrases(key),
    score REAL NOT NULL,
    PRIMARY KEY (source_key, target_key),
    CHECK (source_key <> target_key)
) WITHOUT ROWID;
-- phrases whose synonym edges are still to be computed: written with the phrases, cleared with the edges
CREATE TABLE IF NOT EXISTS synonyms_pending (
    phrase_key INTEGER PRIMARY KEY REFERENCES phrases(key)
);
-- one row per write transaction (graph version), written in it: what kind of change it made, so the
-- persisted snapshot of an earlier version can be brought forward by the rows appended since (kinds
-- 'append' and 'synonyms') instead of rebuilt; 'synonyms' carries the edges that commit inserted, as JSON
-- [[source_id, target_id, score], ...]. A gap (a writer without this table) or any other kind means a
-- rebuild. Rows below the newest persisted snapshot are pruned by later writes.
CREATE TABLE IF NOT EXISTS snapshot_log (
    version INTEGER PRIMARY KEY,
    token TEXT NOT NULL,
    kind TEXT NOT NULL,
    synonyms TEXT
);
"""

# The index names are those of version 1, so a release that reads version 1 finds every table and index
# it would create already there and stops at the schema version check, with an error naming both.
INDEXES = """
-- unique indexes of their own rather than UNIQUE columns: an upgrade builds them after the copy (sorted)
CREATE UNIQUE INDEX IF NOT EXISTS passages_by_id ON passages(id);
CREATE UNIQUE INDEX IF NOT EXISTS phrases_by_id ON phrases(id);
CREATE UNIQUE INDEX IF NOT EXISTS phrases_by_name ON phrases(name);
CREATE UNIQUE INDEX IF NOT EXISTS facts_by_id ON facts(id);
CREATE INDEX IF NOT EXISTS mentions_by_phrase ON mentions(phrase_key);
-- deleting a phrase checks the foreign keys of facts: without these, a scan of facts per phrase
CREATE INDEX IF NOT EXISTS facts_by_subject ON facts(subject_key);
CREATE INDEX IF NOT EXISTS facts_by_object ON facts(object_key);
CREATE INDEX IF NOT EXISTS states_by_fact ON states(fact_key);
CREATE INDEX IF NOT EXISTS synonyms_by_target ON synonyms(target_key);
"""

SCHEMA = TABLES + INDEXES


def statements(script: str) -> list[str]:
    """The statements of a schema script, to run one by one inside a transaction (``executescript``
    commits first)."""
    lines = [line for line in script.splitlines() if not line.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


# --- reads that hand text ids on ----------------------------------------------------------------------

#: RELATION edges are derived from facts and their provenance, so delete is exact by construction.
RELATION_KEY_EDGES = """
SELECT f.subject_key, f.object_key, COUNT(*) AS weight
FROM states s JOIN facts f ON f.key = s.fact_key
GROUP BY f.subject_key, f.object_key
"""

#: the snapshot's reads: integer keys (mapped to positions by the rows' key order)
MENTION_KEYS = "SELECT passage_key, phrase_key, count FROM mentions"
SYNONYM_KEYS = "SELECT source_key, target_key, score FROM synonyms"

#: (passage id, phrase id, count) per mention
MENTION_ROWS = """
SELECT d.id, p.id, m.count
FROM mentions m JOIN passages d ON d.key = m.passage_key JOIN phrases p ON p.key = m.phrase_key
"""

#: (source id, target id, score) per synonym edge, source id < target id, by source id then target id
SYNONYM_ROWS = """
SELECT a.id, b.id, s.score
FROM synonyms s JOIN phrases a ON a.key = s.source_key JOIN phrases b ON b.key = s.target_key
ORDER BY a.id, b.id
"""

#: facts with their subject and object phrase ids, in insertion order
FACT_ROWS = """
SELECT f.id, a.id, f.predicate, b.id, f.embedding
FROM facts f JOIN phrases a ON a.key = f.subject_key JOIN phrases b ON b.key = f.object_key
"""

#: how many passages mention a phrase (the phrase as ``p``)
PASSAGE_COUNT = "(SELECT COUNT(*) FROM mentions m WHERE m.phrase_key = p.key)"


def keys_of(conn: sqlite3.Connection, table: str, ids: Iterable[str]) -> dict[str, int]:
    """Text id -> integer key of the stored rows of ``table`` (passages, phrases, facts) among ``ids``."""
    found: dict[str, int] = {}
    for chunk in chunks(list(dict.fromkeys(ids))):
        sql = f"SELECT id, key FROM {table} WHERE id IN ({placeholders(len(chunk))})"
        found.update(conn.execute(sql, list(chunk)).fetchall())
    return found


#: every table's rows as schema version 1 stored them (text ids; its column order): the store's content
#: independent of the order it was written in (tests, and the check of an upgrade)
TEXT_ROWS: dict[str, str] = {
    "passages": "SELECT id, title, text, metadata, embedding FROM passages",
    "phrases": "SELECT id, name, embedding FROM phrases",
    "mentions": MENTION_ROWS,
    "facts": "SELECT f.id, a.id, f.predicate, b.id, f.text, f.embedding FROM facts f "
    "JOIN phrases a ON a.key = f.subject_key JOIN phrases b ON b.key = f.object_key",
    "states": "SELECT d.id, f.id FROM states s "
    "JOIN passages d ON d.key = s.passage_key JOIN facts f ON f.key = s.fact_key",
    "synonyms": SYNONYM_ROWS,
    "synonyms_pending": "SELECT p.id FROM synonyms_pending s JOIN phrases p ON p.key = s.phrase_key",
}


# --- the incremental snapshot (stores/embedded/snapshot_delta.py): every query it makes, in one place ---
#: Kinds of snapshot_log rows after which a snapshot may be brought forward (rows only appended).
LOG_APPEND = "append"
LOG_SYNONYMS = "synonyms"
LOG_FULL = "full"
LOG_UNLOGGED = "unlogged"  # a version written without the log, recorded by the next commit that logs

#: The largest rowid of each table a snapshot was built from: rows above it are the delta.
MAX_ROWIDS = """
SELECT (SELECT IFNULL(MAX(rowid), 0) FROM phrases),
       (SELECT IFNULL(MAX(rowid), 0) FROM passages),
       (SELECT IFNULL(MAX(rowid), 0) FROM facts)
"""
LOG_SINCE = "SELECT version, token, kind, synonyms FROM snapshot_log WHERE version >= ? ORDER BY version"
LOG_PRUNE = "DELETE FROM snapshot_log WHERE version < ?"
DELTA_PHRASES = "SELECT key, id, name, embedding FROM phrases WHERE key > ? ORDER BY key"
DELTA_PASSAGES = "SELECT key, id, embedding FROM passages WHERE key > ? ORDER BY key"
#: Mentions and facts of the new passages only (primary-key prefix of mentions / states: the passages'
#: keys are their rowids, so "rows after the stamp" is a range of the key).
DELTA_MENTIONS = """
SELECT m.passage_key, p.id, m.count
FROM mentions m JOIN phrases p ON p.key = m.phrase_key
WHERE m.passage_key > ?
"""
DELTA_RELATION_EDGES = """
SELECT a.id, b.id, COUNT(*) AS weight
FROM states s JOIN facts f ON f.key = s.fact_key
JOIN phrases a ON a.key = f.subject_key JOIN phrases b ON b.key = f.object_key
WHERE s.passage_key > ?
GROUP BY f.subject_key, f.object_key
"""
#: Whether a (subject, object) pair had a relation edge before the delta (a row of RELATION_KEY_EDGES);
#: asked only for pairs whose phrases were already joined in the snapshot. Parameters: the two text ids.
RELATION_PAIR_BEFORE = """
SELECT 1 FROM facts f JOIN states st ON st.fact_key = f.key
WHERE f.subject_key = (SELECT key FROM phrases WHERE id = ?)
  AND f.object_key = (SELECT key FROM phrases WHERE id = ?)
  AND st.passage_key <= ?
LIMIT 1
"""
#: The score of one stored synonym edge, by the text ids in canonical order (source id < target id).
SYNONYM_SCORE = """
SELECT score FROM synonyms
WHERE source_key = (SELECT key FROM phrases WHERE id = ?)
  AND target_key = (SELECT key FROM phrases WHERE id = ?)
"""
