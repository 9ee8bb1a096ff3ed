"""Personalized PageRank: exact sparse power iteration, and forward push with a per-node error bound.

Semantics match igraph's ``personalized_pagerank(directed=False, weights=..., reset=...)``: the graph is
undirected and weighted, a walker at node u follows an edge with probability ``damping`` (picking a
neighbour in proportion to edge weight) and jumps back to the reset distribution otherwise; a node with no
edges (dangling) sends all its mass back to the reset distribution. Scores sum to 1.

Both kernels solve the "leaking" system ``q = (1 - d) s + d T q`` in which a dangling node's mass simply
disappears, then divide by the sum: the dangling mass that igraph sends back to the reset distribution
only rescales the solution (``p = (1 - d + d D) (I - d T)^-1 s`` with ``D`` the scalar dangling mass), so
``p = q / sum(q)`` exactly, and no per-iteration work is spent on dangling nodes.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
import scipy.sparse.linalg as spl

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.intp]


def symmetric_adjacency(
    sources: npt.NDArray[np.int64], targets: npt.NDArray[np.int64], weights: FloatArray, n_nodes: int
) -> sp.csr_matrix:
    """Undirected weighted adjacency (CSR) from an edge list; parallel edges add up, self-loops dropped."""
    keep = sources != targets
    rows = np.concatenate([sources[keep], targets[keep]])
    cols = np.concatenate([targets[keep], sources[keep]])
    data = np.concatenate([weights[keep], weights[keep]]).astype(np.float64)
    return sp.csr_matrix((data, (rows, cols)), shape=(n_nodes, n_nodes))


def node_strengths(adjacency: sp.csr_matrix) -> FloatArray:
    """Weighted degree of every node (row sums); 0 for a dangling node."""
    strength: FloatArray = np.asarray(adjacency.sum(axis=1), dtype=np.float64).ravel()
    return strength


def transition_matrix(adjacency: sp.csr_matrix) -> tuple[sp.csr_matrix, npt.NDArray[np.bool_]]:
    """Column-stochastic transition matrix ``T`` (T[v, u] = w(u,v) / strength(u)) and the dangling mask.

    What the exact power iteration (:func:`personalized_pagerank`) walks; forward push needs none.
    """
    strength = node_strengths(adjacency)
    dangling = strength == 0
    inv = np.zeros_like(strength)
    inv[~dangling] = 1.0 / strength[~dangling]
    # adjacency is symmetric, so (D^-1 A)^T = A D^-1: each entry a_uv / strength(v), one product each.
    # Computed entry by entry rather than by a sparse product (10x cheaper), laid out as scipy's product
    # lays it out (each row's entries in reverse order), so the arrays equal the product's bit for bit.
    values = adjacency.data * inv[adjacency.indices]
    if not values.all():  # a stored zero: the product would drop it
        return (adjacency @ sp.diags(inv)).tocsr(), dangling
    indptr = adjacency.indptr
    lengths = np.diff(indptr)
    row_of = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    reverse = indptr[row_of] + indptr[row_of + 1] - 1 - np.arange(len(values), dtype=np.int64)
    transition = sp.csr_matrix(
        (values[reverse], adjacency.indices[reverse], indptr.copy()), shape=adjacency.shape, copy=False
    )
    return transition, dangling


#: Edges gathered at once by a push round (its work arrays hold up to ~50 bytes per edge: ~50 MiB).
MAX_GATHER = 1 << 20


def _normalised_reset(reset: FloatArray) -> FloatArray:
    total = float(reset.sum())
    if total <= 0:
        raise ValueError("reset distribution is empty (no seed node with positive weight)")
    p: FloatArray = reset.astype(np.float64) / total
    return p


def _distinct(values: IndexArray) -> IndexArray:
    """Sorted distinct values (np.unique's hash path is ~100x slower on these arrays in numpy 2.4)."""
    ordered = np.sort(values)
    keep = np.empty(len(ordered), dtype=np.bool_)
    keep[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    result: IndexArray = ordered[keep]
    return result


def personalized_pagerank(
    transition: sp.csr_matrix,
    dangling: npt.NDArray[np.bool_],
    reset: FloatArray,
    damping: float = 0.5,
    max_iterations: int = 100,
    tolerance: float = 1e-8,
) -> FloatArray:
    """Scores (summing to 1) of every node for the reset distribution ``reset`` (normalised here).

    Exact power iteration. Stops when the L1 change between iterations falls below ``tolerance`` or after
    ``max_iterations``; the L1 distance to the fixed point is then at most ``tolerance * d / (1 - d)``
    (before the final normalisation). ``dangling`` is implied by the zero columns of ``transition`` and
    kept for the signature's sake (see the module docstring).
    """
    del dangling
    p = _normalised_reset(reset)
    base = (1.0 - damping) * p
    scores = p.copy()
    for _ in range(max_iterations):
        updated = transition @ scores
        updated *= damping
        updated += base
        scores -= updated
        change = float(np.abs(scores, out=scores).sum())
        scores = updated
        if change < tolerance:
            break
    result: FloatArray = scores / scores.sum()
    return result


def forward_push(
    adjacency: sp.csr_matrix,
    strength: FloatArray,
    reset: FloatArray,
    damping: float = 0.5,
    epsilon: float = 1e-8,
    max_rounds: int = 1000,
    max_gather: int = MAX_GATHER,
) -> FloatArray:
    """Approximate PPR by Andersen–Chung–Lang forward push; cost follows the seeds' neighbourhood.

    ``adjacency`` is a symmetric weighted adjacency whose row sums are ``strength``: no transition matrix
    is needed (a push from u sends ``damping x mass x w(u, v) / strength(u)`` to v), so a graph carried
    forward by a write changes only its adjacency rows and strengths. Every node whose residual exceeds
    ``epsilon * strength`` is pushed, all of them at once per round (vectorised); a round that would
    touch many edges is done as one sparse mat-vec over every node instead. Bound (ACL, Lemma 2, carried
    to weighted undirected graphs by the reversibility ``strength(u) q_u(v) = strength(v) q_v(u)``):
    when it returns, for every node v

        0 <= exact(v) - returned(v) <= epsilon * strength(v) / (1 - damping * isolated_seed_mass)

    i.e. scores are underestimated by at most ``epsilon * strength(v) / (1 - damping)``; so the returned
    top-k is the exact top-k wherever the k-th score leads the next by more than that. Scores sum to
    slightly less than 1 (the residual mass left unpushed). ``max_rounds`` only guards against a
    pathological ``epsilon``; the bound holds when it is not reached. A round's edges are gathered in
    pieces of about ``max_gather`` edges (memory; the same sums, in another order only past it).
    """
    p = _normalised_reset(reset)
    n = len(p)
    indptr, indices, data = adjacency.indptr, adjacency.indices, adjacency.data
    connected = strength > 0
    inverse = np.zeros_like(strength)
    np.divide(1.0, strength, out=inverse, where=connected)
    # igraph's normaliser: mass on isolated seeds leaks once (d x it), connected mass is kept
    total = 1.0 - damping * float(p[~connected].sum())
    threshold = epsilon * strength
    residual = p.copy()
    estimate = np.zeros(n, dtype=np.float64)
    active: IndexArray = np.flatnonzero(residual > 0)
    dense_work = max(adjacency.nnz // 4, 1)
    for _ in range(max_rounds):
        if active.size == 0:
            break
        starts = indptr[active]
        lengths = indptr[active + 1] - starts
        work = int(lengths.sum())
        if work >= dense_work:
            # push every node at once: one mat-vec, T r = A (r / strength) (the residual below the
            # threshold goes along, which only tightens the bound)
            estimate += (1.0 - damping) * residual
            residual *= inverse
            residual = adjacency @ residual
            residual *= damping
            active = np.flatnonzero(residual > threshold)
            continue
        mass = residual[active]
        residual[active] = 0.0
        estimate[active] += (1.0 - damping) * mass
        if work == 0:  # only isolated nodes: their mass leaks
            break
        # what u sends along each edge: damping x mass(u) / strength(u) x w(u, v), read from row u
        share = damping * mass * inverse[active]
        # the gather's work arrays (up to ~50 bytes per edge) in pieces of at most ~max_gather edges, so a
        # round just under the mat-vec threshold on a large graph holds tens of MiB, not hundreds
        ends = np.cumsum(lengths)
        cuts = np.searchsorted(ends, np.arange(max_gather, work, max_gather), side="left") + 1
        bounds = np.unique(np.concatenate(([0], cuts, [len(active)])))
        pieces = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
        if work > n // 8:  # a round reaching much of the graph
            for a, b in pieces:
                # the rows sliced and summed by scipy's C loops: per neighbour, the products added in the
                # order a gather's bincount adds them (the same sums), at about half its cost
                residual += adjacency[active[a:b]].T @ share[a:b]
            # the same nodes as the touched ones over the threshold (a node this round did not touch was
            # pushed, so holds 0, or was below it), in the same order, found by one pass over every node
            # instead of sorting the millions of neighbours gathered (a fifth of the walk at 1M phrases)
            active = np.flatnonzero(residual > threshold)
            continue
        touched = []
        for a, b in pieces:
            piece = lengths[a:b]
            edges = int(ends[b - 1] - (ends[a - 1] if a else 0))
            offsets = np.arange(edges) + np.repeat(starts[a:b] - (np.cumsum(piece) - piece), piece)
            neighbours = indices[offsets]
            values = data[offsets]
            del offsets
            values *= np.repeat(share[a:b], piece)
            np.add.at(residual, neighbours, values)
            touched.append(_distinct(neighbours))
            del values
        candidates = touched[0] if len(touched) == 1 else _distinct(np.concatenate(touched))
        active = candidates[residual[candidates] > threshold[candidates]]
    result: FloatArray = estimate / total
    return result


class FactorisedPpr:
    """Exact PPR from one sparse factorisation of the graph: a query is then two triangular solves.

    On the connected nodes the leaking system is ``(D - d A) y = (1 - d) s`` with ``q = D y`` (``D`` the
    strengths), symmetric and strictly diagonally dominant, so it is factorised once without pivoting
    in a fill-reducing symmetric order; an isolated node keeps ``q = (1 - d) s``. Worth it where the
    factors stay small: on MuSiQue's phrase graph (19,102 phrases) they hold 12.6x the adjacency's
    non-zeros, a query takes ~0.7 ms against 6-10 ms for :func:`forward_push` at the same load, and the
    factorisation ~0.2 s (benchmarks/results/ppr_factorised.md). ``max_iterations`` and ``tolerance`` do
    not apply: the scores are exact to rounding.
    """

    def __init__(self, adjacency: sp.csr_matrix, damping: float) -> None:
        if not 0.0 < damping < 1.0:
            raise ValueError(f"damping must be strictly between 0 and 1, not {damping}")
        strength = node_strengths(adjacency)
        self.damping = damping
        self.connected: IndexArray = np.flatnonzero(strength > 0)
        self.strength: FloatArray = strength[self.connected]
        inner = adjacency[self.connected][:, self.connected]
        system = (sp.diags(self.strength) - damping * inner).tocsc()
        self._lu = spl.splu(
            system, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True}
        )
        self.factor_nonzeros = int(self._lu.L.nnz + self._lu.U.nnz)

    def scores(self, reset: FloatArray) -> FloatArray:
        """Scores (summing to 1) of every node for ``reset``, as :func:`personalized_pagerank`."""
        q = (1.0 - self.damping) * _normalised_reset(reset)
        q[self.connected] = self.strength * self._lu.solve(q[self.connected])
        result: FloatArray = q / q.sum()
        return result
