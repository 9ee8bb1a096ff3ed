"""Importing pre-extracted OpenIE (HippoRAG JSON and JSONL) and replaying it as an Extractor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hipporag_neo4j.common.text import make_passage_id
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.extraction.base import Extractor
from hipporag_neo4j.extraction.recorded import (
    RecordedExtraction,
    RecordedExtractor,
    load_recorded_extraction,
)
from hipporag_neo4j.models import Extraction, Passage, PassageFailure

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "openie"
HIPPORAG_SMALL = FIXTURES / "hipporag_small.json"
RECORDS_JSONL = FIXTURES / "records.jsonl"


def _triples(extraction: Extraction) -> set[tuple[str, str, str]]:
    return {t.as_tuple() for t in extraction.triples}


@pytest.fixture(scope="module")
def hipporag_small() -> RecordedExtraction:
    return load_recorded_extraction(HIPPORAG_SMALL)


@pytest.fixture(scope="module")
def jsonl_records() -> RecordedExtraction:
    return load_recorded_extraction(RECORDS_JSONL)


def test_hipporag_json_gives_passages_with_title_text_ids(hipporag_small: RecordedExtraction) -> None:
    assert hipporag_small.format == "hipporag"
    assert hipporag_small.failures == []
    titles = [p.title for p in hipporag_small.passages]
    assert titles == ["Alpha Journal", "Carol Smith", "Dover"]
    for passage in hipporag_small.passages:
        assert passage.id == make_passage_id(passage.text, passage.title)
    assert hipporag_small.passages[2].text == "Dover is a town in Kent."


def test_hipporag_json_entities_and_triples_are_cleaned(hipporag_small: RecordedExtraction) -> None:
    alpha = hipporag_small.records[0].extraction
    assert alpha.entities == ["Alpha Journal", "Beta Press", "Carol Smith"]  # duplicate and "" dropped
    assert _triples(alpha) == {
        ("alpha journal", "published by", "beta press"),
        ("alpha journal", "editor is", "carol smith"),
    }
    dover = hipporag_small.records[2].extraction
    assert _triples(dover) == {("dover", "is a town in", "kent")}
    assert len(dover.dropped) == 2
    assert any("not a 3-item list" in reason for reason in dover.dropped)
    assert any("empty after normalisation" in reason for reason in dover.dropped)
    assert hipporag_small.triple_count == 5


def test_python_literal_string_fields_are_parsed(hipporag_small: RecordedExtraction) -> None:
    carol = hipporag_small.records[1].extraction
    assert carol.entities == ["Carol Smith", "Dover", "King's College"]
    assert _triples(carol) == {
        ("carol smith", "born in", "dover"),
        ("carol smith", "studied at", "king s college"),
    }


def test_jsonl_loads_good_records_and_reports_bad_lines(jsonl_records: RecordedExtraction) -> None:
    assert jsonl_records.format == "jsonl"
    reasons = {f.source.rsplit(":", 1)[1]: f.reason for f in jsonl_records.failures if f.source}
    assert set(reasons) == {"3", "6", "7", "8", "9"}
    assert reasons["3"].startswith("line 3: malformed JSON")
    assert reasons["6"] == "line 6: triples is not a list: dict"
    assert reasons["7"] == "line 7: record has neither text nor passage_id"
    assert "duplicate passage id p-eiffel" in reasons["8"]
    assert "not a JSON object" in reasons["9"]
    assert all(f.source and f.source.startswith("records.jsonl:") for f in jsonl_records.failures)
    by_source = {f.source: f.passage_id for f in jsonl_records.failures}
    assert by_source["records.jsonl:6"] == "p-not-list"
    assert by_source["records.jsonl:3"] is None


def test_jsonl_records_with_and_without_text(jsonl_records: RecordedExtraction) -> None:
    paris_id = make_passage_id("Paris is the capital of France.")
    assert [p.id for p in jsonl_records.passages] == ["p-eiffel", paris_id, "p-café"]
    eiffel = jsonl_records.passages[0]
    assert (eiffel.title, eiffel.text) == ("Eiffel Tower", "The Eiffel Tower is in Paris.")
    # a record without text carries only the extraction of a passage indexed elsewhere
    external = jsonl_records.by_passage_id["p-external"]
    assert _triples(external) == {("gustave eiffel", "designed", "eiffel tower")}
    assert external.entities == ["Gustave Eiffel", "Eiffel Tower"]
    assert set(jsonl_records.by_passage_id) == {"p-eiffel", paris_id, "p-external", "p-café"}
    cafe = jsonl_records.by_passage_id["p-café"]
    assert _triples(cafe) == {("café de flore", "est à", "paris")}
    assert cafe.dropped == ["non-string item: ['Café de Flore', 3, 'Paris']"]


def test_recorded_extractor_matches_by_id_then_content(jsonl_records: RecordedExtraction) -> None:
    extractor = RecordedExtractor(jsonl_records)
    assert isinstance(extractor, Extractor)
    assert extractor.name == "recorded"
    by_id = Passage(id="p-external", text="Gustave Eiffel designed it.")
    by_content = Passage(id="mine-1", text="The Eiffel Tower is in Paris.", title="Eiffel Tower")
    by_text_only = Passage(id="mine-2", text="  Paris is the capital of France.\n")
    unknown = Passage(id="mine-3", text="Nothing recorded about this.", title="Elsewhere")
    results = extractor.extract([by_id, by_content, by_text_only, unknown])
    assert len(results) == 4
    first, second, third, fourth = results
    assert isinstance(first, Extraction) and first.passage_id == "p-external"
    assert isinstance(second, Extraction) and second.passage_id == "mine-1"
    assert _triples(second) == {("eiffel tower", "is in", "paris")}
    assert isinstance(third, Extraction) and third.passage_id == "mine-2"
    assert _triples(third) == {("paris", "capital of", "france")}
    assert isinstance(fourth, PassageFailure)
    assert fourth.passage_id == "mine-3"
    assert "no recorded extraction for this passage" in fourth.reason
    # the recorded data itself is untouched by a content match
    assert jsonl_records.by_passage_id["p-eiffel"].passage_id == "p-eiffel"


def test_content_match_accepts_hipporag_passage_string(hipporag_small: RecordedExtraction) -> None:
    """A passage indexed as one string "title\\ntext" (no title field) still finds its record."""
    passage = Passage(id="x", text="Dover\nDover is a town in Kent.")
    (result,) = RecordedExtractor(hipporag_small).extract([passage])
    assert isinstance(result, Extraction)
    assert _triples(result) == {("dover", "is a town in", "kent")}


def test_non_utf8_file_names_file_and_byte_offset(tmp_path: Path) -> None:
    good = json.dumps({"passage_id": "a", "triples": []}).encode() + b"\n"
    bad_jsonl = tmp_path / "latin1.jsonl"
    bad_line = b'{"passage_id": "caf\xe9", "triples": []}\n'
    bad_jsonl.write_bytes(good + bad_line)
    offset = len(good) + bad_line.index(b"\xe9")
    with pytest.raises(
        InputError, match=rf"latin1\.jsonl is not UTF-8: invalid byte 0xe9 at byte offset {offset}\b"
    ):
        load_recorded_extraction(bad_jsonl)
    bad_json = tmp_path / "latin1.json"
    bad_json.write_bytes(b'{"docs": [{"title": "\xff"}]}')
    with pytest.raises(InputError, match=r"latin1\.json is not UTF-8: invalid byte 0xff at byte offset 21\b"):
        load_recorded_extraction(bad_json)


def test_unusable_files_raise_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_recorded_extraction(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="is empty"):
        load_recorded_extraction(empty)
    number = tmp_path / "number.json"
    number.write_text("42", encoding="utf-8")
    with pytest.raises(InputError, match="got a JSON int"):
        load_recorded_extraction(number)
    garbage = tmp_path / "garbage.json"
    garbage.write_text("not json at all\n", encoding="utf-8")
    with pytest.raises(InputError, match="neither JSON nor JSONL"):
        load_recorded_extraction(garbage)


def test_json_list_and_jsonl_content_under_json_name(tmp_path: Path) -> None:
    records = [
        {"passage_id": "a", "text": "A text.", "triples": [["A", "r", "B"]]},
        {"passage_id": "b", "extracted_triples": "[['B', 'r', 'C']]"},
    ]
    as_list = tmp_path / "records.json"
    as_list.write_text(json.dumps(records), encoding="utf-8")
    loaded = load_recorded_extraction(as_list)
    assert loaded.format == "json-list"
    assert set(loaded.by_passage_id) == {"a", "b"}
    as_lines = tmp_path / "lines.json"
    as_lines.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    loaded = load_recorded_extraction(as_lines)
    assert loaded.format == "jsonl"
    assert _triples(loaded.by_passage_id["b"]) == {("b", "r", "c")}


def test_bad_literal_string_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"passage_id": "a", "triples": "[('A', 'r'"})
        + "\n"
        + json.dumps({"passage_id": "b", "triples": [], "entities": "{'x': 1}"})
        + "\n",
        encoding="utf-8",
    )
    loaded = load_recorded_extraction(path)
    assert [f.passage_id for f in loaded.failures] == ["a"]
    assert "not a JSON or Python literal" in loaded.failures[0].reason
    assert loaded.by_passage_id["b"].entities == []
    assert loaded.by_passage_id["b"].dropped == ["entities ignored: not a list but dict"]
