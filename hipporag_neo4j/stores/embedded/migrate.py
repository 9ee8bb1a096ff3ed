"""Upgrade of an embedded store written by an earlier release, run when the store is connected.

Version 1 linked passages, phrases and facts by their md5 text ids; version 2 by integer keys (the rows'
rowids, kept, so row order and any rowid recorded elsewhere stay valid). The upgrade is one transaction:
a crash or kill part-way leaves version 1 as it was (SQLite rolls the transaction back), and the next
open runs it again from the start; once committed it is never run again (the tables say version 2).
"""

from __future__ import annotations

import logging
import sqlite3
import time

from hipporag_neo4j.common.sqlite import begin_immediate
from hipporag_neo4j.errors import SchemaVersionError
from hipporag_neo4j.stores.embedded.schema import INDEXES, SCHEMA_VERSION, TABLES, statements

log = logging.getLogger(__name__)

_OLD_INDEXES = (
    "mentions_by_phrase",
    "facts_by_subject",
    "facts_by_object",
    "states_by_fact",
    "synonyms_by_target",
)
# children after parents for the copy; every table of version 1 is renamed to <name>_v1 first
_TABLES = ("passages", "phrases", "facts", "mentions", "states", "synonyms", "synonyms_pending")

_COPY = {
    "passages": "INSERT INTO passages(key, id, title, text, metadata, embedding) "
    "SELECT rowid, id, title, text, metadata, embedding FROM passages_v1 ORDER BY rowid",
    "phrases": "INSERT INTO phrases(key, id, name, embedding) "
    "SELECT rowid, id, name, embedding FROM phrases_v1 ORDER BY rowid",
    "facts": "INSERT INTO facts(key, id, subject_key, predicate, object_key, text, embedding) "
    "SELECT f.rowid, f.id, a.rowid, f.predicate, b.rowid, f.text, f.embedding FROM facts_v1 f "
    "JOIN phrases_v1 a ON a.id = f.subject_id JOIN phrases_v1 b ON b.id = f.object_id ORDER BY f.rowid",
    "mentions": "INSERT INTO mentions(passage_key, phrase_key, count) "
    "SELECT d.rowid, p.rowid, m.count FROM mentions_v1 m "
    "JOIN passages_v1 d ON d.id = m.passage_id JOIN phrases_v1 p ON p.id = m.phrase_id ORDER BY 1, 2",
    "states": "INSERT INTO states(passage_key, fact_key) "
    "SELECT d.rowid, f.rowid FROM states_v1 s "
    "JOIN passages_v1 d ON d.id = s.passage_id JOIN facts_v1 f ON f.id = s.fact_id ORDER BY 1, 2",
    "synonyms": "INSERT INTO synonyms(source_key, target_key, score) "
    "SELECT a.rowid, b.rowid, s.score FROM synonyms_v1 s "
    "JOIN phrases_v1 a ON a.id = s.source_id JOIN phrases_v1 b ON b.id = s.target_id ORDER BY 1, 2",
    "synonyms_pending": "INSERT INTO synonyms_pending(phrase_key) "
    "SELECT p.rowid FROM synonyms_pending_v1 s JOIN phrases_v1 p ON p.id = s.phrase_id ORDER BY 1",
}


def layout_version(conn: sqlite3.Connection) -> int | None:
    """The schema version the tables have: None for a new database, 1 or 2."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(mentions)")}
    if not columns:
        return None
    return 2 if "phrase_key" in columns else 1


def upgrade(conn: sqlite3.Connection, location: str) -> bool:
    """Bring a version-1 store to version 2 in one transaction; False when there was nothing to do.
    ``conn`` is in autocommit mode with no transaction open."""
    if layout_version(conn) != 1:
        return False
    conn.execute("PRAGMA foreign_keys=OFF")  # the copies are checked by their counts; no effect inside
    cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute("PRAGMA cache_size=-262144")  # 256 MiB: each page of the copy reaches the WAL once
    try:
        try:
            begin_immediate(conn)
        except sqlite3.OperationalError as exc:
            raise _needs_write(location, exc) from exc
        try:
            if layout_version(conn) != 1:  # another process upgraded it while this one waited
                conn.execute("ROLLBACK")
                return False
            started = time.perf_counter()
            _copy(conn, location)
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (str(SCHEMA_VERSION),),
            )
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the WAL held the whole copy: give it back
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError) and "readonly" in str(exc):
                raise _needs_write(location, exc) from exc
            if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc):
                raise _needs_room(conn, location, exc) from exc
            raise
    finally:
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute(f"PRAGMA cache_size={int(cache)}")
    log.info(
        "upgraded %s to schema version %d in %.1f s", location, SCHEMA_VERSION, time.perf_counter() - started
    )
    return True


def _needs_room(conn: sqlite3.Connection, location: str, exc: Exception) -> SchemaVersionError:
    size = int(conn.execute("PRAGMA page_count").fetchone()[0]) * int(
        conn.execute("PRAGMA page_size").fetchone()[0]
    )
    return SchemaVersionError(
        f"{location} has schema version 1; upgrading it to schema version {SCHEMA_VERSION} needs about "
        f"{2 * size / 2**30:.1f} GiB of free disk (the copy stays in the write-ahead log until it "
        f"commits), and the disk filled up ({exc}). The store is left at version 1: free some space and "
        "open it again."
    )


def _needs_write(location: str, exc: Exception) -> SchemaVersionError:
    if "locked" in str(exc):
        why = "another process holds its write lock (perhaps upgrading it): open it again when that is done"
    else:
        why = "which needs write access"
    return SchemaVersionError(
        f"{location} has schema version 1; this release reads version {SCHEMA_VERSION} and upgrades "
        f"the store when it opens it, {why}: {exc}"
    )


def _copy(conn: sqlite3.Connection, location: str) -> None:
    for index in _OLD_INDEXES:
        conn.execute(f"DROP INDEX IF EXISTS {index}")
    counts = {}
    for table in _TABLES:
        counts[table] = int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        conn.execute(f"ALTER TABLE {table} RENAME TO {table}_v1")
    for statement in statements(TABLES):
        conn.execute(statement)
    for table in _TABLES:
        copied = conn.execute(_COPY[table]).rowcount
        if copied != counts[table]:
            # a row whose text id names no stored row (possible only if version 1 was edited by hand)
            raise SchemaVersionError(
                f"cannot upgrade {location} to schema version {SCHEMA_VERSION}: {counts[table]} rows in "
                f"{table} but {copied} of them link to stored rows; the store is left at version 1"
            )
    for table in reversed(_TABLES):
        conn.execute(f"DROP TABLE {table}_v1")
    for statement in statements(INDEXES):
        conn.execute(statement)
