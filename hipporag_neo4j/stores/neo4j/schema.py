"""Idempotent schema set-up and the metadata check done by ``open()``.

Order: constraints and range indexes; the namespace's metadata (schema version, embedding model and
dimension) checked when it exists; a store made before the per-dimension indexes migrated; the vector
indexes of the namespace's dimension created if missing and awaited; the metadata recorded for a new
namespace.

Several embedding models share one database (Community Edition has only one): each dimension has its
own three vector indexes, ``hipporag_<kind>_embedding_<dim>``, over the nodes labelled
``<Kind>Embedding<dim>`` (the property stays ``embedding``). Every node with an embedding carries the
label of its dimension, written with the node (:func:`label_embeddings`); a re-embed moves it to the
new dimension's label. A query vector's length picks the index, and the namespace filter stays as it
was. Older stores had one unsuffixed index per kind (so one dimension per database): :func:`migrate`
labels their nodes with that dimension, creates its indexes and drops the old ones, on the first open.

Nodes enter the vector indexes only when they are used. Inserting a node into an HNSW index is most of
the cost of a write (a 3,000-vector transaction commits in ~9 s labelled vs ~1 s not, on Neo4j 5.26:
benchmarks/results/neo4j_write_profile_S_lts.md), and with ``neo4j.vector_search = client`` (the
default) nothing queries them. So the namespace's metadata records ``vector_labels``
(graph_model.VectorLabels): a namespace made for ``client`` is ``unlabelled`` and its writes leave the
dimension's label off; opening it with ``index`` (:func:`label_vectors`) sets ``labelling`` (from then on
every write labels its nodes: writers read the state under the namespace's lock, ``meta_bump_version``),
labels the older nodes in batches of :data:`LABEL_BATCH` by id, and sets ``labelled``; an interrupted
switch is finished by the next open with ``index``. The state never goes back: a labelled namespace is
correct in both modes. A namespace made before the property existed counts as ``labelled`` (its nodes
were labelled by their writes).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from hipporag_neo4j.errors import ModelMismatchError, StoreError
from hipporag_neo4j.stores.base import SCHEMA_VERSION, StoreMeta
from hipporag_neo4j.stores.base import check_meta as check_store_meta
from hipporag_neo4j.stores.neo4j.graph_model import (
    EMBEDDED_KINDS,
    LEGACY_VECTOR_INDEXES,
    VECTOR_LABEL_STATES,
    EmbeddedLabel,
    VectorLabels,
    embedding_label,
    vector_index_name,
)
from hipporag_neo4j.stores.neo4j.runner import CypherRunner, CypherTransaction, Record

INDEX_TIMEOUT_SECONDS = 300
#: Nodes labelled per transaction while migrating an older store.
MIGRATION_BATCH = 10_000
#: Nodes labelled per transaction while a namespace switches to the vector indexes (label_vectors).
LABEL_BATCH = 5_000

log = logging.getLogger(__name__)


def meta_of(row: Record) -> StoreMeta:
    return StoreMeta(
        schema_version=int(row["schema_version"]),
        embedding_model=str(row["embedding_model"]),
        embedding_dim=int(row["embedding_dim"]),
    )


def read_meta(runner: CypherRunner, namespace: str) -> StoreMeta | None:
    rows = runner.read("meta_read", namespace=namespace)
    return meta_of(rows[0]) if rows else None


def vector_labels_of(row: Record) -> VectorLabels:
    """The ``vector_labels`` state of a metadata row (``labelled`` when the row does not say)."""
    value = row.get("vector_labels") or "labelled"
    for state in VECTOR_LABEL_STATES:
        if value == state:
            return state
    raise StoreError(f"unknown vector_labels state {value!r} in the namespace's metadata")


def read_vector_labels(runner: CypherRunner, namespace: str) -> VectorLabels | None:
    """Whether the namespace's nodes are in the vector indexes; None without metadata."""
    rows = runner.read("meta_read", namespace=namespace)
    return vector_labels_of(rows[0]) if rows else None


def _set_vector_labels(runner: CypherRunner, namespace: str, state: VectorLabels) -> VectorLabels:
    rows = runner.write(lambda tx: tx.run("meta_vector_labels_set", namespace=namespace, vector_labels=state))
    if not rows:
        raise StoreError(f"namespace {namespace!r} has no metadata node")
    return vector_labels_of(rows[0])


