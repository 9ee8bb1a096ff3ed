"""Carry a graph version forward by what later commits appended, instead of rebuilding it: the one
"apply a write delta" of both stores.

The embedded store reads the delta from SQLite (the rows above the rowids a snapshot was built from and
the synonym edges its log carries: ``stores/embedded/snapshot_delta.py``); the Neo4j store's copy takes
it from the rows this process wrote (``stores/neo4j/client_copy.py``). Either way the new version is the
old one plus:

- phrases and passages appended after the old ones, in the positions a rebuild of the embedded store
  (``ORDER BY rowid``) gives them;
- the new passages' mentions and the relation weights of the facts they state, which may reach old
  phrases and add to old phrase pairs;
- new synonym edges (none counted twice: a store hands over only the edges it inserted).

Only the rows of the phrase graph these touch are rebuilt; each entry is recomputed as the full build
computes it (``graph.canonical_adjacency``: the integer relation count, then the synonym score, rounded
once), the old count recovered exactly from the old entry and the pair's stored synonym score (a store
that cannot look that score up gets the old entry plus the new count, which may differ from a rebuild in
the last bit); the other rows are copied in runs (:func:`.rows.spliced`). Strengths (of the phrase graph,
and HippoRAG 2's walk graph with its strengths when the base had built it) are the base's with the
touched rows made again (:func:`.rows.carried_strength` / ``carried_walk``), passage counts the old ones
plus the new mentions'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from hipporag_neo4j.stores.memory.graph import GraphSnapshot, PhraseIndex, compact
from hipporag_neo4j.stores.memory.rows import Carry, spliced


@dataclass
class WriteDelta:
    """What the commits after a graph version appended: new phrases (id, name) and passage ids in the
    positions they take, the new passages' mentions (passage id, phrase id, count), the relation weight
    they add per (subject id, object id) pair, and the synonym edges inserted (source, target, score)."""

    phrases: list[tuple[str, str]] = field(default_factory=list)
    passages: list[str] = field(default_factory=list)
    mentions: list[tuple[str, str, float]] = field(default_factory=list)
    relations: list[tuple[str, str, int]] = field(default_factory=list)
    synonyms: list[tuple[str, str, float]] = field(default_factory=list)


@dataclass
class History:
    """What a store can tell of the graph before a delta. ``relation_before(subject, object)``: whether a
    passage before the delta states a fact of that pair (to count the new RELATION edges);
    ``synonym_score(source, target)``: the stored score of a synonym pair (canonical order), to recover
    an entry's relation count exactly. ``new_relation_edges``: the count, when the store knows it."""

    relation_before: Callable[[str, str], bool] | None = None
    synonym_score: Callable[[str, str], float | None] | None = None
    new_relation_edges: int | None = None


def _entry(matrix: sp.csr_matrix, i: int, j: int) -> float | None:
    """``matrix[i, j]`` if stored (sorted indices: a binary search of row i), else None."""
    start, end = int(matrix.indptr[i]), int(matrix.indptr[i + 1])
    at = start + int(np.searchsorted(matrix.indices[start:end], j))
    return float(matrix.data[at]) if at < end and int(matrix.indices[at]) == j else None


def apply(base: GraphSnapshot, delta: WriteDelta, history: History, dim: int) -> GraphSnapshot:
    """The graph of ``base`` (its phrase and passage id tables without appended strings) with ``delta``
    applied; its phrase and passage vectors are left empty (the caller appends the new rows)."""
    n_old, n_old_passages = len(base.phrases.ids), len(base.passage_ids)
    ids = base.phrases.ids.extended([p for p, _ in delta.phrases])
    names = base.phrases.names.extended([name for _, name in delta.phrases])
    passage_ids = base.passage_ids.extended(delta.passages)
    n = len(ids)
    # every phrase the delta names: new ones by their rows, old ones in one search of the old ids
    fresh = {p: n_old + k for k, (p, _) in enumerate(delta.phrases)}
    named = (
        {r[1] for r in delta.mentions}
        | {p for r in delta.relations for p in r[:2]}
        | {p for e in delta.synonyms for p in e[:2]}
    )
    old_named = sorted(named - fresh.keys())
    found = base.phrases.ids.find_all(old_named)
    if any(f is None for f in found):
        raise RuntimeError("a phrase of the delta is in no row of the graph")
    fresh.update(zip(old_named, (int(f) for f in found if f is not None), strict=True))

    # mentions: the new passages' rows, after the old ones (a rebuild's coo -> csr gives the same rows)
    passage_at = {pid: k for k, pid in enumerate(delta.passages)}
    delta_mentions = sp.csr_matrix(
        (
            np.array([r[2] for r in delta.mentions], dtype=np.float64),
            (
                np.array([passage_at[r[0]] for r in delta.mentions], dtype=np.int64),
                np.array([fresh[r[1]] for r in delta.mentions], dtype=np.int64),
            ),
        ),
        shape=(len(delta.passages), n),
    )
    old_mentions = sp.csr_matrix(
        (base.mentions.data, base.mentions.indices, base.mentions.indptr), shape=(n_old_passages, n)
    )
    mentions = compact(sp.csr_matrix(sp.vstack([old_mentions, delta_mentions], format="csr")))
    # counts are integers: the old ones plus the new passages' (a bincount of every mention is the same)
    passage_counts = np.bincount(delta_mentions.indices, minlength=n).astype(np.int32)
    passage_counts[:n_old] += base.passage_counts

    adjacency, n_new_relation, touched = _adjacency(base.adjacency, n, delta, history, fresh)
    if history.new_relation_edges is not None:
        n_new_relation = history.new_relation_edges
    walk = base._passage_graph
    return GraphSnapshot.derived(
        PhraseIndex(ids, names, np.zeros((0, dim), dtype=np.float32)),
        passage_ids,
        mentions,
        passage_counts,
        adjacency,
        base.n_relation_edges + n_new_relation,
        base.n_synonym_edges + len(delta.synonyms),
        carry=Carry(
            base.adjacency,
            base.strength,
            touched,
            None if walk is None or base._passage_strength is None else (walk, base._passage_strength),
            n_old_passages,
        ),
    )


