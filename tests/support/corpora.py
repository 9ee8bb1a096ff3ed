"""Shared test helpers."""

from __future__ import annotations

import numpy as np

from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord
from tests.support.neo4j_support import TEST_EMBEDDING_DIM


def chain_corpus(n: int, prefix: str = "") -> tuple[list[PhraseRecord], list[PassageRecord]]:
    """Passage i mentions phrases i and i+1 and states the fact (i, linked to, i+1): a connected path."""
    phrases = [PhraseRecord(f"{prefix}ph{i}", f"{prefix}phrase {i}", unit(1000 + i)) for i in range(n + 1)]
    records = []
    for i in range(n):
        fact = FactRecord(
            f"{prefix}f{i}",
            f"{prefix}ph{i}",
            "linked to",
            f"{prefix}ph{i + 1}",
            f"{i} linked to {i + 1}",
            unit(5000 + i),
        )
        records.append(
            PassageRecord(
                Passage(id=f"{prefix}p{i}", text=f"passage {i}", title=None),
                unit(9000 + i),
                {f"{prefix}ph{i}": 1, f"{prefix}ph{i + 1}": 2},
                [fact],
            )
        )
    return phrases, records


DIM = TEST_EMBEDDING_DIM


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM)
    return (v / np.linalg.norm(v)).astype(np.float32)
