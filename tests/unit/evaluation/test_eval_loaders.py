from __future__ import annotations

import json
from pathlib import Path

import pytest

from hipporag_neo4j.errors import InputError
from hipporag_neo4j.evaluation.loaders import (
    CorpusPassage,
    EvalQuestion,
    load_corpus,
    load_questions,
    locate_gold,
    match_gold,
)

pytestmark = pytest.mark.unit

DATA = Path(__file__).resolve().parents[2] / "data" / "eval"


def _write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


# ------------------------------------------------------------------ corpus


def test_corpus_list_of_records() -> None:
    corpus = load_corpus(DATA / "corpus_list.json")
    assert len(corpus) == 5
    assert corpus[1] == CorpusPassage(
        title="Beta Society", text="The Beta Society was founded by Gamma Lee in 1901."
    )
    assert corpus[1].content == "Beta Society\nThe Beta Society was founded by Gamma Lee in 1901."
    assert corpus[4].title is None
    assert corpus[4].id == "p-untitled"
    assert corpus[4].content == "A passage without a title."


def test_corpus_by_title_sentences_joined_without_separator() -> None:
    corpus = load_corpus(DATA / "corpus_by_title_sentences.json")
    assert [p.content for p in corpus] == [
        "Beta Society\nThe Beta Society was founded by Gamma Lee in 1901.",
        "Unrelated\nNothing to see here.",
    ]


def test_corpus_by_title_text() -> None:
    corpus = load_corpus(DATA / "corpus_by_title_text.json")
    assert [(p.title, p.text) for p in corpus] == [
        ("Gamma Lee", "Gamma Lee was a psychologist born in Delta."),
        ("Unrelated", "Nothing to see here."),
    ]


def test_corpus_jsonl_with_titles_or_ids_and_blank_lines() -> None:
    corpus = load_corpus(DATA / "corpus.jsonl")
    assert [(p.title, p.id, p.text) for p in corpus] == [
        ("Alpha Journal", None, "The Alpha Journal is published by the Beta Society."),
        (None, "d2", "A passage without a title."),
    ]


def test_corpus_jsonl_detected_without_the_extension(tmp_path: Path) -> None:
    path = _write(tmp_path, "corpus.json", '{"text": "one"}\n{"text": "two"}\n')
    assert [p.text for p in load_corpus(path)] == ["one", "two"]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.json", None, "file not found"),
        ("broken.json", '[{"title": "a", "text": ', "not valid JSON"),
        ("scalar.json", "42", "unknown corpus format"),
        ("empty.json", "   \n", "the file is empty"),
        ("nolist.json", "[]", "no passages"),
        ("notext.json", '[{"title": "a"}]', "record 0: missing 'text'"),
        ("blank.json", '[{"title": "a", "text": "  "}]', "record 0: empty passage text"),
        ("badtitle.json", '[{"title": 3, "text": "x"}]', "'title' must be a string"),
        ("scalars.json", '["just a string"]', "record 0: expected an object"),
        ("badvalue.json", '{"T": 5}', "title 'T': expected a text or a list of sentences"),
        ("badline.jsonl", '{"text": "ok"}\n{"text": \n', "line 2 is not valid JSON"),
    ],
)
def test_corpus_errors_name_the_file_and_problem(
    tmp_path: Path, name: str, content: str | None, message: str
) -> None:
    path = tmp_path / name if content is None else _write(tmp_path, name, content)
    with pytest.raises(InputError) as excinfo:
        load_corpus(path)
    assert str(path) in str(excinfo.value)
    assert message in str(excinfo.value)


# ------------------------------------------------------------------ questions


def test_musique_questions() -> None:
    q1, q2 = load_questions(DATA / "questions_musique.json")
    assert q1 == EvalQuestion(
        id="2hop__1",
        question="Who founded the society that publishes the Alpha Journal?",
        answers=["Gamma Lee", "G. Lee"],  # the alias repeating the answer is dropped
        gold_contents=[
            "Alpha Journal\nThe Alpha Journal is published by the Beta Society.",
            "Beta Society\nThe Beta Society was founded by Gamma Lee in 1901.",
        ],
        gold_titles=["Alpha Journal", "Beta Society"],
    )
    # a paragraph without is_supporting counts as gold (HippoRAG 2 get_gold_docs)
    assert q2.gold_titles == ["Beta Society", "Gamma Lee"]
    assert q2.answers == ["Delta"]


def test_hotpotqa_questions_join_sentences_without_separator() -> None:
    hp1, hp2 = load_questions(DATA / "questions_hotpotqa.json")
    assert hp1.id == "hp1"
    assert hp1.gold_titles == ["Beta Society"]
    assert hp1.gold_contents == ["Beta Society\nThe Beta Society was founded by Gamma Lee in 1901."]
    assert hp1.answers == ["1901"]
    # no "level" key: recognised from the leading space of the second sentence
    assert hp2.gold_contents == hp1.gold_contents