def _adjacency(
    old: sp.csr_matrix, n: int, delta: WriteDelta, history: History, position: dict[str, int]
) -> tuple[sp.csr_matrix, int, npt.NDArray[np.int64]]:
    """The phrase graph with the new relation counts and synonym edges: the touched rows rebuilt, each
    touched entry ``R + S`` as ``canonical_adjacency`` computes it; how many (subject, object) pairs
    are new; and the touched rows."""
    # per unordered pair {i, j} (i < j): relation count added, synonym score added, ids for the lookup
    added_r: dict[tuple[int, int], float] = {}
    pair_ids: dict[tuple[int, int], tuple[str, str]] = {}
    n_old = old.shape[0]
    n_new_relation = 0
    for subject_id, object_id, weight in delta.relations:
        i, j = position[subject_id], position[object_id]
        if history.new_relation_edges is None:
            # a pair is new unless its phrases were joined before and a passage before the delta states
            # it (a self-loop is no graph entry: always asked)
            joined = i < n_old and j < n_old and (i == j or _entry(old, i, j) is not None)
            asked = history.relation_before
            if not joined or asked is None or not asked(subject_id, object_id):
                n_new_relation += 1
        if i == j:
            continue  # self-loops are dropped from the graph, as in a rebuild
        key = (i, j) if i < j else (j, i)
        added_r[key] = added_r.get(key, 0.0) + float(weight)
        pair_ids[key] = (subject_id, object_id) if subject_id < object_id else (object_id, subject_id)
    added_s: dict[tuple[int, int], float] = {}
    for source_id, target_id, score in delta.synonyms:
        i, j = position[source_id], position[target_id]
        if i != j:
            added_s[(i, j) if i < j else (j, i)] = score
    keys = sorted(set(added_r) | set(added_s))
    padded = sp.csr_matrix(
        (old.data, old.indices, np.concatenate([old.indptr, np.full(n - n_old, old.indptr[-1])])),
        shape=(n, n),
    )
    if not keys:
        return compact(padded.copy()), n_new_relation, np.zeros(0, dtype=np.int64)

    pairs = np.array(keys, dtype=np.int64).reshape(-1, 2)
    touched = np.unique(pairs.ravel())
    # the touched rows as they were (row-sliced from the old matrix), as coordinate entries
    rows_before = padded[touched].tocoo()
    before_rows = touched[rows_before.row]
    before_key = before_rows * n + rows_before.col
    old_value = dict(zip(before_key.tolist(), rows_before.data.tolist(), strict=True))

    p_rows: list[int] = []
    p_cols: list[int] = []
    p_vals: list[float] = []
    for (i, j), r_added, s_added in zip(
        keys, (added_r.get(k, 0.0) for k in keys), (added_s.get(k, 0.0) for k in keys), strict=True
    ):
        before = old_value.get(i * n + j)
        s_old = 0.0
        r_old = 0.0
        if before is not None:
            if (i, j) in added_r and (i, j) not in added_s and history.synonym_score is not None:
                # a synonym stored before the base shares this entry: R = entry - S exactly
                found = history.synonym_score(*pair_ids[(i, j)])
                s_old = float(found) if found is not None else 0.0
            r_old = float(np.rint(before - s_old)) if s_old else before
        value = (r_old + r_added) + (s_old + s_added)  # one rounding, as canonical_adjacency's R + S
        p_rows += [i, j]
        p_cols += [j, i]
        p_vals += [value, value]

    patch_key = np.array(p_rows, dtype=np.int64) * n + np.array(p_cols, dtype=np.int64)
    keep = ~np.isin(before_key, patch_key, kind="sort")
    # the touched rows rebuilt: their other entries as they were, the patched ones recomputed
    order = np.searchsorted(touched, np.concatenate([before_rows[keep], np.array(p_rows, dtype=np.int64)]))
    patch = sp.csr_matrix(
        (
            np.concatenate([rows_before.data[keep], np.array(p_vals, dtype=np.float64)]),
            (
                order,
                np.concatenate([rows_before.col[keep].astype(np.int64), np.array(p_cols, dtype=np.int64)]),
            ),
        ),
        shape=(len(touched), n),
    )
    patch.sum_duplicates()  # sorted columns per row (there are no duplicates)
    # every other row as it was, copied in runs between the touched ones
    return spliced(old, (n, n), [(0, n_old, 0)], touched, patch), n_new_relation, touched
