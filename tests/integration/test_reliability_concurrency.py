"""Concurrency on the embedded store: readers during writes, two writers, a reader on an old snapshot.

Deterministic tests force the interleaving that breaks (a commit between two reads of one snapshot
load; a writer that checked before the other one wrote); process tests run real processes side by side.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hipporag_neo4j.common.text import make_passage_id
from hipporag_neo4j.indexing.pipeline import Indexer, IndexingOptions
from hipporag_neo4j.models import Passage, PassageInput
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord, WalkParams
from hipporag_neo4j.stores.embedded import EmbeddedStore
from hipporag_neo4j.stores.embedded.schema import FACT_ROWS, MENTION_KEYS
from tests.support.embedded_writes import one_passage
from tests.support.fakes import HashEmbedder
from tests.support.reliability_support import assert_same_store, dump_store, run_worker, start_worker
from tests.support.reliability_worker import BATCH, QUERY, corpus, expected_states, memory

pytestmark = pytest.mark.integration

EMB = HashEmbedder()


class CommitBetweenReads:
    """A connection that lets another writer commit right before the reader's first read of ``trigger``."""

    def __init__(self, conn: sqlite3.Connection, trigger: str, write: Any) -> None:
        self._conn, self._trigger, self._write = conn, trigger, write

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if self._write is not None and sql.strip().startswith(self._trigger):
            write, self._write = self._write, None
            write()
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def indexed_store(tmp_path: Path) -> Path:
    """The path of a store holding the first 8 passages of the corpus, indexed by a memory of its own."""
    path = tmp_path / "store"
    memory(path).index(list(corpus(8)))
    return path


def opened(path: Path) -> EmbeddedStore:
    """A handle of its own on the store at ``path`` (a reader, or a writer beside it), opened."""
    store = EmbeddedStore(path)
    store.open(EMB.model_name, EMB.dimension)
    return store


def test_a_commit_between_the_reads_of_a_snapshot_load_is_not_seen(tmp_path: Path) -> None:
    path = indexed_store(tmp_path)
    reader, writer = opened(path), opened(path)
    # the writer adds a passage and a phrase after the reader read passages, before it reads mentions
    reader._conn = CommitBetweenReads(  # type: ignore[assignment]
        reader.connection(), MENTION_KEYS.strip(), lambda: one_passage(writer, 1)
    )
    scores = reader.view().dense_passage_scores(EMB.encode(["place 1"])[0], 100)
    assert len(scores) == 8  # the state when the load began: no KeyError, no half-new graph
    assert (
        len(reader.view().dense_passage_scores(EMB.encode(["place 1"])[0], 100)) == 9
    )  # the next read is new


def test_a_commit_between_the_snapshot_and_the_fact_index_is_not_seen(tmp_path: Path) -> None:
    path = indexed_store(tmp_path)
    reader, writer = opened(path), opened(path)

    def a_fact_about_a_new_phrase() -> None:
        names = ["newcomer", "new place"]
        subject, obj = (PhraseRecord(f"phrase-{n}", n, EMB.encode([n])[0]) for n in names)
        fact = FactRecord(
            "fact-new", subject.id, "lives in", obj.id, "newcomer lives in new place", EMB.encode(["f"])[0]
        )
        record = PassageRecord(
            Passage(id="new", text="t"), EMB.encode(["t"])[0], {subject.id: 1, obj.id: 1}, [fact]
        )
        writer.write_passages([subject, obj], [record])

    reader._conn = CommitBetweenReads(  # type: ignore[assignment]
        reader.connection(),
        FACT_ROWS.strip(),
        a_fact_about_a_new_phrase,
    )
    hits = reader.view().nearest_facts(EMB.encode(["newcomer lives in new place"])[0], 200)
    assert "fact-new" not in {h.id for h in hits}  # the snapshot's version: no KeyError on its phrases
    assert "fact-new" in {
        h.id for h in reader.view().nearest_facts(EMB.encode(["x"])[0], 200)
    }  # then the new one


def test_a_second_writer_that_checked_before_the_first_wrote_reports_the_truth(tmp_path: Path) -> None:
    path = tmp_path / "store"
    inputs = [PassageInput(text=t) for t in corpus(12)]
    first, second = memory(path), memory(path)
    stale_check = second.store.existing_passages

    def checked_then_overtaken(ids: Any) -> set[str]:
        found = stale_check(ids)  # nothing stored yet ...
        Indexer(first.store, first.embedder, first.extractor, IndexingOptions(batch_size=BATCH)).index(inputs)
        return found  # ... but by now the first writer stored everything

    second.store.existing_passages = checked_then_overtaken  # type: ignore[method-assign]
    report = Indexer(
        second.store, second.embedder, second.extractor, IndexingOptions(batch_size=BATCH)
    ).index(inputs)
    assert report.indexed == [] and len(report.skipped) == 12  # not "indexed 12"
    assert second.stats().passages == 12


