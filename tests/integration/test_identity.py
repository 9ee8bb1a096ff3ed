"""Passage identity: ids from the source, re-index = update, delete by the ids a user knows, list."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.models import PassageInput
from hipporag_neo4j.settings import load_settings
from tests.support.fakes import FixedQueryNER, HashEmbedder, WordsExtractor
from tests.support.pipeline_support import dump_embedded

pytestmark = pytest.mark.integration

# HashEmbedder counts words + 2 tokens with a 64-token window: LONG splits into several chunks
LONG = " ".join(f"Sentence {i} names Person{i} and Place{i}." for i in range(40))


def memory_at(path: Path, extractor: WordsExtractor | None = None, **extraction: object) -> HippoRAG:
    settings = load_settings({"store": {"path": str(path)}, "extraction": extraction})
    return HippoRAG(
        settings,
        embedder=HashEmbedder(),
        extractor=extractor or WordsExtractor(),
        query_ner=FixedQueryNER({}),
    )


def graph(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """The store's tables, synonym scores left out (float noise from different batchings)."""
    dump = dump_embedded(path)
    dump["synonyms"] = [row[:2] for row in dump["synonyms"]]
    return dump


def test_reindexing_an_id_with_new_text_replaces_the_old_version(tmp_path: Path) -> None:
    memory = memory_at(tmp_path / "s")
    memory.index([PassageInput(id="doc", text="Thomas works at Stanford with Maria.")])
    report = memory.index([PassageInput(id="doc", text="Thomas works at Harvard with Lee.")])
    assert report.updated == ["doc"] and report.removed == ["doc"] and report.indexed == ["doc"]
    assert memory.store.get_passages(["doc"])["doc"].text == "Thomas works at Harvard with Lee."
    # what only the old version supported is gone: the store equals one that only saw the new text
    fresh = memory_at(tmp_path / "fresh")
    fresh.index([PassageInput(id="doc", text="Thomas works at Harvard with Lee.")])
    assert graph(tmp_path / "s") == graph(tmp_path / "fresh")


def test_the_same_content_again_is_skipped_not_updated(tmp_path: Path) -> None:
    extractor = WordsExtractor()
    memory = memory_at(tmp_path / "s", extractor)
    memory.index([PassageInput(id="doc", title="T", text="Thomas works at Stanford.")])
    again = memory.index([PassageInput(id="doc", title="T", text="Thomas works at Stanford.")])
    assert again.skipped == ["doc"] and again.updated == [] and again.indexed == []
    assert extractor.calls == ["doc"]


def test_a_failed_update_keeps_the_old_version(tmp_path: Path) -> None:
    memory = memory_at(tmp_path / "s", WordsExtractor(fail_on="Harvard"))
    memory.index([PassageInput(id="doc", text="Thomas works at Stanford.")])
    report = memory.index([PassageInput(id="doc", text="Thomas works at Harvard.")])
    assert [f.passage_id for f in report.failed] == ["doc"] and report.updated == []
    assert memory.store.get_passages(["doc"])["doc"].text == "Thomas works at Stanford."


def test_an_id_reused_with_other_text_in_one_input_keeps_the_first_and_says_so(tmp_path: Path) -> None:
    memory = memory_at(tmp_path / "s")
    report = memory.index(
        [
            PassageInput(id="doc", text="Thomas works at Stanford."),
            PassageInput(id="doc", text="Thomas works at Stanford."),
            PassageInput(id="doc", text="Maria works at Harvard."),
        ]
    )
    assert report.indexed == ["doc"] and report.skipped == ["doc"]
    assert len(report.failed) == 1
    failure = report.failed[0]
    assert failure.passage_id == "doc" and "already given with other content" in failure.reason
    assert memory.store.get_passages(["doc"])["doc"].text == "Thomas works at Stanford."


