"""The bundled demo data: corpus, its OpenIE record in HippoRAG's format, and the questions agree."""

from __future__ import annotations

import itertools
import json
import unicodedata
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.common.text import make_passage_id, normalize_phrase
from hipporag_neo4j.extraction.base import validate_triples
from hipporag_neo4j.extraction.recorded import load_recorded_extraction

pytestmark = pytest.mark.unit

DEMO = Path(str(resources.files("hipporag_neo4j.demo")))
QUESTION_KEYS = {"question", "answer", "answer_aliases", "gold_titles", "type"}
QUESTION_TYPES = {"bridge", "path-finding", "single"}
OPENIE_TOP_KEYS = {
    "docs",
    "ents_by_doc",
    "avg_ent_chars",
    "avg_ent_words",
    "current_cost",
    "approx_total_cost",
}


def _load(name: str) -> Any:
    return json.loads((DEMO / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, str]]:
    data: list[dict[str, str]] = _load("corpus.json")
    return data


@pytest.fixture(scope="module")
def openie() -> dict[str, Any]:
    data: dict[str, Any] = _load("openie_demo.json")
    return data


@pytest.fixture(scope="module")
def questions() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = _load("questions.json")
    return data


def _phrases(doc: dict[str, Any]) -> set[str]:
    return {normalize_phrase(x) for s, _, o in doc["extracted_triples"] for x in (s, o)}


def test_corpus_is_40_to_50_titled_passages_with_unique_titles(corpus: list[dict[str, str]]) -> None:
    assert 40 <= len(corpus) <= 50
    for passage in corpus:
        assert set(passage) == {"title", "text"}
        assert passage["title"].strip() and passage["text"].strip()
    titles = [p["title"] for p in corpus]
    assert len(set(titles)) == len(titles)


def test_corpus_has_accented_latin_and_cjk_names(corpus: list[dict[str, str]]) -> None:
    text = " ".join(p["title"] + " " + p["text"] for p in corpus)
    accented = {ch for ch in text if ch.isalpha() and not ch.isascii() and "LATIN" in unicodedata.name(ch)}
    cjk = {ch for ch in text if "CJK UNIFIED IDEOGRAPH" in unicodedata.name(ch, "")}
    assert len(accented) >= 3
    assert len(cjk) >= 3


def test_openie_has_the_reference_top_level_keys(openie: dict[str, Any]) -> None:
    assert set(openie) == OPENIE_TOP_KEYS
    assert openie["ents_by_doc"] == [d["extracted_entities"] for d in openie["docs"]]
    entities = [e for d in openie["docs"] for e in d["extracted_entities"]]
    words = [len(e.split()) for e in entities]
    assert openie["avg_ent_chars"] == pytest.approx(sum(map(len, entities)) / len(entities), abs=1e-4)
    assert openie["avg_ent_words"] == pytest.approx(sum(words) / len(entities), abs=1e-4)


def test_every_openie_doc_is_its_corpus_passage(corpus: list[dict[str, str]], openie: dict[str, Any]) -> None:
    docs = openie["docs"]
    assert len(docs) == len(corpus)
    for doc, passage in zip(docs, corpus, strict=True):
        assert set(doc) == {"title", "text", "passage", "extracted_entities", "extracted_triples"}
        assert (doc["title"], doc["text"]) == (passage["title"], passage["text"])
        assert doc["passage"] == passage["title"] + "\n" + passage["text"]


def test_entities_are_sorted_unique_and_occur_in_their_passage(openie: dict[str, Any]) -> None:
    for doc in openie["docs"]:
        entities = doc["extracted_entities"]
        assert entities, doc["title"]
        assert entities == sorted(set(entities)), doc["title"]
        for entity in entities:
            assert entity.strip() and entity in doc["passage"], (doc["title"], entity)


def test_every_triple_is_three_strings_that_survive_validation(openie: dict[str, Any]) -> None:
    for doc in openie["docs"]:
        triples = doc["extracted_triples"]
        assert triples, doc["title"]
        for triple in triples:
            assert isinstance(triple, list) and len(triple) == 3, (doc["title"], triple)
            assert all(isinstance(x, str) and x.strip() for x in triple), (doc["title"], triple)
        valid, dropped = validate_triples(triples)
        assert dropped == [] and len(valid) == len(triples), doc["title"]


def test_every_triple_names_an_entity_of_its_passage(openie: dict[str, Any]) -> None:
    for doc in openie["docs"]:
        entities = [normalize_phrase(e) for e in doc["extracted_entities"]]
        for s, _, o in doc["extracted_triples"]:
            ends = (normalize_phrase(s), normalize_phrase(o))
            assert any(e in end for e in entities for end in ends), (doc["title"], s, o)


def test_non_ascii_names_keep_their_letters_as_phrases(openie: dict[str, Any]) -> None:
    phrases = set().union(*(_phrases(d) for d in openie["docs"]))
    assert {"helena várkonyi", "gdańsk", "林晓雯", "山本遥"} <= phrases


def test_the_loader_reads_the_demo_record_without_failures(
    corpus: list[dict[str, str]], openie: dict[str, Any]
) -> None:
    recorded = load_recorded_extraction(DEMO / "openie_demo.json")
    assert recorded.format == "hipporag"
    assert recorded.failures == []
    assert [p.id for p in recorded.passages] == [make_passage_id(p["text"], p["title"]) for p in corpus]
    assert recorded.triple_count == sum(len(d["extracted_triples"]) for d in openie["docs"])


def test_questions_have_the_schema_and_known_gold_titles(
    corpus: list[dict[str, str]], questions: list[dict[str, Any]]
) -> None:
    titles = {p["title"] for p in corpus}
    assert 8 <= len(questions) <= 12
    for q in questions:
        assert QUESTION_KEYS <= set(q) <= QUESTION_KEYS | {"showcase"}, q["question"]
        assert q["type"] in QUESTION_TYPES
        assert q["question"].strip() and q["answer"].strip()
        assert isinstance(q["answer_aliases"], list)
        assert q["gold_titles"] and set(q["gold_titles"]) <= titles, q["question"]
        assert len(q["gold_titles"]) == len(set(q["gold_titles"]))
        assert (q["type"] == "single") == (len(q["gold_titles"]) == 1), q["question"]


def test_multi_hop_gold_passages_are_chained_by_shared_phrases(
    openie: dict[str, Any], questions: list[dict[str, Any]]
) -> None:
    by_title = {d["title"]: _phrases(d) for d in openie["docs"]}
    multi_hop = [q for q in questions if len(q["gold_titles"]) >= 2]
    assert len(multi_hop) >= 4
    for q in multi_hop:
        gold = q["gold_titles"]
        for left, right in itertools.pairwise(gold):
            assert by_title[left] & by_title[right], (q["question"], left, right)


def test_exactly_one_showcase_and_it_is_multi_hop(questions: list[dict[str, Any]]) -> None:
    showcases = [q for q in questions if q.get("showcase")]
    assert len(showcases) == 1
    assert all(q["showcase"] is True for q in questions if "showcase" in q)
    assert len(showcases[0]["gold_titles"]) >= 2
