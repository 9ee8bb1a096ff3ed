"""The questions retrieval asks of one graph version, answered in process with numpy, once for both stores.

The embedded store answers from its snapshot; the Neo4j store from its in-process copy of a namespace.
Both hand these functions the same structures (:mod:`.graph`), so the two stores give the same answers by
construction. Vector searches are exact unless the caller passes ``candidates`` (an approximate index's
rows), and every candidate is re-scored exactly (float64, one fixed order: :func:`.knn.exact_scores`), so
a pair scores the same from either side and in any batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from hipporag_neo4j.graph.joined import JoinedMatrix
from hipporag_neo4j.graph.ppr import forward_push
from hipporag_neo4j.stores.base import FactHit, Matrix, PhraseHit, Vector, WalkParams
from hipporag_neo4j.stores.memory.graph import FactIndex, PhraseIndex
from hipporag_neo4j.stores.memory.knn import exact_scores, nearest_rows, top_positions
from hipporag_neo4j.stores.memory.scores import PassageScores
from hipporag_neo4j.stores.memory.strings import StringTable

#: rows of an approximate index per query vector, or None for an exact scan
Candidates = Callable[[Matrix, Vector, int], npt.NDArray[np.intp] | None]
#: rows of an approximate index for a batch of query vectors (k, min_similarity), or None for an exact scan
BatchCandidates = Callable[[Matrix, Matrix, int, float], list[npt.NDArray[np.intp]] | None]


def nearest_phrases(
    phrases: PhraseIndex,
    vectors: Matrix,
    top_k: int,
    min_similarity: float,
    exclude_ids: Sequence[str] | None,
    passage_counts: Callable[[set[str]], Mapping[str, int]],
    candidates: Candidates | None = None,
    batch_candidates: BatchCandidates | None = None,
) -> list[list[PhraseHit]]:
    """For each vector, up to ``top_k`` phrases with cosine >= ``min_similarity``, most similar first
    (ties by id); ``exclude_ids[i]`` left out of row i. Linking may take an index's ``candidates`` (one
    vector at a time), the synonym search (``exclude_ids``) its ``batch_candidates`` (all vectors at once);
    either way the candidates are re-scored exactly."""
    n = len(vectors)
    if exclude_ids is not None and len(exclude_ids) != n:
        raise ValueError(f"exclude_ids has {len(exclude_ids)} entries for {n} vectors")
    if n == 0 or top_k <= 0:
        return [[] for _ in range(n)]
    matrix = phrases.vectors
    if len(phrases.ids) == 0:
        return [[] for _ in range(n)]
    vectors = np.asarray(vectors, dtype=np.float32)
    rows: list[Any] | None = None
    if candidates is not None and not exclude_ids:
        found_rows = [candidates(matrix, v, top_k + 1) for v in vectors]
        if all(r is not None for r in found_rows):
            rows = found_rows
    elif batch_candidates is not None and exclude_ids:
        rows = batch_candidates(matrix, vectors, top_k + 1, min_similarity)
    if rows is None:
        # one more than kept, in case the excluded query phrase is among them; linking re-scores its
        # candidates exactly below, so it may take the faster product (matrix_first)
        linking = not exclude_ids
        rows = [c for c, _ in nearest_rows(vectors, matrix, top_k + 1, min_similarity, matrix_first=linking)]
    found: list[list[tuple[int, float]]] = []
    for row, candidate_rows in enumerate(rows):
        positions = np.asarray(candidate_rows)
        values = exact_scores(matrix, positions, vectors[row])
        keep = values >= min_similarity
        exclude = exclude_ids[row] if exclude_ids else None
        pairs = [
            (int(j), float(v))
            for j, v in zip(positions[keep], values[keep], strict=True)
            if phrases.ids[j] != exclude
        ]
        pairs.sort(key=lambda jv: (-jv[1], phrases.ids[jv[0]]))
        found.append(pairs[:top_k])
    counts = passage_counts({phrases.ids[j] for pairs in found for j, _ in pairs})
    return [
        [PhraseHit(phrases.ids[j], phrases.names[j], v, counts.get(phrases.ids[j], 0)) for j, v in pairs]
        for pairs in found
    ]


def nearest_facts(
    facts: FactIndex,
    phrases: PhraseIndex,
    vector: Vector,
    top_k: int,
    candidates: Candidates | None = None,
) -> list[FactHit]:
    """Up to ``top_k`` facts by cosine to ``vector``, highest first, ties by fact id, each with the names
    of its subject and object phrases."""
    n = len(facts.ids)
    if n == 0 or top_k <= 0:
        return []
    k = min(top_k, n)
    best = candidates(facts.vectors, vector, k) if candidates is not None else None
    if best is None:
        sims = facts.vectors @ vector
        best = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
        score = {int(j): float(sims[j]) for j in best}
    else:  # candidates from an index, scored exactly (float64, one fixed order)
        score = dict(zip(best.tolist(), exact_scores(facts.vectors, best, vector).tolist(), strict=True))
    ranked = sorted(score, key=lambda j: (-score[j], facts.ids[j]))
    names, position = phrases.names, phrases.position

    def name(phrase_id: str) -> str:
        found = position(phrase_id)
        return names[found] if found is not None else ""

    return [
        FactHit(
            id=facts.ids[j],
            subject_id=facts.subject_ids[j],
            subject=name(facts.subject_ids[j]),
            predicate=facts.predicates[j],
            object_id=facts.object_ids[j],
            object=name(facts.object_ids[j]),
            similarity=score[j],
        )
        for j in ranked
    ]


def dense_passage_scores(
    ids: StringTable,
    vectors: Matrix,
    vector: Vector,
    limit: int,
    candidates: Candidates | None = None,
) -> PassageScores:
    """Passages by cosine to ``vector``, the best ``limit``, highest first (ties by position); as arrays."""
    n = len(ids)
    if not n or limit <= 0:
        return PassageScores(ids, np.zeros(0, dtype=np.intp), np.zeros(0))
    # an index only for a few of many passages: it cannot rank them all
    best = candidates(vectors, vector, limit) if candidates is not None and limit * 16 <= n else None
    if best is None:
        sims = vectors @ np.asarray(vector, dtype=np.float32)
        order = top_positions(sims, limit)
        return PassageScores(ids, order, sims[order].astype(np.float64))
    exact = exact_scores(vectors, best, vector)
    ranked = np.lexsort((best, -exact))[:limit]
    return PassageScores(ids, best[ranked], exact[ranked])


def joined_ppr(joined: JoinedMatrix, reset: npt.NDArray[np.float64], walk: WalkParams) -> np.ndarray:
    """PPR on the joined graph from ``reset`` over its first rows (the enterprise nodes get none)."""
    full = np.zeros(joined.adjacency.shape[0], dtype=np.float64)
    full[: len(reset)] = reset
    if full.sum() <= 0:
        return np.zeros_like(reset)
    scores = forward_push(
        joined.adjacency, joined.strength, full, walk.damping, walk.tolerance, walk.max_iterations
    )
    return scores[: len(reset)]
