"""Big files and unattended runs through the Python API (issue 37 items 3 and 4): progress lines from the
timer while batches are slower than the interval (a slow extractor injected through the constructor), a
long text stored whole or in part not cut again on the next run, an interrupted run's report exact and
its resume giving the graph of a run never interrupted, and files over ``extraction.max_file_mb``
refused by name. Embedded store on disk, test doubles for the models."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.cli.progress import Progress
from hipporag_neo4j.indexing.pipeline import IndexInterrupted
from hipporag_neo4j.models import Extraction, Passage, PassageFailure, PassageInput
from hipporag_neo4j.settings import load_settings
from tests.support.fakes import FixedQueryNER, HashEmbedder, WordsExtractor
from tests.support.pipeline_support import dump_embedded

pytestmark = pytest.mark.integration

#: HashEmbedder: words + 2 tokens, a 64-token window: 10 sentences a chunk, 800 chunks (4 batches)
LONG = " ".join(f"Sentence {n} names Person{n} and Place{n % 97}." for n in range(8000))


class CountingEmbedder(HashEmbedder):
    """HashEmbedder counting the texts it tokenizes (chunking tokenizes every sentence)."""

    def __init__(self) -> None:
        super().__init__()
        self.counted = 0

    def token_count(self, text: str) -> int:
        self.counted += 1
        return super().token_count(text)


class GatedExtractor(WordsExtractor):
    """Each call waits until ``lines`` has grown by ``lines_per_call`` (or 60 s): a batch that takes
    longer than the progress interval, however loaded the machine."""

    def __init__(self, lines: list[str], grown: threading.Condition, lines_per_call: int) -> None:
        super().__init__()
        self.lines, self.grown, self.per_call = lines, grown, lines_per_call
        self.seen_during: list[int] = []

    def extract(self, passages: Sequence[Passage]) -> list[Extraction | PassageFailure]:
        with self.grown:
            start = len(self.lines)
            self.grown.wait_for(lambda: len(self.lines) >= start + self.per_call, timeout=60)
            self.seen_during.append(len(self.lines) - start)
        return super().extract(passages)


class StopAfter(WordsExtractor):
    """Ctrl-C (KeyboardInterrupt) in the main thread at the ``calls``-th extraction call (the first is
    the estimate's sample)."""

    def __init__(self, calls: int) -> None:
        super().__init__()
        self.left = calls

    def extract(self, passages: Sequence[Passage]) -> list[Extraction | PassageFailure]:
        self.left -= 1
        if self.left == 0:
            raise KeyboardInterrupt
        return super().extract(passages)


def memory_at(
    path: Path, embedder: HashEmbedder | None = None, extractor: WordsExtractor | None = None, **x: object
) -> HippoRAG:
    settings = load_settings({"store": {"path": str(path)}, "extraction": x})
    return HippoRAG(
        settings,
        embedder=embedder or HashEmbedder(),
        extractor=extractor or WordsExtractor(),
        query_ner=FixedQueryNER({}),
    )


def test_progress_lines_come_from_the_timer_while_batches_are_slower_than_the_interval(
    tmp_path: Path,
) -> None:
    lines: list[str] = []
    grown = threading.Condition()

    def sink(line: str) -> None:
        with grown:
            lines.append(line)
            grown.notify_all()

    extractor = GatedExtractor(lines, grown, lines_per_call=3)
    progress = Progress("log", interval=0.05, sink=sink)
    passages = [PassageInput(id=f"p{n}", text=f"Researcher{n} works in Lab{n % 7}.") for n in range(600)]
    memory = memory_at(tmp_path / "s", extractor=extractor)
    report = memory.index(passages, progress=progress)
    progress.finish()
    assert len(report.indexed) == 600
    # every extraction call (the estimate's sample, then three batches) saw the timer print meanwhile
    assert len(extractor.seen_during) == 4 and min(extractor.seen_during) >= 3, extractor.seen_during
    indexing = [line for line in lines if "indexing passages:" in line]
    assert any(" 0/600 (0%)" in line and "first batch" in line for line in indexing), lines
    assert any("256/600" in line and "passages/" in line and "left" in line for line in indexing), lines
    plan = [line for line in lines if "to index:" in line or "estimate:" in line]
    assert "to index: 600 passages" in plan[0] and "estimate: about" in plan[1], plan


def test_a_long_text_stored_whole_is_not_cut_again(tmp_path: Path) -> None:
    first = memory_at(tmp_path / "s")
    report = first.index([PassageInput(id="big", text=LONG)])
    chunks = report.chunked["big"]
    assert len(chunks) > 100 and len(report.indexed) == len(chunks)
    embedder = CountingEmbedder()
    again = memory_at(tmp_path / "s", embedder=embedder).index([PassageInput(id="big", text=LONG)])
    assert again.indexed == [] and sorted(again.skipped) == sorted(chunks) and again.chunked["big"] == chunks
    assert embedder.counted < 10  # the window check of the text's head, not thousands of sentences

    edited = LONG.replace("Sentence 7500 names", "Sentence 7500 calls")  # as many words: one chunk changes
    embedder = CountingEmbedder()
    changed = memory_at(tmp_path / "s", embedder=embedder).index([PassageInput(id="big", text=edited)])
    assert embedder.counted > 1000  # an edited text is chunked again
    assert 0 < len(changed.indexed) < len(chunks) // 2 and changed.updated == ["big"]


def test_an_interrupted_run_reports_what_it_wrote_and_resumes_without_cutting_the_stored_part(
    tmp_path: Path,
) -> None:
    memory = memory_at(tmp_path / "s", extractor=StopAfter(calls=4))
    with pytest.raises(IndexInterrupted) as stopped:
        memory.index([PassageInput(id="big", text=LONG)])
    written = stopped.value.report.indexed
    assert stopped.value.planned is not None and 0 < len(written) < stopped.value.planned
    assert sorted(p.id for p in memory.list_passages()) == sorted(written)  # exactly what it said
    assert stopped.value.report.new_phrases == memory.stats().phrases

    embedder = CountingEmbedder()
    resumed = memory_at(tmp_path / "s", embedder=embedder).index([PassageInput(id="big", text=LONG)])
    assert set(resumed.skipped) >= set(written) and not set(resumed.indexed) & set(written)
    whole = memory_at(tmp_path / "fresh")
    whole.index([PassageInput(id="big", text=LONG)])
    assert dump_embedded(tmp_path / "s")["passages"] == dump_embedded(tmp_path / "fresh")["passages"]
    sentences = LONG.count(".")
    assert embedder.counted < sentences * (1 - len(written) / stopped.value.planned) + 50  # the rest only


def test_files_over_the_size_limit_are_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "big.txt").write_text(LONG, encoding="utf-8")
    (tmp_path / "docs" / "small.txt").write_text("Ada works in Lab 1.", encoding="utf-8")
    memory = memory_at(tmp_path / "s", max_file_mb=0.05)
    report = memory.index_files([tmp_path / "docs"])
    assert len(report.indexed) == 1 and report.indexed[0].endswith("small.txt")
    (failure,) = report.failed
    assert failure.source == str(tmp_path / "docs" / "big.txt")
    size = len(LONG.encode())
    assert f"file of {size / 1e6:.1f} MB ({size:,} bytes)" in failure.reason
    assert "extraction.max_file_mb = 0.05 (HIPPORAG_EXTRACTION__MAX_FILE_MB)" in failure.reason
