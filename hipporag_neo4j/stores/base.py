"""The store protocol: everything the pipeline asks of a graph store.

The pipeline (indexing, retrieval, delete) talks only to this protocol; :mod:`.embedded` and
:mod:`.neo4j` implement it, and ``tests/integration/test_store_conformance.py`` asserts the same behaviour of
both.

Graph model, shared by both stores:

* ``Passage {id, title, text, embedding}``
* ``Phrase {id, name, embedding, passage_count}``; specificity = 1 / passage_count
* ``Fact {id, subject, predicate, object, text, embedding}`` with provenance ``(Passage)-[:STATES]->(Fact)``;
  the triples kept for HippoRAG-2-style fact retrieval and for exact delete
* ``(Phrase)-[:RELATION {predicates, weight}]->(Phrase)``: derived from facts, one edge per (subject, object),
  weight = number of (passage, fact) pairs behind it
* ``(Phrase)-[:SYNONYM {score}]->(Phrase)``: cosine >= tau, once per pair with ``source.id < target.id``
* ``(Passage)-[:MENTIONS {count}]->(Phrase)``: count = occurrences of the phrase in the passage's
  extraction (each triple slot, plus one when it is also a named entity)

PPR runs on the phrase graph with RELATION and SYNONYM edges taken as undirected and weighted; the
HippoRAG 2 walk (:meth:`GraphStore.passage_node_scores`) adds the Passage nodes and MENTIONS edges to it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from hipporag_neo4j.common.model_names import same_model
from hipporag_neo4j.errors import ModelMismatchError, ReembedPendingError, SchemaVersionError
from hipporag_neo4j.models import Passage, PassageInfo, StoreStats
from hipporag_neo4j.settings import RetrievalSettings

Vector = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]
EmbeddedKind = Literal["passage", "phrase", "fact"]

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class PhraseRecord:
    id: str
    name: str
    embedding: Vector


@dataclass(frozen=True)
class FactRecord:
    id: str
    subject_id: str
    predicate: str
    object_id: str
    text: str
    embedding: Vector | None = None  # None when the fact is already in the store


@dataclass
class PassageRecord:
    """One passage ready to write: its embedding, phrase mentions and facts."""

    passage: Passage
    embedding: Vector
    mentions: dict[str, int]  # phrase id -> count
    facts: list[FactRecord] = field(default_factory=list)


@dataclass(frozen=True)
class WriteResult:
    """What one :meth:`GraphStore.write_passages` wrote: the ids of the passages it wrote (those already
    stored are left out) and how many phrases and facts were new."""

    passages: list[str] = field(default_factory=list)
    phrases: int = 0
    facts: int = 0


@dataclass(frozen=True)
class SynonymEdge:
    source_id: str
    target_id: str
    score: float  # cosine similarity

    def canonical(self) -> SynonymEdge:
        if self.source_id <= self.target_id:
            return self
        return SynonymEdge(self.target_id, self.source_id, self.score)


@dataclass(frozen=True)
class PhraseHit:
    id: str
    name: str
    similarity: float  # cosine similarity in [-1, 1]
    passage_count: int


@dataclass(frozen=True)
class FactHit:
    """A stored fact found by similarity to a query vector (HippoRAG 2's fact retrieval)."""

    id: str
    subject_id: str
    subject: str  # the subject phrase's name
    predicate: str
    object_id: str
    object: str  # the object phrase's name
    similarity: float  # cosine similarity in [-1, 1]


@dataclass(frozen=True)
class WalkParams:
    """How Personalized PageRank walks (``retrieval.damping``, ``ppr_max_iterations``, ``ppr_tolerance``):
    ``damping`` is the probability of following an edge, ``tolerance`` the accuracy it stops at; and how
    many bytes of walk results one graph version keeps for repeated questions (``ppr_cache_mib``)."""

    damping: float = 0.5
    max_iterations: int = 100
    tolerance: float = 1e-6
    cache_bytes: int = 64 << 20

    @classmethod
    def of(cls, settings: RetrievalSettings) -> WalkParams:
        return cls(
            settings.damping,
            settings.ppr_max_iterations,
            settings.ppr_tolerance,
            int(settings.ppr_cache_mib * (1 << 20)),
        )


@dataclass(frozen=True)
class PassageScore:
    passage_id: str
    score: float
    top_phrases: list[tuple[str, float]] = field(default_factory=list)  # (phrase name, contribution)


@dataclass(frozen=True)
class GraphJoin:
    """PPR over the knowledge graph joined with the enterprise graph beside it (``hipporag-neo4j link``):
    every node a phrase is linked to (``SAME_AS``, weight = the link's score) and the relationships of
    ``rel_types`` with at least one end among those nodes (weight 1, with their other end), all
    undirected. Enterprise nodes are walked through but never ranked."""

    rel_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoreMeta:
    schema_version: int
    embedding_model: str
    embedding_dim: int


def check_meta(
    meta: StoreMeta,
    location: str,
    embedding_model: str,
    embedding_dim: int,
    schema_version: int = SCHEMA_VERSION,
) -> None:
    """Refuse a store of another schema version (``schema_version``: the one this backend reads), or built
    with another embedding model or dimension."""
    if meta.schema_version != schema_version:
        raise SchemaVersionError(
            f"{location} has schema version {meta.schema_version}; "
            f"this release reads version {schema_version}"
        )
    if meta.embedding_dim != embedding_dim or not same_model(meta.embedding_model, embedding_model):
        raise ModelMismatchError(
            f"{location} was built with embedding model {meta.embedding_model!r} ({meta.embedding_dim}-d), "
            f"but {embedding_model!r} ({embedding_dim}-d) is configured. "
            "Configure the original model, or run `hipporag-neo4j reembed` to re-embed the store."
        )


def chunks_of_parents(candidates: Iterable[tuple[str, str, dict[str, object]]]) -> dict[str, list[str]]:
    """(parent, passage id, metadata) candidates -> parent -> its chunk ids in chunk order, keeping only
    passages whose metadata names that parent (a user's own id may also start with "<parent>#")."""
    found: dict[str, list[tuple[int, str]]] = {}
    for parent, passage_id, metadata in candidates:
        if metadata.get("parent_id") == parent:
            chunk = metadata.get("chunk")
            found.setdefault(parent, []).append((chunk if isinstance(chunk, int) else 0, passage_id))
    return {parent: [pid for _, pid in sorted(items)] for parent, items in found.items()}


@dataclass
class ReembedState:
    """A re-embed under way: the target model and, per kind, the last id re-encoded (ids go in order),
    so an interrupted run resumes after it. Stored in the store's metadata until the re-embed ends."""

    embedding_model: str
    embedding_dim: int
    done_through: dict[str, str] = field(default_factory=dict)  # kind -> last id written

    def to_json(self) -> str:
        return json.dumps(
            {"model": self.embedding_model, "dim": self.embedding_dim, "done_through": self.done_through},
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> ReembedState:
        data = json.loads(text)
        return cls(
            str(data["model"]), int(data["dim"]), {str(k): str(v) for k, v in data["done_through"].items()}
        )


def check_no_reembed(state: ReembedState | None, location: str) -> None:
    """Refuse to serve a store whose re-embed did not finish (its vectors mix two models)."""
    if state is not None:
        kinds = ", ".join(f"{k}s up to {v!r}" for k, v in sorted(state.done_through.items())) or "nothing yet"
        raise ReembedPendingError(
            f"{location}: a re-embed to {state.embedding_model!r} ({state.embedding_dim}-d) was interrupted "
            f"(re-encoded: {kinds}), so its vectors mix two models and it serves nothing until that ends. "
            f"Configure {state.embedding_model!r} and run `hipporag-neo4j reembed` again: it resumes "
            "where it stopped."
        )


@dataclass
class DeleteReport:
    passages: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    phrases_removed: int = 0
    facts_removed: int = 0
    synonym_edges_removed: int = 0


@dataclass
class DropReport:
    """What :meth:`GraphStore.drop_namespace` removed: the knowledge base's counts just before (None when
    there was nothing to drop), and on Neo4j the GDS projections and the dimensions whose vector indexes
    went with it (no other namespace of the database used them)."""

    removed: StoreStats | None = None
    projections_dropped: list[str] = field(default_factory=list)
    vector_index_dims_dropped: list[int] = field(default_factory=list)


GraphNodeKind = Literal["phrase", "passage", "entity"]
GraphEdgeKind = Literal["RELATION", "SYNONYM", "MENTIONS", "SAME_AS", "LINKED"]


@dataclass(frozen=True)
class GraphNode:
    """A node as the graph explorer draws it: a phrase (id, name), a passage (id, title) or a node of
    your own graph linked to a phrase (``entity``: its id, its ``name`` property or id)."""

    kind: GraphNodeKind
    id: str
    label: str
    passage_count: int | None = None  # phrases: how many passages mention it
    labels: tuple[str, ...] = ()  # entities: their labels


@dataclass(frozen=True)
class GraphEdge:
    """An edge between two :class:`GraphNode` (``source``/``target`` are ``(kind, id)``). ``label``:
    the predicates of a RELATION, the relationship type of an entity's own edge (``LINKED``)."""

    kind: GraphEdgeKind
    source: tuple[GraphNodeKind, str]
    target: tuple[GraphNodeKind, str]
    weight: float  # RELATION weight, SYNONYM / SAME_AS score, MENTIONS count, 1 for LINKED
    label: str = ""


@dataclass
class Neighbourhood:
    """A node with its neighbours, at most ``limit`` of them; ``truncated`` says some were left out."""

    center: GraphNode | None  # None: no such node
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)
    truncated: bool = False
    #: how many neighbours the center has through each kind of edge, all of them (not only those shown)
    totals: dict[GraphEdgeKind, int] = field(default_factory=dict)


@runtime_checkable
class GraphExplorer(Protocol):
    """Reads for the graph explorer (``serve``'s web page); both stores implement it. Bounded: nothing
    here returns more than its ``limit``, so a hub phrase never sends the whole graph."""

    def search_nodes(self, text: str, limit: int) -> list[GraphNode]:
        """Phrases whose name, then passages whose title or id, contain ``text`` (case-insensitive),
        at most ``limit`` of each, phrases mentioned most first, passages by id."""
        ...

    def neighbourhood(self, kind: GraphNodeKind, node_id: str, limit: int) -> Neighbourhood:
        """A phrase: its RELATION and SYNONYM neighbours, the passages that mention it and the nodes it
        is linked to (SAME_AS). A passage: the phrases it mentions and the relations of the facts it
        states. An entity: the phrases linked to it and its own relationships. At most ``limit``
        neighbours, strongest first (weight, score, count)."""
        ...

    def edges_among(self, phrase_ids: Sequence[str], passage_ids: Sequence[str]) -> list[GraphEdge]:
        """The RELATION and SYNONYM edges among these phrases, and the MENTIONS edges from these
        passages to them (what the explorer draws between the nodes of a retrieval explanation)."""
        ...

    def namespaces(self) -> list[str]:
        """The knowledge bases beside this one (namespaces), sorted."""
        ...


@runtime_checkable
class GraphView(Protocol):
    """The reads of one query, all at one graph version (:meth:`GraphStore.view`): what the retriever and
    its modes ask of a store. A view is a plain object, cheap to make (the embedded store checks its
    SQLite version; the Neo4j store makes one round trip for the version and model); it never sees a
    later write, so a query never mixes two versions of the graph."""

    @property
    def version(self) -> int:
        """The graph version every read of this view is at."""
        ...

    def nearest_phrases(
        self, vectors: Matrix, top_k: int, min_similarity: float, exclude_ids: Sequence[str] | None = None
    ) -> list[list[PhraseHit]]:
        """As :meth:`GraphStore.nearest_phrases` (query-time linking)."""
        ...

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]:
        """Exact look-up of normalised phrase names (similarity 1.0)."""
        ...

    def personalized_pagerank(self, seeds: dict[str, float], walk: WalkParams) -> dict[str, float]:
        """PPR over the phrase graph from weighted seeds (phrase id -> weight, normalised inside);
        returns phrase id -> score (scores sum to 1), only non-zero scores."""
        ...

    def graph_passage_scores(
        self,
        seeds: dict[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> Sequence[PassageScore]:
        """PPR (over the joined graph with ``join``), then passage score = sum over mentioned phrases of
        PPR x count; the best ``limit`` passages with score > 0, highest first, each with its top
        contributing phrases."""
        ...

    def dense_passage_scores(self, vector: Vector, limit: int) -> Sequence[PassageScore]:
        """Passages by cosine similarity to the query vector, highest first."""
        ...

    def nearest_facts(self, vector: Vector, top_k: int) -> list[FactHit]:
        """Up to ``top_k`` stored facts by cosine similarity to the (L2-normalised) query vector,
        highest first, ties by fact id."""
        ...

    def passage_node_scores(
        self,
        phrase_seeds: dict[str, float],
        passage_seeds: Mapping[str, float],
        walk: WalkParams,
        limit: int,
        explain_phrases: int,
        join: GraphJoin | None = None,
    ) -> Sequence[PassageScore]:
        """HippoRAG 2's walk (over the joined graph with ``join``): PPR over the phrase graph plus Passage
        nodes, each passage joined to the phrases it mentions by an undirected MENTIONS edge of weight 1,
        from the reset vector
        ``phrase_seeds`` + ``passage_seeds`` (ids -> weights, normalised to sum 1 inside). Returns the best
        ``limit`` passages by their own PPR score (> 0), highest first, ties by id; ``top_phrases`` are
        the passage's mentioned phrases with the highest PPR scores, as (name, score)."""
        ...

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        """The passages (id, title, text, metadata) of these ids that exist."""
        ...

    def passage_count(self) -> int: ...


@runtime_checkable
class GraphStore(Protocol):
    """A HippoRAG knowledge graph. Every write method is idempotent."""

    backend: str

    # --- lifecycle and metadata -------------------------------------------------------------
    def open(self, embedding_model: str, embedding_dim: int) -> StoreMeta:
        """Create the schema if needed and check it: raises ModelMismatchError when the store was built
        with another embedding model or dimension, SchemaVersionError for an unknown schema version,
        ReembedPendingError while an interrupted re-embed has not finished."""
        ...

    def meta(self) -> StoreMeta | None:
        """The recorded metadata, or None for a store never opened."""
        ...

    def close(self) -> None: ...

    def for_readers(self) -> GraphStore:
        """The store object that queries run on while this one writes (a service's reader): one that
        sees the last committed graph version and never waits for this object's write transaction.
        The embedded store gives a new object (its own SQLite connection and snapshot); the Neo4j store
        itself (every read is a server transaction, one graph version per query)."""
        ...

    # --- indexing ---------------------------------------------------------------------------
    def existing_passages(self, ids: Sequence[str]) -> set[str]:
        """Which of these passage ids are already stored."""
        ...

    def missing_phrases(self, ids: Sequence[str]) -> set[str]:
        """Which of these phrase ids are not stored yet (so only new phrases get embedded)."""
        ...

    def missing_facts(self, ids: Sequence[str]) -> set[str]: ...

    def write_passages(
        self, phrases: Sequence[PhraseRecord], passages: Sequence[PassageRecord]
    ) -> WriteResult:
        """Write new phrases, then passages with their mentions and facts, atomically per call.
        Updates relation edges and passage counts. Passages already stored are left as they are: the
        check is inside the transaction, so of two concurrent writers only one writes a passage.
        The new phrases are marked "synonyms pending" in the same transaction (see
        :meth:`pending_synonym_phrases`). Returns what this call wrote (:class:`WriteResult`)."""
        ...

    def pending_synonym_phrases(self, limit: int) -> list[PhraseRecord]:
        """Up to ``limit`` phrases whose synonym edges are not computed yet: written by a batch whose
        synonym step has not run (still to come, or lost to a crash), or reset by a re-embed."""
        ...

    def nearest_phrases(
        self, vectors: Matrix, top_k: int, min_similarity: float, exclude_ids: Sequence[str] | None = None
    ) -> list[list[PhraseHit]]:
        """For each (L2-normalised) vector, up to ``top_k`` stored phrases with cosine >= min_similarity,
        most similar first; ``exclude_ids[i]`` is left out of row i (the query phrase itself)."""
        ...

    def write_synonyms(self, edges: Sequence[SynonymEdge], done: Sequence[str] = ()) -> int:
        """MERGE synonym edges (canonical direction) and clear the "synonyms pending" mark of the phrase
        ids ``done``, in one transaction; returns how many edges were new."""
        ...

    def delete_passages(self, ids: Sequence[str]) -> DeleteReport:
        """Remove passages and all that only they supported; update specificity and relation weights."""
        ...

    def drop_namespace(self) -> DropReport:
        """Delete this whole knowledge base: every passage, phrase, fact and edge, its metadata (model,
        graph version), links to the user's nodes (the nodes stay) and what the server held for it. Other
        namespaces and the user's own nodes are untouched. The store is closed afterwards; opening it
        again starts an empty knowledge base."""
        ...

    # --- retrieval ----------------------------------------------------------------------------
    def view(self) -> GraphView:
        """A view of the current graph version for one query's reads (:class:`GraphView`): every search
        and walk of retrieval goes through one."""
        ...

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]: ...  # as GraphView's

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]: ...

    def list_passages(self, after: str, limit: int) -> list[PassageInfo]:
        """Up to ``limit`` stored passages with id > ``after``, ordered by id (a page of ``list``)."""
        ...

    def passages_by_parent(self, parent_ids: Sequence[str]) -> dict[str, list[str]]:
        """The chunks cut from each of these passage ids (``metadata.parent_id``), ordered by id; parents
        with no chunk stored are left out."""
        ...

    def passage_count(self) -> int: ...

    def stats(self) -> StoreStats: ...

    # --- maintenance -------------------------------------------------------------------------
    def iter_texts(
        self, kind: EmbeddedKind, batch_size: int, after: str = ""
    ) -> Iterator[list[tuple[str, str]]]:
        """(id, text) of every passage, phrase or fact with id > ``after``, in id order, in batches:
        what ``reembed`` re-encodes (``after`` lets an interrupted re-embed resume)."""
        ...

    def set_embeddings(self, kind: EmbeddedKind, ids: Sequence[str], vectors: Matrix) -> None: ...

    def set_embedding_model(self, embedding_model: str, embedding_dim: int) -> None:
        """Record a new model after ``reembed``; also rebuilds vector indexes where the dimension changed."""
        ...

    def open_for_reembed(self) -> StoreMeta | None:
        """Open without the model check (and despite an unfinished re-embed), for ``reembed`` only."""
        ...

    def reembed_state(self) -> ReembedState | None:
        """The re-embed under way, or None. While there is one, :meth:`open` refuses the store."""
        ...

    def set_reembed_state(self, state: ReembedState | None) -> None: ...

    def finish_reembed(self, embedding_model: str, embedding_dim: int) -> None:
        """End a re-embed: record the new model, drop every synonym edge and mark every phrase
        "synonyms pending" (they are recomputed with the new vectors), forget the re-embed state."""
        ...


