"""Shared test helpers."""

from __future__ import annotations

from typing import Any

from hipporag_neo4j import HippoRAG
from hipporag_neo4j.models import IndexReport, PassageInput
from hipporag_neo4j.stores.embedded import EmbeddedStore
from hipporag_neo4j.stores.neo4j import Neo4jStore

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
