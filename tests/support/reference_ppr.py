"""The reference PageRank the engines' answers are checked against: HippoRAG's walk (igraph's semantics:
undirected, parallel edges adding up, no self-loops) run to convergence by plain power iteration."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from hipporag_neo4j.graph import ppr

Node = TypeVar("Node", bound=Hashable)


def reference_ppr(
    nodes: Sequence[Node],
    edges: Iterable[tuple[Node, Node, float]],
    seeds: Mapping[Node, float],
    damping: float,
) -> dict[Node, float]:
    """Converged personalised PageRank over ``nodes``; edges or seeds naming another node are left out,
    as are seeds of weight <= 0."""
    index = {node: i for i, node in enumerate(nodes)}
    kept = [(index[s], index[t], w) for s, t, w in edges if s in index and t in index]
    adjacency = ppr.symmetric_adjacency(
        np.array([s for s, _, _ in kept], dtype=np.int64),
        np.array([t for _, t, _ in kept], dtype=np.int64),
        np.array([w for _, _, w in kept], dtype=np.float64),
        len(index),
    )
    transition, dangling = ppr.transition_matrix(adjacency)
    reset = np.zeros(len(index))
    for node, weight in seeds.items():
        if node in index and weight > 0:
            reset[index[node]] += weight
    scores = ppr.personalized_pagerank(transition, dangling, reset, damping, 2000, 1e-15)
    return {node: float(scores[i]) for node, i in index.items()}
