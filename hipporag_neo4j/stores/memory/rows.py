"""Carrying CSR matrices forward by the rows a write changed: the phrase graph's strengths, and HippoRAG
2's walk graph and its strengths, made again only where a write touched them (every other row copied in
runs), so a graph brought forward equals a rebuild bit for bit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from hipporag_neo4j.graph.ppr import node_strengths
from hipporag_neo4j.stores.memory.recycled import ARRAYS


def spliced(
    old: sp.csr_matrix,
    shape: tuple[int, int],
    blocks: list[tuple[int, int, int]],
    rows: npt.NDArray[np.int64],
    replacement: sp.csr_matrix,
    shift: tuple[int, int] | None = None,
) -> sp.csr_matrix:
    """A CSR matrix of ``shape`` whose rows ``rows`` (sorted, distinct) are ``replacement``'s rows in
    order and whose other rows are ``old``'s, moved by ``blocks`` (old start, old stop, new start; a
    row in no block is empty), their column indices at or above ``shift[0]`` raised by ``shift[1]``.
    Runs of kept rows are copied whole, so a write's few changed rows cost a copy of the arrays, not a
    rebuild. Index arrays are int32 where they fit (as :func:`_compact`); ``indices`` and ``data`` come
    from :data:`.recycled.ARRAYS`."""
    n_rows = shape[0]
    old_lengths = np.diff(old.indptr)
    lengths = np.zeros(n_rows, dtype=np.int64)
    for start, stop, at in blocks:
        lengths[at : at + stop - start] = old_lengths[start:stop]
    new_lengths = np.diff(replacement.indptr).astype(np.int64)
    lengths[rows] = new_lengths
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    nnz = int(indptr[-1])
    index_type = np.int32 if nnz < 2**31 and max(shape) < 2**31 else np.int64
    # the arrays of a version two carries back, when nothing reads it any more (no fresh pages to fault in)
    indices: npt.NDArray[Any] = ARRAYS.empty(nnz, index_type)
    data = ARRAYS.empty(nnz, old.data.dtype)
    for start, stop, at in blocks:
        lo, hi = np.searchsorted(rows, [at, at + stop - start])
        first = at  # the next kept row (new position)
        for cut in [*rows[lo:hi].tolist(), at + stop - start]:
            if cut > first:
                source = slice(int(old.indptr[start + first - at]), int(old.indptr[start + cut - at]))
                target = slice(int(indptr[first]), int(indptr[cut]))
                indices[target] = old.indices[source]
                data[target] = old.data[source]
                if shift is not None and shift[1]:
                    moved = indices[target]
                    np.add(moved, shift[1], out=moved, where=moved >= shift[0])
            first = cut + 1
    if len(rows):
        at_rows = np.arange(replacement.nnz, dtype=np.int64)
        at_rows += np.repeat(indptr[rows] - replacement.indptr[:-1], new_lengths)
        indices[at_rows] = replacement.indices
        data[at_rows] = replacement.data
    return sp.csr_matrix((data, indices, indptr.astype(index_type)), shape=shape, copy=False)


def _distinct_rows(*parts: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    return np.unique(np.concatenate([np.asarray(p, dtype=np.int64) for p in parts]))


@dataclass
class Carry:
    """What a snapshot carried forward by a write keeps of its base: the base's phrase graph and
    strengths, and the rows of the new phrase graph the write touched, so the new strengths are the old
    ones with the touched rows summed again (every other row is the same, to the bit); likewise HippoRAG
    2's walk graph (adjacency and strengths) when the base had built it."""

    adjacency: sp.csr_matrix
    strength: npt.NDArray[np.float64]
    touched: npt.NDArray[np.int64]
    walk: tuple[sp.csr_matrix, npt.NDArray[np.float64]] | None = None
    n_passages: int = 0


def carried_strength(adjacency: sp.csr_matrix, carry: Carry) -> npt.NDArray[np.float64]:
    """Strengths of the phrase graph ``adjacency``, from ``carry``'s: the touched rows summed again."""
    n, n_old = adjacency.shape[0], carry.adjacency.shape[0]
    strength = np.zeros(n, dtype=np.float64)
    strength[:n_old] = carry.strength
    if len(carry.touched):
        strength[carry.touched] = node_strengths(adjacency[carry.touched])
    return strength


