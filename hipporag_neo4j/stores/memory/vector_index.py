"""An inverted-file (IVF) index over a matrix of unit vectors, for the query-time searches of large stores.

Measured at 1M phrases (benchmarks/README.md, issue 19): one exact scan of a 1M x 384 float32 matrix costs
~140 ms on one BLAS thread (memory bound: 1.5 GiB read), and a query of the default mode makes two or three
of them (the query's entities, the facts). The index cuts that to the rows of a few lists:

* spherical k-means (``nlist`` centroids, trained on a sample, deterministic seed) splits the rows into
  lists; each row's list is kept as one small integer (``assignment``, 2 bytes a row);
* a query scores the centroids, takes the ``probes`` best lists, and scores only their rows **plus every
  row written after the index was last extended** (the tail), gathered from the store's own matrix (the
  memory-mapped snapshot: the vectors are never copied into the index);
* the caller re-scores the candidates exactly, so an approximate search can only miss rows (recall), never
  change a score.

The index is tied to the matrix it was built on by a fingerprint of sampled rows of its indexed prefix:
a matrix that grew by appending (new phrases, facts, passages) keeps it, the new rows being the tail until
:meth:`IvfIndex.extend` assigns them; a matrix whose prefix changed (a deletion moved rows) does not, and
the index is rebuilt. Persisted beside the store (:func:`save` / :func:`load`) so each process and graph
version does not train it again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from hipporag_neo4j.stores.base import Matrix
from hipporag_neo4j.stores.memory.knn import best_per_row, block_candidates

log = logging.getLogger(__name__)

VectorSearchMode = Literal["auto", "exact", "approximate"]
VECTOR_SEARCH_MODES: tuple[VectorSearchMode, ...] = ("auto", "exact", "approximate")

#: rows of the matrix below which ``auto`` stays exact (MuSiQue: 19k phrases, 17k facts, 1.9k passages)
DEFAULT_MIN_ROWS = 200_000
#: lists scored per query: 1/16 of the rows at 1M (1,024 lists). On MuSiQue's real vectors (17k facts, 19k
#: phrases) the share of the exact top 5 found grows with the share of lists scored and with the number of
#: lists (benchmarks/README.md, issue 19); uniform random vectors are the worst case
DEFAULT_PROBES = 64
#: lists scored per new phrase by the synonym step (a batch: benchmarks/results/ann_synonyms.md, issue 35)
DEFAULT_SYNONYM_PROBES = 32
MAX_LISTS = 1024
MIN_LISTS = 16
_SAMPLE_PER_LIST = 48  # k-means training rows per centroid
_KMEANS_ITERATIONS = 8
_ASSIGN_BLOCK = 16_384  # rows per block when assigning (block x nlist float32 similarities)
_FINGERPRINT_ROWS = 257
_FORMAT = 1


@dataclass(frozen=True)
class VectorSearch:
    """How the vectors held in process (the embedded store's, the Neo4j store's copy) are searched.

    ``mode``: ``exact`` scans every row; ``approximate`` uses the IVF index at any size; ``auto`` uses it
    from ``min_rows`` rows of a matrix (phrases, facts and passages are decided separately).
    ``probes``: lists scored per query (more: better recall, slower); ``synonym_probes``: the same for
    each new phrase of the synonym step, whose edges are found through the index from ``min_rows`` too."""

    mode: VectorSearchMode = "auto"
    min_rows: int = DEFAULT_MIN_ROWS
    probes: int = DEFAULT_PROBES
    synonym_probes: int = DEFAULT_SYNONYM_PROBES

    def __post_init__(self) -> None:
        if self.mode not in VECTOR_SEARCH_MODES:
            choices = ", ".join(VECTOR_SEARCH_MODES)
            raise ValueError(f"vector search mode must be one of {choices}, not {self.mode!r}")
        if isinstance(self.min_rows, bool) or not isinstance(self.min_rows, int) or self.min_rows < 1:
            raise ValueError(f"vector index min_rows must be a positive integer, not {self.min_rows!r}")
        for name in ("probes", "synonym_probes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"vector index {name} must be a positive integer, not {value!r}")

    def indexed(self, n_rows: int) -> bool:
        """Whether a matrix of ``n_rows`` rows is searched through the index."""
        if self.mode == "exact" or n_rows == 0:
            return False
        return self.mode == "approximate" or n_rows >= self.min_rows


def list_count(n_rows: int) -> int:
    """Lists for a matrix of ``n_rows`` rows: about sqrt(n) (1M rows: 1,024 lists of ~1,000 rows)."""
    return int(min(MAX_LISTS, max(MIN_LISTS, round(math.sqrt(n_rows))), max(1, n_rows)))


def fingerprint(matrix: Matrix, n_rows: int) -> str:
    """A hash of ``n_rows`` and of sampled rows of ``matrix[:n_rows]`` (always the first and the last)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(np.array([n_rows, matrix.shape[1]], dtype=np.int64).tobytes())
    if n_rows:
        rows = np.unique(np.linspace(0, n_rows - 1, _FINGERPRINT_ROWS).round().astype(np.int64))
        h.update(np.ascontiguousarray(np.take(matrix, rows, axis=0), dtype=np.float32).tobytes())
    return h.hexdigest()


