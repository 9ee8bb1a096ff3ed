"""One graph version held in process, for both stores: the embedded store's snapshot and the Neo4j
store's copy of a namespace are this, built once per graph version (and carried forward by writes:
:mod:`.delta`).

Everything is flat numpy arrays (ids and names in :class:`StringTable`, vectors, CSR matrices with int32
indices), so a snapshot can be persisted beside SQLite and memory-mapped on the next open
(``stores/embedded/snapshot_files.py``) instead of rebuilt from SQL (102 s at 1M phrases).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from hipporag_neo4j.graph.joined import JoinedMatrix
from hipporag_neo4j.graph.ppr import (
    FactorisedPpr,
    forward_push,
    node_strengths,
    symmetric_adjacency,
)
from hipporag_neo4j.stores.base import Matrix, WalkParams
from hipporag_neo4j.stores.memory.knn import top_positions
from hipporag_neo4j.stores.memory.rows import Carry, carried_strength, carried_walk
from hipporag_neo4j.stores.memory.scores import PassageScores, same_table
from hipporag_neo4j.stores.memory.spare_rows import grown
from hipporag_neo4j.stores.memory.strings import StringTable

#: Exact PPR by factorisation (ppr.FactorisedPpr) on phrase graphs up to this size, from the query after
#: these many on one graph version, unless its factors hold more than this many times the graph's
#: non-zeros (MuSiQue: 12.6x).
FACTORISE_MAX_PHRASES = 50_000
FACTORISE_AFTER_QUERIES = 3
FACTORISE_MAX_FILL = 40


class PhraseIndex:
    """Phrase ids, names and vectors; grows in place as phrases are written (no reload per batch).

    The vectors live in a buffer with spare room, so appending a batch copies the batch, not the matrix
    (``np.vstack`` per batch copied 1.5 GiB at 1M phrases); a memory-mapped (read-only) snapshot file
    is grown over a copy-on-write mapping of the file where the platform allows (:func:`spare_rows.grown`),
    else copied once, on the first append.
    """

    def __init__(
        self, ids: StringTable, names: StringTable, vectors: Matrix, rows: int | None = None
    ) -> None:
        self.ids = ids
        self.names = names
        self._buffer = vectors  # the first ``rows`` rows (default: all) are the index's, the rest spare
        self._n = len(vectors) if rows is None else rows
        self.copies = 0  # appends that copied the matrix into a new buffer (tests)

    @property
    def vectors(self) -> Matrix:
        return self._buffer[: self._n]

    @classmethod
    def taking_over(cls, ids: StringTable, names: StringTable, other: PhraseIndex) -> PhraseIndex:
        """An index of ``ids`` and ``names`` over ``other``'s vectors and their spare rows, which it takes
        over: appending to it later copies nothing while the room lasts (``other`` must not be appended
        to again; its own rows stay as they are)."""
        index = cls(ids, names, other._buffer)
        index._n = other._n
        other._buffer = other._buffer[: other._n]  # no spare room left to it
        return index

    def carried(self, ids: StringTable, names: StringTable, n_base: int, rows: Matrix) -> PhraseIndex:
        """An index of ``ids`` and ``names`` over this index's first ``n_base`` vectors then ``rows``
        (a snapshot carried forward by another process's write); it takes over this index's spare rows
        when this index holds exactly ``n_base`` rows, and copies nothing of a mapped file."""
        own = self._n == n_base
        matrix, buffer, copied = grown(self._buffer[:n_base], self._buffer if own else None, rows)
        if own:
            self._buffer = self._buffer[:n_base]  # no spare room left to it
        index = PhraseIndex(ids, names, buffer, len(matrix))
        index.copies = int(copied)
        return index

    def position(self, phrase_id: str) -> int | None:
        return self.ids.find(phrase_id)

    def append(self, ids: list[str], names: list[str], vectors: Matrix) -> None:
        if not len(ids):
            return
        matrix, self._buffer, copied = grown(self.vectors, self._buffer, vectors)
        self._n = len(matrix)
        self.copies += int(copied)
        self.ids.append(ids)
        self.names.append(names)

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        ids, id_offsets, id_order = self.ids.arrays()
        names, name_offsets, _ = self.names.arrays()
        assert id_order is not None
        return {
            "phrase_ids": ids,
            "phrase_id_offsets": id_offsets,
            "phrase_id_order": id_order,
            "phrase_names": names,
            "phrase_name_offsets": name_offsets,
            "phrase_vectors": self.vectors,
        }

    @classmethod
    def from_arrays(cls, a: dict[str, npt.NDArray[Any]]) -> PhraseIndex:
        return cls(
            StringTable(a["phrase_ids"], a["phrase_id_offsets"], a["phrase_id_order"]),
            StringTable(a["phrase_names"], a["phrase_name_offsets"]),
            a["phrase_vectors"],
        )


@dataclass
class FactIndex:
    """Fact vectors with their subject and object phrases, for HippoRAG 2's fact retrieval."""

    ids: list[str]
    subject_ids: list[str]
    predicates: list[str]
    object_ids: list[str]
    vectors: Matrix
    #: the largest fact key (embedded or not) the index was read up to: later keys are appended facts
    last_key: int = 0
    #: the vectors' buffer with spare rows past ``vectors`` (only the newest index of a lineage owns it)
    _buffer: Matrix | None = field(default=None, repr=False)

    @classmethod
    def of(
        cls, rows: Sequence[Sequence[Any]], vectors: Matrix, last_key: int = 0, buffer: Matrix | None = None
    ) -> FactIndex:
        """The index of (id, subject id, predicate, object id, ...) ``rows`` and their ``vectors``."""
        ids, subjects, predicates, objects = ([r[c] for r in rows] for c in range(4))
        return cls(ids, subjects, predicates, objects, vectors, last_key, buffer)

    def appended(
        self, rows: Sequence[Sequence[Any]], vectors: Matrix, last_key: int | None = None
    ) -> FactIndex:
        """This index, then the (id, subject id, predicate, object id, ...) ``rows`` and their
        ``vectors``: what a write carries forward on both stores (the embedded store's facts in key order,
        the Neo4j copy's in the order a read of the new version puts them). The vectors go into spare rows
        of the buffer this index hands on (its own rows stay as they are, and an index over them stays
        valid: the new rows are its tail), so a run of small writes copies the matrix only as it grows."""
        # nothing to append: the same matrix, and its spare rows handed on all the same
        matrix, buffer = self.vectors, self._buffer
        if len(rows):
            matrix, buffer, _ = grown(self.vectors, self._buffer, np.asarray(vectors, dtype=np.float32))
        self._buffer = None  # handed on: this index never writes past its rows again
        return FactIndex(
            ids=self.ids + [r[0] for r in rows],
            subject_ids=self.subject_ids + [r[1] for r in rows],
            predicates=self.predicates + [r[2] for r in rows],
            object_ids=self.object_ids + [r[3] for r in rows],
            vectors=matrix,
            last_key=self.last_key if last_key is None else last_key,
            _buffer=buffer,
        )


def canonical_adjacency(
    sources: npt.NDArray[np.int64],
    targets: npt.NDArray[np.int64],
    weights: npt.NDArray[np.float64],
    n_relation: int,
    n_phrases: int,
) -> sp.csr_matrix:
    """The phrase graph from its first ``n_relation`` edges (RELATION counts) and the rest (SYNONYM
    scores): each entry is ``R + S`` rounded once, where ``R`` is the exact (integer) sum of the relation
    counts between the two phrases in either direction and ``S`` the pair's one synonym score. Summing
    every parallel edge in one pass would round in an order that depends on the sort of each row, so a
    snapshot brought forward by a write batch (``snapshot_delta``) could differ from a rebuild in the last
    bit; this order it can reproduce exactly."""
    r, s = slice(0, n_relation), slice(n_relation, None)
    relation = symmetric_adjacency(sources[r], targets[r], weights[r], n_phrases)
    synonym = symmetric_adjacency(sources[s], targets[s], weights[s], n_phrases)
    return compact(sp.csr_matrix(relation + synonym))


def _csr(
    data: npt.NDArray[Any], indices: npt.NDArray[Any], indptr: npt.NDArray[Any], shape: tuple[int, int]
) -> sp.csr_matrix:
    """A CSR matrix over the given arrays without copying them (memory-mapped arrays stay mapped)."""
    return sp.csr_matrix((data, indices, indptr), shape=shape, copy=False)


def compact(matrix: sp.csr_matrix) -> sp.csr_matrix:
    """int32 indices where they fit (scipy picks int64 for large inputs)."""
    if matrix.nnz < 2**31 and max(matrix.shape) < 2**31:
        matrix.indices = matrix.indices.astype(np.int32, copy=False)
        matrix.indptr = matrix.indptr.astype(np.int32, copy=False)
    return matrix


def walk_adjacency(adjacency: sp.csr_matrix, mentions: sp.csr_matrix) -> sp.csr_matrix:
    """HippoRAG 2's phrase + passage graph: ``[[adjacency, L.T], [L, 0]]`` with ``L`` the mentions'
    pattern at weight 1 (passage ``p`` is node ``n_phrases + p``). Laid out as ``sp.bmat`` lays it out
    (each phrase row: its phrase entries, then its passages in order; each passage row: its phrases),
    the same arrays bit for bit, but copied into place row block by row block: no coordinate format and
    no sort, so carrying a snapshot forward costs a few passes over the arrays (``sp.bmat`` took most of
    the first query after a write at 100k phrases). Both inputs must have sorted indices (every
    snapshot's do)."""
    n, n_passages = adjacency.shape[0], mentions.shape[0]
    linked = mentions.tocsc()  # per phrase, the passages that mention it, in order
    len_a = np.diff(adjacency.indptr).astype(np.int64)
    len_l = np.diff(linked.indptr).astype(np.int64)
    indptr = np.zeros(n + n_passages + 1, dtype=np.int64)
    np.cumsum(len_a + len_l, out=indptr[1 : n + 1])
    indptr[n + 1 :] = indptr[n] + np.cumsum(np.diff(mentions.indptr))
    nnz = int(indptr[-1])
    index_type = np.int32 if max(nnz, n + n_passages) < 2**31 else np.int64
    indices: npt.NDArray[Any] = np.empty(nnz, dtype=index_type)
    data = np.empty(nnz, dtype=np.float64)
    # each phrase row: its adjacency entries at the row's start, then its passages
    at = np.arange(adjacency.nnz, dtype=np.int64)
    at += np.repeat(indptr[:n] - adjacency.indptr[:-1], len_a)
    indices[at] = adjacency.indices
    data[at] = adjacency.data
    at = np.arange(linked.nnz, dtype=np.int64)
    at += np.repeat(indptr[:n] + len_a - linked.indptr[:-1], len_l)
    del len_a, len_l
    indices[at] = linked.indices
    indices[at] += n
    data[at] = 1.0
    del at, linked
    start = int(indptr[n])
    indices[start:] = mentions.indices
    data[start:] = 1.0
    return sp.csr_matrix(
        (data, indices, indptr.astype(index_type, copy=False)),
        shape=(n + n_passages, n + n_passages),
        copy=False,
    )


@dataclass
class GraphSnapshot:
    """Everything retrieval needs, as arrays indexed by phrase / passage position."""

    phrases: PhraseIndex
    passage_ids: StringTable
    passage_vectors: Matrix
    mentions: sp.csr_matrix  # passages x phrases, occurrence counts
    passage_counts: npt.NDArray[np.int32]  # per phrase
    adjacency: sp.csr_matrix  # phrases x phrases, symmetric, RELATION + SYNONYM weights
    strength: npt.NDArray[np.float64]  # weighted degree per phrase, for forward push
    n_relation_edges: int
    n_synonym_edges: int
    # HippoRAG 2's phrase + passage graph (:func:`walk_adjacency`) and its strengths, built on first use
    _passage_graph: sp.csr_matrix | None = field(default=None, repr=False)
    _passage_strength: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    #: the passage vectors' buffer with spare rows past ``passage_vectors`` (only the newest snapshot of
    #: a lineage carried forward in memory owns it)
    _passage_room: Matrix | None = field(default=None, repr=False)
    facts: FactIndex | None = None  # loaded on first fact search
    joined: dict[tuple[tuple[str, ...], bool], JoinedMatrix] = field(default_factory=dict, repr=False)
    ppr_cache: OrderedDict[bytes, npt.NDArray[np.float64]] = field(default_factory=OrderedDict, repr=False)
    # exact PPR per (graph, damping) (None: not worth it) and queries per graph ("phrases", or "walk":
    # HippoRAG 2's phrase + passage graph); see GraphSnapshot._factorised
    factorised: dict[tuple[str, float], FactorisedPpr | None] = field(default_factory=dict, repr=False)
    ppr_queries: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def n_phrases(self) -> int:
        """This version's phrases: the rows of its graph. Not ``len(phrases.ids)``: a writer appends its
        new phrases to the phrase index it holds, which a version a query is still reading shares."""
        return int(self.adjacency.shape[0])

    @property
    def dangling(self) -> npt.NDArray[np.bool_]:
        return np.asarray(self.strength == 0)

    def phrase_reset(self, seeds: dict[str, float]) -> npt.NDArray[np.float64]:
        """The reset vector over the phrase graph (positive weights only; unknown ids are left out)."""
        reset = np.zeros(self.n_phrases, dtype=np.float64)
        for phrase_id, weight in seeds.items():
            position = self.phrases.position(phrase_id)
            if position is not None and position < len(reset) and weight > 0:
                reset[position] += weight
        return reset

    def phrase_ppr(
        self,
        lock: AbstractContextManager[Any],
        seeds: dict[str, float],
        walk: WalkParams,
    ) -> npt.NDArray[np.float64]:
        """PPR over the phrase graph: forward push (its cost follows the seeds' neighbourhood; each score
        at most tolerance x strength / (1 - damping) below the exact one), or the exact factorised solve
        once this version has served a few queries. ``lock`` guards the snapshot's caches."""
        reset = self.phrase_reset(seeds)
        if reset.sum() <= 0:
            return np.zeros_like(reset)
        solver = self._factorised(lock, walk.damping)
        if solver is not None:
            return solver.scores(reset)
        return forward_push(
            self.adjacency, self.strength, reset, walk.damping, walk.tolerance, walk.max_iterations
        )

    def _factorised(
        self, lock: AbstractContextManager[Any], damping: float, walk: bool = False
    ) -> FactorisedPpr | None:
        """The factorised solver for ``damping`` on the phrase graph (with ``walk``: on the phrase +
        passage graph of HippoRAG 2's walk, where every passage is seeded on stores up to
        ``passage_seed_top_n`` passages, so push starts from the whole graph: on MuSiQue the solve is
        several times cheaper than push), made on the query after ``FACTORISE_AFTER_QUERIES`` of this
        version (MuSiQue: it costs about 30 push queries, then each query is ~8x cheaper, so a store
        written between single queries never pays for it); None where push stays cheaper."""
        key = ("walk" if walk else "phrases", damping)
        with lock:
            if key in self.factorised:
                return self.factorised[key]
            self.ppr_queries[key[0]] = queries = self.ppr_queries.get(key[0], 0) + 1
            n_nodes = self.adjacency.shape[0] + (len(self.passage_ids) if walk else 0)
            if (
                queries <= FACTORISE_AFTER_QUERIES
                or n_nodes > FACTORISE_MAX_PHRASES
                or not 0.0 < damping < 1.0
            ):
                return None
        graph = self.passage_graph() if walk else self.adjacency
        solver = FactorisedPpr(graph, damping)
        # factors much denser than the graph: push stays cheaper
        kept = solver if solver.factor_nonzeros <= FACTORISE_MAX_FILL * max(graph.nnz, 1) else None
        with lock:
            self.factorised[key] = kept
        return kept

    def passage_walk_ppr(
        self,
        lock: AbstractContextManager[Any],
        reset: npt.NDArray[np.float64],
        walk: WalkParams,
    ) -> npt.NDArray[np.float64]:
        """PPR on the phrase + passage graph by forward push, cached per reset vector in the snapshot
        (which lives for one graph version, so the cache never serves a changed graph), up to
        ``walk.cache_bytes`` of vectors: one is 8 bytes a node, 11 MB at 1.4M nodes."""
        key = hashlib.blake2b(reset.tobytes(), digest_size=16)
        key.update(np.array([walk.damping, walk.max_iterations, walk.tolerance], dtype=np.float64).tobytes())
        digest = key.digest()
        with lock:
            cached = self.ppr_cache.get(digest)
            if cached is not None:
                self.ppr_cache.move_to_end(digest)
                return cached
        solver = self._factorised(lock, walk.damping, walk=True)
        if solver is not None:
            ppr = solver.scores(reset)
        else:
            ppr = forward_push(
                self.passage_graph(),
                self.passage_strength(),
                reset,
                walk.damping,
                walk.tolerance,
                walk.max_iterations,
            )
        self._keep(lock, digest, ppr, walk.cache_bytes)
        return ppr

    def _keep(
        self, lock: AbstractContextManager[Any], digest: bytes, ppr: npt.NDArray[np.float64], budget: int
    ) -> None:
        """Keep ``ppr`` for a repeated question, dropping the least recently used vectors over ``budget``
        bytes (0: keep nothing)."""
        if ppr.nbytes > budget:
            return
        with lock:
            self.ppr_cache[digest] = ppr
            used = sum(v.nbytes for v in self.ppr_cache.values())
            while used > budget:
                _, dropped = self.ppr_cache.popitem(last=False)
                used -= dropped.nbytes

    def passage_walk_reset(
        self, phrase_seeds: dict[str, float], passage_seeds: Mapping[str, float]
    ) -> npt.NDArray[np.float64]:
        """The reset vector of HippoRAG 2's walk over phrases then passages (positive weights only)."""
        n_phrases = self.n_phrases
        reset = np.zeros(n_phrases + len(self.passage_ids), dtype=np.float64)
        for phrase_id, weight in phrase_seeds.items():
            position = self.phrases.position(phrase_id)
            if position is not None and position < n_phrases and weight > 0:
                reset[position] += weight
        if same_table(passage_seeds, self.passage_ids):  # positions in this snapshot: no lookup by id
            passage_seeds.add_to(reset, n_phrases)
            return reset
        positions = self.passage_ids.find_many(list(passage_seeds))
        for position, weight in zip(positions, passage_seeds.values(), strict=True):
            if position is not None and weight > 0:
                reset[n_phrases + position] += weight
        return reset

    def rank_by_mentions(
        self, ppr: npt.NDArray[np.float64], limit: int, explain_phrases: int
    ) -> PassageScores:
        """HippoRAG's passage score, occurrences x phrase PPR, best first (ties by position), each with the
        phrases that contributed most (worked out when first read: :class:`ExplainedLater`); as arrays, so
        a pool of every passage costs no Python per passage."""
        scores = self.mentions @ ppr
        order = top_positions(scores, limit)
        order = order[scores[order] > 0]
        mentions, names = self.mentions, self.phrases.names

        def explain(position: int) -> list[tuple[str, float]]:
            # contribution of each (passage, phrase) = count x PPR, in the row's column order
            start, end = mentions.indptr[position], mentions.indptr[position + 1]
            columns = mentions.indices[start:end]
            values = mentions.data[start:end] * ppr[columns]
            best = np.argsort(-values, kind="stable")[:explain_phrases]
            return [(names[columns[b]], float(values[b])) for b in best]

        return PassageScores(self.passage_ids, order, scores[order], explain)

    def rank_passage_nodes(
        self, ppr: npt.NDArray[np.float64], limit: int, explain_phrases: int
    ) -> PassageScores:
        """HippoRAG 2's passage score, the passage node's own PPR (``ppr`` over phrases then passages),
        best first, each with its mentioned phrases of highest PPR (worked out when first read)."""
        n_phrases = self.n_phrases
        scores = ppr[n_phrases:]
        order = top_positions(scores, limit)
        order = order[scores[order] > 0]
        phrase_scores = ppr[:n_phrases]
        mentions, names = self.mentions, self.phrases.names

        def explain(i: int) -> list[tuple[str, float]]:
            columns = mentions.indices[mentions.indptr[i] : mentions.indptr[i + 1]]
            best = columns[np.argsort(-phrase_scores[columns], kind="stable")[:explain_phrases]]
            return [(names[c], float(phrase_scores[c])) for c in best]

        return PassageScores(self.passage_ids, order, scores[order], explain)

    def passage_graph(self) -> sp.csr_matrix:
        """The symmetric adjacency of HippoRAG 2's graph (:func:`walk_adjacency`): the phrase graph plus
        one node per passage (positions ``n_phrases + passage position``), joined to each phrase it
        mentions by an undirected edge of weight 1. Built on first use: only the ``hipporag2`` walk
        needs it."""
        if self._passage_graph is None:
            joint = walk_adjacency(self.adjacency, self.mentions)
            self._passage_strength = node_strengths(joint)
            self._passage_graph = joint
        return self._passage_graph

    def passage_strength(self) -> npt.NDArray[np.float64]:
        """Weighted degree of every node of :meth:`passage_graph`, for forward push."""
        self.passage_graph()
        assert self._passage_strength is not None
        return self._passage_strength

    @classmethod
    def derived(
        cls,
        phrases: PhraseIndex,
        passage_ids: StringTable,
        mentions: sp.csr_matrix,
        passage_counts: npt.NDArray[np.int32],
        adjacency: sp.csr_matrix,
        n_relation: int,
        n_synonym: int,
        passage_vectors: Matrix | None = None,
        carry: Carry | None = None,
    ) -> GraphSnapshot:
        """A snapshot from its phrase graph and mentions: strengths computed here, by a rebuild and by a
        snapshot brought forward alike; or, given the ``carry`` of a base snapshot, the base's with the
        rows a write changed recomputed (the same arrays), and so HippoRAG 2's walk graph if the base
        had built it."""
        strength = carried_strength(adjacency, carry) if carry is not None else node_strengths(adjacency)
        if passage_vectors is None:
            passage_vectors = np.zeros((0, phrases.vectors.shape[1]), dtype=np.float32)
        graph = cls(
            phrases=phrases,
            passage_ids=passage_ids,
            passage_vectors=passage_vectors,
            mentions=mentions,
            passage_counts=passage_counts,
            adjacency=adjacency,
            strength=strength,
            n_relation_edges=n_relation,
            n_synonym_edges=n_synonym,
        )
        walk = carried_walk(adjacency, mentions, carry) if carry is not None else None
        if walk is not None:
            graph._passage_graph, graph._passage_strength = walk
        return graph

    # --- persistence (snapshot_files) --------------------------------------------------------------
    def arrays(self) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
        passage_ids, passage_offsets, passage_order = self.passage_ids.arrays()
        assert passage_order is not None
        arrays: dict[str, npt.NDArray[Any]] = {
            **self.phrases.arrays(),
            "passage_ids": passage_ids,
            "passage_id_offsets": passage_offsets,
            "passage_id_order": passage_order,
            "passage_vectors": self.passage_vectors,
            "mentions_data": self.mentions.data,
            "mentions_indices": self.mentions.indices,
            "mentions_indptr": self.mentions.indptr,
            "passage_counts": self.passage_counts,
            "adjacency_data": self.adjacency.data,
            "adjacency_indices": self.adjacency.indices,
            "adjacency_indptr": self.adjacency.indptr,
            "strength": self.strength,
        }
        # HippoRAG 2's phrase + passage graph too (the default mode's walk): built here once rather than
        # by the first query of every process that opens the store
        walk = compact(self.passage_graph())
        arrays["walk_data"], arrays["walk_indices"], arrays["walk_indptr"] = (
            walk.data,
            walk.indices,
            walk.indptr,
        )
        arrays["walk_strength"] = self.passage_strength()
        extra = {
            "n_phrases": len(self.phrases.ids),
            "n_passages": len(self.passage_ids),
            "n_relation_edges": self.n_relation_edges,
            "n_synonym_edges": self.n_synonym_edges,
        }
        return arrays, extra

    @classmethod
    def from_arrays(
        cls, a: dict[str, npt.NDArray[Any]], manifest: dict[str, Any], phrases: PhraseIndex | None = None
    ) -> GraphSnapshot:
        n_phrases, n_passages = int(manifest["n_phrases"]), int(manifest["n_passages"])
        adjacency = _csr(
            a["adjacency_data"], a["adjacency_indices"], a["adjacency_indptr"], (n_phrases, n_phrases)
        )
        graph = cls(
            phrases=phrases if phrases is not None else PhraseIndex.from_arrays(a),
            passage_ids=StringTable(a["passage_ids"], a["passage_id_offsets"], a["passage_id_order"]),
            passage_vectors=a["passage_vectors"],
            mentions=_csr(
                a["mentions_data"], a["mentions_indices"], a["mentions_indptr"], (n_passages, n_phrases)
            ),
            passage_counts=a["passage_counts"],
            adjacency=adjacency,
            strength=a["strength"],
            n_relation_edges=int(manifest["n_relation_edges"]),
            n_synonym_edges=int(manifest["n_synonym_edges"]),
        )
        if "walk_data" in a:
            n = n_phrases + n_passages
            graph._passage_strength = a["walk_strength"]
            graph._passage_graph = _csr(a["walk_data"], a["walk_indices"], a["walk_indptr"], (n, n))
        return graph
