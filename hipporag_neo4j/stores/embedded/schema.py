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
"""

#: RELATION edges are derived from facts and their provenance, so delete is exact by construction.
RELATION_EDGES = """
SELECT f.subject_id, f.object_id, COUNT(*) AS weight
FROM states s JOIN facts f ON f.id = s.fact_id
GROUP BY f.subject_id, f.object_id
"""