def _nearest_centroid(rows: Matrix, centroids: Matrix) -> npt.NDArray[np.int16]:
    out = np.empty(len(rows), dtype=np.int16)
    for start in range(0, len(rows), _ASSIGN_BLOCK):
        block = np.asarray(rows[start : start + _ASSIGN_BLOCK], dtype=np.float32)
        out[start : start + len(block)] = np.argmax(block @ centroids.T, axis=1)
    return out


def _kmeans(sample: Matrix, nlist: int, seed: int) -> Matrix:
    """Spherical k-means (unit-norm centroids, dot-product assignment): deterministic for a seed."""
    rng = np.random.default_rng(seed)
    centroids = sample[np.sort(rng.choice(len(sample), nlist, replace=False))].astype(np.float32)
    for _ in range(_KMEANS_ITERATIONS):
        assign = _nearest_centroid(sample, centroids).astype(np.intp)
        sums = np.zeros_like(centroids)
        order = np.argsort(assign, kind="stable")
        bounds = np.searchsorted(assign[order], np.arange(nlist + 1))
        for c in range(nlist):
            lo, hi = bounds[c], bounds[c + 1]
            if hi > lo:
                sums[c] = sample[order[lo:hi]].sum(axis=0)
        norms = np.linalg.norm(sums, axis=1)
        empty = norms == 0
        if empty.any():  # an empty list takes a random sample row
            sums[empty] = sample[rng.choice(len(sample), int(empty.sum()), replace=False)]
            norms[empty] = np.linalg.norm(sums[empty], axis=1)
        centroids = (sums / np.maximum(norms, 1e-12)[:, None]).astype(np.float32)
    return centroids