def carried_walk(
    adjacency: sp.csr_matrix, mentions: sp.csr_matrix, carry: Carry
) -> tuple[sp.csr_matrix, npt.NDArray[np.float64]] | None:
    """HippoRAG 2's walk graph (adjacency and strengths, as :meth:`GraphSnapshot.passage_graph` builds
    them with :func:`walk_adjacency`) of the new phrase graph ``adjacency`` and ``mentions``, from the
    base's: the rows of nodes whose edges changed made again, the others moved (new phrases come before
    the passages, so passage columns shift), nothing else rebuilt."""
    if carry.walk is None:
        return None
    old_walk, old_strength = carry.walk
    n, n_passages = adjacency.shape[0], mentions.shape[0]
    n_old, p_old = carry.adjacency.shape[0], carry.n_passages
    if old_walk.shape[0] != n_old + p_old or old_walk.nnz != carry.adjacency.nnz + 2 * int(
        mentions.indptr[p_old]
    ):
        return None  # not the base's walk: rebuild
    k = n - n_old
    size = n + n_passages
    # phrases whose walk row changes: touched in the phrase graph, new, or mentioned by a new passage
    new_mentions = mentions[p_old:]
    phrases = _distinct_rows(carry.touched, np.arange(n_old, n), new_mentions.indices)
    new_passages = np.arange(n + p_old, size, dtype=np.int64)
    by_phrase = new_mentions.tocsc()  # per phrase, the new passages that mention it

    def walk_rows(nodes: npt.NDArray[np.int64]) -> sp.csr_matrix:
        """Rows ``nodes`` (sorted; new positions) of the new walk adjacency: a phrase's phrase-graph
        entries, then its old passages (read off the old walk row, shifted), then its new ones; a
        passage's phrases."""
        cut = int(np.searchsorted(nodes, n))
        parts_i: list[npt.NDArray[Any]] = []
        parts_d: list[npt.NDArray[Any]] = []
        lengths = np.zeros(len(nodes), dtype=np.int64)
        for r, node in enumerate(nodes[:cut].tolist()):
            a0, a1 = int(adjacency.indptr[node]), int(adjacency.indptr[node + 1])
            old_passages: npt.NDArray[Any] = np.zeros(0, dtype=np.int64)
            if node < n_old:
                o0, o1 = int(old_walk.indptr[node]), int(old_walk.indptr[node + 1])
                columns = old_walk.indices[o0:o1]
                old_passages = np.sort(columns[columns >= n_old]).astype(np.int64) + k
            fresh = by_phrase.indices[by_phrase.indptr[node] : by_phrase.indptr[node + 1]] + (n + p_old)
            parts_i += [adjacency.indices[a0:a1], old_passages, fresh]
            parts_d += [adjacency.data[a0:a1], np.ones(len(old_passages) + len(fresh))]
            lengths[r] = (a1 - a0) + len(old_passages) + len(fresh)
        for r, node in enumerate(nodes[cut:].tolist(), start=cut):
            p = node - n
            m0, m1 = int(mentions.indptr[p]), int(mentions.indptr[p + 1])
            parts_i.append(mentions.indices[m0:m1])
            parts_d.append(np.ones(m1 - m0))
            lengths[r] = m1 - m0
        indptr = np.zeros(len(nodes) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        empty = np.zeros(0, dtype=np.int64)
        return sp.csr_matrix(
            (
                np.concatenate([*parts_d, np.zeros(0)]).astype(np.float64),
                np.concatenate([*(x.astype(np.int64) for x in parts_i), empty]),
                indptr,
            ),
            shape=(len(nodes), size),
        )

    touched = np.concatenate([phrases, new_passages])
    mine = walk_rows(touched)
    strength = np.concatenate(
        [old_strength[:n_old], np.zeros(k), old_strength[n_old:], np.zeros(n_passages - p_old)]
    )
    strength[touched] = node_strengths(mine)
    blocks = [(0, n_old, 0), (n_old, n_old + p_old, n)]
    return spliced(old_walk, (size, size), blocks, touched, mine, shift=(n_old, k)), strength
