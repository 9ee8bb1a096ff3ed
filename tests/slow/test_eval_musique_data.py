"""The evaluation loaders on the real MuSiQue files in ../shared/data/musique (skipped when absent)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions, locate_gold

pytestmark = pytest.mark.slow

MUSIQUE = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "musique"
CORPUS = MUSIQUE / "musique_corpus1890.json"
QUESTIONS = MUSIQUE / "musique_dev70.json"


@pytest.fixture(scope="module")
def musique_files() -> tuple[Path, Path]:
    if not (CORPUS.is_file() and QUESTIONS.is_file()):
        pytest.skip(f"MuSiQue benchmark data not found in {MUSIQUE} (read-only shared data, not in the repo)")
    return CORPUS, QUESTIONS


def test_every_musique_gold_passage_is_in_the_corpus(musique_files: tuple[Path, Path]) -> None:
    corpus_path, questions_path = musique_files
    corpus = load_corpus(corpus_path)
    questions = load_questions(questions_path)
    assert len(corpus) == len(json.loads(corpus_path.read_text(encoding="utf-8")))
    assert len(questions) == 70

    located = locate_gold(questions, corpus)
    assert located.unmatched == []
    assert located.whitespace_matches == 0  # the corpus holds the very strings HippoRAG indexes

    raw = {record["id"]: record for record in json.loads(questions_path.read_text(encoding="utf-8"))}
    per_question = Counter()
    for question in questions:
        supporting = [p for p in raw[question.id]["paragraphs"] if p["is_supporting"]]
        ids = located.gold_ids[question.id]
        assert len(ids) == len(supporting), question.id
        assert [corpus[i].title for i in ids] == [p["title"] for p in supporting]
        assert 2 <= len(ids) <= 4
        per_question[len(ids)] += 1
    print(f"MuSiQue gold passages per question: {dict(sorted(per_question.items()))}")
