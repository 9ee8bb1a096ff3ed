"""Synonym edges: each new phrase against every stored phrase, through the store's vector search.

The work is driven by the store's "synonyms pending" marks, written in the same transaction as the
phrases: whatever a crash interrupted (or a re-embed reset) is finished by the next index run or
query, and clearing a mark is atomic with writing that phrase's edges.

Identifiers, numbers, dates and codes are not joined by embedding similarity alone (issue 37): two
phrases whose numbers differ, a number being a maximal run of digits, in order, are never synonyms
("ticket fh 1939" / "ticket fh 1940", "2024 03 01" / "2024 03 02", "apollo 11" / "apollo 12"), whatever
their cosine; phrases with the same numbers ("route 66" / "route 66 highway") or none ("marie curie" /
"curie") are decided by the cosine as before. The embedding of a short name that is mostly digits is
close to every other such name, so on a ticket archive 99.8% of the edges joined different tickets,
dates or serial numbers (benchmarks/results/tickets_synonyms.md). Setting
``retrieval.synonym_same_numbers`` (on by default) turns the rule off.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from hipporag_neo4j.common.text import alnum_count
from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.stores.base import GraphStore, PhraseRecord, SynonymEdge

PENDING_BATCH = 1024  # phrases per round: bounds the similarity matrix to 1024 x |phrases|
_NUMBER = re.compile(r"\d+")


def numbers(name: str) -> list[str]:
    """The numbers of a phrase name: its maximal runs of decimal digits (any script), in order, each as
    its value in ASCII digits without leading zeros ("2024 03 01" and "2024 3 1" have the same)."""
    return [
        "".join(str(unicodedata.decimal(ch)) for ch in run).lstrip("0") or "0"
        for run in _NUMBER.findall(name)
    ]


def may_be_synonyms(a: str, b: str) -> bool:
    """Whether two phrase names may be joined by a synonym edge at all: not when their numbers differ."""
    return numbers(a) == numbers(b)


def synonym_edges(
    store: GraphStore,
    phrases: Sequence[PhraseRecord],
    top_k: int,
    threshold: float,
    same_numbers: bool = True,
) -> list[SynonymEdge]:
    """Edges from ``phrases`` to their stored neighbours with cosine >= ``threshold`` (at most
    ``top_k`` each); phrases of two or fewer letters and digits take no part (HippoRAG's rule); with
    ``same_numbers``, neither do two phrases whose numbers differ (:func:`may_be_synonyms`)."""
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
        if alnum_count(hit.name) > 2 and (not same_numbers or may_be_synonyms(phrase.name, hit.name))
    ]


def finish_pending_synonyms(
    store: GraphStore, top_k: int, threshold: float, same_numbers: bool = True
) -> int:
    """Compute the synonym edges of every phrase marked pending; returns how many edges were new."""
    added = 0
    previous: list[str] = []
    while pending := store.pending_synonym_phrases(PENDING_BATCH):
        ids = [p.id for p in pending]
        if ids == previous:  # a store that does not clear its marks would loop for ever
            raise StoreError(f"the store kept {len(ids)} phrases marked 'synonyms pending' after writing")
        added += store.write_synonyms(synonym_edges(store, pending, top_k, threshold, same_numbers), done=ids)
        previous = ids
    return added
