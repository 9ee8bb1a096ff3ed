"""SQLite schema of the embedded store. Vectors are float32 BLOBs in the same rows, so a batch of
passages, phrases and facts is written in one transaction and a crash never leaves vectors without rows."""

from __future__ import annotations

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS passages (
    id TEXT PRIMARY KEY,
    title TEXT,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    embedding BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS phrases (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    embedding BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS mentions (
    passage_id TEXT NOT NULL REFERENCES passages(id),
    phrase_id TEXT NOT NULL REFERENCES phrases(id),
    count INTEGER NOT NULL CHECK (count > 0),
    PRIMARY KEY (passage_id, phrase_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mentions_by_phrase ON mentions(phrase_id);
CREATE TABLE IF NOT EXISTS facts (
    id TEXT PRIMARY KEY,
    subject_id TEXT NOT NULL REFERENCES phrases(id),
    predicate TEXT NOT NULL,
    object_id TEXT NOT NULL REFERENCES phrases(id),
    text TEXT NOT NULL,
    embedding BLOB
);
-- deleting a phrase checks the foreign keys of facts: without these, a scan of facts per phrase
CREATE INDEX IF NOT EXISTS facts_by_subject ON facts(subject_id);
CREATE INDEX IF NOT EXISTS facts_by_object ON facts(object_id);
CREATE TABLE IF NOT EXISTS states (
    passage_id TEXT NOT NULL REFERENCES passages(id),
    fact_id TEXT NOT NULL REFERENCES facts(id),
    PRIMARY KEY (passage_id, fact_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS states_by_fact ON states(fact_id);
CREATE TABLE IF NOT EXISTS synonyms (
    source_id TEXT NOT NULL REFERENCES phrases(id),
    target_id TEXT NOT NULL REFERENCES phrases(id),
    score REAL NOT NULL,
    PRIMARY KEY (source_id, target_id),
    CHECK (source_id < target_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS synonyms_by_target ON synonyms(target_id);
-- phrases whose synonym edges are still to be computed: written with the phrases, cleared with the edges
CREATE TABLE IF NOT EXISTS synonyms_pending (
    phrase_id TEXT PRIMARY KEY REFERENCES phrases(id)
) WITHOUT ROWID;
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

#: RELATION edges are derived from facts and their provenance, so delete is exact by construction.
RELATION_EDGES = """
SELECT f.subject_id, f.object_id, COUNT(*) AS weight
FROM states s JOIN facts f ON f.id = s.fact_id
GROUP BY f.subject_id, f.object_id
"""

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
DELTA_PHRASES = "SELECT rowid, id, name, embedding FROM phrases WHERE rowid > ? ORDER BY rowid"
DELTA_PASSAGES = "SELECT rowid, id, embedding FROM passages WHERE rowid > ? ORDER BY rowid"
#: Mentions and facts of the new passages only (primary-key prefix of mentions / states).
DELTA_MENTIONS = """
SELECT p.rowid, m.phrase_id, m.count
FROM passages p JOIN mentions m ON m.passage_id = p.id
WHERE p.rowid > ?
"""
DELTA_RELATION_EDGES = """
SELECT f.subject_id, f.object_id, COUNT(*) AS weight
FROM passages p JOIN states s ON s.passage_id = p.id JOIN facts f ON f.id = s.fact_id
WHERE p.rowid > ?
GROUP BY f.subject_id, f.object_id
"""
#: Whether a (subject, object) pair had a relation edge before the delta (a row of RELATION_EDGES);
#: asked only for pairs whose phrases were already joined in the snapshot.
RELATION_PAIR_BEFORE = """
SELECT 1 FROM facts f JOIN states st ON st.fact_id = f.id JOIN passages p ON p.id = st.passage_id
WHERE f.subject_id = ? AND f.object_id = ? AND p.rowid <= ? LIMIT 1
"""
#: The score of one stored synonym edge (canonical direction: source_id < target_id).
SYNONYM_SCORE = "SELECT score FROM synonyms WHERE source_id = ? AND target_id = ?"
