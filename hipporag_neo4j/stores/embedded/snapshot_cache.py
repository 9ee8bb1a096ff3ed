"""The embedded store's snapshot cache: the in-process engine's structures (:mod:`..memory`) of the
current graph version, held between queries and brought up to date after commits.

A built snapshot is persisted under ``snapshot/`` stamped with the graph version and commit token it
reflects (:mod:`.snapshot_files`) and memory-mapped by the next process that opens the store at that
version instead of rebuilt; a version that only appended rows since one held in memory (or persisted) is
carried forward by those rows (:mod:`.snapshot_delta`); anything else is rebuilt from SQL
(:mod:`.snapshot`). The IVF indexes of large matrices (:mod:`..memory.vector_index`) and the fact index
live here too. The store (:mod:`.store`) owns the SQLite connection and the writes; this cache reads
through its read transactions and is told what its own writes changed.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from hipporag_neo4j.common.sqlite import chunks, placeholders
from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.graph.joined import JoinedMatrix, join_adjacency
from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import GraphJoin, Matrix, PhraseHit, PhraseRecord, StoreMeta
from hipporag_neo4j.stores.embedded import snapshot, snapshot_delta, snapshot_files
from hipporag_neo4j.stores.embedded.enterprise import read_join_edges
from hipporag_neo4j.stores.embedded.schema import PASSAGE_COUNT
from hipporag_neo4j.stores.memory import queries
from hipporag_neo4j.stores.memory.graph import FactIndex, GraphSnapshot, PhraseIndex
from hipporag_neo4j.stores.memory.spare_rows import grown
from hipporag_neo4j.stores.memory.strings import StringTable
from hipporag_neo4j.stores.memory.vector_index import HeldIndexes, VectorSearch, index_meta
from hipporag_neo4j.stores.memory.view import MemoryView

log = logging.getLogger(__name__)

INDEX_DIR = "vector_index"
#: commits a snapshot is carried forward in memory (never written) past the newest persisted one; the
#: query after that many starts bringing the persisted one forward and writing it in a thread of its own
#: (off the query path); 0: never carry (every version brought forward from the persisted one)
CARRY_COMMITS = 16


class Store(Protocol):
    """What the cache asks of the embedded store (``EmbeddedStore``)."""

    path: Path
    persist_snapshot: bool
    vector_search: VectorSearch
    lock: threading.RLock

    @property
    def opened_meta(self) -> StoreMeta | None: ...

    def read(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def connection(self) -> sqlite3.Connection: ...

    def check_model(self, values: dict[str, str]) -> None: ...

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]: ...

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]: ...

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]: ...

    def another(self) -> Any:
        """A store object of its own on the same directory (the background snapshot writer's)."""
        ...


def _first(table: StringTable, n: int) -> StringTable:
    """The first ``n`` strings of ``table`` as base arrays (its appended strings up to ``n`` merged in)."""
    base = table.without_appended()
    return base.extended(table.take(range(table.base_count, n))) if n > table.base_count else base


class SnapshotCache:
    """The snapshot (and phrase, fact and vector indexes) of the store's current graph version."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.indexes = HeldIndexes(store.vector_search, store.lock)
        self._phrases: PhraseIndex | None = None
        self._snapshot: GraphSnapshot | None = None
        #: the last fact index read, with the (graph version, token) it reflects
        self._facts: tuple[int, str, FactIndex] | None = None
        #: the last snapshot served, with the (graph version, token) and rowids it reflects: the base the
        #: next append-only versions are carried forward from in memory
        self._served: tuple[int, str, dict[str, int], GraphSnapshot] | None = None
        self._loaded_version = -1
        self.snapshot_builds = 0  # snapshots built from SQL by this object (tests; benchmarks)
        self.snapshot_maps = 0  # persisted snapshots memory-mapped by this object
        self.snapshot_updates = 0  # persisted snapshots brought forward by the rows written since
        self.fact_loads = 0  # fact indexes read whole (not extended by the rows written since)
        self.snapshot_carries = 0  # snapshots carried forward in memory by the rows written since
        #: the thread writing a carried version's snapshot to disk (see CARRY_COMMITS), if one ran
        self.persister: threading.Thread | None = None
        self._persist_due = False

    @property
    def _meta(self) -> StoreMeta:
        meta = self.store.opened_meta
        if meta is None:
            raise StoreError("store is not open: call open(embedding_model, embedding_dim) first")
        return meta

    # --- what the store's writes tell it ---------------------------------------------------------------
    def forget(self, facts: bool = True) -> None:
        """Drop the structures held (the fact index too, with ``facts``; else the log decides whether it
        can be extended): the next read builds (or maps) them again."""
        self._phrases = None
        self._snapshot = None
        if facts:
            self._facts = None

    def close(self) -> None:
        self.wait_for_snapshot_writer()
        self.forget()
        self._served = None

    def carry_floor(self) -> int | None:
        """The oldest graph version this process still carries a snapshot or fact index forward from."""
        kept = [v[0] for v in (self._served, self._facts) if v is not None]
        return min(kept) if kept else None

    def appended(self, committed: tuple[int, int], phrases: Sequence[PhraseRecord], dim: int) -> None:
        """This process's own append-only commit (``committed``: the versions before and after): its new
        ``phrases`` go into the held phrase index (the synonym search that follows needs no reload),
        unless someone else wrote in between."""
        before, after = committed
        if self._phrases is not None and self._loaded_version == before:
            self._phrases.append(
                [p.id for p in phrases],
                [p.name for p in phrases],
                np.array([p.embedding for p in phrases], dtype=np.float32).reshape(-1, dim),
            )
            self._loaded_version = after
        self._snapshot = None

    def synonyms_written(self, committed: tuple[int, int]) -> None:
        """This process's synonym commit: the phrases are unchanged, kept unless someone else wrote."""
        before, after = committed
        if self._loaded_version == before:
            self._loaded_version = after
        else:
            self._phrases = None
        self._snapshot = None

    # --- reads --------------------------------------------------------------------------------------
    def _sync_version(self, conn: sqlite3.Connection) -> dict[str, str]:
        """Drop in-memory state if someone (another process, or delete) changed the store; returns the
        meta rows read."""
        values = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        version = int(values.get("graph_version", 0))
        if version == self._loaded_version:
            return values
        self._phrases = None
        self._snapshot = None
        self.store.check_model(values)
        self._loaded_version = version
        return values

    def phrase_index(self) -> PhraseIndex:
        with self.store.read() as conn:
            values = self._sync_version(conn)
            if self._phrases is None and self._snapshot is None:
                self._snapshot = self._mapped_snapshot(conn, values)
                if self._snapshot is not None:
                    self._phrases = self._snapshot.phrases
            if self._phrases is None:
                self._phrases = snapshot.load_phrases(conn, self._meta.embedding_dim)
            return self._phrases

    def graph(self) -> GraphSnapshot:
        """Phrases and graph read in one read transaction, so they describe the same graph version."""
        with self.store.read() as conn:
            values = self._sync_version(conn)
            if self._snapshot is None:
                self._snapshot = self._mapped_snapshot(conn, values)
            if self._snapshot is None:
                self._snapshot = self._carried(conn, values)
            if self._snapshot is None:
                self._snapshot = self._brought_forward(conn, values)
            if self._snapshot is None:
                if self._phrases is None:
                    self._phrases = snapshot.load_phrases(conn, self._meta.embedding_dim)
                graph = snapshot.load_graph(conn, self._meta.embedding_dim, self._phrases)
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
        meta = self.store.opened_meta
        if meta is None:
            return

        def persist() -> None:
            other = self.store.another()
            try:
                other.open(meta.embedding_model, meta.embedding_dim)
                other.cache.graph()  # maps, brings forward and writes, or builds and writes
            except (StoreError, sqlite3.Error, OSError, RuntimeError) as exc:
                log.warning("could not write the snapshot of %s: %s", self.store.path, exc)
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
        when no snapshot is persisted at all, or when carrying is off (``CARRY_COMMITS`` 0). Past
        ``CARRY_COMMITS``, the carried one is served and :meth:`_persist_in_background` starts."""
        served = self._served
        if served is None:
            return None
        version, token, rowids, base = served
        if self.store.persist_snapshot:
            newest = snapshot_files.newest_version(self.store.path)
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
            conn, dataclasses.replace(base, phrases=phrases), rowids, synonyms, self._meta.embedding_dim
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
        return snapshot_files.Stamp(
            int(values.get("graph_version", 0)),
            values.get("graph_token", ""),
            meta.embedding_model,
            meta.embedding_dim,
        )

    def _mapped_snapshot(self, conn: sqlite3.Connection, values: dict[str, str]) -> GraphSnapshot | None:
        """The persisted snapshot of exactly the state this read transaction sees, memory-mapped; None
        when there is none (or it does not match, or persistence is off)."""
        if not self.store.persist_snapshot:
            return None
        found = snapshot_files.read(self.store.path, self._stamp(values))
        if found is None:
            return None
        arrays, manifest = found
        # the stamp decides; the row counts are a cheap second check against edits made outside the store
        counts = conn.execute(
            "SELECT (SELECT COUNT(*) FROM phrases), (SELECT COUNT(*) FROM passages)"
        ).fetchone()
        if tuple(counts) != (manifest.get("n_phrases"), manifest.get("n_passages")):
            log.warning(
                "ignoring the persisted snapshot of %s: its row counts differ from the database",
                self.store.path,
            )
            return None
        self.snapshot_maps += 1
        return GraphSnapshot.from_arrays(arrays, manifest, phrases=self._phrases)

    def _brought_forward(self, conn: sqlite3.Connection, values: dict[str, str]) -> GraphSnapshot | None:
        """The newest persisted snapshot brought forward by the rows committed since, written as this
        version's and mapped (:mod:`snapshot_delta`); None when there is none to bring forward (a
        commit since was not append-only, or the log does not reach back to it) or it cannot be written."""
        if not self.store.persist_snapshot:
            return None
        stamp = self._stamp(values)
        found = snapshot_files.newest_before(
            self.store.path, stamp.graph_version, stamp.embedding_model, stamp.embedding_dim
        )
        if found is None:
            return None
        arrays, manifest = found
        synonyms = snapshot_delta.logged_synonyms(conn, manifest, values)
        if synonyms is None:
            return None
        try:
            update = snapshot_delta.brought_forward(conn, arrays, manifest, synonyms, stamp.embedding_dim)
            del arrays, found
            snapshot_files.write(self.store.path, stamp, update.arrays, update.extra, update.appended)
        except OSError as exc:
            log.warning("could not bring the snapshot of %s forward: %s", self.store.path, exc)
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
        if not self.store.persist_snapshot:
            return graph
        stamp = self._stamp(values)
        try:
            arrays, extra = graph.arrays()
            appended = {
                name: snapshot_files.Appended(arrays.pop(name))
                for name in ("phrase_vectors", "passage_vectors")
            }
            extra[snapshot_delta.ROWIDS] = snapshot_delta.read_rowids(conn)
            snapshot_files.write(self.store.path, stamp, arrays, extra, appended)
        except OSError as exc:
            log.warning("could not persist the snapshot of %s: %s", self.store.path, exc)
            return graph
        del arrays, appended
        found = snapshot_files.read(self.store.path, stamp)
        if found is None:
            return graph
        mapped = GraphSnapshot.from_arrays(*found)
        self._phrases = mapped.phrases
        return mapped

    def candidates(self, kind: str, matrix: Matrix) -> queries.Candidates | None:
        """The IVF index's candidate rows for ``matrix`` when the vector search setting wants an index for
        its size (found, persisted or trained on first use: :class:`~..memory.vector_index.HeldIndexes`),
        else None (an exact scan)."""
        where = self._index_place(kind)
        return None if where is None else self.indexes.candidates(kind, matrix, self._loaded_version, *where)

    def batch_candidates(self, kind: str, matrix: Matrix) -> queries.BatchCandidates | None:
        """As :meth:`candidates`, for a batch of vectors searched with a similarity floor (the synonym
        step, ``vector_search.synonym_probes`` lists per vector)."""
        where = self._index_place(kind)
        if where is None:
            return None
        return self.indexes.batch_candidates(kind, matrix, self._loaded_version, *where)

    def _index_place(self, kind: str) -> tuple[Path | None, dict[str, object]] | None:
        """Where the ``kind`` index persists and what it must match; None before the store is opened."""
        opened = self.store.opened_meta
        if opened is None:
            return None
        meta = index_meta(kind, opened.embedding_model, opened.embedding_dim)
        return (self.store.path / INDEX_DIR / kind if self.store.persist_snapshot else None), meta

    @property
    def index_builds(self) -> int:
        """Vector indexes trained by this object (tests; benchmarks)."""
        return self.indexes.builds

    def passage_counts(self, phrase_ids: set[str]) -> dict[str, int]:
        snapshot = self._snapshot
        if snapshot is not None:
            found = {pid: snapshot.phrases.position(pid) for pid in phrase_ids}
            if all(i is not None for i in found.values()):
                return {pid: int(snapshot.passage_counts[i]) for pid, i in found.items() if i is not None}
        conn = self.store.connection()
        counts: dict[str, int] = {}
        for chunk in chunks(sorted(phrase_ids)):
            sql = f"SELECT p.id, {PASSAGE_COUNT} FROM phrases p WHERE p.id IN ({placeholders(len(chunk))})"
            counts.update(conn.execute(sql, list(chunk)).fetchall())
        return counts

    def view(self) -> MemoryView:
        """The snapshot of the current graph version, for one query's reads."""
        return MemoryView(SnapshotParts(self, self.graph(), self._loaded_version))

    def joined(self, graph: GraphSnapshot, join: GraphJoin, with_passages: bool) -> JoinedMatrix:
        """The snapshot's graph joined with ``enterprise.sqlite`` beside it; cached per relationship types
        while neither the graph version nor the enterprise graph's version changes."""
        key = (join.rel_types, with_passages)
        with self.store.lock:
            cached = graph.joined.get(key)
        edges = read_join_edges(self.store.path, join.rel_types, cached.version if cached else None)
        if edges is None:
            assert cached is not None  # None means "unchanged since the cached version"
            return cached
        n_phrases = graph.adjacency.shape[0]
        base = graph.passage_graph() if with_passages else graph.adjacency
        found = {p: graph.phrases.position(p) for p in {p for p, _, _ in edges.same_as}}
        positions = {p: i for p, i in found.items() if i is not None and i < n_phrases}
        joined = join_adjacency(base, positions, edges)
        with self.store.lock:
            graph.joined[key] = joined
        return joined

    def fact_index(self, graph: GraphSnapshot) -> FactIndex:
        """The fact vectors of ``graph``'s version: read on first use (in a read transaction of that
        version), then held by the snapshot."""
        with self.store.lock, self.store.read() as conn:  # the snapshot's version, not a later one
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
            facts = snapshot.load_facts(conn, self._meta.embedding_dim)
            self.fact_loads += 1
        self._facts = (int(values.get("graph_version", 0)), values.get("graph_token", ""), facts)
        return facts


