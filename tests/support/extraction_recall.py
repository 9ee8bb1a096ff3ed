"""Recall and precision of an extractor on plain note sentences with the facts they should give
(``tests/data/extraction/notes_facts.jsonl``; docs/offline-quality.md).

Each record: ``split`` (``dev``: the sentences the extractor was improved on; ``check``: written with them,
before any change, and only measured), an optional ``title`` (the note's name), ``text``, ``facts`` (what a
reader expects: the recall denominator) and ``also`` (other correct readings: they count for precision,
not for recall). An extracted triple matches a fact when subject and object are the same phrase after
:func:`~hipporag_neo4j.common.text.normalize_phrase` and every word of the fact's predicate is in
its predicate ("founded in" matches "founded in"; "founded" matches "founded" and "founded in" matches
no "founded").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hipporag_neo4j.common.text import normalize_phrase
from hipporag_neo4j.models import Extraction, Passage, PassageFailure

NOTES_FACTS = Path(__file__).resolve().parents[1] / "data" / "extraction" / "notes_facts.jsonl"

Fact = tuple[str, str, str]


@dataclass
class Note:
    split: str
    title: str | None
    text: str
    facts: list[Fact]
    also: list[Fact]


@dataclass
class Score:
    expected: int = 0
    found: int = 0
    extracted: int = 0
    correct: int = 0
    missed: list[tuple[str, Fact]] = field(default_factory=list)
    wrong: list[tuple[str, Fact]] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.found / self.expected if self.expected else 0.0

    @property
    def precision(self) -> float:
        return self.correct / self.extracted if self.extracted else 0.0


def load_notes(path: Path = NOTES_FACTS) -> list[Note]:
    notes = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            notes.append(
                Note(
                    r["split"],
                    r["title"],
                    r["text"],
                    [tuple(f) for f in r["facts"]],
                    [tuple(f) for f in r["also"]],
                )
            )
    return notes


def matches(triple: Fact, fact: Fact) -> bool:
    s, p, o = triple
    return (
        normalize_phrase(s) == normalize_phrase(fact[0])
        and normalize_phrase(o) == normalize_phrase(fact[2])
        and set(fact[1].split()) <= set(p.lower().split())
    )


def score(extractor: object, notes: Sequence[Note]) -> Score:
    """Recall over the notes' facts and precision over the extracted triples (``extractor.extract``)."""
    passages = [Passage(id=f"n{i}", text=n.text, title=n.title) for i, n in enumerate(notes)]
    results: list[Extraction | PassageFailure] = extractor.extract(passages)  # type: ignore[attr-defined]
    total = Score()
    for note, result in zip(notes, results, strict=True):
        assert isinstance(result, Extraction), result
        triples = [t.as_tuple() for t in result.triples]
        total.expected += len(note.facts)
        total.extracted += len(triples)
        for fact in note.facts:
            if any(matches(t, fact) for t in triples):
                total.found += 1
            else:
                total.missed.append((note.text, fact))
        for t in triples:
            if any(matches(t, f) for f in [*note.facts, *note.also]):
                total.correct += 1
            else:
                total.wrong.append((note.text, t))
    return total
