"""Test doubles that plug into the same protocols as the real components."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence

import numpy as np

from hipporag_neo4j.extraction.base import clean_entities, validate_triples
from hipporag_neo4j.models import Extraction, Passage, PassageFailure
from hipporag_neo4j.stores.base import Matrix


class HashEmbedder:
    """Deterministic pseudo-random unit vectors per text; "<text> variant" is a near-duplicate of "<text>".

    Lets store and pipeline tests control similarity exactly without loading a model.
    """

    def __init__(self, dim: int = 16, model_name: str = "hash-embedder") -> None:
        self.model_name = model_name
        self._dim = dim

    @property
    def dimension(self) -> int:
        return self._dim

    @property
    def max_tokens(self) -> int | None:
        return 64

    def token_count(self, text: str) -> int:
        return len(text.split()) + 2

    def _vector(self, text: str) -> np.ndarray:
        variant = text.endswith(" variant")
        base = text.removesuffix(" variant")
        seed = int(hashlib.md5(base.encode()).hexdigest()[:8], 16)
        v = np.random.default_rng(seed).standard_normal(self._dim)
        if variant:  # a near-duplicate: same base direction, a little noise from the full text
            noise_seed = int(hashlib.md5(text.encode()).hexdigest()[:8], 16)
            v = v + 0.05 * np.random.default_rng(noise_seed).standard_normal(self._dim)
        return v / np.linalg.norm(v)

    def encode(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts]).astype(np.float32)


class TableExtractor:
    """Extraction looked up by passage text; unknown passages fail, like an LLM call that failed."""

    name = "table"

    def __init__(
        self, table: dict[str, list[list[str]]], entities: dict[str, list[str]] | None = None
    ) -> None:
        self.table = table
        self.entities = entities or {}
        self.calls: list[str] = []

    def extract(self, passages: Sequence[Passage]) -> list[Extraction | PassageFailure]:
        out: list[Extraction | PassageFailure] = []
        for p in passages:
            self.calls.append(p.id)
            if p.text not in self.table:
                out.append(PassageFailure(passage_id=p.id, source=p.title, reason="no extraction in table"))
                continue
            triples, dropped = validate_triples(self.table[p.text])
            out.append(
                Extraction(
                    passage_id=p.id,
                    entities=clean_entities(self.entities.get(p.text, [])),
                    triples=triples,
                    dropped=dropped,
                )
            )
        return out


class FixedQueryNER:
    name = "fixed"

    def __init__(self, mapping: dict[str, list[str]]) -> None:
        self.mapping = mapping

    def query_entities(self, query: str) -> list[str]:
        return list(self.mapping.get(query, []))


class WordsExtractor:
    """Extraction from any text: every capitalised word is an entity, consecutive ones form a triple.

    For tests whose passages are not known in advance (chunks of a long text, edited files)."""

    name = "words"

    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on
        self.calls: list[str] = []

    def extract(self, passages: Sequence[Passage]) -> list[Extraction | PassageFailure]:
        out: list[Extraction | PassageFailure] = []
        for p in passages:
            self.calls.append(p.id)
            if self.fail_on is not None and self.fail_on in p.text:
                out.append(PassageFailure(passage_id=p.id, source=p.title, reason="extraction failed"))
                continue
            names = [w.strip(".,;:!?'\"") for w in p.text.split() if w[:1].isupper()]
            names = [n for n in dict.fromkeys(names) if n]
            triples, dropped = validate_triples([[a, "is near", b] for a, b in itertools.pairwise(names)])
            out.append(
                Extraction(passage_id=p.id, entities=clean_entities(names), triples=triples, dropped=dropped)
            )
        return out
