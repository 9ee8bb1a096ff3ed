"""A namespace held in process, one graph version at a time: the query path of the ``local`` engine and
of ``neo4j.vector_search = client``.

Measured live (Neo4j 5.26 Community, MuSiQue, docs/neo4j-performance.md), answering in Cypher cost what
the embedded store answers from arrays: HippoRAG 2's dense score of every passage 84 ms against 3 ms,
HippoRAG's PPR and MENTIONS aggregation (every phrase score shipped to the server) 346 ms against
2.6 ms, synonym edges by vector-index queries 355 s against 2.4 s. So the namespace is read once per
graph version into the in-process engine's structures (:mod:`hipporag_neo4j.stores.memory`:
:class:`GraphSnapshot`, :class:`PhraseIndex`, :class:`FactIndex`) and every query is answered by the
engine's one implementation (:mod:`~hipporag_neo4j.stores.memory.queries`), the embedded store's too:
the two stores give the same answers: exact ones below ``store.vector_index_min_rows`` rows of a matrix,
and from there through the same IVF index as the embedded store (``store.vector_search``; candidates
re-scored exactly). This process's own writes carry the copy forward through the engine's one
:func:`~hipporag_neo4j.stores.memory.delta.apply`.

What is read when:

* each query reads the graph version and model once (``client_state``, one round trip: the store's
  :meth:`~hipporag_neo4j.stores.neo4j.store.Neo4jStore.view`); while they are unchanged the copy serves
  from memory. Every read of the query goes through that view (one version), and the rows of the
  passages it returns come from those read earlier at the same version (:class:`PassageRows`);
* a new version re-reads the structure it needs (phrase ids, names and counts; passages, mentions and
  edges; facts), in one read transaction between two reads of the version (Neo4j reads at READ
  COMMITTED, writers bump the version in their transaction: equal versions mean one consistent graph;
  otherwise the read is used once and not kept);
* phrase and fact vectors are kept across versions by id (an id is a digest of the text, so its vector
  only changes with the model, which empties them); only new ids are read. Each vector is held once: a
  new version's matrix takes the rows of the held one by id (until then the few vectors no held matrix
  has, this process's writes, wait in :attr:`ClientCopy._loose`). Passage vectors are read again per
  version (a passage id is a file path, whose text can change).

Parts are read lazily: indexing (synonyms) reads only the phrases; ``dense`` only the passage vectors.
Memory is that of the embedded store's snapshot: at 384-d about 1.5 KiB per phrase, fact and passage.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.graph.joined import JoinEdges, JoinedMatrix, join_adjacency
from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import (
    FactRecord,
    GraphJoin,
    Matrix,
    PassageRecord,
    PhraseHit,
    PhraseRecord,
    Vector,
)
from hipporag_neo4j.stores.memory import delta, queries
from hipporag_neo4j.stores.memory.graph import (
    FactIndex,
    GraphSnapshot,
    PhraseIndex,
    canonical_adjacency,
    compact,
)
from hipporag_neo4j.stores.memory.spare_rows import grown
from hipporag_neo4j.stores.memory.strings import StringTable
from hipporag_neo4j.stores.memory.vector_index import HeldIndexes, VectorSearch, index_meta
from hipporag_neo4j.stores.neo4j.runner import CypherRunner, CypherTransaction

#: Reads of a part that may see a concurrent commit before one is used without being kept. The last
#: one cannot be torn (see :meth:`ClientCopy._read_graph`): a reader never fails or waits because
#: writers keep committing.
MAX_READS = 3
#: Ids per round trip when reading the vectors of new phrases or facts.
VECTOR_BATCH = 2000
#: phrase (or passage) ids per statement of the graph read: ~140k edges at MuSiQue's degree, a few MiB
#: of the server's transaction memory (client_edges)
GRAPH_BATCH = 20_000
#: Passage rows (id, title, text, metadata) held per graph version for the passages queries return; the
#: oldest go first beyond this many.
PASSAGE_ROWS_MAX = 10_000


@dataclass(frozen=True)
class State:
    version: int
    model: str
    dim: int


@dataclass
class Dense:
    ids: StringTable
    vectors: Matrix
    #: the buffer ``vectors`` is the first rows of: a write's new passages go into its spare rows
    room: Matrix | None = field(default=None, repr=False)


class PassageRows:
    """Passage rows read by queries (through their views), held for the graph version they were read
    at: the passages a query returns (and the titles HippoRAG 2 looks at) are mostly those earlier
    queries read. A row is read after its query saw the version, so it is that version's or a later
    one's, which is what a read from the server would give too; a newer version gets rows of its own
    (this process's own writes carry them over, as a write never changes a stored passage). Bounded: the
    oldest go first."""

    def __init__(self, limit: int = PASSAGE_ROWS_MAX) -> None:
        self.limit = limit
        self._rows: dict[str, Passage] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, ids: Sequence[str]) -> dict[str, Passage]:
        with self._lock:
            return {i: self._rows[i] for i in ids if i in self._rows}

    def add(self, rows: dict[str, Passage]) -> None:
        with self._lock:
            self._rows.update(rows)
            while len(self._rows) > self.limit:
                del self._rows[next(iter(self._rows))]


@dataclass
class View:
    """What is held of one graph version; each part is read on first use."""

    version: int
    phrases: PhraseIndex | None = None  # ids and names (its vectors are phrase_vectors)
    phrase_vectors: Matrix | None = None
    #: the buffer ``phrase_vectors`` is the first rows of: a write's new phrases go into its spare rows
    phrase_room: Matrix | None = field(default=None, repr=False)
    passage_counts: dict[str, int] | None = None
    by_name: dict[str, int] | None = None  # phrase name -> position in ``phrases``
    passage_total: int | None = None
    graph: GraphSnapshot | None = None
    dense: Dense | None = None
    facts: FactIndex | None = None
    #: fact id -> row of ``facts``, made on a writer's first need and handed on to the next version
    fact_rows: dict[str, int] | None = field(default=None, repr=False)
    rows: PassageRows = field(default_factory=PassageRows, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def fact_positions(self) -> dict[str, int]:
        """Fact id -> row of ``facts`` (made once; a process that only reads never makes it)."""
        assert self.facts is not None
        with self.lock:
            if self.fact_rows is None or len(self.fact_rows) != len(self.facts.ids):  # none, or handed on
                self.fact_rows = {fact_id: k for k, fact_id in enumerate(self.facts.ids)}
            return self.fact_rows


class Reading:
    """One query's hold on the copy (:meth:`ClientCopy.reading`, made by ``Neo4jStore.view``): the graph
    version and model are read once, on its first use, and every read of the query is served from that
    version's view without asking the server again; so the query sees one version, where calls read one
    by one could each see another. A part the view does not hold yet is read at the server's current
    version, and the query goes on at that version (a later one only if another process committed since
    the query began). A plain object passed along, so a worker thread of the query uses it as is."""

    def __init__(self, copy: ClientCopy, state: State | None = None) -> None:
        self.copy = copy
        self._state = state
        self.view: View | None = None
        self._lock = threading.Lock()

    @property
    def state(self) -> State:
        """The version and model, read on first use (a query that reads nothing of the copy, as a
        search of the server's vector indexes, never asks)."""
        with self._lock:
            if self._state is None:
                self._state = self.copy.state()
            return self._state

    def part(self, name: str) -> View:
        self.copy.used(name)
        with self._lock:
            held = self.view
        if held is not None and getattr(held, name) is not None:
            return held
        view = self.copy._load(name, self.state)
        state = self.state
        with self._lock:
            self.view = view
            if view.version != state.version:
                self._state = State(view.version, state.model, state.dim)
        return view

    def rows(self) -> PassageRows | None:
        """The passage rows held for this query's version; None before its first part."""
        with self._lock:
            return self.view.rows if self.view is not None else None


def _matrix(vectors: list[Any], dim: int) -> Matrix:
    if not vectors:
        return np.zeros((0, dim), dtype=np.float32)
    return np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)


def _written_order(row: dict[str, Any]) -> list[int]:
    """The positions of a read's parallel lists by (``written_in``, ``ids``): the version that wrote each
    node (0 before it was recorded), then id, which is where a copy carried forward by that write appended
    it (phrases, passages, facts alike)."""
    ids, written_in = row["ids"], row["written_in"]
    return sorted(range(len(ids)), key=lambda i: (written_in[i], ids[i]))


def _appended_dense(old: Dense, new: Sequence[PassageRecord]) -> Dense:
    """``old`` then the passages of ``new`` it lacks, in id order (where a read of the new version puts
    them: by the version that wrote each, then id), their vectors in spare rows of the buffer ``old``
    hands on: the held matrix is not copied, and a vector index over it stays valid."""
    fresh = sorted(
        (r.passage.id, r)
        for r in {r.passage.id: r for r in new}.values()
        if old.ids.find(r.passage.id) is None
    )
    if not fresh:
        return old
    rows = np.stack([np.asarray(r.embedding, dtype=np.float32) for _, r in fresh])
    vectors, room, _ = grown(old.vectors, old.room, rows)
    old.room = None  # handed on: the old view never writes past its rows again
    return Dense(old.ids.extended([pid for pid, _ in fresh]), vectors, room)


class ClientCopy:
    """The in-process copy of one namespace (see the module doc). Thread-safe."""

    def __init__(
        self, runner: CypherRunner, namespace: str, vector_search: VectorSearch | None = None
    ) -> None:
        self.runner = runner
        self.namespace = namespace
        #: the IVF indexes of large matrices (the embedded store's, by the same setting), held in memory
        self.indexes = HeldIndexes(vector_search or VectorSearch())
        #: where the indexes persist (``neo4j.copy_cache``: beside the copy's file), else held in memory
        self.index_dir: Path | None = None
        self._view: View | None = None
        self._model: tuple[str, int] | None = None
        #: vectors by id that no held matrix has (this process's writes while its copy is not carried
        #: forward, phrases read for the synonym step), per kind: dropped once a held view's matrix has
        #: them. The others are rows of the held view's matrices, so each vector is held once (by a dict
        #: of vectors beside the matrices, L held its 1.2M phrase and 1.1M fact vectors twice: 3.6 GB)
        self._loose: dict[str, dict[str, Vector]] = {"phrase": {}, "fact": {}}
        #: the parts this process's queries asked for: only those are carried forward by its writes (a
        #: process that only writes, an index run, neither advances nor keeps the graph, the passage
        #: vectors or the facts a copy restored from disk holds: at 1M facts, re-stacking their vectors
        #: took seconds per write, and keeping them 1.6 GB)
        self._used: set[str] = set()
        self._load_lock = threading.Lock()
        self.reads: dict[str, int] = {}  # part -> reads from the server (tests, benchmarks)
        self._joined: dict[tuple[int, GraphJoin, bool], JoinedMatrix] = {}  # one graph version held

    # --- versions and parts ----------------------------------------------------------------------
    def state(self, tx: CypherTransaction | None = None) -> State:
        """The graph version and model, read now (in ``tx`` when given)."""
        rows = (
            tx.run("client_state", namespace=self.namespace)
            if tx is not None
            else self.runner.read("client_state", namespace=self.namespace)
        )
        if not rows:
            raise StoreError(f"namespace {self.namespace!r} has no metadata node: open() the store first")
        row = rows[0]
        return State(int(row["graph_version"]), str(row["embedding_model"]), int(row["embedding_dim"]))

    def used(self, part: str) -> None:
        """Note that a query of this process asked for ``part`` (its writes carry it forward from then)."""
        self._used.add(part)

    def reading(self) -> Reading:
        """One query's reads at the version the server holds on its first read (one round trip)."""
        return Reading(self)

    def forget_vectors(self) -> None:
        """Drop every vector held (after ``set_embeddings``): they are read again."""
        with self._load_lock:
            self._forget()

    def phrase_vectors(self, ids: Sequence[str], *, keep: bool = True) -> dict[str, Vector]:
        """The vectors of the phrases ``ids`` that exist (the synonym step's pending phrases), by id:
        those held (written or read by this process under the namespace's current model: a phrase's
        vector changes only with the model) without a read; the others read (``client_vectors_phrase``)
        and, with ``keep``, held from then on. A phrase gone meanwhile (deleted) is left out."""
        state = self.state()
        with self._load_lock:
            self._use_model(state)
            found = self._held_vectors("phrase", self._view, ids)
        missing = [i for i in dict.fromkeys(ids) if i not in found]
        if missing:
            self._count("phrase_vectors")
            read: dict[str, Vector] = {}
            query = "client_vectors_phrase"
            self.runner.transaction(
                functools.partial(self._read_vectors, query=query, ids=missing, held=read, dim=state.dim),
                write=False,
            )
            found.update(read)
            if keep:
                with self._load_lock:
                    if self._model == (state.model, state.dim):
                        loose = self._loose["phrase"]
                        for phrase_id, vector in read.items():
                            loose.setdefault(phrase_id, vector)
        return found

    def _use_model(self, state: State) -> None:
        """Drop every vector and view held when the namespace's model is not the one they were read
        under (call with the load lock held)."""
        if self._model != (state.model, state.dim):
            self._forget()
            self._model = (state.model, state.dim)

    def _forget(self) -> None:
        for loose in self._loose.values():
            loose.clear()
        self._view = None

    def _held_vectors(self, kind: str, view: View | None, ids: Sequence[str]) -> dict[str, Vector]:
        """The vectors of ``ids`` (phrases or facts) this copy holds, by id: the loose ones, then rows of
        ``view``'s matrix (a vector never changes under one model: its id is a digest of its text)."""
        loose = self._loose[kind]
        found = {i: loose[i] for i in ids if i in loose}
        found.update(self._rows_of(kind, view, [i for i in ids if i not in found]))
        return found

    @staticmethod
    def _rows_of(kind: str, view: View | None, ids: Sequence[str]) -> dict[str, Vector]:
        """The rows of ``view``'s phrase or fact matrix that hold ``ids`` (those it has), by id."""
        if not ids or view is None:
            return {}
        if kind == "phrase" and view.phrases is not None and view.phrase_vectors is not None:
            matrix = view.phrase_vectors
            positions = view.phrases.ids.find_all(ids)
        elif kind == "fact" and view.facts is not None:
            matrix, known = view.facts.vectors, view.facts.ids
            if len(ids) > len(known) // 16:  # many (a read of the facts): through a dict of them all
                index = {fact_id: k for k, fact_id in enumerate(known)}
            else:  # a few (a write's facts): through the view's own dict, kept for the writes to come
                index = view.fact_positions()
            positions = [index.get(i) for i in ids]
        else:
            return {}
        return {i: matrix[k] for i, k in zip(ids, positions, strict=True) if k is not None}

    def _keep(self, view: View) -> None:
        """Hold ``view`` (call with the load lock held); the loose vectors its matrices have go."""
        self._view = view
        for kind, loose in self._loose.items():
            for vector_id in self._rows_of(kind, view, list(loose)):
                del loose[vector_id]

    def _load(self, name: str, state: State) -> View:
        view = self._view
        if view is not None and view.version == state.version and getattr(view, name) is not None:
            return view
        with self._load_lock:
            self._use_model(state)
            for attempt in range(1, MAX_READS + 1):
                read = functools.partial(
                    self._read,
                    base=self._view if self._view is not None else View(-1),
                    name=name,
                    strict=attempt < MAX_READS,
                )
                found, kept = self.runner.transaction(read, write=False)
                if kept:
                    self._keep(found)
                    return found
            self._count("used_once")
            return found  # writers kept committing: use this read once, never keep it

    def _read(self, tx: CypherTransaction, base: View, name: str, strict: bool = True) -> tuple[View, bool]:
        before = self.state(tx)
        same = base.version == before.version
        view = dataclasses.replace(base, lock=threading.Lock()) if same else View(before.version)
        if view.phrases is None:
            self._read_phrases(tx, view)
        if name == "phrase_vectors" and view.phrase_vectors is None:
            self._read_phrase_vectors(tx, view, base, before.dim)
        elif name == "graph" and view.graph is None:
            if not self._read_graph(tx, view, strict=strict):
                return view, False  # torn: read again
        elif name == "dense" and view.dense is None:
            self._read_dense(tx, view, before.dim)
        elif name == "passage_total" and view.passage_total is None:
            rows = tx.run("read_passage_count", namespace=self.namespace)
            view.passage_total = int(rows[0]["passages"]) if rows else 0
        elif name == "facts" and view.facts is None:
            self._read_facts(tx, view, base, before.dim)
        after = self.state(tx)
        return view, after == before

    def _count(self, part: str) -> None:
        self.reads[part] = self.reads.get(part, 0) + 1

    def _batches(
        self, tx: CypherTransaction, query: str, ids: Sequence[str], dim: int
    ) -> Iterator[tuple[list[str], Matrix]]:
        """The vectors of ``ids`` read ``VECTOR_BATCH`` ids per round trip: per returned row, the ids
        that have one (a node without one, or gone, is left out by the statement) and their matrix."""
        for start in range(0, len(ids), VECTOR_BATCH):
            for row in tx.run(
                query, namespace=self.namespace, ids=list(ids[start : start + VECTOR_BATCH]), plain=True
            ):
                found, vectors = row["ids"], row["vectors"]
                if len(found) != len(vectors):  # rows paired by position: never pair them shifted
                    raise StoreError(f"{query} returned {len(found)} ids and {len(vectors)} vectors")
                if found:
                    yield [str(i) for i in found], _matrix(vectors, dim)

    def _read_vectors(
        self, tx: CypherTransaction, query: str, ids: Sequence[str], held: dict[str, Vector], dim: int
    ) -> None:
        """Read the vectors of ``ids`` not in ``held`` into it (a node without one, or gone, is left out)."""
        for found, matrix in self._batches(tx, query, [i for i in ids if i not in held], dim):
            held.update(zip(found, matrix, strict=True))

    def _fill(
        self, tx: CypherTransaction, query: str, ids: list[str], positions: Sequence[int], out: Matrix
    ) -> npt.NDArray[np.bool_]:
        """Read the vectors of ``ids[k]`` for ``k`` in ``positions`` a batch at a time straight into
        ``out[k]`` (no second copy of them while reading); which rows were found (a node without a
        vector, or deleted since its id was read, is not)."""
        found_rows = np.zeros(len(ids), dtype=np.bool_)
        for start in range(0, len(positions), VECTOR_BATCH):  # a dict of one batch's ids, not of them all
            at = {ids[k]: k for k in positions[start : start + VECTOR_BATCH]}
            for found, matrix in self._batches(tx, query, list(at), out.shape[1]):
                rows = [at[i] for i in found]
                out[rows] = matrix
                found_rows[rows] = True
        return found_rows

    def _vectors(
        self, tx: CypherTransaction, query: str, ids: list[str], held: dict[str, Vector], dim: int
    ) -> Matrix:
        """The vectors of ``ids`` in order: the ``held`` ones copied, the others read into their rows
        (:meth:`_fill`); every one must exist."""
        out = np.empty((len(ids), dim), dtype=np.float32)
        missing: list[int] = []
        for k, vector_id in enumerate(ids):
            vector = held.get(vector_id)
            if vector is None:
                missing.append(k)
            else:
                out[k] = vector
        absent = len(missing) - int(self._fill(tx, query, ids, missing, out).sum())
        if absent:
            raise StoreError(f"{absent} nodes of namespace {self.namespace!r} have no embedding")
        return out

    def _present_vectors(
        self, tx: CypherTransaction, query: str, ids: list[str], dim: int
    ) -> tuple[list[str], Matrix]:
        """The ids of ``ids`` that still have a vector, in order, and their vectors read into their rows
        (:meth:`_fill`; a node deleted since its id was read is left out); the matrix is copied only to
        drop such rows (at L the passages' is 184 MB: held once, not once per batch and again stacked)."""
        out = np.empty((len(ids), dim), dtype=np.float32)
        present = self._fill(tx, query, ids, range(len(ids)), out)
        if present.all():
            return ids, out
        return [i for i, kept in zip(ids, present.tolist(), strict=True) if kept], out[present]

    def _read_phrases(self, tx: CypherTransaction, view: View) -> None:
        self._count("phrases")
        row = tx.run("client_phrases", namespace=self.namespace, plain=True)[0]
        # by the version that wrote each, then id: where a copy carried forward by that write put it
        order = _written_order(row)
        ids = [str(row["ids"][i]) for i in order]
        names = [str(row["names"][i]) for i in order]
        no_vectors = np.zeros((len(ids), 0), dtype=np.float32)
        view.phrases = PhraseIndex(StringTable.of(ids, searchable=True), StringTable.of(names), no_vectors)
        view.passage_counts = {ids[k]: int(row["passage_counts"][i] or 0) for k, i in enumerate(order)}
        view.by_name = {name: k for k, name in enumerate(names)}

    def _read_phrase_vectors(self, tx: CypherTransaction, view: View, base: View, dim: int) -> None:
        assert view.phrases is not None
        ids = list(view.phrases.ids)
        held = self._held_vectors("phrase", base, ids)
        view.phrase_vectors = self._vectors(tx, "client_vectors_phrase", ids, held, dim)

    def _read_dense(self, tx: CypherTransaction, view: View, dim: int) -> None:
        self._count("dense")
        found = tx.run("client_passage_ids", namespace=self.namespace, plain=True)[0]
        # by the version that wrote each, then id: where a copy carried forward by that write put it
        order = [str(found["ids"][i]) for i in _written_order(found)]
        # a passage deleted since its id was read is left out (a commit in between: _read reads again)
        ids, vectors = self._present_vectors(tx, "client_vectors_passage", order, dim)
        view.dense = Dense(StringTable.of(ids, searchable=True), vectors)

    def _read_graph(self, tx: CypherTransaction, view: View, *, strict: bool = True) -> bool:
        """The embedded store's GraphSnapshot (without passage vectors: see :meth:`dense_passage_scores`).

        Neo4j reads at READ COMMITTED, so a commit landing between the phrase read and the mention or
        edge reads makes them name a phrase (or passage) this read has no row for: the read is torn.
        ``strict``: then nothing is set and False returned (read again). Otherwise the rows naming such a
        node are left out: the graph of the nodes read, with the mentions and edges among them that the
        statements saw (each statement's rows are committed ones; the ones left out belong to commits
        after the phrase read). That is what any query of the server sees at READ COMMITTED: a read of
        what was committed while it ran. Such a read is used once and never kept (``_load``)."""
        self._count("graph")
        assert view.phrases is not None
        phrases = view.phrases
        n_phrases = len(phrases.ids)
        pos = {pid: i for i, pid in enumerate(phrases.ids)}
        found = tx.run("client_passage_ids", namespace=self.namespace, plain=True)[0]
        passage_list = [str(found["ids"][i]) for i in _written_order(found)]
        mentions = self._paged(tx, "client_mentions", passage_list)
        passage_position = {pid: i for i, pid in enumerate(passage_list)}
        at = passage_position.get
        m_rows = np.asarray([at(str(p), -1) for p in mentions["passage_ids"]], dtype=np.int64)
        m_cols = np.asarray([pos.get(str(p), -1) for p in mentions["phrase_ids"]], dtype=np.int64)
        m_keep = (m_rows >= 0) & (m_cols >= 0)
        edges = self._paged(tx, "client_edges", list(pos))  # the ids, decoded once for ``pos``
        # relation edges first, then synonyms: each pair's entry summed as the embedded store sums it
        relation = np.asarray(edges["relation"], dtype=bool)
        sources = np.asarray([pos.get(str(s), -1) for s in edges["sources"]], dtype=np.int64)
        targets = np.asarray([pos.get(str(t), -1) for t in edges["targets"]], dtype=np.int64)
        e_keep = (sources >= 0) & (targets >= 0)
        torn = not (m_keep.all() and e_keep.all())
        if torn and strict:
            return False
        m = compact(
            sp.csr_matrix(
                (np.asarray(mentions["counts"], dtype=np.float64)[m_keep], (m_rows[m_keep], m_cols[m_keep])),
                shape=(len(passage_list), n_phrases),
            )
        )
        weights = np.asarray(edges["weights"], dtype=np.float64)
        n_relation = int(edges["relation_edges"] or 0)
        if torn:  # the relation edges among the nodes read
            n_relation -= int((relation & ~e_keep).sum())
            relation, weights = relation[e_keep], weights[e_keep]
            sources, targets = sources[e_keep], targets[e_keep]
        order = np.argsort(~relation, kind="stable")
        sources, targets, weights = sources[order], targets[order], weights[order]
        adjacency = canonical_adjacency(sources, targets, weights, n_relation, n_phrases)
        # strengths as the embedded store's build computes them
        view.graph = GraphSnapshot.derived(
            phrases,
            StringTable.of(passage_list, searchable=True),
            m,
            np.bincount(m.indices, minlength=n_phrases).astype(np.int32),
            adjacency,
            n_relation,
            len(sources) - n_relation,
        )
        return True

    def _paged(self, tx: CypherTransaction, query: str, ids: Sequence[str]) -> dict[str, Any]:
        """The parallel lists of ``query`` over ``ids``, ``GRAPH_BATCH`` ids a statement (each collect
        stays within the server's transaction memory), joined; its counts summed."""
        out: dict[str, Any] = {}
        for start in range(0, max(len(ids), 1), GRAPH_BATCH):
            batch = list(ids[start : start + GRAPH_BATCH])
            row = tx.run(query, namespace=self.namespace, ids=batch, plain=True)[0]
            for key, value in row.items():
                if isinstance(value, list):
                    out.setdefault(key, []).extend(value)
                else:
                    out[key] = out.get(key, 0) + (value or 0)
        return out

    def _read_facts(self, tx: CypherTransaction, view: View, base: View, dim: int) -> None:
        self._count("facts")
        row = tx.run("client_facts", namespace=self.namespace, plain=True)[0]
        # by the version that gave each its vector, then id: where a copy carried forward by that write
        # appended it (the matrix and its vector index then only grow at the end)
        order = _written_order(row)
        ids = [str(row["ids"][i]) for i in order]
        view.facts = FactIndex(
            ids=ids,
            subject_ids=[str(row["subject_ids"][i]) for i in order],
            predicates=[str(row["predicates"][i]) for i in order],
            object_ids=[str(row["object_ids"][i]) for i in order],
            vectors=self._vectors(tx, "client_vectors_fact", ids, self._held_vectors("fact", base, ids), dim),
        )

    # --- the on-disk cache (copy_cache.py): separate from the reads above --------------------------------
    def held(self) -> tuple[State, View] | None:
        """The view held (one consistent graph version) and the model it was read under, to be written
        to the on-disk cache; None when nothing is held."""
        with self._load_lock:
            if self._view is None or self._model is None:
                return None
            return State(self._view.version, *self._model), self._view

    def restore(self, state: State, view: View) -> bool:
        """Hold ``view`` (the parts of graph version ``state`` under its model, loaded from the on-disk
        cache) as if read from the server: a query at that version is served from it and reads only
        the parts it lacks; a newer version is read from the server as always. False (nothing changed)
        when the copy already holds that version or a newer one."""
        with self._load_lock:
            if self._view is not None and self._view.version >= view.version:
                return False
            self._use_model(state)
            self._keep(view)
            self._count("restored")
            return True

    # --- brought forward by this process's own writes ---------------------------------------------------
    def advance(
        self,
        version: int,
        phrases: Sequence[PhraseRecord] = (),
        records: Sequence[PassageRecord] = (),
        written: Sequence[str] = (),
        *,
        relation_edges: int | None = 0,
        synonyms: Sequence[tuple[str, str, float]] | None = (),
        model: tuple[str, int] | None = None,
    ) -> bool:
        """This process's write committed graph ``version`` (``write_passages``: ``phrases`` given, the
        passages ``written`` of ``records``; ``write_synonyms``: nothing). When the copy holds version
        - 1, the new view is that one plus the rows written: every writer bumps the version by one under
        the metadata node's write lock, so nothing else committed in between. Phrases (ids, names,
        passage counts), the passage count, the passage vectors, the facts and the graph (mentions,
        RELATION weights: one per new (passage, fact) statement; the SYNONYM edges ``synonyms`` the
        write inserted; ``relation_edges``: RELATION edges it made, for the edge count) are brought
        forward in process. A part that cannot be (``None`` given) is read again on first use. False
        when the copy was not at version - 1: then only the vectors written are kept, when ``model``
        (the writer's embedding model and dimension) is the copy's or the copy has none yet (a copy
        that later finds another model on the server drops them)."""
        with self._load_lock:
            if model is not None and self._model in (None, model):
                self._model = model
                self._keep_vectors(phrases, records, written)
            old = self._view
            if old is None or old.version != version - 1:
                return False
            view = View(version)
            new = [r for r in records if r.passage.id in set(written)]
            if old.phrases is not None and old.passage_counts is not None:
                self._advance_phrases(old, view, phrases, new)
            if old.passage_total is not None:
                view.passage_total = old.passage_total + len(new)
            used = self._used
            if old.dense is not None and "dense" in used and all(r.embedding is not None for r in new):
                view.dense = _appended_dense(old.dense, new)
            if old.facts is not None and "facts" in used:
                self._advance_facts(old, view, new)
            if (
                old.graph is not None
                and "graph" in used
                and view.phrases is not None
                and relation_edges is not None
                and synonyms is not None
            ):
                view.graph = self._advance_graph(old.graph, phrases, new, relation_edges, synonyms)
            view.rows = old.rows  # a write never changes a stored passage
            self._keep(view)
            self._count("advanced")
            return True

    @staticmethod
    def _advance_graph(
        old: GraphSnapshot,
        phrases: Sequence[PhraseRecord],
        new: Sequence[PassageRecord],
        relation_edges: int,
        synonyms: Sequence[tuple[str, str, float]],
    ) -> GraphSnapshot:
        """``old`` with the written rows, by the engine's one :func:`~.memory.delta.apply`: the new phrases
        and passages after the old ones, by id (as :meth:`_read_graph` orders a read of the new version),
        one RELATION weight per new (passage, fact) statement, the SYNONYM edges the write inserted."""
        held = old.phrases.ids
        added = sorted({p.id: p.name for p in phrases if held.find(p.id) is None}.items())
        new = sorted(new, key=lambda r: r.passage.id)  # a read of the new version orders them by id
        relations: dict[tuple[str, str], int] = {}
        for record in new:
            for fact in {f.id: f for f in record.facts}.values():  # one statement per (passage, fact)
                pair = (fact.subject_id, fact.object_id)
                relations[pair] = relations.get(pair, 0) + 1
        changes = delta.WriteDelta(
            phrases=added,
            passages=[r.passage.id for r in new],
            mentions=[
                (r.passage.id, phrase_id, float(count))
                for r in new
                for phrase_id, count in sorted(r.mentions.items())
            ],
            relations=[(s, o, w) for (s, o), w in relations.items()],
            synonyms=list(synonyms),
        )
        return delta.apply(old, changes, delta.History(new_relation_edges=relation_edges), 0)

    def _keep_vectors(
        self, phrases: Sequence[PhraseRecord], records: Sequence[PassageRecord], written: Sequence[str]
    ) -> None:
        loose = self._loose["phrase"]
        for phrase in phrases:
            if phrase.embedding is not None:
                loose.setdefault(phrase.id, np.asarray(phrase.embedding, dtype=np.float32))
        if "facts" not in self._used:
            return
        done, loose = set(written), self._loose["fact"]
        for record in records:
            if record.passage.id in done:
                for fact in record.facts:
                    if fact.embedding is not None:
                        loose.setdefault(fact.id, np.asarray(fact.embedding, dtype=np.float32))

    def _advance_phrases(
        self, old: View, view: View, phrases: Sequence[PhraseRecord], new: Sequence[PassageRecord]
    ) -> None:
        assert old.phrases is not None and old.passage_counts is not None
        held = old.phrases
        added = {p.id: p for p in phrases if held.position(p.id) is None}
        if any(p.embedding is None for p in added.values()):
            return  # read again
        counts = dict(old.passage_counts)
        for phrase_id in added:
            counts[phrase_id] = 0
        for record in new:
            for phrase_id in record.mentions:
                counts[phrase_id] = counts.get(phrase_id, 0) + 1
        if added:  # after the old ones, by id: where a read of the new version puts them
            fresh = sorted(added)
            names = [added[i].name for i in fresh]
            view.phrases = PhraseIndex(
                held.ids.extended(fresh),
                held.names.extended(names),
                np.zeros((len(held.ids) + len(fresh), 0), dtype=np.float32),
            )
            if old.phrase_vectors is not None:  # appended in place, not stacked again (1M: 1.5 GB a write)
                rows = np.stack([np.asarray(added[i].embedding, dtype=np.float32) for i in fresh])
                view.phrase_vectors, view.phrase_room, _ = grown(old.phrase_vectors, old.phrase_room, rows)
                old.phrase_room = None  # handed on: the old view never writes past its rows again
            by_name = dict(old.by_name or {})
            by_name.update((name, len(held.ids) + k) for k, name in enumerate(names))
            view.by_name = by_name
        else:
            view.phrases, view.by_name = held, old.by_name
            view.phrase_vectors, view.phrase_room, old.phrase_room = old.phrase_vectors, old.phrase_room, None
        view.passage_counts = counts

    @staticmethod
    def _advance_facts(old: View, view: View, new: Sequence[PassageRecord]) -> None:
        """The facts of ``new`` that ``old`` lacks, appended in id order (where a read of the new version
        puts them: by the version that gave each its vector, then id; :meth:`FactIndex.appended`), where
        inserting them in id order copied the held matrix (1.6 GB at 1M facts) and made its vector index
        train again at the next query."""
        facts = old.facts
        assert facts is not None
        known = old.fact_positions()
        added: dict[str, FactRecord] = {}
        for record in new:
            for fact in record.facts:
                if fact.id not in known and fact.embedding is not None:
                    added.setdefault(fact.id, fact)
        if not added:
            view.facts, view.fact_rows = facts, known
            old.fact_rows = None
            return
        fresh = [added[i] for i in sorted(added)]
        view.facts = facts.appended(
            [(f.id, f.subject_id, f.predicate, f.object_id) for f in fresh],
            np.stack([np.asarray(f.embedding, dtype=np.float32) for f in fresh]),
        )
        n = len(facts.ids)
        known.update((f.id, n + k) for k, f in enumerate(fresh))
        view.fact_rows, old.fact_rows = known, None

    # --- joined with your graph, and passage rows ------------------------------------------------------
    def joined(
        self, graph: GraphSnapshot, version: int, join: GraphJoin, with_passages: bool
    ) -> JoinedMatrix:
        """``graph`` (of ``version``) joined with your nodes and relationships (read with
        ``local_joined_edges``, once per graph version) by ``graph.joined.join_adjacency``,
        as the embedded store joins."""
        key = (version, join, with_passages)
        with self._load_lock:
            cached = self._joined.get(key)
        if cached is not None:
            return cached
        rows = self.runner.read("local_joined_edges", namespace=self.namespace, types=list(join.rel_types))
        self._count("joined")
        edges = JoinEdges(
            version,
            [(str(r["phrase_id"]), str(r["source"]), float(r["score"])) for r in rows if r["phrase_id"]],
            [(str(r["source"]), str(r["target"])) for r in rows if not r["phrase_id"]],
        )
        base = graph.passage_graph() if with_passages else graph.adjacency
        found = {p: graph.phrases.position(p) for p in {p for p, _, _ in edges.same_as}}
        joined = join_adjacency(base, {p: i for p, i in found.items() if i is not None}, edges)
        with self._load_lock:  # one version held
            self._joined = {k: v for k, v in self._joined.items() if k[0] == version}
            self._joined[key] = joined
        return joined

    def read_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        rows = self.runner.read_batched("read_passages", "ids", list(ids), namespace=self.namespace)
        return {
            str(r["id"]): Passage(
                id=str(r["id"]),
                text=str(r["text"]),
                title=r["title"],
                metadata=json.loads(r["metadata_json"]) if r["metadata_json"] else {},
            )
            for r in rows
        }


class CopyParts:
    """The parts of one query's version (its :class:`Reading`) for :class:`~.memory.view.MemoryView`:
    every part from the copy (read on first use), passage rows held per version (read once)."""

    def __init__(self, copy: ClientCopy, reading: Reading) -> None:
        self.copy = copy
        self.reading = reading

    @property
    def version(self) -> int:
        return self.reading.state.version

    def phrases(self) -> tuple[PhraseIndex, Callable[[set[str]], Mapping[str, int]]]:
        view = self.reading.part("phrase_vectors")
        index, counts, matrix = view.phrases, view.passage_counts, view.phrase_vectors
        assert index is not None and counts is not None and matrix is not None
        return PhraseIndex(index.ids, index.names, matrix), lambda ids: {i: counts.get(i, 0) for i in ids}

    def graph(self) -> tuple[GraphSnapshot, AbstractContextManager[Any]]:
        view = self.reading.part("graph")
        assert view.graph is not None
        return view.graph, view.lock  # the lock guards the graph's caches (PPR)

    def facts(self) -> tuple[FactIndex, PhraseIndex]:
        view = self.reading.part("facts")
        assert view.facts is not None and view.phrases is not None
        return view.facts, view.phrases

    def dense(self) -> tuple[StringTable, Matrix]:
        dense = self.reading.part("dense").dense
        assert dense is not None
        return dense.ids, dense.vectors

    def candidates(self, kind: str, matrix: Matrix) -> queries.Candidates | None:
        return self.copy.indexes.candidates(kind, matrix, self.version, *self._index_place(kind))

    def batch_candidates(self, kind: str, matrix: Matrix) -> queries.BatchCandidates | None:
        return self.copy.indexes.batch_candidates(kind, matrix, self.version, *self._index_place(kind))

    def _index_place(self, kind: str) -> tuple[Path, dict[str, object]] | tuple[()]:
        """Where the ``kind`` index persists and what it must match (its fingerprint checks the rows)."""
        if self.copy.index_dir is None:
            return ()
        state = self.reading.state
        return self.copy.index_dir / kind, index_meta(kind, state.model, state.dim)

    def joined(self, graph: GraphSnapshot, join: GraphJoin, with_passages: bool) -> JoinedMatrix:
        view = self.reading.part("graph")
        assert view.graph is graph
        return self.copy.joined(graph, view.version, join, with_passages)

    def phrases_by_name(self, names: Sequence[str]) -> dict[str, PhraseHit]:
        view = self.reading.part("phrases")
        index, by_name, counts = view.phrases, view.by_name, view.passage_counts
        assert index is not None and by_name is not None and counts is not None
        found: dict[str, PhraseHit] = {}
        for name in names:
            k = by_name.get(name)
            if k is not None:
                phrase_id = index.ids[k]
                found[name] = PhraseHit(phrase_id, name, 1.0, counts.get(phrase_id, 0))
        return found

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        """The rows held for this version, and one read of the others (held from then on)."""
        held = self.reading.rows()
        if held is None:
            return self.copy.read_passages(ids)
        found = held.get(ids)
        missing = [i for i in ids if i not in found]
        if missing:
            read = self.copy.read_passages(missing)
            held.add(read)
            found.update(read)
        return {i: found[i] for i in ids if i in found}

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]:
        return {pid: p.title for pid, p in self.get_passages(list(dict.fromkeys(ids))).items()}

    def passage_count(self) -> int:
        view = self.reading.part("passage_total")
        assert view.passage_total is not None
        return view.passage_total
