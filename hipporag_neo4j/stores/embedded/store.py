"""The embedded store: a directory with one SQLite database; no server.

Writes are transactional (one transaction per batch), so a crash leaves the store as it was before the
batch; writers take SQLite's write lock first (``BEGIN IMMEDIATE``) and check what is stored inside it, so
two writers go one at a time and never write the same passage twice. Retrieval runs from an in-memory
snapshot (numpy / scipy) that is loaded lazily, in one read transaction (WAL: a consistent state even while
another process commits), and rebuilt when the graph version changes, also when another process wrote.
A built snapshot is persisted under ``snapshot/`` stamped with the graph version and commit token it
reflects (:mod:`snapshot_files`), and memory-mapped by the next process that opens the store at that
version instead of rebuilt.
"""

from __future__ import annotations

import contextlib
import dataclasses
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

from hipporag_neo4j.common.sqlite import chunks, placeholders, set_wal
from hipporag_neo4j.errors import ModelMismatchError, StoreError
from hipporag_neo4j.graph.joined import JoinedMatrix, join_adjacency
from hipporag_neo4j.models import Passage, PassageInfo, StoreStats
from hipporag_neo4j.stores.base import (
    DeleteReport,
    DropReport,
    EmbeddedKind,
    GraphEdge,
    GraphJoin,
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
    snapshot,
    snapshot_delta,
    snapshot_files,
    vector_index,
)
from hipporag_neo4j.stores.embedded.enterprise import read_join_edges
from hipporag_neo4j.stores.embedded.schema import (
    PASSAGE_COUNT,
    RELATION_KEY_EDGES,
    SCHEMA,
    SCHEMA_VERSION,
    keys_of,
)
from hipporag_neo4j.stores.embedded.vector_index import IvfIndex, VectorSearch
from hipporag_neo4j.stores.embedded.view import SnapshotParts
from hipporag_neo4j.stores.memory import queries
from hipporag_neo4j.stores.memory.graph import FactIndex, GraphSnapshot, PhraseIndex
from hipporag_neo4j.stores.memory.spare_rows import grown
from hipporag_neo4j.stores.memory.strings import StringTable
from hipporag_neo4j.stores.memory.view import MemoryView

log = logging.getLogger(__name__)

DB_FILE = "graph.sqlite"
INDEX_DIR = "vector_index"
#: an index is extended (its tail assigned to lists: ~27 us a row at 1,024 lists) once the tail passes this
#: many rows or 1/64 of the indexed rows (1M: 15.6k, about a quarter of the rows 64 probes score)
INDEX_TAIL_ROWS = 8_192
#: commits a snapshot is carried forward in memory (never written) past the newest persisted one; the
#: query after that many starts bringing the persisted one forward and writing it in a thread of its own
#: (off the query path); 0: never carry (every version brought forward from the persisted one)
CARRY_COMMITS = 16
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


def _key_of(keys: dict[str, int], phrase_id: str, what: str) -> int:
    found = keys.get(phrase_id)
    if found is None:
        raise StoreError(f"{what} names phrase {phrase_id!r}, which is neither stored nor in the batch")
    return found


