"""Idempotent schema set-up and the metadata check done by ``open()``.

Order: constraints and range indexes; the namespace's metadata (schema version, embedding model and
dimension) checked when it exists; the shared vector indexes checked against the dimension, created if
missing and awaited; the metadata recorded for a new namespace.
"""

from __future__ import annotations

from hipporag_neo4j.errors import ModelMismatchError, StoreError
from hipporag_neo4j.stores.base import SCHEMA_VERSION, StoreMeta
from hipporag_neo4j.stores.base import check_meta as check_store_meta
from hipporag_neo4j.stores.neo4j.graph_model import VECTOR_INDEXES
from hipporag_neo4j.stores.neo4j.writer import CypherRunner, Record

INDEX_TIMEOUT_SECONDS = 300


def meta_of(row: Record) -> StoreMeta:
    return StoreMeta(
        schema_version=int(row["schema_version"]),
        embedding_model=str(row["embedding_model"]),
        embedding_dim=int(row["embedding_dim"]),
    )


def read_meta(runner: CypherRunner, namespace: str) -> StoreMeta | None:
    rows = runner.read("meta_read", namespace=namespace)
    return meta_of(rows[0]) if rows else None


def check_meta(meta: StoreMeta, namespace: str, embedding_model: str, embedding_dim: int) -> None:
    check_store_meta(meta, f"namespace {namespace!r}", embedding_model, embedding_dim)


def check_vector_dimensions(runner: CypherRunner, namespace: str, embedding_dim: int) -> bool:
    """True when all vector indexes exist with ``embedding_dim``; raises when one has another size."""
    rows = runner.read("schema_vector_index_dimensions", index_names=sorted(VECTOR_INDEXES.values()))
    wrong = {r["name"]: r["dimensions"] for r in rows if r["dimensions"] is not None}
    wrong = {name: dim for name, dim in wrong.items() if int(dim) != embedding_dim}
    if wrong:
        others = runner.read("meta_other_dimensions", namespace=namespace)
        users = ", ".join(f"{r['namespace']} ({r['embedding_dim']}-d)" for r in others) or "none recorded"
        raise ModelMismatchError(
            f"vector indexes {wrong} of this database have another dimension than {embedding_dim}; the "
            f"namespaces sharing them: {users}. Use another database for another embedding dimension."
        )
    return len(rows) == len(VECTOR_INDEXES)


def create_vector_indexes(runner: CypherRunner, embedding_dim: int) -> None:
    runner.run_script("schema_vector_indexes", dimension=embedding_dim)


def await_vector_indexes(runner: CypherRunner) -> None:
    """A new index is populated in the background; wait until each is ONLINE before using it."""
    for name in sorted(VECTOR_INDEXES.values()):
        runner.read("schema_await_index", leader=True, index_name=name, timeout_seconds=INDEX_TIMEOUT_SECONDS)


def _run_schema_script(runner: CypherRunner, name: str) -> None:
    try:
        runner.run_script(name)
    except StoreError:
        # two processes creating the same constraint at once: the loser sees it existing on a re-run
        runner.run_script(name)


def ensure_schema(
    runner: CypherRunner, namespace: str, embedding_model: str, embedding_dim: int
) -> StoreMeta:
    """Create what is missing, check what exists; the namespace's metadata."""
    _run_schema_script(runner, "schema_constraints")
    _run_schema_script(runner, "schema_range_indexes")
    meta = read_meta(runner, namespace)
    if meta is not None:
        check_meta(meta, namespace, embedding_model, embedding_dim)
    if not check_vector_dimensions(runner, namespace, embedding_dim):
        create_vector_indexes(runner, embedding_dim)
    await_vector_indexes(runner)
    if meta is None:
        rows = runner.write(
            lambda tx: tx.run(
                "meta_create",
                namespace=namespace,
                schema_version=SCHEMA_VERSION,
                embedding_model=embedding_model,
                embedding_dim=embedding_dim,
            )
        )
        meta = meta_of(rows[0])
        check_meta(meta, namespace, embedding_model, embedding_dim)  # a concurrent open may have won
    return meta
