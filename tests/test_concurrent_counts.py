"""True counts when another index run writes to the same store meanwhile, as two terminals or two cron
jobs would: the phrases and facts a run reports as new are those its own writes inserted, so the two
reports add up to what the store holds. Before, a run also counted the phrases it had found missing and
the other run stored between that check and its write. Real embedder and spaCy, embedded store on disk;
the other run is made to write exactly in that gap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import HashEmbedder
from neo4j_support import TEST_EMBEDDING_DIM, neo4j_settings_or_skip

from hipporag_neo4j import HippoRAG
from hipporag_neo4j.models import IndexReport, PassageInput
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.embedded import EmbeddedStore
from hipporag_neo4j.stores.neo4j import Neo4jStore

pytestmark = pytest.mark.integration

MINE = [PassageInput(id=f"a{n}", text=f"Marta Silva works in Lab {n} in Porto.") for n in range(4)]
THEIRS = [PassageInput(id=f"b{n}", text=f"Lab {n} in Porto belongs to Marta Silva.") for n in range(4)]


class OtherRunWritesInTheGap:
    """The store, except that right after this run asks which phrases are missing, another run (its own
    HippoRAG on the same store) indexes passages that name the same phrases."""

    def __init__(self, inner: EmbeddedStore | Neo4jStore, other: HippoRAG) -> None:
        self._inner = inner
        self._other = other
        self.raced = False
        self.other_report: IndexReport | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def missing_phrases(self, ids: Any) -> set[str]:
        missing: set[str] = self._inner.missing_phrases(ids)
        if not self.raced and missing:
            self.raced = True
            self.other_report = self._other.index(THEIRS)
        return missing


def race(mine: HippoRAG, other: HippoRAG, racing: OtherRunWritesInTheGap) -> tuple[Any, Any, Any]:
    """Index MINE while the other run indexes THEIRS in the gap; both closed after. Checks that the race
    happened and both runs indexed all of theirs; returns (my report, their report, stats)."""
    try:
        report = mine.index(MINE)
        stats = mine.stats()
    finally:
        mine.close()
        other.close()
    theirs = racing.other_report
    assert racing.raced and theirs is not None
    assert sorted(report.indexed) == ["a0", "a1", "a2", "a3"] and sorted(theirs.indexed) == [
        f"b{n}" for n in range(4)
    ]
    assert stats.passages == 8
    return report, theirs, stats


def test_counts_are_what_this_run_inserted(tmp_path: Path, minilm: Any) -> None:
    settings = load_settings({"store": {"path": str(tmp_path / "kb")}}, env_file=None, config_file=None)
    other = HippoRAG(settings, embedder=minilm)
    racing = OtherRunWritesInTheGap(EmbeddedStore(tmp_path / "kb"), other)
    mine = HippoRAG(settings, store=racing, embedder=minilm)  # type: ignore[arg-type]
    report, theirs, stats = race(mine, other, racing)
    # each phrase and fact counted once, by the run that inserted it
    assert report.new_phrases + theirs.new_phrases == stats.phrases, (report, theirs, stats)
    assert report.new_facts + theirs.new_facts == stats.facts, (report, theirs, stats)


@pytest.mark.neo4j
def test_counts_are_what_this_run_inserted_on_neo4j() -> None:
    """The same race on one Neo4j namespace: the counts come from the MERGEs of each run's own write
    transaction (write_phrases / write_facts count what they create), not from its earlier check."""
    n4j = neo4j_settings_or_skip(ppr_engine="local", vector_search="client")
    settings = load_settings(
        {"llm": {"model": None}, "store": {"backend": "neo4j"}, "neo4j": n4j.model_dump()}, env_file=None
    )
    embedder = HashEmbedder(TEST_EMBEDDING_DIM)
    other = HippoRAG(settings, store=Neo4jStore(n4j), embedder=embedder)
    racing = OtherRunWritesInTheGap(Neo4jStore(n4j), other)
    mine = HippoRAG(settings, store=racing, embedder=embedder)  # type: ignore[arg-type]
    report, theirs, stats = race(mine, other, racing)
    assert theirs.new_phrases > 0 and report.new_phrases > 0  # both runs inserted some (not a no-op race)
    assert report.new_phrases + theirs.new_phrases == stats.phrases, (report, theirs, stats)
    assert report.new_facts + theirs.new_facts == stats.facts, (report, theirs, stats)
