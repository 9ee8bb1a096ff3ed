"""The embedded store: a directory with one SQLite database; no server.

Writes are transactional (one transaction per batch), so a crash leaves the store as it was before the
batch; writers take SQLite's write lock first (``BEGIN IMMEDIATE``) and check what is stored inside it, so
two writers go one at a time and never write the same passage twice. Retrieval runs from an in-memory
snapshot (numpy / scipy) that is loaded lazily, in one read transaction (WAL: a consistent state even while
another process commits), and rebuilt when the graph version changes, also when another process wrote;
persisted and memory-mapped, or carried forward by appended rows (:mod:`snapshot_cache`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hipporag_neo4j.common.sqlite import begin_immediate, chunks, placeholders, set_wal
from hipporag_neo4j.errors import ModelMismatchError, PhrasesVanishedError, StoreError
from hipporag_neo4j.models import Passage, PassageInfo, StoreStats
from hipporag_neo4j.stores.base import (
    DeleteReport,
    DropReport,
    EmbeddedKind,
    GraphEdge,
    GraphNode,
    GraphNodeKind,
    Matrix,
    Neighbourhood,
    PassageRecord,
    PhraseHit,
    PhraseRecord,
    ReembedState,
    StoreMeta,
    SynonymEdge,
    Vector,
    WriteResult,
    check_meta,
    check_no_reembed,
    chunks_of_parents,
)
from hipporag_neo4j.stores.embedded import (
    explore,
    migrate,
    schema,
    snapshot_files,
)
from hipporag_neo4j.stores.embedded.schema import (
    PASSAGE_COUNT,
    RELATION_KEY_EDGES,
    SCHEMA,
    SCHEMA_VERSION,
    keys_of,
)
from hipporag_neo4j.stores.embedded.snapshot_cache import INDEX_DIR, SnapshotCache
from hipporag_neo4j.stores.memory import queries
from hipporag_neo4j.stores.memory.vector_index import VectorSearch
from hipporag_neo4j.stores.memory.view import MemoryView

log = logging.getLogger(__name__)

DB_FILE = "graph.sqlite"
_MAX_PATH_BYTES = 504  # measured: SQLite's 512-byte path limit, less room for the "-wal" suffix

_TABLE_OF: dict[EmbeddedKind, str] = {"passage": "passages", "phrase": "phrases", "fact": "facts"}


def _blob(vector: Vector) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


@dataclass
class _Log:
    """What a write transaction records in ``snapshot_log``: its kind (only 'append' and 'synonyms' let
    a persisted snapshot be brought forward) and, for 'synonyms', the edges it inserted."""

    kind: str = schema.LOG_FULL
    synonyms: list[tuple[str, str, float]] = field(default_factory=list)


def _next_key(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT COALESCE(MAX(key), 0) + 1 FROM {table}").fetchone()[0])


def _set_model(conn: sqlite3.Connection, embedding_model: str, embedding_dim: int) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        [("embedding_model", embedding_model), ("embedding_dim", str(embedding_dim))],
    )


def _key_of(keys: dict[str, int], phrase_id: str, what: str) -> int:
    found = keys.get(phrase_id)
    if found is None:
        raise PhrasesVanishedError(
            f"{what} names phrase {phrase_id!r}, which is neither stored nor in the batch"
        )
    return found


class EmbeddedStore:
    """GraphStore on SQLite + numpy. ``path`` is a directory, created on :meth:`open`.

    ``persist_snapshot``: write each built retrieval snapshot under ``path / "snapshot"`` and map it on
    the next open (False: build in memory only, as before); the vector indexes likewise under
    ``path / "vector_index"``.
    ``vector_search``: exact scans or the IVF index (:mod:`vector_index`) for the query-time searches of
    phrases (linking), facts and dense passages; by default the index from 200k rows of a matrix.
    """

    backend = "embedded"

    def __init__(
        self, path: str | Path, persist_snapshot: bool = True, vector_search: VectorSearch | None = None
    ) -> None:
        self.path = Path(path)
        self.persist_snapshot = persist_snapshot
        self.vector_search = vector_search or VectorSearch()
        self._conn: sqlite3.Connection | None = None
        self._meta: StoreMeta | None = None
        self.lock = threading.RLock()
        self._committed = (0, 0)  # graph version before and after this connection's last write
        #: the in-process engine's structures of the current graph version (snapshot_cache.py)
        self.cache = SnapshotCache(self)

    # --- lifecycle ---------------------------------------------------------------------------
    def connection(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
                # The busy timeout comes first: switching a new file to WAL and creating the schema take
                # the write lock, and two processes opening one new store at once must wait, not fail.
                conn = sqlite3.connect(
                    self.path / DB_FILE, check_same_thread=False, isolation_level=None, timeout=30.0
                )
                conn.execute("PRAGMA busy_timeout=30000")
                set_wal(conn)
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA foreign_keys=ON")
                migrate.upgrade(conn, f"store {self.path}")
                conn.executescript(SCHEMA)
            except StoreError:
                conn.close()
                raise
            except (sqlite3.DatabaseError, OSError, ValueError) as exc:
                size = len(os.fsencode(self.path.absolute() / DB_FILE))
                hint = (
                    f" (the path to {DB_FILE} is {size} bytes; SQLite opens at most about {_MAX_PATH_BYTES}: "
                    "use a shorter path)"
                    if size > _MAX_PATH_BYTES
                    else ""
                )
                raise StoreError(f"cannot open embedded store at {str(self.path)!r}: {exc}{hint}") from exc
            self._conn = conn
        return self._conn

    @contextmanager
    def _transaction(self, log_as: _Log | None = None) -> Iterator[sqlite3.Connection]:
        """A write transaction: SQLite's write lock first, so what it reads inside is what it writes over.
        ``log_as`` is its ``snapshot_log`` row (default: 'full', a change no snapshot is brought over)."""
        entry = log_as or _Log()
        conn = self.connection()
        with self.lock:
            begin_immediate(conn)
            try:
                before = self._version_in(conn)
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute(
                    "INSERT INTO meta(key, value) VALUES ('graph_version', '1') "
                    "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
                )
                # a new random token per commit: a persisted snapshot names (version, token), so a
                # database that lost its last commits (power loss) and was written again never meets
                # a snapshot of the lost state under the same version number
                previous = conn.execute("SELECT value FROM meta WHERE key = 'graph_token'").fetchone()
                if previous is not None:
                    # the version this commit builds on, if no row names it (written by a store without the
                    # log): its token, so a snapshot of it can be the base of later append-only commits
                    conn.execute(
                        "INSERT OR IGNORE INTO snapshot_log(version, token, kind) VALUES (?, ?, ?)",
                        (before, previous[0], schema.LOG_UNLOGGED),
                    )
                token = uuid.uuid4().hex
                conn.execute(
                    "INSERT INTO meta(key, value) VALUES ('graph_token', ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (token,),
                )
                conn.execute(
                    "INSERT OR REPLACE INTO snapshot_log(version, token, kind, synonyms) VALUES (?, ?, ?, ?)",
                    (
                        before + 1,
                        token,
                        entry.kind,
                        json.dumps(entry.synonyms) if entry.kind == schema.LOG_SYNONYMS else None,
                    ),
                )
                floor = snapshot_files.newest_version(self.path)
                kept = self.cache.carry_floor()
                if floor is not None and kept is not None:  # this process carries from there
                    floor = min(floor, kept)
                if floor is not None:  # rows below the newest persisted snapshot are no longer needed
                    # (not above this commit's base: a directory left by a lost history must not prune)
                    conn.execute(schema.LOG_PRUNE, (min(floor, before),))
                conn.execute("COMMIT")
                self._committed = (before, before + 1)

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every SELECT inside sees one committed state (the WAL snapshot taken at
        the first read), however many writers commit meanwhile."""
        conn = self.connection()
        with self.lock:
            if conn.in_transaction:
                yield conn
                return
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")

    @staticmethod
    def _version_in(conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
        return int(row[0]) if row else 0

    def meta(self) -> StoreMeta | None:
        values = dict(self.connection().execute("SELECT key, value FROM meta").fetchall())
        if "embedding_model" not in values:
            return None
        return StoreMeta(
            schema_version=int(values.get("schema_version", 0)),
            embedding_model=values["embedding_model"],
            embedding_dim=int(values["embedding_dim"]),
        )

    def open(self, embedding_model: str, embedding_dim: int) -> StoreMeta:
        check_no_reembed(self.reembed_state(), f"store {self.path}")
        existing = self.meta()
        if existing is None:
            with self._transaction() as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
                _set_model(conn, embedding_model, embedding_dim)
            existing = StoreMeta(SCHEMA_VERSION, embedding_model, embedding_dim)
        check_meta(existing, f"store {self.path}", embedding_model, embedding_dim, SCHEMA_VERSION)
        self._meta = existing
        return existing

    def close(self) -> None:
        self.cache.close()  # waits for its snapshot writer: nothing written after the store is closed
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def _dim(self) -> int:
        if self._meta is None:
            raise StoreError("store is not open: call open(embedding_model, embedding_dim) first")
        return self._meta.embedding_dim

    # --- what the snapshot cache asks of the store (snapshot_cache.Store) ------------------------
    @property
    def opened_meta(self) -> StoreMeta | None:
        return self._meta

    def another(self) -> EmbeddedStore:
        return EmbeddedStore(self.path, vector_search=self.vector_search)

    def for_readers(self) -> EmbeddedStore:
        return self.another()

    def view(self) -> MemoryView:
        """The snapshot of the current graph version, for one query's reads."""
        return self.cache.view()

    def check_model(self, values: dict[str, str]) -> None:
        """Refuse to go on when the store was re-embedded since it was opened (or is being re-embedded):
        its vectors are no longer those of the model this process encodes with."""
        if "reembed" in values:
            check_no_reembed(ReembedState.from_json(values["reembed"]), f"store {self.path}")
        recorded = (values.get("embedding_model"), values.get("embedding_dim"))
        if self._meta is not None and recorded != (self._meta.embedding_model, str(self._meta.embedding_dim)):
            raise ModelMismatchError(
                f"store {self.path} was re-embedded with {recorded[0]!r} while open with "
                f"{self._meta.embedding_model!r}: open it again with the new model"
            )

    # --- indexing ----------------------------------------------------------------------------
    def _existing(self, table: str, ids: Sequence[str]) -> set[str]:
        return set(keys_of(self.connection(), table, ids))

    def existing_passages(self, ids: Sequence[str]) -> set[str]:
        return self._existing("passages", ids)

    def missing_phrases(self, ids: Sequence[str]) -> set[str]:
        return set(ids) - self._existing("phrases", ids)

    def missing_facts(self, ids: Sequence[str]) -> set[str]:
        return set(ids) - self._existing("facts", ids)

    def write_passages(
        self, phrases: Sequence[PhraseRecord], passages: Sequence[PassageRecord]
    ) -> WriteResult:
        with self.lock:
            with self._transaction(_Log(schema.LOG_APPEND)) as conn:
                self.check_model(dict(conn.execute("SELECT key, value FROM meta").fetchall()))
                stored = self._existing("passages", [r.passage.id for r in passages])
                new_passages = [r for r in passages if r.passage.id not in stored]
                # integer keys in insertion order (the next rowids): the link tables grow at their right edge
                named = [p.id for p in phrases] + [pid for r in new_passages for pid in r.mentions]
                named += [i for r in new_passages for f in r.facts for i in (f.subject_id, f.object_id)]
                phrase_keys = keys_of(conn, "phrases", named)
                new_phrases = list({p.id: p for p in phrases if p.id not in phrase_keys}.values())
                first = _next_key(conn, "phrases")
                phrase_keys.update((p.id, first + i) for i, p in enumerate(new_phrases))
                conn.executemany(
                    "INSERT INTO phrases(key, id, name, embedding) VALUES (?, ?, ?, ?)",
                    [(first + i, p.id, p.name, _blob(p.embedding)) for i, p in enumerate(new_phrases)],
                )
                conn.executemany(
                    "INSERT INTO synonyms_pending(phrase_key) VALUES (?)",
                    [(first + i,) for i in range(len(new_phrases))],
                )
                first = _next_key(conn, "passages")
                passage_keys = [first + i for i in range(len(new_passages))]
                conn.executemany(
                    "INSERT INTO passages(key, id, title, text, metadata, embedding) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (
                            key,
                            r.passage.id,
                            r.passage.title,
                            r.passage.text,
                            json.dumps(r.passage.metadata, ensure_ascii=False),
                            _blob(r.embedding),
                        )
                        for key, r in zip(passage_keys, new_passages, strict=True)
                    ],
                )
                conn.executemany(
                    "INSERT INTO mentions(passage_key, phrase_key, count) VALUES (?, ?, ?)",
                    sorted(
                        (key, _key_of(phrase_keys, pid, f"passage {r.passage.id!r}"), n)
                        for key, r in zip(passage_keys, new_passages, strict=True)
                        for pid, n in r.mentions.items()
                    ),
                )
                facts = {f.id: f for r in new_passages for f in r.facts}
                fact_keys = keys_of(conn, "facts", facts)
                new_facts = [f for f in facts.values() if f.id not in fact_keys]
                # what this write itself inserted: another process may have stored some of the phrases and
                # facts the caller found missing, and the caller's report counts these
                counts = (len(new_phrases), len(new_facts))
                first = _next_key(conn, "facts")
                fact_keys.update((f.id, first + i) for i, f in enumerate(new_facts))
                conn.executemany(
                    "INSERT INTO facts(key, id, subject_key, predicate, object_key, text, embedding) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            first + i,
                            f.id,
                            _key_of(phrase_keys, f.subject_id, f"fact {f.id!r}"),
                            f.predicate,
                            _key_of(phrase_keys, f.object_id, f"fact {f.id!r}"),
                            f.text,
                            None if f.embedding is None else _blob(f.embedding),
                        )
                        for i, f in enumerate(new_facts)
                    ],
                )
                conn.executemany(
                    "INSERT OR IGNORE INTO states(passage_key, fact_key) VALUES (?, ?)",
                    sorted(
                        {
                            (key, fact_keys[f.id])
                            for key, r in zip(passage_keys, new_passages, strict=True)
                            for f in r.facts
                        }
                    ),
                )
            # the phrase vectors kept warm for the synonym search that follows
            self.cache.appended(self._committed, new_phrases, self._dim)
        return WriteResult([r.passage.id for r in new_passages], *counts)

    def pending_synonym_phrases(self, limit: int) -> list[PhraseRecord]:
        rows = (
            self.connection()
            .execute(
                "SELECT p.id, p.name, p.embedding FROM synonyms_pending s "
                "JOIN phrases p ON p.key = s.phrase_key ORDER BY s.phrase_key LIMIT ?",
                (limit,),
            )
            .fetchall()
        )
        return [PhraseRecord(i, n, np.frombuffer(b, dtype=np.float32).copy()) for i, n, b in rows]

    def nearest_phrases(
        self, vectors: Matrix, top_k: int, min_similarity: float, exclude_ids: Sequence[str] | None = None
    ) -> list[list[PhraseHit]]:
        """Over the phrase index alone (the synonym step needs no graph); a query's linking goes through
        its view (:meth:`view`)."""
        with self.lock:
            index = self.cache.phrase_index()
            return queries.nearest_phrases(
                index,
                vectors,
                top_k,
                min_similarity,
                exclude_ids,
                self.cache.passage_counts,
                self.cache.candidates("phrase", index.vectors),
                self.cache.batch_candidates("phrase", index.vectors),
            )

    def write_synonyms(self, edges: Sequence[SynonymEdge], done: Sequence[str] = ()) -> int:
        rows = {}
        for edge in edges:
            e = edge.canonical()
            if e.source_id != e.target_id:
                rows[(e.source_id, e.target_id)] = e.score
        if not rows and not done:
            return 0
        with self.lock:
            entry = _Log(schema.LOG_SYNONYMS)
            with self._transaction(entry) as conn:
                keys = keys_of(conn, "phrases", [i for pair in rows for i in pair] + list(done))
                added = 0
                for (s, t), score in sorted(rows.items()):
                    # the log carries exactly the edges inserted here (an existing one is ignored)
                    if conn.execute(
                        "INSERT OR IGNORE INTO synonyms(source_key, target_key, score) "
                        "VALUES (?, ?, ?) RETURNING 1",
                        (_key_of(keys, s, "a synonym edge"), _key_of(keys, t, "a synonym edge"), score),
                    ).fetchone():
                        entry.synonyms.append((s, t, score))
                        added += 1
                conn.executemany(
                    "DELETE FROM synonyms_pending WHERE phrase_key = ?",
                    sorted((keys[i],) for i in set(done) if i in keys),
                )
            self.cache.synonyms_written(self._committed)
        return added

    def delete_passages(self, ids: Sequence[str]) -> DeleteReport:
        ids = list(dict.fromkeys(ids))
        report = DeleteReport()
        with self._transaction() as conn:
            present = keys_of(conn, "passages", ids)
            report.passages = [i for i in ids if i in present]
            report.missing = [i for i in ids if i not in present]
            if not present:
                return report
            gone = sorted(present.values())
            phrase_keys: set[int] = set()
            fact_keys: set[int] = set()
            for chunk in chunks(gone):
                marks = placeholders(len(chunk))
                phrase_keys.update(
                    r[0]
                    for r in conn.execute(
                        f"SELECT phrase_key FROM mentions WHERE passage_key IN ({marks})", chunk
                    )
                )
                fact_keys.update(
                    r[0]
                    for r in conn.execute(
                        f"SELECT fact_key FROM states WHERE passage_key IN ({marks})", chunk
                    )
                )
                conn.execute(f"DELETE FROM mentions WHERE passage_key IN ({marks})", chunk)
                conn.execute(f"DELETE FROM states WHERE passage_key IN ({marks})", chunk)
                conn.execute(f"DELETE FROM passages WHERE key IN ({marks})", chunk)
            orphan_facts = [
                f
                for f in sorted(fact_keys)
                if conn.execute("SELECT 1 FROM states WHERE fact_key = ?", (f,)).fetchone() is None
            ]
            for chunk in chunks(orphan_facts):
                conn.execute(f"DELETE FROM facts WHERE key IN ({placeholders(len(chunk))})", chunk)
            orphan_phrases = [
                p
                for p in sorted(phrase_keys)
                if conn.execute("SELECT 1 FROM mentions WHERE phrase_key = ?", (p,)).fetchone() is None
            ]
            for chunk in chunks(orphan_phrases):
                marks = placeholders(len(chunk))
                before = conn.total_changes
                conn.execute(f"DELETE FROM synonyms WHERE source_key IN ({marks})", chunk)
                conn.execute(f"DELETE FROM synonyms WHERE target_key IN ({marks})", chunk)
                report.synonym_edges_removed += conn.total_changes - before
                conn.execute(f"DELETE FROM synonyms_pending WHERE phrase_key IN ({marks})", chunk)
                conn.execute(f"DELETE FROM phrases WHERE key IN ({marks})", chunk)
            report.facts_removed = len(orphan_facts)
            report.phrases_removed = len(orphan_phrases)
        with self.lock:
            self.cache.forget(facts=False)
        return report

    # --- retrieval ---------------------------------------------------------------------------
    def drop_namespace(self) -> DropReport:
        """Remove this knowledge base's database and persisted snapshot (the files of this namespace
        only: other namespaces under ``namespaces/`` stay). Waits for a writer that is mid-transaction,
        then unlinks the files while holding its write lock. A process that still has the store open
        keeps reading the removed files until it reopens; stop servers and indexers first."""
        self.cache.wait_for_snapshot_writer()
        with self.lock:
            if not (self.path / DB_FILE).exists():
                self.close()
                return DropReport()
            conn = self.connection()
            begin_immediate(conn)
            try:
                removed: StoreStats | None = self._stats(conn)
                if removed is not None and removed.schema_version is None and not removed.passages:
                    removed = None  # a file opened but never written (a read made it): nothing was there
                for suffix in ("", "-wal", "-shm", "-journal"):
                    (self.path / f"{DB_FILE}{suffix}").unlink(missing_ok=True)
                for derived in (snapshot_files.SNAPSHOT_DIR, INDEX_DIR):
                    shutil.rmtree(self.path / derived, ignore_errors=True)
            finally:
                conn.execute("ROLLBACK")
                self.close()
                self._meta = None
            if self.path.parent.name == "namespaces":
                with contextlib.suppress(OSError):  # not empty: files of the user's own
                    self.path.rmdir()
            return DropReport(removed=removed)

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]:
        wanted = list(dict.fromkeys(names))
        conn = self.connection()
        found: dict[str, PhraseHit] = {}
        for chunk in chunks(wanted):
            marks = placeholders(len(chunk))
            sql = f"SELECT p.id, p.name, {PASSAGE_COUNT} FROM phrases p WHERE p.name IN ({marks})"
            for pid, name, count in conn.execute(sql, list(chunk)):
                found[name] = PhraseHit(pid, name, 1.0, int(count))
        return found

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        found: dict[str, Passage] = {}
        conn = self.connection()
        for chunk in chunks(list(dict.fromkeys(ids))):
            sql = f"SELECT id, title, text, metadata FROM passages WHERE id IN ({placeholders(len(chunk))})"
            for pid, title, text, metadata in conn.execute(sql, list(chunk)):
                found[pid] = Passage(id=pid, title=title, text=text, metadata=json.loads(metadata))
        return found

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]:
        found: dict[str, str | None] = {}
        conn = self.connection()
        for chunk in chunks(list(dict.fromkeys(ids))):
            sql = f"SELECT id, title FROM passages WHERE id IN ({placeholders(len(chunk))})"
            found.update(conn.execute(sql, list(chunk)).fetchall())
        return found

    def list_passages(self, after: str, limit: int) -> list[PassageInfo]:
        rows = self.connection().execute(
            "SELECT id, title, metadata, length(text) FROM passages WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit),
        )
        return [PassageInfo.of(pid, title, json.loads(meta), int(n)) for pid, title, meta, n in rows]

    def passages_by_parent(self, parent_ids: Sequence[str]) -> dict[str, list[str]]:
        # chunk ids are "<parent>#<n>": a range scan of the primary key, then the recorded parent decides
        conn = self.connection()
        candidates = [
            (parent, pid, json.loads(meta))
            for parent in dict.fromkeys(parent_ids)
            for pid, meta in conn.execute(
                "SELECT id, metadata FROM passages WHERE id >= ? AND id < ?", (parent + "#", parent + "$")
            )
        ]
        return chunks_of_parents(candidates)

    def passage_count(self) -> int:
        return int(self.connection().execute("SELECT COUNT(*) FROM passages").fetchone()[0])

    # --- graph explorer (GraphExplorer) ----------------------------------------------------------
    def search_nodes(self, text: str, limit: int) -> list[GraphNode]:
        with self.read() as conn:
            return explore.search_nodes(conn, text, limit)

    def neighbourhood(self, kind: GraphNodeKind, node_id: str, limit: int) -> Neighbourhood:
        with self.read() as conn:
            return explore.neighbourhood(conn, self.path, kind, node_id, limit)

    def edges_among(self, phrase_ids: Sequence[str], passage_ids: Sequence[str]) -> list[GraphEdge]:
        with self.read() as conn:
            return explore.edges_among(conn, phrase_ids, passage_ids)

    def namespaces(self) -> list[str]:
        root = self.path.parent.parent if self.path.parent.name == "namespaces" else self.path
        return explore.namespaces(root)

    def stats(self) -> StoreStats:
        with self.read() as conn:  # one read transaction: every count of the same graph version
            return self._stats(conn)

    def _stats(self, conn: sqlite3.Connection) -> StoreStats:
        def count(sql: str) -> int:
            return int(conn.execute(sql).fetchone()[0])

        meta = self.meta()
        pending = count("SELECT COUNT(*) FROM synonyms_pending")
        state = self.reembed_state()
        reembed = {"reembed_pending_to": state.embedding_model} if state else {}
        return StoreStats(
            backend=self.backend,
            location=str(self.path),
            passages=count("SELECT COUNT(*) FROM passages"),
            phrases=count("SELECT COUNT(*) FROM phrases"),
            facts=count("SELECT COUNT(*) FROM facts"),
            relation_edges=count(f"SELECT COUNT(*) FROM ({RELATION_KEY_EDGES})"),
            synonym_edges=count("SELECT COUNT(*) FROM synonyms"),
            mentions=count("SELECT COUNT(*) FROM mentions"),
            embedding_model=meta.embedding_model if meta else None,
            embedding_dim=meta.embedding_dim if meta else None,
            schema_version=meta.schema_version if meta else None,
            extra={"graph_version": self._version_in(conn), "synonyms_pending": pending, **reembed},
        )

    # --- maintenance ---------------------------------------------------------------------------
    def iter_texts(
        self, kind: EmbeddedKind, batch_size: int, after: str = ""
    ) -> Iterator[list[tuple[str, str]]]:
        sql = {
            "passage": "SELECT id, CASE WHEN title IS NULL OR title = '' THEN text "
            "ELSE title || char(10) || text END "
            "FROM passages WHERE id > ? ORDER BY id",
            "phrase": "SELECT id, name FROM phrases WHERE id > ? ORDER BY id",
            "fact": "SELECT id, text FROM facts WHERE id > ? ORDER BY id",
        }[kind]
        # a cursor of its own: the caller writes between batches on the store's connection
        conn = sqlite3.connect(self.path / DB_FILE)
        try:
            cursor = conn.execute(sql, (after,))
            while batch := cursor.fetchmany(batch_size):
                yield [(r[0], r[1]) for r in batch]
        finally:
            conn.close()

    def set_embeddings(self, kind: EmbeddedKind, ids: Sequence[str], vectors: Matrix) -> None:
        table = _TABLE_OF[kind]
        with self._transaction() as conn:
            conn.executemany(
                f"UPDATE {table} SET embedding = ? WHERE id = ?",
                [(_blob(v), i) for i, v in zip(ids, vectors, strict=True)],
            )

    def set_embedding_model(self, embedding_model: str, embedding_dim: int) -> None:
        with self._transaction() as conn:
            _set_model(conn, embedding_model, embedding_dim)
        self._meta = StoreMeta(SCHEMA_VERSION, embedding_model, embedding_dim)
        self.cache.forget()

    def open_for_reembed(self) -> StoreMeta | None:
        self._meta = self.meta()
        return self._meta

    def reembed_state(self) -> ReembedState | None:
        row = self.connection().execute("SELECT value FROM meta WHERE key = 'reembed'").fetchone()
        return ReembedState.from_json(row[0]) if row else None

    def set_reembed_state(self, state: ReembedState | None) -> None:
        with self._transaction() as conn:
            if state is None:
                conn.execute("DELETE FROM meta WHERE key = 'reembed'")
            else:
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('reembed', ?)", (state.to_json(),)
                )

    def finish_reembed(self, embedding_model: str, embedding_dim: int) -> None:
        with self.lock:
            with self._transaction() as conn:
                _set_model(conn, embedding_model, embedding_dim)
                conn.execute("DELETE FROM synonyms")
                conn.execute("INSERT OR IGNORE INTO synonyms_pending(phrase_key) SELECT key FROM phrases")
                conn.execute("DELETE FROM meta WHERE key = 'reembed'")
            self._meta = StoreMeta(SCHEMA_VERSION, embedding_model, embedding_dim)
            self.cache.forget()