def label_vectors(runner: CypherRunner, namespace: str, embedding_dim: int, batch: int | None = None) -> int:
    """Put the namespace's nodes in the vector indexes of ``embedding_dim`` (``vector_search = index``):
    state ``labelling``, every node with an embedding of that dimension labelled in transactions of
    ``batch`` nodes (:data:`LABEL_BATCH` unless given) by id (run again after an interruption, it goes
    through them again and labels what is left), state ``labelled``. The nodes it went through (0 when
    the namespace was labelled already)."""
    if _set_vector_labels(runner, namespace, "labelling") == "labelled":
        return 0
    size = batch or LABEL_BATCH
    log.warning(
        "namespace %r: adding its nodes to the %d-d vector indexes (vector_search=index)",
        namespace,
        embedding_dim,
    )
    seen = 0
    for kind in EMBEDDED_KINDS:
        after: str | None = ""
        while after is not None:

            def step(tx: CypherTransaction, kind: EmbeddedLabel = kind, after: str = after) -> list[Record]:
                return tx.run(
                    f"label_vectors_{kind}",
                    namespace=namespace,
                    after=after,
                    limit=size,
                    dimension=embedding_dim,
                    label=embedding_label(kind, embedding_dim),
                )

            rows = runner.write(step)
            count = int(rows[0]["seen"]) if rows else 0
            seen += count
            after = str(rows[0]["last"]) if count == size and rows[0]["last"] is not None else None
    _set_vector_labels(runner, namespace, "labelled")
    return seen


def check_meta(meta: StoreMeta, namespace: str, embedding_model: str, embedding_dim: int) -> None:
    check_store_meta(meta, f"namespace {namespace!r}", embedding_model, embedding_dim)


def vector_indexes(runner: CypherRunner) -> dict[str, int | None]:
    """Our vector indexes that exist: name -> dimension."""
    rows = runner.read("schema_vector_index_dimensions")
    return {str(r["name"]): int(r["dimensions"]) if r["dimensions"] is not None else None for r in rows}


def ensure_vector_indexes(runner: CypherRunner, embedding_dim: int) -> None:
    """The three vector indexes of ``embedding_dim``, created when missing and awaited ONLINE."""
    existing = vector_indexes(runner)
    names = [vector_index_name(kind, embedding_dim) for kind in EMBEDDED_KINDS]
    wrong = {n: existing[n] for n in names if n in existing and existing[n] not in (None, embedding_dim)}
    if wrong:  # only a hand-made index could have our name and another size
        raise ModelMismatchError(
            f"vector indexes {wrong} do not have the dimension {embedding_dim} their names say: drop them "
            "(DROP INDEX <name>) and open the store again to re-create them"
        )
    if not all(n in existing for n in names):
        _run_schema_script(runner, "schema_vector_indexes", splice_dim=embedding_dim, dimension=embedding_dim)
    await_vector_indexes(runner, embedding_dim)


def await_vector_indexes(runner: CypherRunner, embedding_dim: int) -> None:
    """A new index is populated in the background; wait until each is ONLINE before using it."""
    for kind in EMBEDDED_KINDS:
        runner.read(
            "schema_await_index",
            leader=True,
            index_name=vector_index_name(kind, embedding_dim),
            timeout_seconds=INDEX_TIMEOUT_SECONDS,
        )


def migrate(runner: CypherRunner) -> int | None:
    """Move a store made before the per-dimension indexes onto them: label every embedded node with the
    old indexes' dimension, create that dimension's indexes, drop the old ones. Safe to run again (or
    from two processes at once). The old dimension, or None when there was nothing to migrate."""
    existing = vector_indexes(runner)
    legacy = {name: existing[name] for name in LEGACY_VECTOR_INDEXES.values() if name in existing}
    if not legacy:
        return None
    dims = {dim for dim in legacy.values() if dim is not None}
    if len(dims) != 1:
        raise StoreError(
            f"cannot migrate the vector indexes {legacy}: they should share one dimension. Drop them "
            "(DROP INDEX <name>) and re-embed with `hipporag-neo4j reembed`"
        )
    (dim,) = dims
    log.warning("migrating the vector indexes %s to per-dimension indexes (%d-d)", sorted(legacy), dim)
    for kind in EMBEDDED_KINDS:
        query, label = f"migrate_embedding_labels_{kind}", embedding_label(kind, dim)

        def step(tx: CypherTransaction, query: str = query, label: str = label) -> list[Record]:
            return tx.run(query, label=label, dimension=dim, limit=MIGRATION_BATCH)

        while True:
            rows = runner.write(step)
            if not rows or not rows[0]["labelled"]:
                break
    ensure_vector_indexes(runner, dim)
    runner.run_script("schema_drop_legacy_vector_indexes")
    return dim