Candidate = tuple[GraphNode, GraphEdge]


def bounded_neighbourhood(
    center: GraphNode, groups: Sequence[Sequence[Candidate]], limit: int
) -> Neighbourhood:
    """``center`` with at most ``limit`` neighbours taken in turn from each group (relations, synonyms,
    passages...; each already strongest first), so a phrase with hundreds of passages still shows its
    relations. A neighbour in several groups counts once and keeps every edge; ``truncated`` when any
    group had more than what was taken (a store fetches ``limit + 1`` per group to tell)."""
    key = (center.kind, center.id)
    chosen: dict[tuple[str, str], GraphNode] = {}
    edges: list[GraphEdge] = []
    positions = [0] * len(groups)
    progressing = True
    while progressing:
        progressing = False
        for g, group in enumerate(groups):
            while positions[g] < len(group):
                node, edge = group[positions[g]]
                nkey = (node.kind, node.id)
                if nkey != key and nkey not in chosen and len(chosen) >= limit:
                    break
                positions[g] += 1
                if nkey != key:
                    chosen.setdefault(nkey, node)
                edges.append(edge)
                progressing = True
                break
    truncated = any(positions[g] < len(group) for g, group in enumerate(groups))
    return Neighbourhood(center=center, nodes=list(chosen.values()), edges=edges, truncated=truncated)
