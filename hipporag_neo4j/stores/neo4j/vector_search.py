"""Nearest phrases, passages and facts through the vector indexes of the query's dimension.

Each embedding dimension has its own indexes (``hipporag_<kind>_embedding_<dim>``), which serve every
namespace of that dimension, so a look-up asks for more neighbours than it
needs and filters on namespace in Cypher. When a row could still be missing hits (fewer matches than
wanted, the index returned all it was asked for, and its lowest score still passes the threshold) it is
asked again with four times the fetch size, up to :data:`MAX_FETCH`.

Cosine index scores are ``s = (1 + cos) / 2``; the store reports ``cos = 2 s - 1``.

Index scores are approximate: the search is approximate nearest neighbours (HNSW), and indexes of the
``vector-2.0`` provider (the one Neo4j selects) quantize their vectors unless created with
``vector.quantization.enabled: false`` (default ``true``; "Enabling quantization can accelerate search
performance but can slightly decrease accuracy", Cypher manual, "Vector indexes", configuration
settings). The statements therefore re-score each candidate of the namespace with
``vector.similarity.cosine`` ("identical to those used by Neo4j's vector search indexes", Cypher
manual, "Vector functions"), exact on the stored vectors, so thresholds and rankings match the embedded
store's float32 dot products. The index score only decides which candidates are fetched and whether
to fetch more (with :data:`SCORE_MARGIN` for the quantization error).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hipporag_neo4j.stores.base import FactHit, Matrix, PassageScore, PhraseHit, Vector
from hipporag_neo4j.stores.neo4j.capabilities import VectorQueryForm
from hipporag_neo4j.stores.neo4j.graph_model import EmbeddedLabel, vector_index_name
from hipporag_neo4j.stores.neo4j.ingest import vector_list
from hipporag_neo4j.stores.neo4j.runner import CypherRunner

MAX_FETCH = 10_000
GROWTH = 4
#: An approximate index score this far below the threshold still counts as possibly passing it.
SCORE_MARGIN = 0.01


def index_score(cosine: float) -> float:
    return (1.0 + cosine) / 2.0


def cosine_of(score: float) -> float:
    return 2.0 * score - 1.0


def index_params(kind: EmbeddedLabel, form: VectorQueryForm, dim: int) -> dict[str, Any]:
    """How a vector statement names the index of the query's dimension: ``$index_name`` for
    ``db.index.vector.queryNodes``, a spliced name for the SEARCH clause (which takes no parameter)."""
    if form == "search":
        return {"splice_dim": dim}
    return {"index_name": vector_index_name(kind, dim)}


def first_fetch(wanted: int) -> int:
    return min(MAX_FETCH, max(wanted * GROWTH, wanted + 16))


def _row_complete(row: dict[str, Any], wanted: int, fetch: int, min_score: float) -> bool:
    return (
        len(row["matches"]) >= wanted
        or int(row["fetched"]) < fetch
        or float(row["lowest_score"]) < min_score - SCORE_MARGIN
        or fetch >= MAX_FETCH
    )


def nearest_phrases(
    runner: CypherRunner,
    namespace: str,
    form: VectorQueryForm,
    vectors: Matrix,
    top_k: int,
    min_similarity: float,
    exclude_ids: Sequence[str] | None,
) -> list[list[PhraseHit]]:
    n = len(vectors)
    if exclude_ids is not None and len(exclude_ids) != n:
        raise ValueError(f"exclude_ids has {len(exclude_ids)} entries for {n} vectors")
    if n == 0 or top_k <= 0:
        return [[] for _ in range(n)]
    min_score = index_score(min_similarity)
    query = "vector_phrases_search" if form == "search" else "vector_phrases"
    found: dict[int, list[dict[str, Any]]] = {}
    pending = list(range(n))
    fetch = first_fetch(top_k + 1)
    while pending:
        rows = [
            {
                "index": i,
                "vector": vector_list(vectors[i]),
                "exclude_id": exclude_ids[i] if exclude_ids else None,
            }
            for i in pending
        ]
        records = runner.read_batched(
            query,
            "rows",
            rows,
            namespace=namespace,
            fetch=fetch,
            min_score=min_score,
            **index_params("phrase", form, vectors.shape[1]),
        )
        retry: list[int] = []
        for record in records:
            i = int(record["row_index"])
            found[i] = list(record["matches"])
            if not _row_complete(record, top_k, fetch, min_score):
                retry.append(i)
        pending = sorted(retry)
        fetch = min(MAX_FETCH, fetch * GROWTH)
    result: list[list[PhraseHit]] = []
    for i in range(n):
        matches = sorted(found.get(i, []), key=lambda m: (-float(m["score"]), str(m["id"])))[:top_k]
        result.append(
            [
                PhraseHit(
                    id=str(m["id"]),
                    name=str(m["name"]),
                    similarity=cosine_of(float(m["score"])),
                    passage_count=int(m["passage_count"] or 0),
                )
                for m in matches
            ]
        )
    return result


def _matches(
    runner: CypherRunner,
    namespace: str,
    kind: EmbeddedLabel,
    form: VectorQueryForm,
    vector: Vector,
    wanted: int,
) -> list[dict[str, Any]]:
    """The namespace's ``kind`` nodes nearest ``vector`` (``wanted`` of them where there are that many),
    by exact cosine score, highest first, ties by id."""
    query = f"vector_{kind}s_search" if form == "search" else f"vector_{kind}s"
    fetch = first_fetch(wanted)
    values = vector_list(vector)
    where = index_params(kind, form, len(values))
    while True:
        rows = runner.read(query, namespace=namespace, fetch=fetch, vector=values, **where)
        row: dict[str, Any] = rows[0] if rows else {"fetched": 0, "matches": []}
        matches = [m for m in row["matches"] if m["score"] is not None]
        if len(matches) >= wanted or int(row["fetched"]) < fetch or fetch >= MAX_FETCH:
            break
        fetch = min(MAX_FETCH, fetch * GROWTH)
    return sorted(matches, key=lambda m: (-float(m["score"]), str(m["id"])))


def dense_passages(
    runner: CypherRunner, namespace: str, form: VectorQueryForm, vector: Vector, limit: int
) -> list[PassageScore]:
    if limit <= 0:
        return []
    matches = _matches(runner, namespace, "passage", form, vector, limit)
    return [
        PassageScore(passage_id=str(m["id"]), score=cosine_of(float(m["score"]))) for m in matches[:limit]
    ]


def nearest_facts(
    runner: CypherRunner, namespace: str, form: VectorQueryForm, vector: Vector, top_k: int
) -> list[FactHit]:
    """Up to ``top_k`` facts of the namespace by exact cosine to ``vector``, highest first, ties by id."""
    if top_k <= 0:
        return []
    return [
        FactHit(
            id=str(m["id"]),
            subject_id=str(m["subject_id"]),
            subject=str(m["subject"] or ""),
            predicate=str(m["predicate"]),
            object_id=str(m["object_id"]),
            object=str(m["object"] or ""),
            similarity=cosine_of(float(m["score"])),
        )
        for m in _matches(runner, namespace, "fact", form, vector, top_k)[:top_k]
    ]