def test_chunks_answer_to_their_parent_id(tmp_path: Path) -> None:
    memory = memory_at(tmp_path / "s")
    first = memory.index([PassageInput(id="long", text=LONG), PassageInput(id="short", text="Ann met Bob.")])
    chunks = first.chunked["long"]
    assert len(chunks) > 2 and set(first.indexed) == {*chunks, "short"}
    listed = {info.id: info for info in memory.list_passages()}
    assert {listed[c].parent_id for c in chunks} == {"long"}
    assert [listed[c].chunk for c in chunks] == list(range(len(chunks)))

    # an edit that shortens the text: the surplus chunks of the old version go
    shorter = LONG[: len(LONG) // 2]
    second = memory.index([PassageInput(id="long", text=shorter)])
    assert second.updated == ["long"]
    stored = {i.id for i in memory.list_passages() if i.parent_id == "long"}
    assert stored == set(second.chunked["long"]) and len(stored) < len(chunks)

    deleted = memory.delete(["long"])
    assert sorted(deleted.passages) == sorted(stored) and deleted.missing == []
    assert [i.id for i in memory.list_passages()] == ["short"]


def test_a_user_id_that_looks_like_a_chunk_is_not_taken_for_one(tmp_path: Path) -> None:
    memory = memory_at(tmp_path / "s")
    memory.index([PassageInput(id="a", text="Ann met Bob."), PassageInput(id="a#1", text="Cid met Dan.")])
    report = memory.delete(["a"])
    assert report.passages == ["a"]
    assert [i.id for i in memory.list_passages()] == ["a#1"]


def test_files_are_identified_by_path_so_an_edit_is_an_update(tmp_path: Path) -> None:
    os.chdir(tmp_path)
    docs = Path("docs")
    docs.mkdir()
    (docs / "a.txt").write_text("Thomas works at Stanford.", encoding="utf-8")
    (docs / "b.json").write_text(
        json.dumps([{"text": "Maria works at Harvard."}, {"id": "lee", "text": "Lee works at MIT."}]),
        encoding="utf-8",
    )
    memory = memory_at(tmp_path / "s")
    first = memory.index_files([docs])
    assert sorted(first.indexed) == ["docs/a.txt", "docs/b.json[0]", "lee"]

    (docs / "a.txt").write_text("Thomas works at Oxford.", encoding="utf-8")
    second = memory.index_files([tmp_path / "docs"])  # the same files, named by an absolute path
    assert second.updated == ["docs/a.txt"] and sorted(second.skipped) == ["docs/b.json[0]", "lee"]
    assert memory.stats().passages == 3
    sources = {i.id: i.source for i in memory.list_passages()}
    assert sources == {"docs/a.txt": "docs/a.txt", "docs/b.json[0]": "docs/b.json", "lee": "docs/b.json"}

    # delete by the path, written any way that names the file
    report = memory.delete(["./docs/b.json"])
    assert sorted(report.passages) == ["docs/b.json[0]", "lee"]
    report = memory.delete([str(tmp_path / "docs" / "a.txt"), "nothing-here"])
    assert report.passages == ["docs/a.txt"] and report.missing == ["nothing-here"]
    assert memory.stats().passages == 0

    # a folder names every passage read from a file under it
    (docs / "sub").mkdir()
    (docs / "sub" / "c.md").write_text("Ann met Bob.", encoding="utf-8")
    memory.index_files([docs])
    (tmp_path / "docsother").mkdir()
    (tmp_path / "docsother" / "d.txt").write_text("Cid met Dan.", encoding="utf-8")
    memory.index_files([tmp_path / "docsother"])
    assert sorted(memory.delete(["docs/"]).passages) == [
        "docs/a.txt",
        "docs/b.json[0]",
        "docs/sub/c.md",
        "lee",
    ]
    assert [i.id for i in memory.list_passages()] == ["docsother/d.txt"]


def test_too_many_chunks_is_refused_naming_the_setting(tmp_path: Path) -> None:
    memory = memory_at(tmp_path / "s", max_chunks=3)
    report = memory.index([PassageInput(id="long", text=LONG), "Ann met Bob."])
    assert len(report.indexed) == 1
    assert [f.passage_id for f in report.failed] == ["long"]
    assert "extraction.max_chunks = 3 (HIPPORAG_EXTRACTION__MAX_CHUNKS)" in report.failed[0].reason


def test_bad_records_through_the_api_are_reported_and_the_rest_indexed(tmp_path: Path) -> None:
    memory = memory_at(tmp_path / "s")
    report = memory.index(
        [
            {"text": "Ann met Bob.", "title": ["not", "a", "string"]},
            {"text": "Cid met Dan.", "metadata": "not an object"},
            {"title": "no text"},
            42,
            {"id": "ok", "text": "Eve met Fay."},
        ]
    )
    assert report.indexed == ["ok"]
    reasons = [f.reason for f in report.failed]
    assert "'title' must be a string, not list" in reasons[0]
    assert "'metadata' must be an object, not str" in reasons[1]
    assert "'text' is missing" in reasons[2]
    assert "got int" in reasons[3]


def test_namespaces_of_the_embedded_store_are_separate(tmp_path: Path) -> None:
    def memory(namespace: str) -> HippoRAG:
        settings = load_settings({"store": {"path": str(tmp_path / "s")}, "neo4j": {"namespace": namespace}})
        return HippoRAG(settings, embedder=HashEmbedder(), extractor=WordsExtractor())

    a, b, default = memory("projA"), memory("projB"), memory("default")
    a.index([PassageInput(id="a1", text="Ann met Bob.")])
    b.index([PassageInput(id="b1", text="Cid met Dan.")])
    assert [i.id for i in a.list_passages()] == ["a1"]
    assert [i.id for i in b.list_passages()] == ["b1"]
    assert default.list_passages() == []
    assert b.delete(["a1"]).missing == ["a1"] and a.stats().passages == 1


def test_progress_announces_the_total_before_the_first_batch(tmp_path: Path) -> None:
    memory = memory_at(tmp_path / "s")
    seen: list[tuple[str, int, int]] = []
    memory.index([PassageInput(id="long", text=LONG)], progress=lambda *step: seen.append(step))
    total = len(memory.list_passages())
    # the chunking stage first (counting the text's characters), then indexing with its total before the
    # first batch
    assert seen[0] == ("prepare", 0, len(LONG)) and seen[1] == ("prepare", len(LONG), len(LONG))
    indexing = [step for step in seen if step[0] == "index"]
    assert indexing[0] == ("index", 0, total) and indexing[-1] == ("index", total, total)
