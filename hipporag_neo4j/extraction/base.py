"""Extractor protocols and the triple validation every extractor's output goes through."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from hipporag_neo4j.common.text import normalize_phrase
from hipporag_neo4j.models import Extraction, Passage, PassageFailure, Triple

#: Longest entity, subject, object or predicate kept (characters). Longer is no name, and on Neo4j a
#: phrase name is an index key (limited to about 8 KB): one such value would fail the whole write batch.
MAX_PHRASE_CHARS = 1000


@runtime_checkable
class Extractor(Protocol):
    """Passage -> named entities + OpenIE triples."""

    name: str

    def extract(self, passages: Sequence[Passage]) -> list[Extraction | PassageFailure]:
        """One result per passage, in order: an Extraction, or a PassageFailure saying why not."""
        ...


@runtime_checkable
class QueryEntityExtractor(Protocol):
    """Query -> the named entities HippoRAG links to graph phrases."""

    name: str

    def query_entities(self, query: str) -> list[str]: ...


def clean_entities(raw: Any) -> list[str]:
    """Entities as non-empty, de-duplicated strings (order kept); anything else is dropped."""
    if not isinstance(raw, list | tuple):
        return []
    seen: set[str] = set()
    out: list[str] = []
    for item in raw:
        if (
            isinstance(item, str)
            and len(item) <= MAX_PHRASE_CHARS
            and normalize_phrase(item)
            and item.strip() not in seen
        ):
            seen.add(item.strip())
            out.append(item.strip())
    return out


def validate_triples(raw: Any) -> tuple[list[Triple], list[str]]:
    """Keep triples of three non-empty strings, normalised; say why each other one was dropped.

    Subject and object are normalised with :func:`normalize_phrase` (they become Phrase nodes); the
    predicate keeps its wording, trimmed and with whitespace collapsed. Exact duplicates are dropped.
    """
    triples: list[Triple] = []
    dropped: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    if not isinstance(raw, list | tuple):
        return [], [f"triples are not a list: {type(raw).__name__}"]
    for item in raw:
        if not isinstance(item, list | tuple) or len(item) != 3:
            dropped.append(f"not a 3-item list: {item!r}"[:200])
            continue
        if not all(isinstance(x, str) for x in item):
            dropped.append(f"non-string item: {item!r}"[:200])
            continue
        subject, obj = normalize_phrase(item[0]), normalize_phrase(item[2])
        predicate = " ".join(item[1].split())
        if not subject or not predicate or not obj:
            dropped.append(f"empty after normalisation: {item!r}"[:200])
            continue
        if max(len(subject), len(predicate), len(obj)) > MAX_PHRASE_CHARS:
            dropped.append(f"longer than {MAX_PHRASE_CHARS} characters: {item!r}"[:200])
            continue
        key = (subject, predicate.lower(), obj)
        if key in seen:
            continue
        seen.add(key)
        triples.append(Triple(subject=subject, predicate=predicate, object=obj))
    return triples, dropped