def label_embeddings(
    tx: CypherTransaction, namespace: str, kind: EmbeddedLabel, ids: Sequence[str], embedding_dim: int
) -> None:
    """Give the namespace's nodes ``ids`` of ``kind`` their dimension's label (removing another's)."""
    if not ids:
        return
    tx.run_batched(
        f"write_embedding_labels_{kind}",
        "ids",
        list(dict.fromkeys(ids)),
        namespace=namespace,
        label=embedding_label(kind, embedding_dim),
        prefix_label=f"{kind.capitalize()}Embedding",
    )


def drop_unused_vector_indexes(runner: CypherRunner, embedding_dim: int) -> bool:
    """Drop the indexes of ``embedding_dim`` when no namespace of the database records it any more
    (after a re-embed to another dimension); True when dropped."""
    recorded = {int(r["embedding_dim"]) for r in runner.read("meta_dimensions") if r["embedding_dim"]}
    if embedding_dim in recorded:
        return False
    runner.run_script("schema_drop_vector_indexes", splice_dim=embedding_dim)
    return True


#: What the server says to an ``IF NOT EXISTS`` create that raced another transaction creating the same
#: index or constraint: the other one committed first, so it exists now.
CREATED_MEANWHILE = frozenset(
    {
        "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
        "Neo.ClientError.Schema.IndexAlreadyExists",
        "Neo.ClientError.Schema.ConstraintAlreadyExists",
    }
)
#: Attempts of a schema script while other processes create the same rules: each lost race is a rule that
#: exists from then on (a no-op on every later attempt), so a script of n rules loses at most n times,
#: however many processes race it; the scripts hold at most five.
SCHEMA_ATTEMPTS = 8


def _created_meanwhile(exc: StoreError) -> bool:
    return getattr(exc.__cause__, "code", None) in CREATED_MEANWHILE


def _run_schema_script(
    runner: CypherRunner, name: str, *, splice_dim: int | None = None, **params: Any
) -> None:
    """Run a script of ``IF NOT EXISTS`` creates. Processes opening a store at once create the same rules
    one statement after another, so each can lose a race on any statement (the loser is told the rule
    already exists): the script is run again, its created rules now no-ops, until it passes. Any other
    failure is retried once (a rule made between our look and our create, on servers that word it
    otherwise)."""
    for attempt in range(1, SCHEMA_ATTEMPTS + 1):
        try:
            runner.run_script(name, splice_dim=splice_dim, **params)
            return
        except StoreError as exc:
            if attempt == SCHEMA_ATTEMPTS or (attempt > 1 and not _created_meanwhile(exc)):
                raise


def ensure_schema(
    runner: CypherRunner,
    namespace: str,
    embedding_model: str,
    embedding_dim: int,
    *,
    index_vectors: bool = True,
) -> StoreMeta:
    """Create what is missing, check what exists; the namespace's metadata. ``index_vectors``
    (``vector_search = index``): the namespace's nodes are put in the vector indexes (a new namespace is
    made ``labelled``, an ``unlabelled`` one is switched, :func:`label_vectors`); otherwise a new
    namespace is made ``unlabelled`` and an existing one is left in its state."""
    _run_schema_script(runner, "schema_constraints")
    _run_schema_script(runner, "schema_range_indexes")
    rows = runner.read("meta_read", namespace=namespace)
    meta = meta_of(rows[0]) if rows else None
    if meta is not None:
        check_meta(meta, namespace, embedding_model, embedding_dim)
    migrate(runner)
    ensure_vector_indexes(runner, embedding_dim)
    if meta is None:
        rows = runner.write(
            lambda tx: tx.run(
                "meta_create",
                namespace=namespace,
                schema_version=SCHEMA_VERSION,
                embedding_model=embedding_model,
                embedding_dim=embedding_dim,
                vector_labels="labelled" if index_vectors else "unlabelled",
            )
        )
        meta = meta_of(rows[0])
        check_meta(meta, namespace, embedding_model, embedding_dim)  # a concurrent open may have won
    if index_vectors and vector_labels_of(rows[0]) != "labelled":
        label_vectors(runner, namespace, embedding_dim)
    return meta
