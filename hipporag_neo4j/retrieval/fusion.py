"""Score fusion for the ensemble modes (HippoRAG appendix F.2): min-max normalise, then mix."""

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