@pytest.mark.parametrize("mode", ["hipporag2", "hipporag", "dense"])
def test_a_reader_on_an_old_snapshot_while_passages_are_deleted(tmp_path: Path, mode: Any) -> None:
    path = tmp_path / "store"
    writer = memory(path)
    writer.index(list(corpus(12)))
    reader = memory(path)
    old = reader.retrieve(QUERY, mode=mode, top_k=12)
    assert old.passages
    gone = [p.passage.id for p in old.passages[:3]]
    real = reader.store.get_passages

    def deleted_meanwhile(ids: Any) -> Any:  # the graph changes after scoring, before passages are read
        writer.delete(gone)
        return real(ids)

    reader.store.get_passages = deleted_meanwhile  # type: ignore[method-assign]
    during = reader.retrieve(QUERY, mode=mode, top_k=12)
    assert during.passages and not {p.passage.id for p in during.passages} & set(gone)
    reader.store.get_passages = real  # type: ignore[method-assign]
    writer.index(list(corpus(16))[12:])  # and the graph grows
    after = reader.retrieve(QUERY, mode=mode, top_k=16)
    assert {p.passage.id for p in after.passages}.isdisjoint(gone)
    assert reader.stats().passages == 13  # 12 - 3 + 4: the reader follows every change


def test_a_reader_holding_an_old_snapshot_neither_blocks_writers_nor_sees_them(tmp_path: Path) -> None:
    path = indexed_store(tmp_path)
    reader, writer = opened(path), memory(path)
    with reader.read():  # a long query: its read transaction stays open while the graph changes
        before = reader.stats()
        writer.index(list(corpus(16))[8:])  # two batches' worth, committed while the reader holds on
        assert writer.delete([make_passage_id(next(iter(corpus(8))))]).passages  # and one is deleted
        assert reader.stats() == before  # still the old snapshot, whole
        assert len(reader.view().dense_passage_scores(EMB.encode(["x"])[0], 100)) == 8
    assert reader.stats().passages == 15  # released: the next read sees everything


def test_many_snapshot_loads_under_a_writer_in_another_thread_never_fail(tmp_path: Path) -> None:
    import threading

    path = indexed_store(tmp_path)
    writer, reader = opened(path), opened(path)
    stop = threading.Event()

    def write() -> None:
        n = 0
        while not stop.is_set() and n < 300:
            n += 1
            one_passage(writer, n)

    thread = threading.Thread(target=write)
    thread.start()
    try:
        loads = 0
        while thread.is_alive():
            reader.view().graph_passage_scores({"phrase-new-1": 1.0}, WalkParams(0.5, 50, 1e-6), 5, 2)
            reader.view().personalized_pagerank({"phrase-new-1": 1.0}, WalkParams(0.5, 50, 1e-6))
            loads += 1
    finally:
        stop.set()
        thread.join()
    assert loads > 0 and writer.passage_count() == 308
    vector = np.asarray(EMB.encode(["x"])[0])
    assert len(reader.view().dense_passage_scores(vector, 1000)) == 308


def test_readers_during_a_long_index_see_whole_batches_only(tmp_path: Path) -> None:
    store = tmp_path / "store"
    indexer = start_worker("index", str(store), "--slow", "0.05")
    readers = [start_worker("read", str(store), "--seconds", "4") for _ in range(2)]
    results = [p.communicate(timeout=120) for p in [indexer, *readers]]
    for proc, (_, err) in zip([indexer, *readers], results, strict=True):
        assert proc.returncode == 0, err
        assert "database is locked" not in err
    seen = [
        tuple(s) for _, (out, _) in zip(readers, results[1:], strict=True) for s in json.loads(out)["states"]
    ]
    assert set(seen) <= set(expected_states())
    assert len(set(seen)) > 2, "the readers should have seen the index grow"
    loops = sum(json.loads(out)["loops"] for out, _ in results[1:])
    print(f"2 readers: {loops} rounds of stats + 2 queries, {len(set(seen))} distinct states")  # with -s


def test_two_writers_on_one_store_each_passage_written_once(tmp_path: Path) -> None:
    store, clean = tmp_path / "store", tmp_path / "clean"
    run_worker("index", str(clean))
    writers = [start_worker("index", str(store), "--slow", "0.01") for _ in range(2)]
    outs = [w.communicate(timeout=120) for w in writers]
    reports = []
    for writer, (out, err) in zip(writers, outs, strict=True):
        assert writer.returncode == 0, err
        reports.append(json.loads(out))
    first, second = (set(r["indexed"]) for r in reports)
    assert not first & second, "a passage was claimed by both writers"
    assert len(first | second) == len(corpus())
    for report in reports:
        assert set(report["indexed"]) | set(report["skipped"]) == first | second
    assert_same_store(dump_store(store), dump_store(clean))


def test_a_lone_writer_keeps_its_phrase_vectors_loaded_across_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hipporag_neo4j.stores.embedded import snapshot

    loads = []
    real = snapshot.load_phrases
    monkeypatch.setattr(snapshot, "load_phrases", lambda *a: loads.append(1) or real(*a))
    mem = memory(tmp_path / "store")
    options = IndexingOptions(batch_size=BATCH, synonym_top_k=1000)
    Indexer(mem.store, mem.embedder, mem.extractor, options).index([PassageInput(text=t) for t in corpus()])
    assert len(loads) == 1  # its own commits are applied in memory, not reloaded per batch (10 batches)


def _open_new_store(path: str, barrier: Any) -> None:
    barrier.wait()
    store = EmbeddedStore(path)
    store.reembed_state()  # connects: WAL switch and schema


def test_processes_opening_one_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    """SQLite skips the busy handler when a new file switches to WAL: the loser of that race must wait
    (CI once failed here: two writers started together, one got "database is locked")."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    for round_ in range(8):
        barrier = context.Barrier(4)
        path = str(tmp_path / f"store{round_}")
        procs = [context.Process(target=_open_new_store, args=(path, barrier)) for _ in range(4)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(timeout=60)
        assert [p.exitcode for p in procs] == [0, 0, 0, 0], f"round {round_}"