class IvfIndex:
    """Lists of the rows ``[0, n_indexed)`` of a matrix; rows from ``n_indexed`` on are the tail."""

    def __init__(self, centroids: Matrix, assignment: npt.NDArray[np.int16], fingerprint: str) -> None:
        self.centroids = np.ascontiguousarray(centroids, dtype=np.float32)
        self.assignment = np.ascontiguousarray(assignment, dtype=np.int16)
        self.fingerprint = fingerprint
        nlist = len(self.centroids)
        # int16 keys: numpy sorts them by radix, ~10 ms for 1M rows
        self._order = np.argsort(self.assignment, kind="stable").astype(np.int32)
        self._bounds = np.searchsorted(self.assignment[self._order], np.arange(nlist + 1)).astype(np.int64)
        # gathered rows go to a reused buffer: a fresh one costs a page fault per 4 KiB on every query
        self._buffer = np.empty((0, self.centroids.shape[1]), dtype=np.float32)
        self._buffer_lock = threading.Lock()

    @property
    def n_indexed(self) -> int:
        return len(self.assignment)

    @property
    def nlist(self) -> int:
        return len(self.centroids)

    @classmethod
    def train(cls, matrix: Matrix, seed: int = 0, nlist: int | None = None) -> IvfIndex:
        """Centroids from a sample of ``matrix`` (spherical k-means), then every row assigned; ``nlist``
        lists (default :func:`list_count`)."""
        n = len(matrix)
        if n == 0:
            raise ValueError("cannot build a vector index over an empty matrix")
        nlist = list_count(n) if nlist is None else nlist
        if not 1 <= nlist <= min(n, 2**15 - 1):
            raise ValueError(f"nlist must be between 1 and min(rows, 32767), not {nlist}")
        rng = np.random.default_rng(seed)
        take = min(n, _SAMPLE_PER_LIST * nlist)
        rows = np.sort(rng.choice(n, take, replace=False)) if take < n else np.arange(n)
        sample = np.ascontiguousarray(np.take(matrix, rows, axis=0), dtype=np.float32)
        centroids = _kmeans(sample, nlist, seed)
        return cls(centroids, _nearest_centroid(matrix, centroids), fingerprint(matrix, n))

    def covers(self, matrix: Matrix) -> bool:
        """True when ``matrix`` starts with the rows this index was built on (it may have more)."""
        return (
            matrix.ndim == 2
            and matrix.shape[1] == self.centroids.shape[1]
            and len(matrix) >= self.n_indexed
            and fingerprint(matrix, self.n_indexed) == self.fingerprint
        )

    def extend(self, matrix: Matrix) -> IvfIndex:
        """A new index that also lists the tail rows of ``matrix`` (which must be :meth:`covers`-ed)."""
        tail = matrix[self.n_indexed :]
        if not len(tail):
            return self
        assignment = np.concatenate([self.assignment, _nearest_centroid(tail, self.centroids)])
        return IvfIndex(self.centroids, assignment, fingerprint(matrix, len(matrix)))

    def candidates(self, query: Matrix, n_rows: int, probes: int, at_least: int = 0) -> npt.NDArray[np.intp]:
        """Sorted positions (< ``n_rows``) in the ``probes`` lists nearest to ``query`` and in the tail;
        more lists while they hold fewer than ``at_least`` rows."""
        scores = self.centroids @ np.asarray(query, dtype=np.float32)
        ranked = np.argsort(-scores, kind="stable")
        sizes = np.cumsum(np.diff(self._bounds)[ranked]) + (n_rows - self.n_indexed)
        probes = min(self.nlist, max(probes, int(np.searchsorted(sizes, at_least)) + 1))
        parts = [self._order[self._bounds[c] : self._bounds[c + 1]] for c in ranked[:probes].tolist()]
        parts.append(np.arange(self.n_indexed, n_rows, dtype=np.int32))
        found = np.concatenate(parts).astype(np.intp)
        found.sort()  # the rows in storage order: a gather that walks the matrix forward
        return found

    def search(self, matrix: Matrix, query: Matrix, k: int, probes: int) -> npt.NDArray[np.intp]:
        """Positions of up to ``k`` candidate rows of highest float32 similarity to ``query``, in no
        particular order (the caller re-scores and sorts them)."""
        found = self.candidates(query, len(matrix), probes, at_least=k)
        if len(found) <= k:
            return found
        with self._buffer_lock:
            if len(self._buffer) < len(found):
                self._buffer = np.empty((max(len(found), 2 * len(self._buffer)), matrix.shape[1]), np.float32)
            rows = np.take(matrix, found, axis=0, out=self._buffer[: len(found)], mode="clip")
            sims = rows @ np.asarray(query, dtype=np.float32)
        return found[np.argpartition(-sims, k - 1)[:k]]

    def search_many(
        self, matrix: Matrix, queries: Matrix, k: int, min_similarity: float, probes: int
    ) -> list[npt.NDArray[np.intp]]:
        """For each query row, up to ``k`` positions of rows with float32 similarity >= ``min_similarity``
        among its ``probes`` nearest lists and the tail, best first: a batch (the synonym step's new
        phrases) scored list by list, each list's rows gathered once for every query that probes it, so
        the cost is ``probes / nlist`` of an exact scan's products plus one read of the matrix."""
        q = np.ascontiguousarray(queries, dtype=np.float32)
        n_q, n_rows = len(q), len(matrix)
        probes = min(self.nlist, max(1, probes))
        ranked = np.argpartition(-(q @ self.centroids.T), probes - 1, axis=1)[:, :probes]
        probe_lists = ranked.ravel()
        order = np.argsort(probe_lists, kind="stable")
        probe_queries = np.repeat(np.arange(n_q), probes)[order]
        bounds = np.searchsorted(probe_lists[order], np.arange(self.nlist + 1))
        rows: list[npt.NDArray[np.intp]] = []
        cols: list[npt.NDArray[np.intp]] = []
        values: list[npt.NDArray[np.float32]] = []

        def score(who: npt.NDArray[np.intp], positions: npt.NDArray[np.intp], block: Matrix) -> None:
            sims = q[who] @ np.asarray(block, dtype=np.float32).T
            r, c = block_candidates(sims, k, min_similarity)
            rows.append(who[r])
            cols.append(positions[c])
            values.append(sims[r, c])

        for c in np.flatnonzero(np.diff(bounds)).tolist():
            members = self._order[self._bounds[c] : self._bounds[c + 1]].astype(np.intp)
            if len(members):
                score(probe_queries[bounds[c] : bounds[c + 1]], members, np.take(matrix, members, axis=0))
        if n_rows > self.n_indexed:
            score(np.arange(n_q), np.arange(self.n_indexed, n_rows), matrix[self.n_indexed : n_rows])
        return [found for found, _ in best_per_row(n_q, k, rows, cols, values)]


