"""Transaction bodies of the writes: ingestion, synonyms, delete, re-embedding.

Each starts with ``meta_bump_version``: it bumps the namespace's graph version and takes the write lock
on its metadata node, so writers of one namespace go one at a time (no duplicate work, no deadlock
between them) and every write is seen by the PPR engines as a new graph version. Each body may run
again from the start when the runner retries the transaction, and gives the same result.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hipporag_neo4j.common.captions import fact_caption, passage_caption
from hipporag_neo4j.errors import PhrasesVanishedError, StoreError
from hipporag_neo4j.stores.base import (
    DeleteReport,
    FactRecord,
    Matrix,
    PassageRecord,
    PhraseRecord,
    SynonymEdge,
)
from hipporag_neo4j.stores.neo4j.graph_model import EmbeddedLabel, embedding_label
from hipporag_neo4j.stores.neo4j.runner import CypherTransaction


def bump_version_labelled(tx: CypherTransaction, namespace: str) -> tuple[int, bool]:
    """Bump the graph version (the namespace's write lock); the new version and whether this
    transaction's nodes get their vector-index label (``vector_labels`` is not ``unlabelled``, read under
    that lock, so a switch to the indexes (schema.label_vectors) never misses a node)."""
    rows = tx.run("meta_bump_version", namespace=namespace)
    if not rows:
        raise StoreError(f"namespace {namespace!r} has no metadata node: open() the store first")
    return int(rows[0]["graph_version"]), rows[0].get("vector_labels", "labelled") != "unlabelled"


def bump_version(tx: CypherTransaction, namespace: str) -> int:
    return bump_version_labelled(tx, namespace)[0]


def vector_list(vector: Iterable[Any]) -> list[float]:
    """A vector as the LIST<FLOAT> the driver sends (works on every edition): float64, exact for a
    float32 vector, as one C loop (``tolist``) rather than a ``float()`` per element."""
    values: list[float] = np.asarray(vector, dtype=np.float64).ravel().tolist()
    return values


#: What one write transaction may hold, in rows, a vector counting as ``dim // VECTOR_ROW_DIMS`` rows:
#: a 256-passage batch of MuSiQue-like text (~2.6k phrases, ~2.3k facts, 384-d vectors) is ~140k, one
#: transaction; a bigger write is split (``transaction_groups``) so that no transaction nears the
#: server's transaction memory limit (``dbms.memory.transaction.total.max``, 512 MiB by default as
#: scripts/neo4j_server.py configures it).
TRANSACTION_ROWS = 200_000
VECTOR_ROW_DIMS = 16
#: SYNONYM edges per write transaction (one row each, no vectors)
SYNONYM_ROWS = 100_000


def _unique(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


@dataclass
class WriteOutcome:
    """What one write transaction did: the phrases and facts it inserted, the graph version it made."""

    phrases: int = 0
    facts: int = 0
    version: int | None = None
    #: RELATION edges made minus deleted (None: not counted by the server's answer)
    relation_edges: int | None = 0
    #: the SYNONYM edges inserted, (source, target, score) (None: not known)
    synonyms: list[tuple[str, str, float]] | None = None


def _created(rows: list[dict[str, Any]]) -> int:
    return sum(int(row.get("created") or 0) for row in rows)


def _labels(kind: EmbeddedLabel, dim: int, labelled: bool) -> dict[str, Any]:
    """The parameters that give a written node its dimension's label (as ``schema.label_embeddings``),
    or none when the namespace's nodes stay out of the vector indexes (``labelled`` False)."""
    return {
        "labels": [embedding_label(kind, dim)] if labelled else [],
        "prefix_label": f"{kind.capitalize()}Embedding",
    }


