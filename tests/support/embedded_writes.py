"""A passage a second writer adds (test_reliability_concurrency, test_embedded_snapshot)."""

from __future__ import annotations

from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import PassageRecord, PhraseRecord
from hipporag_neo4j.stores.embedded import EmbeddedStore
from tests.support.fakes import HashEmbedder

EMB = HashEmbedder()


def one_passage(store: EmbeddedStore, n: int) -> None:
    name = f"newcomer {n}"
    phrase = PhraseRecord(f"phrase-new-{n}", name, EMB.encode([name])[0])
    record = PassageRecord(Passage(id=f"new-{n}", text=f"text {n}"), EMB.encode([name])[0], {phrase.id: 1})
    store.write_passages([phrase], [record])
