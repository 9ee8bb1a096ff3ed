"""Shared test helpers."""

from __future__ import annotations

from pathlib import Path

from hipporag_neo4j.common.text import fact_text, make_fact_id, make_phrase_id
from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import FactRecord, GraphStore, PassageRecord, PhraseRecord
from tests.support.fakes import HashEmbedder

EMB = HashEmbedder(dim=16)


def _open_store(kind: str, tmp_path: Path) -> GraphStore:
    if kind == "embedded":
        from hipporag_neo4j.stores.embedded import EmbeddedStore

        store: GraphStore = EmbeddedStore(tmp_path / "store")
    else:
        from hipporag_neo4j.stores.neo4j.store import Neo4jStore
        from tests.support.neo4j_support import neo4j_settings_or_skip

        store = Neo4jStore(neo4j_settings_or_skip())
    store.open(EMB.model_name, EMB.dimension)
    return store


# A fixed corpus: (passage id, text, triples). 'stanford' and 'thomas' bridge passages.
CORPUS: list[tuple[str, str, list[tuple[str, str, str]]]] = [
    ("p1", "Thomas is a professor at Stanford.", [("thomas", "is professor at", "stanford")]),
    ("p2", "Thomas researches Alzheimer's.", [("thomas", "researches", "alzheimer s")]),
    (
        "p3",
        "Maria works at Stanford on robots.",
        [("maria", "works at", "stanford"), ("maria", "builds", "robots")],
    ),
    (
        "p4",
        "Lee studies Alzheimer's at Harvard.",
        [("lee", "studies", "alzheimer s"), ("lee", "works at", "harvard")],
    ),
    (
        "p5",
        "Harvard is in Cambridge.",
        [("harvard", "is in", "cambridge"), ("harvard", "is in", "cambridge")],
    ),
]


def _records(ids: set[str]) -> tuple[list[PhraseRecord], list[PassageRecord]]:
    phrases: dict[str, PhraseRecord] = {}
    records = []
    for pid, text, triples in CORPUS:
        if pid not in ids:
            continue
        mentions: dict[str, int] = {}
        facts = []
        for s, p, o in triples:
            for name in (s, o):
                phrase_id = make_phrase_id(name)
                phrases[phrase_id] = PhraseRecord(phrase_id, name, EMB.encode([name])[0])
                mentions[phrase_id] = mentions.get(phrase_id, 0) + 1
            fid = make_fact_id(s, p, o)
            facts.append(
                FactRecord(
                    fid,
                    make_phrase_id(s),
                    p,
                    make_phrase_id(o),
                    fact_text(s, p, o),
                    EMB.encode([fact_text(s, p, o)])[0],
                )
            )
        records.append(PassageRecord(Passage(id=pid, text=text), EMB.encode([text])[0], mentions, facts))
    return list(phrases.values()), records


def _index(store: GraphStore, ids: set[str]) -> None:
    phrases, records = _records(ids)
    store.write_passages(phrases, records)
