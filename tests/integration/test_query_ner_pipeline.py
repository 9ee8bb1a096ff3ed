"""The query NER's NER-only path (issue 19): only the ``ner`` component runs when the names suffice, and the
entities are those of the whole pipeline."""

from __future__ import annotations

from typing import Any

import pytest
import spacy
from spacy.language import Language

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.extraction.spacy_extractor import SpacyQueryNER, load_spacy_model, ner_runs_alone
from hipporag_neo4j.settings import load_settings

pytestmark = pytest.mark.integration

#: varied questions: quoted titles, possessives, regnal numerals, articles inside and opening names, dates,
#: lower case, two sentences, pronouns, no name at all (the noun-chunk fallback)
QUESTIONS = [
    'Who directed "The Adventures of Alexander"?',
    "In which city was “Pride and Prejudice” written?",
    "Who is Jan Philip Solovej?",
    "What is the capital of the country where the Bank of the United States was founded?",
    "What county is Erik Hort's birthplace a part of?",
    "In what city did Nicholas I, lord of the birthplace of Albert, King of the country, die?",
    'The soundtrack from the film "Natural Born Killers" was produced by a man born in what year?',
    "When did the Beatles release their first album in the United Kingdom?",
    "who founded the university of copenhagen",
    "The Eiffel Tower is in Paris. Who designed it?",
    "What did he do?",
    "what does a farmer grow?",
    "Which band, formed in Liverpool in 1960, recorded Abbey Road?",
    "How many people lived in the US state of Iowa in 2010?",
    "Are It Must Have Been Love and Joyride by the same band?",
]


@pytest.fixture(scope="module")
def nlp() -> Any:
    return load_spacy_model()


def test_default_model_runs_ner_alone(nlp: Any) -> None:
    assert ner_runs_alone(nlp)
    assert SpacyQueryNER().ner_only
    assert not SpacyQueryNER(pipeline="full").ner_only


@pytest.mark.parametrize("noun_chunks", ["fallback", "never", "always"])
def test_same_entities_as_the_whole_pipeline(noun_chunks: Any) -> None:
    fast = SpacyQueryNER(noun_chunks=noun_chunks)
    full = SpacyQueryNER(noun_chunks=noun_chunks, pipeline="full")
    for question in QUESTIONS:
        assert fast.query_entities(question) == full.query_entities(question), question


def test_whole_pipeline_runs_only_for_a_query_needing_noun_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = Language.__call__

    def counting(self: Language, text: Any, **kwargs: Any) -> Any:
        calls.append(str(text))
        return original(self, text, **kwargs)

    monkeypatch.setattr(Language, "__call__", counting)
    ner = SpacyQueryNER()
    assert ner.query_entities("Who is Jan Philip Solovej?") == ["Jan Philip Solovej"]
    assert calls == []  # the names came from ner alone: no tagger, parser, lemmatizer
    assert ner.query_entities("what does a farmer grow?") == ["farmer"]
    assert calls == ["what does a farmer grow?"]  # no name: the noun chunks need the parse
    assert SpacyQueryNER(noun_chunks="never").query_entities("what does a farmer grow?") == []
    assert len(calls) == 1
    SpacyQueryNER(pipeline="full").query_entities("Who is Jan Philip Solovej?")
    assert len(calls) == 2


def test_ner_reading_a_shared_tok2vec_or_another_language_runs_the_whole_pipeline() -> None:
    own = spacy.blank("en")
    own.add_pipe("ner")
    assert ner_runs_alone(own)
    listening = spacy.blank("en")
    listening.add_pipe("tok2vec")
    listening.add_pipe(
        "ner",
        config={
            "model": {
                "@architectures": "spacy.TransitionBasedParser.v2",
                "state_type": "ner",
                "extra_state_tokens": False,
                "hidden_width": 64,
                "maxout_pieces": 2,
                "use_upper": True,
                "tok2vec": {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "*"},
            }
        },
    )
    assert not ner_runs_alone(listening)
    ruled = spacy.blank("en")
    ruled.add_pipe("entity_ruler")
    ruled.add_pipe("ner")
    assert not ner_runs_alone(ruled)  # a component that may set entities too
    german = spacy.blank("de")
    german.add_pipe("ner")
    assert not ner_runs_alone(german)  # the words read instead of the parse are English
    assert not ner_runs_alone(spacy.blank("en"))


def test_setting_reaches_the_query_ner(tmp_path: Any) -> None:
    settings = load_settings({"store": {"path": str(tmp_path / "s")}}, env_file=None)
    assert settings.extraction.query_ner_pipeline == "auto"
    full = load_settings(
        {"store": {"path": str(tmp_path / "s")}, "extraction": {"query_ner_pipeline": "full"}}, env_file=None
    )
    ner = HippoRAG(full)._spacy_query_ner()
    assert isinstance(ner, SpacyQueryNER) and ner.pipeline == "full" and not ner.ner_only
    with pytest.raises(ConfigError, match=r"query_ner_pipeline.*'auto' or 'full'"):
        load_settings({"extraction": {"query_ner_pipeline": "parser"}}, env_file=None)