#: an index is trained again once the matrix would get this many times its lists (about 4x its rows): a
#: search scores ``probes`` lists, so lists that kept growing made every search dearer (the synonym step at
#: 700k phrases with the lists of 200k: 2.2x the rows per list, ~15 s per index batch of 256 passages)
RETRAIN_LISTS_FACTOR = 2

Meta = dict[str, object] | None  # what a persisted index must match (model, dimension, kind)


def index_meta(kind: str, embedding_model: str, embedding_dim: int) -> dict[str, object]:
    """What a persisted index of ``kind`` (phrase, fact, passage) must match to be loaded."""
    return {"kind": kind, "embedding_model": embedding_model, "embedding_dim": embedding_dim}


#: an index is extended (its tail assigned to lists: ~27 us a row at 1,024 lists) once the tail passes this
#: many rows or 1/64 of the indexed rows (1M: 15.6k, about a quarter of the rows 64 probes score)
INDEX_TAIL_ROWS = 8_192


class HeldIndexes:
    """The IVF index of each kind of matrix (phrase, fact, passage) one holder keeps: the embedded store's
    snapshot cache, the Neo4j store's in-process copy. Found, trained or extended on first use; persisted
    in ``directory / kind`` when a directory is given (each process and graph version then loads it).

    An index stays valid while the matrix grows by appending (the new rows are its tail, scanned exactly
    until there are more than ``max(INDEX_TAIL_ROWS, n_indexed / 64)``, then assigned to lists) until
    the matrix would get ``RETRAIN_LISTS_FACTOR`` times its lists; a matrix whose indexed prefix changed
    (a deletion moved rows) gets a new one."""

    def __init__(self, search: VectorSearch, lock: threading.Lock | threading.RLock | None = None) -> None:
        self.search = search
        self.lock = lock if lock is not None else threading.Lock()
        self.builds = 0  # indexes trained (tests; benchmarks)
        self._held: dict[str, tuple[tuple[object, ...], IvfIndex]] = {}

    def index(
        self,
        kind: str,
        matrix: Matrix,
        version: object,
        directory: Path | None = None,
        meta: Meta = None,
    ) -> IvfIndex | None:
        """The index over ``matrix`` (of graph ``version``) when :attr:`search` wants one for its size."""
        if not self.search.indexed(len(matrix)):
            return None
        key = (version, matrix.__array_interface__["data"][0], matrix.shape)
        with self.lock:
            held = self._held.get(kind)
            if held is not None and held[0] == key:
                return held[1]
            index = held[1] if held is not None and held[1].covers(matrix) else None
            changed = False
            if index is None and directory is not None:
                index = load(directory, meta or {})
                if index is not None and not index.covers(matrix):
                    index = None
            if index is not None and list_count(len(matrix)) >= RETRAIN_LISTS_FACTOR * index.nlist:
                index = None  # grown past its lists (trained at 200k: 447 lists of 2,200 rows at 1M)
            if index is None:
                index = IvfIndex.train(matrix)
                self.builds += 1
                changed = True
            if len(matrix) - index.n_indexed > max(INDEX_TAIL_ROWS, index.n_indexed // 64):
                index = index.extend(matrix)
                changed = True
            if changed and directory is not None:
                try:
                    save(directory, index, meta or {})
                except OSError as exc:  # best effort: the next process trains again
                    log.warning("could not persist the %s vector index in %s: %s", kind, directory, exc)
            self._held[kind] = (key, index)
            return index

    def candidates(
        self, kind: str, matrix: Matrix, version: object, directory: Path | None = None, meta: Meta = None
    ) -> Callable[[Matrix, Matrix, int], npt.NDArray[np.intp] | None] | None:
        """Candidate rows for one query vector (``probes`` lists of :meth:`index`), or None below the
        index's size (an exact scan)."""
        if not self.search.indexed(len(matrix)):
            return None
        probes = self.search.probes

        def candidates(m: Matrix, v: Matrix, k: int) -> npt.NDArray[np.intp] | None:
            found = self.index(kind, m, version, directory, meta)
            return None if found is None else found.search(m, v, k, probes)

        return candidates

    def batch_candidates(
        self, kind: str, matrix: Matrix, version: object, directory: Path | None = None, meta: Meta = None
    ) -> Callable[[Matrix, Matrix, int, float], list[npt.NDArray[np.intp]] | None] | None:
        """As :meth:`candidates`, for a batch searched with a similarity floor (the synonym step:
        ``synonym_probes`` lists per vector)."""
        if not self.search.indexed(len(matrix)):
            return None
        probes = self.search.synonym_probes

        def candidates(m: Matrix, vs: Matrix, k: int, floor: float) -> list[npt.NDArray[np.intp]] | None:
            found = self.index(kind, m, version, directory, meta)
            return None if found is None else found.search_many(m, vs, k, floor, probes)

        return candidates


# --- persistence ---------------------------------------------------------------------------------------
def save(directory: Path, index: IvfIndex, meta: dict[str, object]) -> None:
    """Write the index into ``directory`` (replaced whole: a temporary directory renamed into place)."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}-", dir=directory.parent))
    try:
        np.save(tmp / "centroids.npy", index.centroids)
        np.save(tmp / "assignment.npy", index.assignment)
        manifest = {**meta, "format": _FORMAT, "n_indexed": index.n_indexed, "fingerprint": index.fingerprint}
        (tmp / "manifest.json").write_text(json.dumps(manifest))
        for f in tmp.iterdir():
            with open(f, "rb") as handle:
                os.fsync(handle.fileno())
        old = directory.with_name(f".{directory.name}-old-{os.getpid()}")
        if directory.exists():
            os.replace(directory, old)
        os.replace(tmp, directory)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def load(directory: Path, meta: dict[str, object]) -> IvfIndex | None:
    """The index saved in ``directory`` if its manifest matches ``meta`` (model, dimension, kind); None
    when missing, damaged or made for something else."""
    try:
        manifest = json.loads((directory / "manifest.json").read_text())
        if manifest.get("format") != _FORMAT or any(manifest.get(k) != v for k, v in meta.items()):
            return None
        centroids = np.load(directory / "centroids.npy")
        assignment = np.load(directory / "assignment.npy")
    except (OSError, ValueError, EOFError):
        return None
    if (
        centroids.ndim != 2
        or assignment.ndim != 1
        or assignment.dtype != np.int16
        or len(assignment) != manifest.get("n_indexed")
        or (len(assignment) and (assignment.min() < 0 or assignment.max() >= len(centroids)))
    ):
        return None
    return IvfIndex(centroids, assignment, str(manifest.get("fingerprint")))
