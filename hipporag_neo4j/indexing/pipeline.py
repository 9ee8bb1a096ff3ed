"""Indexing: passages -> extraction -> phrases, facts, mentions, embeddings -> store -> synonym edges.

Works in batches; each batch is written atomically, so a crash or Ctrl-C loses at most the batch in
flight, and a re-run skips what is stored (resume) and never duplicates. A batch's synonym edges follow
in a second transaction; the phrases still waiting for them are marked in the store (in the batch's own
transaction), and every run finishes that work first, so a crash between the two loses nothing.
A passage whose extraction failed is reported and not stored, so the next run retries it.

Identity (:mod:`hipporag_neo4j.indexing.passage_ids`): a passage id stored with the same content is
skipped; with other content it is an update: the new version is indexed and the old one, with all only
it supported, is removed just before the new one is written (if extracting the new version fails, the
old one stays).
The same id twice in one input with different content keeps the first and reports the others as failed.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from hipporag_neo4j.common.text import (
    fact_text,
    make_fact_id,
    make_passage_id,
    make_phrase_id,
    normalize_phrase,
    passage_content,
)
from hipporag_neo4j.embedding.encoder import Embedder
from hipporag_neo4j.extraction.base import Extractor
from hipporag_neo4j.indexing.passage_ids import stored_versions
from hipporag_neo4j.indexing.synonyms import finish_pending_synonyms
from hipporag_neo4j.models import (
    MAX_PASSAGE_ID_BYTES,
    Extraction,
    IndexReport,
    Passage,
    PassageFailure,
    PassageInput,
)
from hipporag_neo4j.stores.base import FactRecord, GraphStore, PassageRecord, PhraseRecord

#: (stage, done, total) -> None; stages: "read" (files, from index_files), "prepare" (passages checked and
#: chunked), "index" (passages extracted, embedded and written, a batch at a time)
ProgressCallback = Callable[[str, int, int], None]

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass(frozen=True)
class IndexingOptions:
    batch_size: int = 256
    synonym_threshold: float = 0.8
    synonym_top_k: int = 100
    max_passage_tokens: int | None = 256
    on_long_passage: str = "chunk"  # or "reject"
    embed_facts: bool = True
    max_chunks: int | None = None  # set: a passage needing more chunks is rejected (bounds its work)


def _split_sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def chunk_text(text: str, max_tokens: int, count_tokens: Callable[[str], int]) -> list[str]:
    """Greedy sentence packing into chunks of at most ``max_tokens``; a longer sentence is split on words."""
    pieces: list[str] = []
    for sentence in _split_sentences(text):
        if count_tokens(sentence) <= max_tokens:
            pieces.append(sentence)
            continue
        current: list[str] = []
        words = sentence.split()
        for word in words:
            if current and count_tokens(" ".join([*current, word])) > max_tokens:
                pieces.append(" ".join(current))
                current = []
            current.append(word)
        if current:
            pieces.append(" ".join(current))
    chunks: list[str] = []
    for piece in pieces:
        if chunks and count_tokens(chunks[-1] + " " + piece) <= max_tokens:
            chunks[-1] = chunks[-1] + " " + piece
        else:
            chunks.append(piece)
    return chunks


def _too_many_chunks(chunks: int, window: int, limit: int, at_least: bool) -> str:
    return (
        f"passage would split into {'at least ' if at_least else ''}{chunks:,} chunks of {window} tokens, "
        f"more than extraction.max_chunks = {limit} (HIPPORAG_EXTRACTION__MAX_CHUNKS): split the text, "
        "or raise the limit"
    )


def _signature(text: str, title: str | None, metadata: dict[str, object]) -> tuple[str, str | None, str]:
    """What decides "same content" between two versions of an id (metadata as the store keeps it)."""
    return text, title or None, json.dumps(metadata, ensure_ascii=False, sort_keys=True, default=str)


def prepare_sources(
    inputs: Sequence[PassageInput],
    embedder: Embedder,
    options: IndexingOptions,
    report: IndexReport,
    progress: ProgressCallback | None = None,
) -> dict[str, list[Passage]]:
    """Validate, id, de-duplicate and (if too long) chunk the inputs; problems go to the report.

    Returns source id -> the passages to store for it: the passage itself, or its chunks ``<id>#<n>``.
    ``progress("prepare", inputs done, inputs)`` as it goes.
    """
    prepared: dict[str, list[Passage]] = {}
    first: dict[str, tuple[tuple[str, str | None, str], str]] = {}  # id -> (signature, where)
    window = options.max_passage_tokens
    model_window = embedder.max_tokens
    if window is not None and model_window is not None:
        window = min(window, model_window)
    for number, item in enumerate(inputs):
        if progress is not None:
            progress("prepare", number, len(inputs))
        source = item.source or item.title or f"input #{number}"
        if not item.text or not item.text.strip():
            report.failed.append(
                PassageFailure(passage_id=item.id, source=source, reason="empty passage text")
            )
            continue
        text = item.text.strip()
        passage_id = item.id or make_passage_id(text, item.title)
        if len(passage_id.encode("utf-8")) > MAX_PASSAGE_ID_BYTES:
            size = len(passage_id.encode("utf-8"))
            reason = f"passage id of {size} bytes (UTF-8); ids are at most {MAX_PASSAGE_ID_BYTES} bytes"
            report.failed.append(PassageFailure(passage_id=passage_id[:80], source=source, reason=reason))
            continue
        signature = _signature(text, item.title, item.metadata)
        if passage_id in first:
            seen, where = first[passage_id]
            if seen == signature:
                report.skipped.append(passage_id)
            else:
                reason = f"id {passage_id!r} already given with other content in this input ({where}); "
                report.failed.append(
                    PassageFailure(passage_id=passage_id, source=source, reason=reason + "kept the first")
                )
            continue
        first[passage_id] = (signature, source)
        content = passage_content(text, item.title)
        tokens = embedder.token_count(content) if window is not None else 0
        if window is None or tokens <= window:
            prepared[passage_id] = [
                Passage(id=passage_id, text=text, title=item.title, metadata=item.metadata)
            ]
            continue
        if options.on_long_passage == "reject":
            report.failed.append(
                PassageFailure(
                    passage_id=passage_id,
                    source=source,
                    reason=f"passage longer than the embedder's window of {window} tokens (rejected)",
                )
            )
            continue
        # a cheap lower bound first: a 2 MB text is refused before it is cut into a thousand pieces
        least = math.ceil(tokens / window)
        if options.max_chunks is not None and least > options.max_chunks:
            reason = _too_many_chunks(least, window, options.max_chunks, at_least=True)
            report.failed.append(PassageFailure(passage_id=passage_id, source=source, reason=reason))
            continue
        title_tokens = embedder.token_count(item.title) if item.title else 0
        chunks = chunk_text(text, max(window - title_tokens - 2, 8), embedder.token_count)
        if options.max_chunks is not None and len(chunks) > options.max_chunks:
            reason = _too_many_chunks(len(chunks), window, options.max_chunks, at_least=False)
            report.failed.append(PassageFailure(passage_id=passage_id, source=source, reason=reason))
            continue
        chunk_ids = [f"{passage_id}#{n}" for n in range(len(chunks))]
        report.chunked[passage_id] = chunk_ids
        prepared[passage_id] = [
            Passage(
                id=chunk_id,
                text=chunk,
                title=item.title,
                metadata={**item.metadata, "parent_id": passage_id, "chunk": n, "chunks": len(chunks)},
            )
            for n, (chunk_id, chunk) in enumerate(zip(chunk_ids, chunks, strict=True))
        ]
    if progress is not None:
        progress("prepare", len(inputs), len(inputs))
    return prepared


def prepare_passages(
    inputs: Sequence[PassageInput],
    embedder: Embedder,
    options: IndexingOptions,
    report: IndexReport,
) -> list[Passage]:
    """:func:`prepare_sources`, flattened."""
    return [p for parts in prepare_sources(inputs, embedder, options, report).values() for p in parts]


@dataclass
class _BatchGraph:
    records: list[PassageRecord]
    phrase_names: dict[str, str]  # id -> name, every phrase the batch mentions


def _build_graph(extractions: Sequence[tuple[Passage, Extraction]]) -> _BatchGraph:
    records: list[PassageRecord] = []
    names: dict[str, str] = {}
    for passage, extraction in extractions:
        mentions: Counter[str] = Counter()
        facts: dict[str, FactRecord] = {}
        for triple in extraction.triples:
            s_id, o_id = make_phrase_id(triple.subject), make_phrase_id(triple.object)
            names[s_id], names[o_id] = triple.subject, triple.object
            mentions[s_id] += 1
            mentions[o_id] += 1
            fid = make_fact_id(triple.subject, triple.predicate, triple.object)
            facts[fid] = FactRecord(
                fid, s_id, triple.predicate, o_id, fact_text(triple.subject, triple.predicate, triple.object)
            )
        for entity in extraction.entities:
            name = normalize_phrase(entity)
            if name:
                pid = make_phrase_id(name)
                names[pid] = name
                mentions[pid] += 1
        records.append(
            PassageRecord(passage, np.zeros(0, dtype=np.float32), dict(mentions), list(facts.values()))
        )
    return _BatchGraph(records, names)


@dataclass
class _Ready:
    """One batch extracted and encoded, ready for the store."""

    phrase_records: list[PhraseRecord]
    records: list[PassageRecord]
    new_facts: int
    phrases: set[str]  # ids of the phrases it writes
    facts: set[str]  # ids of the facts its passages state


@dataclass
class _InFlight:
    """A batch whose store work runs in the worker thread; ``done`` of ``total`` inputs when it ends."""

    future: Future[None]
    ready: _Ready
    done: int
    total: int
    waited: bool = False


def _ids(ready: _Ready | None, kind: str) -> set[str]:
    if ready is None:
        return set()
    return ready.phrases if kind == "phrases" else ready.facts


class Indexer:
    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        extractor: Extractor,
        options: IndexingOptions,
        progress: ProgressCallback | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.extractor = extractor
        self.options = options
        self.progress = progress or (lambda stage, done, total: None)
        self._stale: dict[str, list[str]] = {}  # source id -> stored ids of its old version
        self._source_of: dict[str, str] = {}  # passage id -> source id

    def _tick(self, report: IndexReport, stage: str, started: float) -> float:
        now = time.perf_counter()
        report.timings[stage] = report.timings.get(stage, 0.0) + now - started
        return now

    def index(self, inputs: Sequence[PassageInput]) -> IndexReport:
        """Index ``inputs`` a batch at a time. A batch's store work (its write, then its synonym edges)
        runs in a worker thread while the next batch is extracted and encoded: the store's writes go in
        the same order as one after the other (the next write waits for the previous batch's synonym
        edges), and the next batch leaves out of its encode the phrases and facts the batch in flight
        writes, so the graph and the texts encoded are those of a run without the overlap. A delete
        (an updated passage's old version) waits for the batch in flight first."""
        report = IndexReport()
        t = time.perf_counter()
        sources = prepare_sources(inputs, self.embedder, self.options, report, self.progress)
        todo = self._plan_updates(sources, report)
        t = self._tick(report, "prepare", t)
        report.new_synonym_edges += self._finish_synonyms()  # what an interrupted run left undone
        size = self.options.batch_size
        if todo:
            self.progress("index", 0, len(todo))  # the total up front: a long run shows from its start
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hipporag-store") as pool:
            inflight: _InFlight | None = None
            try:
                for start in range(0, len(todo), size):
                    ready = self._prepare_batch(todo[start : start + size], report, inflight)
                    self._wait(inflight, report)
                    done = min(start + size, len(todo))
                    if ready is None:
                        inflight = None
                        self.progress("index", done, len(todo))
                    else:
                        future = pool.submit(self._store_batch, ready, report)
                        inflight = _InFlight(future, ready, done, len(todo))
                self._wait(inflight, report)
                inflight = None
            finally:
                if inflight is not None:  # an error or an interrupt here: let the write in flight end
                    futures.wait([inflight.future])
        return report

    def _wait(self, inflight: _InFlight | None, report: IndexReport) -> None:
        """Wait for the batch in flight (its errors raised here), then report its progress."""
        if inflight is None or inflight.waited:
            return
        t = time.perf_counter()
        inflight.future.result()
        inflight.waited = True
        self._tick(report, "store_wait", t)
        self.progress("index", inflight.done, inflight.total)

    def _plan_updates(self, sources: dict[str, list[Passage]], report: IndexReport) -> list[Passage]:
        """What to write: passages not stored with the same content. Old versions to remove go to
        ``self._stale`` (removed when their new version is written), or now if nothing replaces them."""
        self._stale = {}
        self._source_of = {p.id: sid for sid, parts in sources.items() for p in parts}
        versions = stored_versions(self.store, list(sources))
        stored = self.store.get_passages([i for ids in versions.values() for i in ids])
        todo: list[Passage] = []
        for sid, parts in sources.items():
            same = {
                p.id
                for p in parts
                if p.id in stored
                and _signature(stored[p.id].text, stored[p.id].title, stored[p.id].metadata)
                == _signature(p.text, p.title, p.metadata)
            }
            report.skipped.extend(p.id for p in parts if p.id in same)
            todo.extend(p for p in parts if p.id not in same)
            stale = [i for i in versions[sid] if i not in same]
            if stale:
                self._stale[sid] = stale
        replaced = {self._source_of[p.id] for p in todo}
        self._remove_old_versions([sid for sid in self._stale if sid not in replaced], report)
        return todo

    def _remove_old_versions(self, source_ids: Sequence[str], report: IndexReport) -> None:
        stale = {sid: self._stale.pop(sid) for sid in dict.fromkeys(source_ids) if sid in self._stale}
        if not stale:
            return
        self.store.delete_passages([i for ids in stale.values() for i in ids])
        report.updated.extend(stale)
        report.removed.extend(i for ids in stale.values() for i in ids)

    def _prepare_batch(
        self, batch: Sequence[Passage], report: IndexReport, inflight: _InFlight | None
    ) -> _Ready | None:
        """Extract and encode one batch (the phrases and facts ``inflight`` writes are not new)."""
        t = time.perf_counter()
        results = self.extractor.extract(batch)
        extracted: list[tuple[Passage, Extraction]] = []
        for passage, result in zip(batch, results, strict=True):
            if isinstance(result, PassageFailure):
                report.failed.append(result)
            else:
                extracted.append((passage, result))
        t = self._tick(report, "extraction", t)
        if not extracted:
            return None
        # an update: the old version goes just before the new one is written (not if extraction failed),
        # after the batch in flight, as without the overlap
        stale = [self._source_of[p.id] for p, _ in extracted]
        if inflight is not None and any(sid in self._stale for sid in stale):
            self._wait(inflight, report)
            inflight = None
        self._remove_old_versions(stale, report)
        graph = _build_graph(extracted)

        writing = inflight.ready if inflight is not None else None
        new_ids = sorted(self.store.missing_phrases(list(graph.phrase_names)) - _ids(writing, "phrases"))
        new_names = [graph.phrase_names[i] for i in new_ids]
        all_facts = {f.id: f for r in graph.records for f in r.facts}
        new_fact_ids = sorted(self.store.missing_facts(list(all_facts)) - _ids(writing, "facts"))
        embed_fact_ids = new_fact_ids if self.options.embed_facts else []
        # one encode of everything the batch needs (passages, new phrases, new facts): sorted by length
        # together, a text the batch has twice (a phrase that is also a fact's text) encoded once
        contents = [passage_content(p.text, p.title) for p, _ in extracted]
        fact_texts = [all_facts[i].text for i in embed_fact_ids]
        vectors = self.embedder.encode([*contents, *new_names, *fact_texts])
        passage_vectors = vectors[: len(contents)]
        phrase_vectors = vectors[len(contents) : len(contents) + len(new_names)]
        fact_vectors = vectors[len(contents) + len(new_names) :]
        for record, vector in zip(graph.records, passage_vectors, strict=True):
            record.embedding = vector
        phrases = [PhraseRecord(i, n, v) for i, n, v in zip(new_ids, new_names, phrase_vectors, strict=True)]
        if self.options.embed_facts:
            _attach_fact_vectors(graph.records, dict(zip(embed_fact_ids, fact_vectors, strict=True)))
        self._tick(report, "embedding", t)
        return _Ready(phrases, graph.records, len(new_fact_ids), set(new_ids), set(all_facts))

    def _store_batch(self, ready: _Ready, report: IndexReport) -> None:
        """Write one batch, then its synonym edges (in the worker thread)."""
        t = time.perf_counter()
        result = self.store.write_passages(ready.phrase_records, ready.records)
        written = set(result.passages)
        # the store checks for each passage inside its transaction: one that another writer stored
        # meanwhile is not written again, and is reported as skipped, not as indexed
        report.indexed.extend(r.passage.id for r in ready.records if r.passage.id in written)
        report.skipped.extend(r.passage.id for r in ready.records if r.passage.id not in written)
        # the phrases and facts the write inserted: an index run beside this one may have stored some of
        # those found missing before the write
        report.new_phrases += result.phrases
        report.new_facts += result.facts
        t = self._tick(report, "store_writes", t)

        report.new_synonym_edges += self._finish_synonyms()
        self._tick(report, "synonyms", t)

    def _finish_synonyms(self) -> int:
        """Synonym edges of the phrases the store marks pending: this batch's, and any a crash left."""
        return finish_pending_synonyms(self.store, self.options.synonym_top_k, self.options.synonym_threshold)


def _attach_fact_vectors(records: list[PassageRecord], vectors: dict[str, np.ndarray]) -> None:
    """Each record's facts with their new vectors (a fact already stored keeps none: it is not rewritten)."""
    for record in records:
        record.facts = [
            FactRecord(f.id, f.subject_id, f.predicate, f.object_id, f.text, vectors.get(f.id))
            for f in record.facts
        ]
