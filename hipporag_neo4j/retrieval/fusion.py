"""Score fusion: min-max normalise and mix (HippoRAG appendix F.2 ensembles), or fuse by rank (hipporag2)."""

from __future__ import annotations

from collections.abc import Mapping


def min_max(scores: Mapping[str, float], floor: float | None = None) -> dict[str, float]:
    """Scale to [0, 1]. ``floor`` is the minimum over passages not in ``scores`` (0 for graph scores of
    passages the walk never reached); all-equal scores map to 1.0 when positive, else 0.0."""
    if not scores:
        return {}
    low = min(scores.values()) if floor is None else min(floor, *scores.values())
    high = max(scores.values())
    if high <= low:
        return {k: (1.0 if high > 0 else 0.0) for k in scores}
    return {k: (v - low) / (high - low) for k, v in scores.items()}


def mix(graph: Mapping[str, float], dense: Mapping[str, float], graph_weight: float) -> dict[str, float]:
    """graph_weight * graph + (1 - graph_weight) * dense over the union; a missing score counts as 0."""
    keys = set(graph) | set(dense)
    return {k: graph_weight * graph.get(k, 0.0) + (1.0 - graph_weight) * dense.get(k, 0.0) for k in keys}


RRF_K = 60  # reciprocal-rank constant (Cormack et al. 2009): damps the weight of the very first ranks


def ranks(scores: Mapping[str, float]) -> dict[str, int]:
    """1-based ranks, highest score first, ties by key."""
    ordered = sorted(scores, key=lambda k: (-scores[k], k))
    return {key: rank for rank, key in enumerate(ordered, start=1)}


def rank_fusion(
    graph: Mapping[str, float], dense: Mapping[str, float], graph_weight: float, k: int = RRF_K
) -> dict[str, float]:
    """Weighted reciprocal-rank fusion: graph_weight / (k + graph rank) + (1 - graph_weight) / (k + dense
    rank). Only ranks count, so the heavy tail of PPR scores cannot drown the dense ranking (or the reverse);
    a passage missing from one list ranks just after its last entry there."""
    graph_ranks, dense_ranks = ranks(graph), ranks(dense)
    graph_missing, dense_missing = len(graph_ranks) + 1, len(dense_ranks) + 1
    return {
        key: graph_weight / (k + graph_ranks.get(key, graph_missing))
        + (1.0 - graph_weight) / (k + dense_ranks.get(key, dense_missing))
        for key in graph_ranks.keys() | dense_ranks.keys()
    }
