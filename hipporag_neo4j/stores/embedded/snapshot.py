"""In-memory view of the embedded store for retrieval: matrices built once per graph version."""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from hipporag_neo4j.linking.joined import JoinedMatrix
from hipporag_neo4j.ppr import node_strengths, symmetric_adjacency, transition_matrix
from hipporag_neo4j.stores.base import Matrix
from hipporag_neo4j.stores.embedded.schema import RELATION_EDGES


def blob_to_matrix(blobs: list[bytes], dim: int) -> Matrix:
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim).copy()


@dataclass
class PhraseIndex:
    """Phrase ids, names and vectors; grows in place as phrases are written (no reload per batch)."""

    ids: list[str]
    names: list[str]
    vectors: Matrix
    position: dict[str, int]

    @classmethod
    def load(cls, conn: sqlite3.Connection, dim: int) -> PhraseIndex:
        rows = conn.execute("SELECT id, name, embedding FROM phrases ORDER BY rowid").fetchall()
        ids = [r[0] for r in rows]
        return cls(
            ids=ids,
            names=[r[1] for r in rows],
            vectors=blob_to_matrix([r[2] for r in rows], dim),
            position={pid: i for i, pid in enumerate(ids)},
        )

    def append(self, ids: list[str], names: list[str], vectors: Matrix) -> None:
        for pid, name in zip(ids, names, strict=True):
            self.position[pid] = len(self.ids)
            self.ids.append(pid)
            self.names.append(name)
        self.vectors = np.vstack([self.vectors, vectors]) if len(ids) else self.vectors


@dataclass
class FactIndex:
    """Fact vectors with their subject and object phrases, for HippoRAG 2's fact retrieval."""

    ids: list[str]
    subject_ids: list[str]
    predicates: list[str]
    object_ids: list[str]
    vectors: Matrix

    @classmethod
    def load(cls, conn: sqlite3.Connection, dim: int) -> FactIndex:
        rows = conn.execute(
            "SELECT id, subject_id, predicate, object_id, embedding FROM facts "
            "WHERE embedding IS NOT NULL ORDER BY rowid"
        ).fetchall()
        return cls(
            ids=[r[0] for r in rows],
            subject_ids=[r[1] for r in rows],
            predicates=[r[2] for r in rows],
            object_ids=[r[3] for r in rows],
            vectors=blob_to_matrix([r[4] for r in rows], dim),
        )


@dataclass
class GraphSnapshot:
    """Everything retrieval needs, as arrays indexed by phrase / passage position."""

    phrases: PhraseIndex
    passage_ids: list[str]
    passage_position: dict[str, int]
    passage_vectors: Matrix
    mentions: sp.csr_matrix  # passages x phrases, occurrence counts
    passage_counts: npt.NDArray[np.int64]  # per phrase
    adjacency: sp.csr_matrix  # phrases x phrases, symmetric, RELATION + SYNONYM weights
    transition: sp.csr_matrix
    dangling: npt.NDArray[np.bool_]
    strength: npt.NDArray[np.float64]  # weighted degree per phrase, for forward push
    n_relation_edges: int
    n_synonym_edges: int
    _passage_graph: tuple[sp.csr_matrix, npt.NDArray[np.bool_]] | None = field(default=None, repr=False)
    _passage_strength: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    facts: FactIndex | None = None  # loaded on first fact search
    joined: dict[tuple[tuple[str, ...], bool], JoinedMatrix] = field(default_factory=dict, repr=False)
    ppr_cache: OrderedDict[bytes, npt.NDArray[np.float64]] = field(default_factory=OrderedDict, repr=False)

    def passage_graph(self) -> tuple[sp.csr_matrix, npt.NDArray[np.bool_]]:
        """Transition matrix and dangling mask of HippoRAG 2's graph: the phrase graph plus one node per
        passage (positions ``n_phrases + passage position``), joined to each phrase it mentions by an
        undirected edge of weight 1. Built on first use: only the ``hipporag2`` walk needs it."""
        if self._passage_graph is None:
            joint = self.passage_adjacency()
            self._passage_graph = transition_matrix(joint)
            self._passage_strength = node_strengths(joint)
        return self._passage_graph

    def passage_adjacency(self) -> sp.csr_matrix:
        """The symmetric adjacency of :meth:`passage_graph`."""
        links = self.mentions.copy()
        links.data[:] = 1.0
        joint: sp.csr_matrix = sp.bmat([[self.adjacency, links.T], [links, None]], format="csr")
        return joint

    def passage_strength(self) -> npt.NDArray[np.float64]:
        """Weighted degree of every node of :meth:`passage_graph`, for forward push."""
        self.passage_graph()
        assert self._passage_strength is not None
        return self._passage_strength

    @classmethod
    def load(cls, conn: sqlite3.Connection, dim: int, phrases: PhraseIndex) -> GraphSnapshot:
        n_phrases = len(phrases.ids)
        rows = conn.execute("SELECT id, embedding FROM passages ORDER BY rowid").fetchall()
        passage_ids = [r[0] for r in rows]
        passage_position = {pid: i for i, pid in enumerate(passage_ids)}
        passage_vectors = blob_to_matrix([r[1] for r in rows], dim)

        pos = phrases.position
        m_rows, m_cols, m_data = [], [], []
        for passage_id, phrase_id, count in conn.execute("SELECT passage_id, phrase_id, count FROM mentions"):
            m_rows.append(passage_position[passage_id])
            m_cols.append(pos[phrase_id])
            m_data.append(count)
        mentions = sp.csr_matrix(
            (
                np.array(m_data, dtype=np.float64),
                (np.array(m_rows, dtype=np.int64), np.array(m_cols, dtype=np.int64)),
            ),
            shape=(len(passage_ids), n_phrases),
        )
        passage_counts = np.diff(mentions.tocsc().indptr).astype(np.int64)  # non-zeros per phrase column

        sources: list[int] = []
        targets: list[int] = []
        weights: list[float] = []
        relation_rows = conn.execute(RELATION_EDGES).fetchall()
        for subject_id, object_id, weight in relation_rows:
            sources.append(pos[subject_id])
            targets.append(pos[object_id])
            weights.append(float(weight))
        synonym_rows = conn.execute("SELECT source_id, target_id, score FROM synonyms").fetchall()
        for source_id, target_id, score in synonym_rows:
            sources.append(pos[source_id])
            targets.append(pos[target_id])
            weights.append(float(score))
        adjacency = symmetric_adjacency(
            np.array(sources, dtype=np.int64),
            np.array(targets, dtype=np.int64),
            np.array(weights, dtype=np.float64),
            n_phrases,
        )
        transition, dangling = transition_matrix(adjacency)
        return cls(
            phrases=phrases,
            passage_ids=passage_ids,
            passage_position=passage_position,
            passage_vectors=passage_vectors,
            mentions=mentions,
            passage_counts=passage_counts,
            adjacency=adjacency,
            transition=transition,
            dangling=dangling,
            strength=node_strengths(adjacency),
            n_relation_edges=len(relation_rows),
            n_synonym_edges=len(synonym_rows),
        )
