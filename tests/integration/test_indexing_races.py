"""Index runs racing another writer on the embedded store (Neo4j: tests/neo4j/test_neo4j_many_writers.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hipporag_neo4j import HippoRAG
from hipporag_neo4j.errors import PhrasesVanishedError
from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.base import PassageRecord
from hipporag_neo4j.stores.embedded import EmbeddedStore
from tests.support.fakes import HashEmbedder, TableExtractor
from tests.support.racing import OtherWriterDeletesInTheGap

FIRST, SECOND = "Marta Silva works in Porto.", "Marta Silva was born in Braga."
TABLE = {FIRST: [["marta silva", "works in", "porto"]], SECOND: [["marta silva", "born in", "braga"]]}


def test_a_phrase_deleted_between_the_check_and_the_write_is_written_again(tmp_path: Path) -> None:
    settings = load_settings({"llm": {"model": None}, "store": {"path": str(tmp_path / "kb")}}, env_file=None)
    embedder = HashEmbedder()
    with HippoRAG(settings, embedder=embedder, extractor=TableExtractor(TABLE)) as one:
        one.index([{"id": "a", "text": FIRST}])
    racing = OtherWriterDeletesInTheGap(EmbeddedStore(tmp_path / "kb"), ["a"])
    with HippoRAG(settings, store=racing, embedder=embedder, extractor=TableExtractor(TABLE)) as other:  # type: ignore[arg-type]
        report = other.index([{"id": "b", "text": SECOND}])
        stats = other.stats()
        answer = other.retrieve("Where was Marta Silva born?", top_k=1)
    assert racing.raced and report.indexed == ["b"] and not report.failed
    assert (stats.passages, stats.phrases) == (1, 2)  # "marta silva" written again, with "braga"
    assert [p.passage.id for p in answer.passages] == ["b"]


def test_the_store_names_the_vanished_phrase_when_the_batch_does_not_bring_it(tmp_path: Path) -> None:
    """What the indexer catches: a write whose passages mention a phrase neither stored nor given; nothing
    of it is written."""
    store = EmbeddedStore(tmp_path / "kb")
    store.open("hash-embedder", 16)
    record = PassageRecord(Passage(id="c", text="x"), np.full(16, 0.25, dtype=np.float32), {"gone": 1})
    with pytest.raises(PhrasesVanishedError, match="'gone', which is neither stored nor in the batch"):
        store.write_passages([], [record])
    assert store.stats().passages == 0