class SnapshotParts:
    """The parts of one graph version for :class:`~..memory.view.MemoryView`: the snapshot ``graph`` of
    graph ``version`` (the fact index read on first use) and the IVF indexes of large matrices, from
    ``cache``; the passage rows and exact names read from SQLite."""

    def __init__(self, cache: SnapshotCache, graph: GraphSnapshot, version: int) -> None:
        self.cache = cache
        self.store = cache.store
        self.snapshot = graph
        self.version = version

    def _counts(self, phrase_ids: set[str]) -> Mapping[str, int]:
        graph = self.snapshot
        found = {pid: graph.phrases.position(pid) for pid in phrase_ids}
        return {pid: int(graph.passage_counts[i]) for pid, i in found.items() if i is not None}

    def phrases(self) -> tuple[PhraseIndex, Callable[[set[str]], Mapping[str, int]]]:
        return self.snapshot.phrases, self._counts

    def graph(self) -> tuple[GraphSnapshot, AbstractContextManager[Any]]:
        return self.snapshot, self.store.lock  # the store's lock guards the snapshot's caches too

    def facts(self) -> tuple[FactIndex, PhraseIndex]:
        return self.cache.fact_index(self.snapshot), self.snapshot.phrases

    def dense(self) -> tuple[StringTable, Matrix]:
        return self.snapshot.passage_ids, self.snapshot.passage_vectors

    def candidates(self, kind: str, matrix: Matrix) -> queries.Candidates | None:
        return self.cache.candidates(kind, matrix)

    def batch_candidates(self, kind: str, matrix: Matrix) -> queries.BatchCandidates | None:
        return self.cache.batch_candidates(kind, matrix)

    def joined(self, graph: GraphSnapshot, join: GraphJoin, with_passages: bool) -> JoinedMatrix:
        return self.cache.joined(graph, join, with_passages)

    def phrases_by_name(self, names: Sequence[str]) -> dict[str, PhraseHit]:
        return self.store.phrases_by_name(names)

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        return self.store.get_passages(ids)

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]:
        return self.store.passage_titles(ids)

    def passage_count(self) -> int:
        return len(self.snapshot.passage_ids)