def test_2wiki_questions_join_sentences_with_a_space() -> None:
    w1, w2 = load_questions(DATA / "questions_2wiki.json")
    assert w1.gold_contents == ["Gamma Lee\nGamma Lee was a psychologist born in Delta."]
    assert w2.gold_titles == ["Alpha Journal", "Gamma Lee"]
    assert w2.gold_contents == [
        "Alpha Journal\nThe Alpha Journal is published by the Beta Society.",
        "Gamma Lee\nGamma Lee was a psychologist born in Delta.",
    ]


def test_plain_questions_jsonl() -> None:
    first, second, third = load_questions(DATA / "questions_plain.jsonl")
    assert first == EvalQuestion(
        id="0",
        question="Where was Gamma Lee born?",
        answers=["Delta", "Delta City"],
        gold_contents=[],
        gold_titles=["Gamma Lee"],
    )
    assert second.gold_titles == ["Alpha Journal"]
    assert third.id == "7"
    assert third.answers == []
    assert third.gold_titles == []


def test_answer_given_as_a_list(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "q.json", json.dumps([{"question": "q", "answer": ["x", "y"], "answer_aliases": ["x"]}])
    )
    assert load_questions(path)[0].answers == ["x", "y"]


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"id": "a", "question": "q"}, {"id": "a", "question": "r"}], "duplicate question ids: a"),
        ([{"id": "a"}], "question 0 (a): missing 'question'"),
        ([{"question": "q", "context": []}], "need both 'context' and 'supporting_facts'"),
        ([{"question": "q", "context": [["t", "not a list"]], "supporting_facts": []}], "'context' must be"),
        (
            [{"question": "q", "paragraphs": [{"title": "t", "is_supporting": True}]}],
            "missing 'paragraph_text'",
        ),
        ([{"question": "q", "answer_aliases": "x"}], "'answer_aliases' must be a list"),
        ([{"question": "q", "answer": 3}], "answers and aliases must be strings"),
        ([{"question": "q", "gold_titles": "t"}], "'gold_titles' must be a list of strings"),
        ([], "has no questions"),
        ("a string", "unknown question format"),
    ],
)
def test_question_errors(tmp_path: Path, records: object, message: str) -> None:
    path = _write(tmp_path, "questions.json", json.dumps(records))
    with pytest.raises(InputError) as excinfo:
        load_questions(path)
    assert str(path) in str(excinfo.value)
    assert message in str(excinfo.value)


# ------------------------------------------------------------------ gold matching


def test_match_gold_exact_and_whitespace_variant() -> None:
    corpus = load_corpus(DATA / "corpus_list.json")
    questions = load_questions(DATA / "questions_musique.json")
    assert match_gold(questions, corpus) == {"2hop__1": [0, 1], "2hop__2": [1, 2]}
    located = locate_gold(questions, corpus)
    assert located.unmatched == []
    assert located.whitespace_matches == 1  # "Beta Society  was founded by\nGamma Lee"


def test_match_gold_for_hotpotqa_and_2wiki_files() -> None:
    corpus = load_corpus(DATA / "corpus_list.json")
    assert match_gold(load_questions(DATA / "questions_hotpotqa.json"), corpus) == {"hp1": [1], "hp2": [1]}
    assert match_gold(load_questions(DATA / "questions_2wiki.json"), corpus) == {"w1": [2], "w2": [0, 2]}


def test_match_gold_by_title_for_plain_questions() -> None:
    corpus = load_corpus(DATA / "corpus_list.json")
    questions = load_questions(DATA / "questions_plain.jsonl")
    assert match_gold(questions, corpus) == {"0": [2], "1": [0], "7": []}


def test_duplicate_corpus_content_maps_to_first_index() -> None:
    corpus = [CorpusPassage(title="T", text="x"), CorpusPassage(title="T", text="x")]
    question = EvalQuestion(id="q", question="?", answers=[], gold_contents=["T\nx"], gold_titles=["T"])
    assert match_gold([question], corpus) == {"q": [0]}


def test_unmatched_gold_is_reported_and_raises_with_counts() -> None:
    corpus = [
        CorpusPassage(title="A", text="a"),
        CorpusPassage(title="B", text="b1"),
        CorpusPassage(title="B", text="b2"),
    ]
    questions = [
        EvalQuestion(
            id="q1", question="?", answers=[], gold_contents=["A\na", "A\nmissing"], gold_titles=["A"]
        ),
        EvalQuestion(id="q2", question="?", answers=[], gold_contents=[], gold_titles=["B", "C"]),
    ]
    located = locate_gold(questions, corpus)
    assert located.gold_ids == {"q1": [0], "q2": []}
    assert [(u.question_id, u.gold, u.reason) for u in located.unmatched] == [
        ("q1", "A\nmissing", "not_found"),
        ("q2", "B", "ambiguous_title"),
        ("q2", "C", "not_found"),
    ]
    with pytest.raises(InputError, match=r"3 of 4 gold passages of 2 questions .*\(1 ambiguous titles\)"):
        match_gold(questions, corpus)


def test_whitespace_fallback_does_not_ignore_real_differences() -> None:
    corpus = [CorpusPassage(title="A", text="one two")]
    question = EvalQuestion(id="q", question="?", answers=[], gold_contents=["A\nonetwo"], gold_titles=["A"])
    assert locate_gold([question], corpus).unmatched[0].reason == "not_found"
