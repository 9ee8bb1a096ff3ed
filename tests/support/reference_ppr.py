"""The reference answers the engines are checked against: HippoRAG's walk (igraph's semantics: undirected,
parallel edges adding up, no self-loops) run to convergence by plain power iteration, and the two passage
rankings made from it (HippoRAG's aggregation, HippoRAG 2's Passage nodes)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from hipporag_neo4j.graph import ppr
from hipporag_neo4j.stores.base import PassageScore

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


def reference_passage_scores(
    phrase_scores: Mapping[str, float], mentions: Iterable[tuple[str, str, int]], limit: int
) -> list[tuple[str, float]]:
    """HippoRAG's passage scores: per passage, the scores of the phrases it mentions times the mention
    counts (a phrase not in ``phrase_scores`` adds nothing); the positive ones, best first, ties by id."""
    totals: dict[str, float] = {}
    for passage_id, phrase_id, count in mentions:
        totals[passage_id] = totals.get(passage_id, 0.0) + phrase_scores.get(phrase_id, 0.0) * count
    ranked = sorted(((p, s) for p, s in totals.items() if s > 0), key=lambda ps: (-ps[1], ps[0]))
    return ranked[:limit]


def reference_passage_nodes(
    scores: Mapping[tuple[str, str], float],
    names: Mapping[str, str],
    mentions: Sequence[tuple[str, str]],
    limit: int,
    explain: int,
) -> list[PassageScore]:
    """HippoRAG 2's ranking of Passage nodes from a walk over phrases and passages (``scores`` keyed
    (label, id)): the best ``limit``, each with its ``explain`` best mentioned phrases (by name)."""
    ranked = sorted(
        ((node_id, s) for (label, node_id), s in scores.items() if label == "Passage" and s > 0),
        key=lambda ps: (-ps[1], ps[0]),
    )[:limit]
    out = []
    for passage_id, score in ranked:
        mine = sorted(
            (
                (names[phrase_id], scores[("Phrase", phrase_id)])
                for (d, phrase_id) in mentions
                if d == passage_id and scores[("Phrase", phrase_id)] > 0
            ),
            key=lambda ns: (-ns[1], ns[0]),
        )
        out.append(PassageScore(passage_id, score, mine[:explain]))
    return out
