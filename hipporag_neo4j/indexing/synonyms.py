"""Synonym edges: each new phrase against every stored phrase, through the store's vector search.

The work is driven by the store's "synonyms pending" marks, written in the same transaction as the
phrases: whatever a crash interrupted (or a re-embed reset) is finished by the next index run or
query, and clearing a mark is atomic with writing that phrase's edges.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hipporag_neo4j.common.text import alnum_count
from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.stores.base import GraphStore, PhraseRecord, SynonymEdge

PENDING_BATCH = 1024  # phrases per round: bounds the similarity matrix to 1024 x |phrases|


def synonym_edges(
    store: GraphStore, phrases: Sequence[PhraseRecord], top_k: int, threshold: float
) -> list[SynonymEdge]:
    """Edges from ``phrases`` to their stored neighbours with cosine >= ``threshold`` (at most
    ``top_k`` each); phrases of two or fewer letters and digits take no part (HippoRAG's rule)."""
    queries = [p for p in phrases if alnum_count(p.name) > 2]
    if not queries:
        return []
    hits = store.nearest_phrases(
        np.stack([p.embedding for p in queries]), top_k, threshold, exclude_ids=[p.id for p in queries]
    )
    return [
        SynonymEdge(phrase.id, hit.id, hit.similarity)
        for phrase, row in zip(queries, hits, strict=True)
        for hit in row
        if alnum_count(hit.name) > 2
    ]


def finish_pending_synonyms(store: GraphStore, top_k: int, threshold: float) -> int:
    """Compute the synonym edges of every phrase marked pending; returns how many edges were new."""
    added = 0
    previous: list[str] = []
    while pending := store.pending_synonym_phrases(PENDING_BATCH):
        ids = [p.id for p in pending]
        if ids == previous:  # a store that does not clear its marks would loop for ever
            raise StoreError(f"the store kept {len(ids)} phrases marked 'synonyms pending' after writing")
        added += store.write_synonyms(synonym_edges(store, pending, top_k, threshold), done=ids)
        previous = ids
    return added
