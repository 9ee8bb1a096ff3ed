from __future__ import annotations

from pathlib import Path

import pytest

from hipporag_neo4j.indexing.pipeline import chunk_text
from hipporag_neo4j.models import PassageInput
from tests.support.fakes import HashEmbedder
from tests.support.pipeline_support import dump_embedded, make_memory

pytestmark = pytest.mark.integration

TABLE = {
    "Thomas is a professor at Stanford.": [["Thomas", "is professor at", "Stanford"]],
    "Thomas researches Alzheimer's disease.": [["Thomas", "researches", "Alzheimer's disease"]],
    "Maria works at Stanford.": [["Maria", "works at", "Stanford"], ["Maria", 3, "x"]],
}


def test_bad_input_is_reported_and_the_rest_indexed(tmp_path: Path) -> None:
    memory = make_memory(tmp_path / "s", TABLE)
    report = memory.index(
        [*TABLE, "", "   ", "A passage the extractor fails on.", "Maria works at Stanford."]
    )
    assert len(report.indexed) == 3
    reasons = [f.reason for f in report.failed]
    assert reasons.count("empty passage text") == 2
    assert "no extraction in table" in reasons
    assert len(report.skipped) == 1  # the duplicate in the same input
    assert memory.stats().passages == 3


def test_rerun_resumes_and_never_duplicates(tmp_path: Path) -> None:
    memory = make_memory(tmp_path / "s", TABLE)
    first = memory.index([*list(TABLE)[:2], "unknown passage"])
    before = dump_embedded(tmp_path / "s")
    assert len(first.indexed) == 2 and len(first.failed) == 1
    calls_before = len(memory.extractor.calls)  # type: ignore[attr-defined]
    second = memory.index(list(TABLE))
    assert len(second.indexed) == 1
    assert len(second.skipped) == 2
    # only the new passage went to the extractor
    assert len(memory.extractor.calls) - calls_before == 1  # type: ignore[attr-defined]
    after = dump_embedded(tmp_path / "s")
    assert set(before["passages"]) <= set(after["passages"])
    third = memory.index(list(TABLE))
    assert third.indexed == [] and len(third.skipped) == 3
    assert dump_embedded(tmp_path / "s") == after


def test_user_ids_and_titles_are_kept(tmp_path: Path) -> None:
    memory = make_memory(tmp_path / "s", TABLE)
    memory.index([PassageInput(id="doc-1", title="Thomas", text="Thomas is a professor at Stanford.")])
    passage = memory.store.get_passages(["doc-1"])["doc-1"]
    assert passage.title == "Thomas"


def test_long_passages_are_chunked_and_reported(tmp_path: Path) -> None:
    long_text = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(30))
    table = {**TABLE}
    memory = make_memory(tmp_path / "s", table)
    report = memory.index([PassageInput(id="long", text=long_text)])
    assert list(report.chunked) == ["long"]
    chunk_ids = report.chunked["long"]
    assert len(chunk_ids) > 1
    # chunks fail extraction here (not in the table) and are reported one by one, not lost
    assert {f.passage_id for f in report.failed} == set(chunk_ids)


def test_long_passages_can_be_rejected(tmp_path: Path) -> None:
    memory = make_memory(tmp_path / "s", TABLE)
    memory.settings.extraction.on_long_passage = "reject"
    report = memory.index(["word " * 200])
    assert "longer than the embedder's window" in report.failed[0].reason


def test_chunk_text_respects_the_window() -> None:
    emb = HashEmbedder()
    text = "One two three. Four five six seven. " + "x " * 40 + ". Last one."
    chunks = chunk_text(text, 10, emb.token_count)
    assert all(emb.token_count(c) <= 10 for c in chunks)
    assert " ".join(chunks).split() == text.split()


def test_synonym_edges_are_incremental(tmp_path: Path) -> None:
    # "stanford variant" embeds next to "stanford" (HashEmbedder near-duplicate), so they become synonyms
    table = {
        "A.": [["alpha one", "at", "stanford"]],
        "B.": [["beta two", "at", "stanford variant"]],
        "C.": [["gamma", "at", "ab"]],
    }
    memory = make_memory(tmp_path / "s", table)
    first = memory.index(["A."])
    assert first.new_synonym_edges == 0
    second = memory.index(["B.", "C."])
    assert second.new_synonym_edges == 1
    assert memory.stats().synonym_edges == 1
    again = memory.index(["A.", "B.", "C."])
    assert again.new_synonym_edges == 0


def test_a_fact_stated_by_two_passages_is_one_new_fact(tmp_path: Path) -> None:
    table = {
        "A says it.": [["Thomas", "works at", "Stanford"]],
        "B says it too.": [["Thomas", "works at", "Stanford"]],
    }
    memory = make_memory(tmp_path / "s", table)
    report = memory.index(list(table))
    assert report.new_facts == 1 and memory.stats().facts == 1
    assert memory.index(["A says it."]).new_facts == 0


def test_a_batch_is_one_encode_and_no_text_is_encoded_twice(tmp_path: Path) -> None:
    table = {
        "Thomas is a professor at Stanford.": [["Thomas", "is professor at", "Stanford"]],
        "Maria works at Stanford.": [["Maria", "works at", "Stanford"]],
    }
    memory = make_memory(tmp_path / "s", table)
    calls: list[list[str]] = []
    encode = memory.embedder.encode

    def counted(texts: list[str]) -> object:
        calls.append(list(texts))
        return encode(texts)

    memory.embedder.encode = counted  # type: ignore[method-assign]
    memory.index(list(table))
    (batch,) = [c for c in calls if len(c) > 1]  # one call for the batch (queries may add one-text calls)
    assert len(batch) == len(set(batch))  # "stanford", named by both passages, once
    assert sum(t == "stanford" for t in batch) == 1
    assert {"thomas", "maria", "stanford", *table} <= set(batch)
    calls.clear()
    memory.index(["Maria works at Stanford.", "Thomas is a professor at Stanford."])
    assert calls == []  # stored: nothing encoded again
    more = {"Ana works at Stanford.": [["Ana", "works at", "Stanford"]]}
    memory.extractor.table.update(more)  # type: ignore[attr-defined]
    memory.index(list(more))
    (batch,) = [c for c in calls if len(c) > 1]
    assert "stanford" not in batch and "ana" in batch  # a phrase the store holds is not encoded again
