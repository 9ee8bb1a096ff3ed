"""The joined graph as a matrix: a knowledge-graph adjacency with the enterprise nodes appended.

Both stores' in-process PPR use it (the embedded store, and the Neo4j store's ``local`` engine): the
adjacency's first rows are the phrases (then, for HippoRAG 2's walk, the passages); the enterprise nodes
linked to a phrase of this adjacency, and the other ends of the chosen relationships touching them, come
after, in id order. SAME_AS edges weigh the link's score, enterprise relationships 1; all undirected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from hipporag_neo4j.graph import ppr


@dataclass(frozen=True)
class JoinEdges:
    """What the joined walk adds to the knowledge graph (see ``stores.base.GraphJoin``):
    the SAME_AS links and the chosen relationships touching linked nodes, as read from where they live.
    ``version`` changes with every link, unlink and import (None: not tracked, do not cache)."""

    version: int | None
    same_as: list[tuple[str, str, float]]  # (phrase id, node id, link score)
    edges: list[tuple[str, str]]  # (source node id, target node id), one per relationship


@dataclass(frozen=True)
class JoinedMatrix:
    version: int | None
    n_base: int  # rows of the knowledge graph; enterprise nodes are n_base .. n_base + len(node_ids) - 1
    node_ids: list[str]
    adjacency: sp.csr_matrix
    strength: np.ndarray


def join_adjacency(
    adjacency: sp.csr_matrix, phrase_position: Mapping[str, int], join: JoinEdges
) -> JoinedMatrix:
    """``adjacency`` (symmetric, n x n) joined with ``join``; links from phrases not in
    ``phrase_position`` (deleted since they were linked) are left out, and so are relationships with no
    end linked to a phrase here."""
    n_base = adjacency.shape[0]
    links = [(phrase_position[p], node, score) for p, node, score in join.same_as if p in phrase_position]
    linked = {node for _, node, _ in links}
    touching = [(s, t) for s, t in join.edges if s in linked or t in linked]
    node_ids = sorted(linked | {end for edge in touching for end in edge})
    position = {node: n_base + i for i, node in enumerate(node_ids)}
    sources = [row for row, _, _ in links] + [position[s] for s, _ in touching]
    targets = [position[node] for _, node, _ in links] + [position[t] for _, t in touching]
    weights = [float(score) for _, _, score in links] + [1.0] * len(touching)
    n = n_base + len(node_ids)
    extra = ppr.symmetric_adjacency(
        np.array(sources, dtype=np.int64),
        np.array(targets, dtype=np.int64),
        np.array(weights, dtype=np.float64),
        n,
    )
    k = len(node_ids)
    base = sp.bmat([[adjacency, None], [None, sp.csr_matrix((k, k))]], format="csr") if k else adjacency
    joined = (base + extra).tocsr()
    strength = ppr.node_strengths(joined)
    return JoinedMatrix(join.version, n_base, node_ids, joined, strength)