def _first(table: StringTable, n: int) -> StringTable:
    """The first ``n`` strings of ``table`` as base arrays (its appended strings up to ``n`` merged in)."""
    base = table.without_appended()
    return base.extended(table.take(range(table.base_count, n))) if n > table.base_count else base


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
        self._indexes: dict[str, tuple[tuple[object, ...], IvfIndex]] = {}
        self.index_builds = 0  # vector indexes trained by this object (tests; benchmarks)
        self._conn: sqlite3.Connection | None = None
        self._meta: StoreMeta | None = None
        self._lock = threading.RLock()
        self._phrases: PhraseIndex | None = None
        self._snapshot: GraphSnapshot | None = None
        #: the last fact index read, with the (graph version, token) it reflects
        self._facts: tuple[int, str, FactIndex] | None = None
        #: the last snapshot served, with the (graph version, token) and rowids it reflects: the base the
        #: next append-only versions are carried forward from in memory
        self._served: tuple[int, str, dict[str, int], GraphSnapshot] | None = None
        self._loaded_version = -1
        self._committed = (0, 0)  # graph version before and after this connection's last write
        self.snapshot_builds = 0  # snapshots built from SQL by this object (tests; benchmarks)
        self.snapshot_maps = 0  # persisted snapshots memory-mapped by this object
        self.snapshot_updates = 0  # persisted snapshots brought forward by the rows written since
        self.fact_loads = 0  # fact indexes read whole (not extended by the rows written since)
        self.snapshot_carries = 0  # snapshots carried forward in memory by the rows written since
        #: the thread writing a carried version's snapshot to disk (see CARRY_COMMITS), if one ran
        self.persister: threading.Thread | None = None
        self._persist_due = False

    # --- lifecycle ---------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
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
        conn = self._connect()
        with self._lock:
            conn.execute("BEGIN IMMEDIATE")
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
                served, facts = self._served, self._facts
                for kept in (served[0] if served else None, facts[0] if facts else None):
                    if floor is not None and kept is not None:  # this process carries from there
                        floor = min(floor, kept)
                if floor is not None:  # rows below the newest persisted snapshot are no longer needed
                    # (not above this commit's base: a directory left by a lost history must not prune)
                    conn.execute(schema.LOG_PRUNE, (min(floor, before),))
                conn.execute("COMMIT")
                self._committed = (before, before + 1)

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every SELECT inside sees one committed state (the WAL snapshot taken at
        the first read), however many writers commit meanwhile."""
        conn = self._connect()
        with self._lock:
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

    def _read_meta(self) -> dict[str, str]:
        return dict(self._connect().execute("SELECT key, value FROM meta").fetchall())

    def meta(self) -> StoreMeta | None:
        values = self._read_meta()
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
                conn.executemany(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                    [
                        ("schema_version", str(SCHEMA_VERSION)),
                        ("embedding_model", embedding_model),
                        ("embedding_dim", str(embedding_dim)),
                    ],
                )
            existing = StoreMeta(SCHEMA_VERSION, embedding_model, embedding_dim)
        check_meta(existing, f"store {self.path}", embedding_model, embedding_dim, SCHEMA_VERSION)
        self._meta = existing
        return existing

    def close(self) -> None:
        self.wait_for_snapshot_writer()  # nothing written into the store after it is closed (or dropped)
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._phrases = None
        self._snapshot = None
        self._facts = None
        self._served = None

    @property
    def _dim(self) -> int:
        if self._meta is None:
            raise StoreError("store is not open: call open(embedding_model, embedding_dim) first")
        return self._meta.embedding_dim

    def _graph_version(self) -> int:
        return self._version_in(self._connect())

    def _sync_version(self, conn: sqlite3.Connection) -> dict[str, str]:
        """Drop in-memory state if someone (another process, or delete) changed the store; returns the
        meta rows read."""
        values = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        version = int(values.get("graph_version", 0))
        if version == self._loaded_version:
            return values
        self._phrases = None
        self._snapshot = None
        self._check_model(values)
        self._loaded_version = version
        return values

    def _check_model(self, values: dict[str, str]) -> None:
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

    def _phrase_index(self) -> PhraseIndex:
        with self._read() as conn:
            values = self._sync_version(conn)
            if self._phrases is None and self._snapshot is None:
                self._snapshot = self._mapped_snapshot(conn, values)
                if self._snapshot is not None:
                    self._phrases = self._snapshot.phrases
            if self._phrases is None:
                self._phrases = snapshot.load_phrases(conn, self._dim)
            return self._phrases

    def _graph(self) -> GraphSnapshot:
        """Phrases and graph read in one read transaction, so they describe the same graph version."""
        with self._read() as conn:
            values = self._sync_version(conn)
            if self._snapshot is None:
                self._snapshot = self._mapped_snapshot(conn, values)
            if self._snapshot is None:
                self._snapshot = self._carried(conn, values)
            if self._snapshot is None:
                self._snapshot = self._brought_forward(conn, values)
            if self._snapshot is None:
                if self._phrases is None:
                    self._phrases = snapshot.load_phrases(conn, self._dim)
                graph = snapshot.load_graph(conn, self._dim, self._phrases)
                self.snapshot_builds += 1
                self._snapshot = self._persisted(conn, values, graph)
            if self._served is None or self._served[3] is not self._snapshot:
                self._served = (
                    int(values.get("graph_version", 0)),
                    values.get("graph_token", ""),
                    snapshot_delta.read_rowids(conn),
                    self._snapshot,
                )
            if self._persist_due:
                self._persist_due = False
                self._persist_in_background()
            return self._snapshot

    def _persist_in_background(self) -> None:
        """Bring the newest persisted snapshot forward to the current version and write it, in a thread
        with a store object (and connection) of its own, so a process that opens the store later has few
        rows to bring forward, without the query that found it due waiting for the disk. Best effort, as
        every snapshot write; one thread at a time."""
        if self.persister is not None and self.persister.is_alive():
            return
        meta = self._meta
        if meta is None:
            return

        def persist() -> None:
            other = EmbeddedStore(self.path, vector_search=self.vector_search)
            try:
                other.open(meta.embedding_model, meta.embedding_dim)
                other._graph()  # maps, brings forward and writes, or builds and writes
            except (StoreError, sqlite3.Error, OSError, RuntimeError) as exc:
                log.warning("could not write the snapshot of %s: %s", self.path, exc)
            finally:
                other.close()

        self.persister = threading.Thread(target=persist, name="hipporag-snapshot-writer", daemon=True)
        self.persister.start()

    def wait_for_snapshot_writer(self) -> None:
        """Wait until a snapshot being written in the background (see CARRY_COMMITS) is on disk."""
        if self.persister is not None:
            self.persister.join()

    def _carried(self, conn: sqlite3.Connection, values: dict[str, str]) -> GraphSnapshot | None:
        """The last snapshot served, carried forward in memory by the rows committed since
        (:func:`snapshot_delta.carried_forward`: the cost of a write between two queries follows the
        rows written, plus whole-array numpy work on the matrices; no SQL over the store, nothing
        written to disk). None when a commit since was not append-only, when there is nothing to carry,
        when no snapshot is persisted at all, or when carrying is off (``CARRY_COMMITS`` 0). Once
        ``CARRY_COMMITS`` commits have passed since the newest persisted snapshot, the carried one is
        served and the persisted one brought forward and written in a thread
        (:meth:`_persist_in_background`), so a process that opens the store later has few rows to bring
        forward and the query does not wait for the disk."""
        served = self._served
        if served is None:
            return None
        version, token, rowids, base = served
        if self.persist_snapshot:
            newest = snapshot_files.newest_version(self.path)
            current = int(values.get("graph_version", 0))
            if newest is None or CARRY_COMMITS <= 0:
                return None
            self._persist_due = current - newest >= CARRY_COMMITS
        manifest = {"graph_version": version, "graph_token": token, snapshot_delta.ROWIDS: rowids}
        synonyms = snapshot_delta.logged_synonyms(conn, manifest, values)
        n_base = base.adjacency.shape[0]
        if synonyms is None or base.phrases.ids.base_count > n_base:
            return None
        phrases = PhraseIndex(
            _first(base.phrases.ids, n_base),
            _first(base.phrases.names, n_base),
            base.phrases.vectors[:n_base],
        )
        delta = snapshot_delta.carried_forward(
            conn, dataclasses.replace(base, phrases=phrases), rowids, synonyms, self._dim
        )
        graph = delta.graph
        n = len(graph.phrases.ids)
        warm = self._phrases
        new_ids = graph.phrases.ids.take(range(n_base, n))
        if warm is not None and len(warm.ids) == n and warm.ids.take(range(n_base, n)) == new_ids:
            # the writer's own phrase index, already holding the new rows: its vectors are taken over
            graph.phrases = PhraseIndex.taking_over(graph.phrases.ids, graph.phrases.names, warm)
        else:
            graph.phrases = base.phrases.carried(
                graph.phrases.ids, graph.phrases.names, n_base, delta.phrase_rows
            )
        # the new passages' vectors into spare rows (a mapped file's grown over it): no copy per carry
        graph.passage_vectors, graph._passage_room, _ = grown(
            base.passage_vectors, base._passage_room, delta.passage_rows
        )
        base._passage_room = None  # handed on: the base never writes past its rows again
        self._phrases = graph.phrases
        self.snapshot_carries += 1
        return graph

    def _stamp(self, values: dict[str, str]) -> snapshot_files.Stamp:
        meta = self._meta
        if meta is None:
            raise StoreError("store is not open: call open(embedding_model, embedding_dim) first")
        return snapshot_files.Stamp(
            int(values.get("graph_version", 0)),
            values.get("graph_token", ""),
            meta.embedding_model,
            meta.embedding_dim,
        )

    def _mapped_snapshot(self, conn: sqlite3.Connection, values: dict[str, str]) -> GraphSnapshot | None:
        """The persisted snapshot of exactly the state this read transaction sees, memory-mapped; None
        when there is none (or it does not match, or persistence is off)."""
        if not self.persist_snapshot:
            return None
        found = snapshot_files.read(self.path, self._stamp(values))
        if found is None:
            return None
        arrays, manifest = found
        # the stamp decides; the row counts are a cheap second check against edits made outside the store
        counts = conn.execute(
            "SELECT (SELECT COUNT(*) FROM phrases), (SELECT COUNT(*) FROM passages)"
        ).fetchone()
        if tuple(counts) != (manifest.get("n_phrases"), manifest.get("n_passages")):
            log.warning(
                "ignoring the persisted snapshot of %s: its row counts differ from the database", self.path
            )
            return None
        self.snapshot_maps += 1
        return GraphSnapshot.from_arrays(arrays, manifest, phrases=self._phrases)

    def _brought_forward(self, conn: sqlite3.Connection, values: dict[str, str]) -> GraphSnapshot | None:
        """The newest persisted snapshot brought forward by the rows committed since, written as this
        version's and mapped (:mod:`snapshot_delta`); None when there is none to bring forward (a
        commit since was not append-only, or the log does not reach back to it) or it cannot be written."""
        if not self.persist_snapshot:
            return None
        stamp = self._stamp(values)
        found = snapshot_files.newest_before(
            self.path, stamp.graph_version, stamp.embedding_model, stamp.embedding_dim
        )
        if found is None:
            return None
        arrays, manifest = found
        synonyms = snapshot_delta.logged_synonyms(conn, manifest, values)
        if synonyms is None:
            return None
        try:
            update = snapshot_delta.brought_forward(conn, arrays, manifest, synonyms, self._dim)
            del arrays, found
            snapshot_files.write(self.path, stamp, update.arrays, update.extra, update.appended)
        except OSError as exc:
            log.warning("could not bring the snapshot of %s forward: %s", self.path, exc)
            return None
        del update
        graph = self._mapped_snapshot(conn, values)
        if graph is not None:
            self.snapshot_maps -= 1
            self.snapshot_updates += 1
        return graph

    def _persisted(
        self, conn: sqlite3.Connection, values: dict[str, str], graph: GraphSnapshot
    ) -> GraphSnapshot:
        """Write a freshly built snapshot (best effort: a read-only or full disk only costs the next
        open a rebuild) and serve it from the mapped files, so its arrays leave this process's heap."""
        if not self.persist_snapshot:
            return graph
        stamp = self._stamp(values)
        try:
            arrays, extra = graph.arrays()
            appended = {
                name: snapshot_files.Appended(arrays.pop(name))
                for name in ("phrase_vectors", "passage_vectors")
            }
            extra[snapshot_delta.ROWIDS] = snapshot_delta.read_rowids(conn)
            snapshot_files.write(self.path, stamp, arrays, extra, appended)
        except OSError as exc:
            log.warning("could not persist the snapshot of %s: %s", self.path, exc)
            return graph
        del arrays, appended
        found = snapshot_files.read(self.path, stamp)
        if found is None:
            return graph
        mapped = GraphSnapshot.from_arrays(*found)
        self._phrases = mapped.phrases
        return mapped

    # --- indexing ----------------------------------------------------------------------------
    def _existing(self, table: str, ids: Sequence[str]) -> set[str]:
        conn = self._connect()
        found: set[str] = set()
        for chunk in chunks(list(dict.fromkeys(ids))):
            sql = f"SELECT id FROM {table} WHERE id IN ({placeholders(len(chunk))})"
            found.update(r[0] for r in conn.execute(sql, list(chunk)))
        return found

    def existing_passages(self, ids: Sequence[str]) -> set[str]:
        return self._existing("passages", ids)

    def missing_phrases(self, ids: Sequence[str]) -> set[str]:
        return set(ids) - self._existing("phrases", ids)

    def missing_facts(self, ids: Sequence[str]) -> set[str]:
        return set(ids) - self._existing("facts", ids)

    def write_passages(
        self, phrases: Sequence[PhraseRecord], passages: Sequence[PassageRecord]
    ) -> WriteResult:
        with self._lock:
            with self._transaction(_Log(schema.LOG_APPEND)) as conn:
                self._check_model(dict(conn.execute("SELECT key, value FROM meta").fetchall()))
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
            # Keep the phrase vectors warm for the synonym search that follows, unless someone else wrote.
            before, after = self._committed
            if self._phrases is not None and self._loaded_version == before:
                self._phrases.append(
                    [p.id for p in new_phrases],
                    [p.name for p in new_phrases],
                    np.array([p.embedding for p in new_phrases], dtype=np.float32).reshape(-1, self._dim),
                )
                self._loaded_version = after
            self._snapshot = None
        return WriteResult([r.passage.id for r in new_passages], *counts)

    def pending_synonym_phrases(self, limit: int) -> list[PhraseRecord]:
        rows = (
            self._connect()
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
        with self._lock:
            index = self._phrase_index()
            return queries.nearest_phrases(
                index,
                vectors,
                top_k,
                min_similarity,
                exclude_ids,
                self._passage_counts,
                self.candidates("phrase", index.vectors),
            )

    def candidates(self, kind: str, matrix: Matrix) -> queries.Candidates | None:
        """The IVF index's candidate rows for ``matrix`` when the vector search setting wants an index for
        its size (:meth:`_vector_index`, found or trained on first use), else None (an exact scan)."""
        if not self.vector_search.indexed(len(matrix)) or self._meta is None:
            return None

        def candidates(m: Matrix, v: Vector, k: int) -> np.ndarray | None:
            ivf = self._vector_index(kind, m)
            return None if ivf is None else ivf.search(m, v, k, self.vector_search.probes)

        return candidates

    def _vector_index(self, kind: str, matrix: Matrix) -> IvfIndex | None:
        """The IVF index over ``matrix`` (phrase, fact or passage vectors of the current snapshot) when the
        vector search setting wants one for its size, else None. Kept per kind while the matrix is the same;
        otherwise the persisted one if it covers the matrix's rows, else trained (once per store: the
        rows a later write appends are the index's tail, scanned exactly until it is extended)."""
        if not self.vector_search.indexed(len(matrix)) or self._meta is None:
            return None
        key = (self._loaded_version, matrix.__array_interface__["data"][0], matrix.shape)
        with self._lock:
            cached = self._indexes.get(kind)
            if cached is not None and cached[0] == key:
                return cached[1]
            index = cached[1] if cached is not None and cached[1].covers(matrix) else None
            meta: dict[str, object] = {
                "kind": kind,
                "embedding_model": self._meta.embedding_model,
                "embedding_dim": self._meta.embedding_dim,
            }
            directory = self.path / INDEX_DIR / kind
            changed = False
            if index is None and self.persist_snapshot:
                index = vector_index.load(directory, meta)
                if index is not None and not index.covers(matrix):
                    index = None
            if index is None:
                index = IvfIndex.train(matrix)
                self.index_builds += 1
                changed = True
            tail = len(matrix) - index.n_indexed
            if tail > max(INDEX_TAIL_ROWS, index.n_indexed // 64):
                index = index.extend(matrix)
                changed = True
            if changed and self.persist_snapshot:
                try:
                    vector_index.save(directory, index, meta)
                except OSError as exc:  # best effort, as the snapshot: the next process trains again
                    log.warning("could not persist the %s vector index of %s: %s", kind, self.path, exc)
            self._indexes[kind] = (key, index)
            return index

    def _passage_counts(self, phrase_ids: set[str]) -> dict[str, int]:
        snapshot = self._snapshot
        if snapshot is not None:
            found = {pid: snapshot.phrases.position(pid) for pid in phrase_ids}
            if all(i is not None for i in found.values()):
                return {pid: int(snapshot.passage_counts[i]) for pid, i in found.items() if i is not None}
        conn = self._connect()
        counts: dict[str, int] = {}
        for chunk in chunks(sorted(phrase_ids)):
            sql = f"SELECT p.id, {PASSAGE_COUNT} FROM phrases p WHERE p.id IN ({placeholders(len(chunk))})"
            counts.update(conn.execute(sql, list(chunk)).fetchall())
        return counts

    def write_synonyms(self, edges: Sequence[SynonymEdge], done: Sequence[str] = ()) -> int:
        rows = {}
        for edge in edges:
            e = edge.canonical()
            if e.source_id != e.target_id:
                rows[(e.source_id, e.target_id)] = e.score
        if not rows and not done:
            return 0
        with self._lock:
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
            # the phrases are unchanged: keep their vectors loaded unless someone else wrote meanwhile
            version_before, version_after = self._committed
            if self._loaded_version == version_before:
                self._loaded_version = version_after
            else:
                self._phrases = None
            self._snapshot = None
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
        with self._lock:
            self._phrases = None
            self._snapshot = None
        return report

    # --- retrieval ---------------------------------------------------------------------------
    def drop_namespace(self) -> DropReport:
        """Remove this knowledge base's database and persisted snapshot (the files of this namespace
        only: other namespaces under ``namespaces/`` stay). Waits for a writer that is mid-transaction,
        then unlinks the files while holding its write lock. A process that still has the store open
        keeps reading the removed files until it reopens; stop servers and indexers first."""
        self.wait_for_snapshot_writer()
        with self._lock:
            if not (self.path / DB_FILE).exists():
                self.close()
                return DropReport()
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")
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

    @property
    def cache_lock(self) -> threading.RLock:
        """The store's lock: it guards the snapshot's caches too."""
        return self._lock

    def view(self) -> MemoryView:
        """The snapshot of the current graph version, for one query's reads."""
        return MemoryView(SnapshotParts(self, self._graph(), self._loaded_version))

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]:
        wanted = list(dict.fromkeys(names))
        conn = self._connect()
        found: dict[str, PhraseHit] = {}
        for chunk in chunks(wanted):
            marks = placeholders(len(chunk))
            sql = f"SELECT p.id, p.name, {PASSAGE_COUNT} FROM phrases p WHERE p.name IN ({marks})"
            for pid, name, count in conn.execute(sql, list(chunk)):
                found[name] = PhraseHit(pid, name, 1.0, int(count))
        return found

    def joined(self, graph: GraphSnapshot, join: GraphJoin, with_passages: bool) -> JoinedMatrix:
        """The snapshot's graph joined with ``enterprise.sqlite`` beside it; cached per relationship types
        while neither the graph version nor the enterprise graph's version changes."""
        key = (join.rel_types, with_passages)
        with self._lock:
            cached = graph.joined.get(key)
        edges = read_join_edges(self.path, join.rel_types, cached.version if cached else None)
        if edges is None:
            assert cached is not None  # None means "unchanged since the cached version"
            return cached
        n_phrases = graph.adjacency.shape[0]
        base = graph.passage_adjacency() if with_passages else graph.adjacency
        found = {p: graph.phrases.position(p) for p in {p for p, _, _ in edges.same_as}}
        positions = {p: i for p, i in found.items() if i is not None and i < n_phrases}
        joined = join_adjacency(base, positions, edges)
        with self._lock:
            graph.joined[key] = joined
        return joined

    def fact_index(self, graph: GraphSnapshot) -> FactIndex:
        """The fact vectors of ``graph``'s version: read on first use (in a read transaction of that
        version), then held by the snapshot."""
        with self._lock, self._read() as conn:  # facts of the snapshot's graph version, not a later one
            if graph.facts is None:
                graph.facts = self._fact_index(conn)
            return graph.facts

    def _fact_index(self, conn: sqlite3.Connection) -> FactIndex:
        """The fact vectors of the state ``conn``'s read transaction sees: the last ones read, extended
        by the facts written since when every commit since only appended (a write between queries costs
        its own rows, not a reload of every fact), else read again."""
        values = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        previous = self._facts
        if previous is not None and snapshot_delta.append_only_since(conn, previous[0], previous[1], values):
            facts = snapshot.extend_facts(previous[2], conn)
        else:
            facts = snapshot.load_facts(conn, self._dim)
            self.fact_loads += 1
        self._facts = (int(values.get("graph_version", 0)), values.get("graph_token", ""), facts)
        return facts

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        found: dict[str, Passage] = {}
        conn = self._connect()
        for chunk in chunks(list(dict.fromkeys(ids))):
            sql = f"SELECT id, title, text, metadata FROM passages WHERE id IN ({placeholders(len(chunk))})"
            for pid, title, text, metadata in conn.execute(sql, list(chunk)):
                found[pid] = Passage(id=pid, title=title, text=text, metadata=json.loads(metadata))
        return found

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]:
        found: dict[str, str | None] = {}
        conn = self._connect()
        for chunk in chunks(list(dict.fromkeys(ids))):
            sql = f"SELECT id, title FROM passages WHERE id IN ({placeholders(len(chunk))})"
            found.update(conn.execute(sql, list(chunk)).fetchall())
        return found

    def list_passages(self, after: str, limit: int) -> list[PassageInfo]:
        rows = self._connect().execute(
            "SELECT id, title, metadata, length(text) FROM passages WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit),
        )
        return [PassageInfo.of(pid, title, json.loads(meta), int(n)) for pid, title, meta, n in rows]

    def passages_by_parent(self, parent_ids: Sequence[str]) -> dict[str, list[str]]:
        # chunk ids are "<parent>#<n>": a range scan of the primary key, then the recorded parent decides
        conn = self._connect()
        candidates = [
            (parent, pid, json.loads(meta))
            for parent in dict.fromkeys(parent_ids)
            for pid, meta in conn.execute(
                "SELECT id, metadata FROM passages WHERE id >= ? AND id < ?", (parent + "#", parent + "$")
            )
        ]
        return chunks_of_parents(candidates)

    def passage_count(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM passages").fetchone()[0])

    # --- graph explorer (GraphExplorer) ----------------------------------------------------------
    def search_nodes(self, text: str, limit: int) -> list[GraphNode]:
        with self._read() as conn:
            return explore.search_nodes(conn, text, limit)

    def neighbourhood(self, kind: GraphNodeKind, node_id: str, limit: int) -> Neighbourhood:
        with self._read() as conn:
            return explore.neighbourhood(conn, self.path, kind, node_id, limit)

    def edges_among(self, phrase_ids: Sequence[str], passage_ids: Sequence[str]) -> list[GraphEdge]:
        with self._read() as conn:
            return explore.edges_among(conn, phrase_ids, passage_ids)

    def namespaces(self) -> list[str]:
        root = self.path.parent.parent if self.path.parent.name == "namespaces" else self.path
        return explore.namespaces(root)

    def stats(self) -> StoreStats:
        with self._read() as conn:  # one read transaction: every count of the same graph version
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
            extra={"graph_version": self._graph_version(), "synonyms_pending": pending, **reembed},
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
            conn.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                [("embedding_model", embedding_model), ("embedding_dim", str(embedding_dim))],
            )
        self._meta = StoreMeta(SCHEMA_VERSION, embedding_model, embedding_dim)
        self._phrases = None
        self._snapshot = None
        self._facts = None

    def open_for_reembed(self) -> StoreMeta | None:
        self._meta = self.meta()
        return self._meta

    def reembed_state(self) -> ReembedState | None:
        row = self._connect().execute("SELECT value FROM meta WHERE key = 'reembed'").fetchone()
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
        with self._lock:
            with self._transaction() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                    [("embedding_model", embedding_model), ("embedding_dim", str(embedding_dim))],
                )
                conn.execute("DELETE FROM synonyms")
                conn.execute("INSERT OR IGNORE INTO synonyms_pending(phrase_key) SELECT key FROM phrases")
                conn.execute("DELETE FROM meta WHERE key = 'reembed'")
            self._meta = StoreMeta(SCHEMA_VERSION, embedding_model, embedding_dim)
            self._phrases = None
            self._snapshot = None
            self._facts = None