def transaction_groups(
    phrases: Sequence[PhraseRecord],
    passages: Sequence[PassageRecord],
    dim: int,
    budget: int = TRANSACTION_ROWS,
) -> list[tuple[list[PhraseRecord], list[PassageRecord]]]:
    """``phrases`` and ``passages`` in consecutive groups of at most ``budget`` weighted rows (one
    passage more when a single one is larger), each group one transaction that holds whatever its
    passages need: a phrase goes with the first group that mentions it or names it in a fact (those
    nobody names, with the first). Each group is whole (its passages with their mentions, facts and
    edges), so an interruption between two leaves every passage written or not written, and a re-run
    writes the rest; the phrases of a committed group are marked "synonyms pending" in it."""
    vector = max(1, dim // VECTOR_ROW_DIMS)
    by_id = {p.id: p for p in phrases}
    placed: set[str] = set()
    groups: list[tuple[list[PhraseRecord], list[PassageRecord]]] = [([], [])]
    used = 0
    for record in passages:
        named = [*record.mentions, *(i for f in record.facts for i in (f.subject_id, f.object_id))]
        needed = [by_id[i] for i in dict.fromkeys(named) if i in by_id and i not in placed]
        facts = len(record.facts)
        cost = (1 + vector) + len(record.mentions) + facts * (3 + vector) + len(needed) * (1 + vector)
        if groups[-1][1] and used + cost > budget:
            groups.append(([], []))
            used = 0
        groups[-1][0].extend(needed)
        groups[-1][1].append(record)
        placed.update(p.id for p in needed)
        used += cost
    groups[0][0][:0] = [p for p in phrases if p.id not in placed]
    return groups


def synonym_chunks(edges: Sequence[SynonymEdge], size: int = SYNONYM_ROWS) -> list[list[SynonymEdge]]:
    """The canonical edges of ``edges`` (self pairs dropped, the last edge given for a pair kept), sorted
    by their MERGE key, in chunks of at most ``size``: one write transaction each."""
    canonical: dict[tuple[str, str], SynonymEdge] = {}
    for edge in edges:
        c = edge.canonical()
        if c.source_id != c.target_id:
            canonical[(c.source_id, c.target_id)] = c
    ordered = [canonical[k] for k in sorted(canonical)]
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def write_passages(
    tx: CypherTransaction,
    namespace: str,
    phrases: Sequence[PhraseRecord],
    passages: Sequence[PassageRecord],
    outcome: WriteOutcome | None = None,
    *,
    dim: int,
) -> list[str]:
    """Write new phrases (labelled with their dimension ``dim`` unless the namespace's nodes stay out of
    the vector indexes, and marked "synonyms pending"), then the
    passages not stored yet with their mentions and facts, and bring the affected RELATION edges and
    passage counts forward by what this transaction added (not recomputed: every edge it adds is new, as
    its passages are). Returns the ids of the passages written; ``outcome`` (when given) gets the phrases
    and facts this transaction inserted (MERGE ... ON CREATE, counted in the statement: the writers of a
    namespace go one at a time behind ``meta_bump_version``) and the graph version it made."""
    if outcome is not None:
        outcome.phrases, outcome.facts, outcome.version, outcome.relation_edges = 0, 0, None, 0
    if not phrases and not passages:
        return []
    version, labelled = bump_version_labelled(tx, namespace)
    if outcome is not None:
        outcome.version = version
    # every batch's rows sorted by their MERGE key: two writers that lock the same nodes lock them in the
    # same order (no deadlock between them, whatever else serialises them)
    phrase_rows = {
        p.id: {"id": p.id, "name": p.name, "embedding": vector_list(p.embedding)}
        for p in sorted(phrases, key=lambda p: p.id)
    }
    new_phrases = _created(
        tx.run_batched(
            "write_phrases",
            "rows",
            list(phrase_rows.values()),
            namespace=namespace,
            version=version,
            **_labels("phrase", dim, labelled),
        )
    )
    if outcome is not None:
        outcome.phrases = new_phrases

    existing = {
        r["id"]
        for r in tx.run_batched(
            "read_existing_passages", "ids", _unique([r.passage.id for r in passages]), namespace=namespace
        )
    }
    new: dict[str, PassageRecord] = {}
    for record in passages:
        if record.passage.id not in existing and record.passage.id not in new:
            new[record.passage.id] = record
    if not new:
        return []

    passage_rows = [
        {
            "id": r.passage.id,
            "title": r.passage.title,
            "caption": passage_caption(r.passage.id, r.passage.title),
            "text": r.passage.text,
            "metadata_json": json.dumps(r.passage.metadata, sort_keys=True) if r.passage.metadata else None,
            "embedding": vector_list(r.embedding),
        }
        for _, r in sorted(new.items())
    ]
    tx.run_batched(
        "write_passages",
        "rows",
        passage_rows,
        namespace=namespace,
        version=version,
        **_labels("passage", dim, labelled),
    )

    mention_rows = [
        {"passage_id": pid, "phrase_id": phrase_id, "count": int(count)}
        for pid, r in sorted(new.items())
        for phrase_id, count in sorted(r.mentions.items())
    ]
    written = sum(
        int(row["written"])
        for row in tx.run_batched("write_mentions", "rows", mention_rows, namespace=namespace)
    )
    if written != len(mention_rows):
        raise PhrasesVanishedError(
            f"{len(mention_rows) - written} mentions name a phrase that is neither stored nor given: "
            "write the phrases first (nothing was written)"
        )

    fact_rows: dict[str, dict[str, object]] = {}
    stated: dict[tuple[str, str], FactRecord] = {}  # (passage, fact): one STATES edge each
    for pid, r in new.items():
        for fact in r.facts:
            row = fact_rows.setdefault(
                fact.id,
                {
                    "id": fact.id,
                    "subject_id": fact.subject_id,
                    "predicate": fact.predicate,
                    "object_id": fact.object_id,
                    "text": fact.text,
                    "caption": fact_caption(fact.text, fact.predicate),
                    "embedding": None,
                },
            )
            if fact.embedding is not None and row["embedding"] is None:
                row["embedding"] = vector_list(fact.embedding)
            stated.setdefault((pid, fact.id), fact)
    new_facts = _created(
        tx.run_batched(
            "write_facts",
            "rows",
            [fact_rows[k] for k in sorted(fact_rows)],
            namespace=namespace,
            version=version,
            **_labels("fact", dim, labelled),
        )
    )
    if outcome is not None:
        outcome.facts = new_facts
    state_rows = [{"passage_id": pid, "fact_id": fid} for pid, fid in sorted(stated)]
    tx.run_batched("write_states", "rows", state_rows, namespace=namespace)
    changed = write_relations(tx, namespace, list(stated.values()))
    if outcome is not None:
        outcome.relation_edges = changed
    return list(new)


def write_relations(tx: CypherTransaction, namespace: str, statements: Sequence[FactRecord]) -> int:
    """Bring the RELATION edges forward by new (passage, fact) statements (one ``FactRecord`` each):
    per (subject, object) pair, weight + the statements, predicates united; the edges it created."""
    pairs: dict[tuple[str, str], tuple[int, set[str]]] = {}
    for fact in statements:
        weight, predicates = pairs.get((fact.subject_id, fact.object_id), (0, set()))
        predicates.add(fact.predicate)
        pairs[(fact.subject_id, fact.object_id)] = (weight + 1, predicates)
    rows = [
        {"subject_id": s, "object_id": o, "weight": weight, "predicates": sorted(predicates)}
        for (s, o), (weight, predicates) in sorted(pairs.items())
    ]
    return _created(tx.run_batched("write_relations", "rows", rows, namespace=namespace))


def refresh_relations(tx: CypherTransaction, namespace: str, pairs: Sequence[tuple[str, str]]) -> int | None:
    """Recompute the RELATION edges of ``pairs``; edges created minus deleted (None if not reported)."""
    rows = [{"subject_id": s, "object_id": o} for s, o in sorted(set(pairs))]
    found = tx.run_batched("refresh_relations", "pairs", rows, namespace=namespace)
    if any("created" not in r for r in found):
        return None
    return sum(int(r["created"] or 0) - int(r["removed"] or 0) for r in found)


def write_synonyms(
    tx: CypherTransaction, namespace: str, edges: Sequence[SynonymEdge], outcome: WriteOutcome | None = None
) -> int:
    """MERGE canonical synonym edges (self pairs dropped, one row per pair); how many were new.

    Same rule as the embedded store: an edge already stored keeps its score (write_synonyms.cypher sets
    it on creation only); within one call the last edge given for a pair wins."""
    canonical: dict[tuple[str, str], SynonymEdge] = {}
    for edge in edges:
        c = edge.canonical()
        if c.source_id != c.target_id:
            canonical[(c.source_id, c.target_id)] = c
    if outcome is not None:
        outcome.version, outcome.synonyms = None, []
    if not canonical:
        return 0
    version = bump_version(tx, namespace)
    if outcome is not None:
        outcome.version = version
    rows = [
        {"source_id": s, "target_id": t, "score": float(e.score)} for (s, t), e in sorted(canonical.items())
    ]
    found = tx.run_batched("write_synonyms", "rows", rows, namespace=namespace)
    if outcome is not None:
        if all("created_pairs" in r for r in found):
            outcome.synonyms = [
                (str(s), str(t), float(canonical[(str(s), str(t))].score))
                for r in found
                for s, t in r["created_pairs"]
            ]
        else:
            outcome.synonyms = None
    return sum(int(r["created"]) for r in found)


def delete_passages(tx: CypherTransaction, namespace: str, ids: Sequence[str]) -> DeleteReport:
    """Remove passages and everything only they supported; exact by provenance."""
    wanted = _unique(ids)
    if not wanted:
        return DeleteReport()
    bump_version(tx, namespace)
    plan = tx.run_batched("delete_plan", "ids", wanted, namespace=namespace)
    found = {str(row["id"]) for row in plan}
    report = DeleteReport(
        passages=[i for i in wanted if i in found], missing=[i for i in wanted if i not in found]
    )
    if not found:
        return report
    phrase_ids = sorted({str(p) for row in plan for p in row["phrase_ids"]})
    facts = [f for row in plan for f in row["facts"]]
    fact_ids = sorted({str(f["id"]) for f in facts})
    pairs = [(str(f["subject_id"]), str(f["object_id"])) for f in facts]

    tx.run_batched("delete_passages", "ids", report.passages, namespace=namespace)
    removed = tx.run_batched("delete_orphan_facts", "ids", fact_ids, namespace=namespace)
    report.facts_removed = sum(int(r["removed"]) for r in removed)
    refresh_relations(tx, namespace, pairs)
    for row in tx.run_batched("delete_orphan_phrases", "ids", phrase_ids, namespace=namespace):
        report.phrases_removed += int(row["phrases_removed"])
        report.synonym_edges_removed += int(row["synonym_edges_removed"])
    tx.run_batched("refresh_passage_counts", "ids", phrase_ids, namespace=namespace)
    return report


def set_embeddings(
    tx: CypherTransaction, namespace: str, kind: EmbeddedLabel, ids: Sequence[str], vectors: Matrix
) -> bool:
    """New embeddings of ``ids``; whether the namespace's nodes carry their vector-index label (then the
    caller moves them to the new dimension's, ``schema.label_embeddings``)."""
    if len(ids) != len(vectors):
        raise StoreError(f"set_embeddings: {len(ids)} ids but {len(vectors)} vectors")
    if not ids:
        return False
    _, labelled = bump_version_labelled(tx, namespace)
    rows = [{"id": i, "embedding": vector_list(v)} for i, v in zip(ids, vectors, strict=True)]
    tx.run_batched(f"write_embeddings_{kind}", "rows", rows, namespace=namespace)
    return labelled
