"""The fixed vocabulary of the Neo4j graph: labels, relationship types, property keys, index names and
the parameters the ``.cypher`` files may use. Nothing here is ever derived from data or LLM output.

The Cypher lint test builds its schema from these, so a misspelt label, property or parameter in a
``.cypher`` file fails the suite.
"""

from __future__ import annotations

from typing import Any, Final, Literal

LABELS: Final = (
    "Passage",
    "Phrase",
    "Fact",
    "HippoRAGMeta",
    "SynonymsPending",
    # the per-dimension labels as the .cypher templates spell them (DIM is spliced: PhraseEmbedding384)
    "PassageEmbeddingDIM",
    "PhraseEmbeddingDIM",
    "FactEmbeddingDIM",
)
RELATIONSHIP_TYPES: Final = ("MENTIONS", "STATES", "RELATION", "SYNONYM", "SAME_AS")
PROPERTY_KEYS: Final = (
    "namespace",
    "id",
    "title",
    "caption",  # Passage and Fact: the name Neo4j Browser shows (common/captions.py)
    "text",
    "metadata_json",
    "embedding",
    "name",
    "passage_count",
    "written_in",
    "subject_id",
    "predicate",
    "object_id",
    "count",
    "predicates",
    "weight",
    "score",
    "schema_version",
    "embedding_model",
    "embedding_dim",
    "graph_version",
    "created_at",
    "reembed_state",
    "method",  # SAME_AS (linking to an enterprise graph)
    "vector_labels",  # HippoRAGMeta: whether the namespace's nodes carry their vector-index label
)

#: Keys of the maps in ``$rows``-style parameters; ``row.key`` reads like a property to the linter.
ROW_KEYS: Final = (
    "passage_id",
    "phrase_id",
    "fact_id",
    "source_id",
    "target_id",
    "exclude_id",
    "vector",
    "index",
    "kind",
    "node",
    "path",
    "passage",
    "raw",
    "mentioned",
    "target",
    "node_id",
)

EmbeddedLabel = Literal["passage", "phrase", "fact"]
#: Whether a namespace's nodes are in the vector indexes (``HippoRAGMeta.vector_labels``, schema.py):
#: ``unlabelled`` (written for ``vector_search = client``: no node carries its dimension's label, so no
#: vector index covers them), ``labelling`` (switching to ``index``: writers label their nodes, batches
#: label the older ones), ``labelled`` (every node with an embedding in its dimension's index; also a
#: namespace made before the property existed).
VectorLabels = Literal["unlabelled", "labelling", "labelled"]
VECTOR_LABEL_STATES: Final[tuple[VectorLabels, ...]] = ("unlabelled", "labelling", "labelled")
EMBEDDED_KINDS: Final[tuple[EmbeddedLabel, ...]] = ("passage", "phrase", "fact")
#: The single vector indexes of stores made before schema 2 (one dimension per database); a store
#: that still has them is migrated to the per-dimension indexes on open.
LEGACY_VECTOR_INDEXES: Final[dict[EmbeddedLabel, str]] = {
    "passage": "hipporag_passage_embedding",
    "phrase": "hipporag_phrase_embedding",
    "fact": "hipporag_fact_embedding",
}
#: Largest embedding dimension Neo4j's vector indexes take (vector.dimensions: 1 to 4096).
MAX_DIMENSION: Final = 4096


def check_dimension(dim: int) -> int:
    """``dim`` if it is an embedding dimension a vector index takes (it is spliced into names)."""
    if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= MAX_DIMENSION:
        raise ValueError(f"embedding dimension {dim!r} must be an integer from 1 to {MAX_DIMENSION}")
    return dim


def vector_index_name(kind: EmbeddedLabel, dim: int) -> str:
    """The vector index of one kind and dimension, e.g. ``hipporag_phrase_embedding_384``."""
    return f"hipporag_{kind}_embedding_{check_dimension(dim)}"


def embedding_label(kind: EmbeddedLabel, dim: int) -> str:
    """The label that puts a node in its dimension's vector index, e.g. ``PhraseEmbedding384``."""
    return f"{kind.capitalize()}Embedding{check_dimension(dim)}"


#: Every parameter a ``.cypher`` file may use, with an example value (the lint schema's declarations).
PARAMETERS: Final[dict[str, Any]] = {
    "namespace": "default",
    "ids": ["passage-1"],
    "names": ["barack obama"],
    "rows": [{"id": "phrase-1"}],
    "pairs": [{"subject_id": "phrase-1", "object_id": "phrase-2"}],
    "seeds": [{"id": "phrase-1", "weight": 1.0, "kind": "phrase"}],
    "scores": [{"id": "phrase-1", "score": 0.5}],
    "schema_version": 1,
    "embedding_model": "all-MiniLM-L6-v2",
    "embedding_dim": 384,
    "dimension": 384,
    "index_name": "hipporag_phrase_embedding_384",
    "index_names": ["hipporag_phrase_embedding_384"],
    "label": "PhraseEmbedding384",
    "labels": ["PhraseEmbedding384"],
    "vector_labels": "unlabelled",
    "prefix_label": "PhraseEmbedding",
    "timeout_seconds": 300,
    "graph_name": "hipporag.neo4j.default.v1",
    "prefix": "hipporag.neo4j.default.v",
    "version": 7,
    "damping": 0.5,
    "max_iterations": 100,
    "tolerance": 1e-8,
    "concurrency": 1,
    "top_nodes": 1000,  # neo4j.gds_top_nodes (gds_passage_scores_top)
    "fetch": 40,
    "min_score": 0.9,
    "vector": [0.1, 0.2],
    "limit": 10,
    "explain_phrases": 5,
    "after": "",
    "name": "barack obama",
    "passage_id": "passage-1",
    "reembed_state": '{"model": "all-MiniLM-L6-v2", "dim": 384, "done_through": {}}',
    # linking to an enterprise graph (label: also the per-dimension label of write_embedding_labels_*)
    "property": "name",
    "skip": 0,
    "types": ["SUBSIDIARY_OF"],
    "node_ids": ["4:0a1b:12"],
    "node_id": "4:0a1b:12",
    # the graph explorer (serve's web page)
    "text": "obama",
    "phrase_id": "phrase-1",
    "phrase_ids": ["phrase-1", "phrase-2"],
}
