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

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Protocol, runtime_checkable

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
from hipporag_neo4j.errors import PhrasesVanishedError
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

#: (stage, done, total) -> None; stages: "read" (files, from index_files), "prepare" (characters of the
#: inputs checked and chunked), "index" (passages extracted, embedded and written, a batch at a time: told
#: from the thread that writes, as each batch is in the store)
ProgressCallback = Callable[[str, int, int], None]

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass(frozen=True)
class IndexingOptions:
    batch_size: int = 256
    synonym_threshold: float = 0.8
    synonym_top_k: int = 100
    synonym_same_numbers: bool = True
    max_passage_tokens: int | None = 256
    on_long_passage: str = "chunk"  # or "reject"
    embed_facts: bool = True
    max_chunks: int | None = None  # set: a passage needing more chunks is rejected (bounds its work)


def _split_sentences(text: str) -> list[str]:
    return [s for s, _ in _sentences(text)]


#: A sentence of more characters than this many times the window is split on words without being
#: tokenized whole: a text without sentence ends (a log, a table dump) is never tokenized in one piece.
_CHARS_PER_TOKEN = 64
_WORD = re.compile(r"\S+")
_NON_SPACE = re.compile(r"\S")


def _sentences(text: str, start: int = 0) -> Iterator[tuple[str, int]]:
    """The sentences of ``text`` (from offset ``start``, a sentence's start) one at a time, with the
    offset where each ends: what splitting the stripped text on sentence ends gives, without
    a copy of the text or a list of them."""
    first = _NON_SPACE.search(text, start)
    if first is None:
        return
    end = len(text)
    while text[end - 1].isspace():
        end -= 1
    position = first.start()
    for match in _SENTENCE_END.finditer(text, position, end):
        if match.start() > position:
            yield text[position : match.start()], match.start()
        position = match.end()
    if position < end:
        yield text[position:end], end


def _pieces(
    text: str, max_tokens: int, count_tokens: Callable[[str], int], overhead: int, start: int
) -> Iterator[tuple[str, int, int | None]]:
    """Sentences that fit the window, and longer ones cut greedily into runs of words that do: each
    with its token count (a word run's from its words' counts) and, when it ends a sentence, the offset
    where that sentence ends (None for a run inside a sentence)."""
    for sentence, end in _sentences(text, start):
        if len(sentence) <= max_tokens * _CHARS_PER_TOKEN:
            tokens = count_tokens(sentence)
            if tokens <= max_tokens:
                yield sentence, tokens, end
                continue
        words: list[str] = []
        tokens = overhead
        for match in _WORD.finditer(sentence):
            word_tokens = count_tokens(match.group()) - overhead
            if words and tokens + word_tokens > max_tokens:
                yield " ".join(words), tokens, None
                words, tokens = [], overhead
            words.append(match.group())
            tokens += word_tokens
        if words:
            yield " ".join(words), tokens, end


def _packed_exactly(parts: Sequence[str], max_tokens: int, count_tokens: Callable[[str], int]) -> list[str]:
    """Greedy packing of ``parts`` counting each candidate whole, a part over the window cut on words
    the same way first (for tokenizers whose counts do not add up over a space)."""
    runs: list[str] = []
    for part in parts:
        if count_tokens(part) <= max_tokens:
            runs.append(part)
            continue
        words: list[str] = []
        for word in part.split():
            if words and count_tokens(" ".join([*words, word])) > max_tokens:
                runs.append(" ".join(words))
                words = []
            words.append(word)
        if words:
            runs.append(" ".join(words))
    chunks: list[str] = []
    for run in runs:
        if chunks and count_tokens(chunks[-1] + " " + run) <= max_tokens:
            chunks[-1] = chunks[-1] + " " + run
        else:
            chunks.append(run)
    return chunks


def iter_chunks(
    text: str, max_tokens: int, count_tokens: Callable[[str], int], start: int = 0
) -> Iterator[tuple[str, int | None]]:
    """:func:`chunk_text`'s chunks one at a time, each with the offset where chunking can resume after it
    (``start``): where its last sentence ends, so the chunks from there are those that follow it (None
    when it ends inside a sentence).

    Linear in the text and streaming: each sentence (or word of an over-long one) is tokenized once, a
    chunk's count is the sum of its parts' (less the tokens every text gets, such as [CLS] and [SEP]),
    and each chunk is counted once whole to check it; a chunk whose whole count is over the window (a
    tokenizer whose counts do not add up) is packed again counting each candidate whole."""
    overhead = count_tokens("")
    parts: list[str] = []
    tokens = 0
    ended: int | None = None

    def finished() -> Iterator[tuple[str, int | None]]:
        chunk = " ".join(parts)
        if count_tokens(chunk) <= max_tokens or (len(parts) == 1 and len(chunk.split()) == 1):
            yield chunk, ended
            return
        exact = _packed_exactly(parts, max_tokens, count_tokens)
        for number, piece in enumerate(exact, start=1):
            yield piece, ended if number == len(exact) else None

    for piece, piece_tokens, end in _pieces(text, max_tokens, count_tokens, overhead, start):
        if parts and tokens + piece_tokens - overhead <= max_tokens:
            parts.append(piece)
            tokens += piece_tokens - overhead
        else:
            if parts:
                yield from finished()
            parts, tokens = [piece], piece_tokens
        ended = end
    if parts:
        yield from finished()


def chunk_text(text: str, max_tokens: int, count_tokens: Callable[[str], int]) -> list[str]:
    """Greedy sentence packing into chunks of at most ``max_tokens``; a longer sentence is split on words."""
    return [chunk for chunk, _ in iter_chunks(text, max_tokens, count_tokens)]


def _too_many_chunks(chunks: int, window: int, limit: int) -> str:
    return (
        f"passage would split into at least {chunks:,} chunks of {window} tokens, "
        f"more than extraction.max_chunks = {limit} (HIPPORAG_EXTRACTION__MAX_CHUNKS): split the text, "
        "or raise the limit"
    )


def _signature(text: str, title: str | None, metadata: dict[str, object]) -> tuple[str, str | None, str]:
    """What decides "same content" between two versions of an id (metadata as the store keeps it, less
    a chunk's bookkeeping, :data:`CHUNKING_KEYS`: which version of the whole it was cut from and where
    chunking resumes after it; a chunk an edit did not change is the same chunk)."""
    kept = {k: v for k, v in metadata.items() if k not in CHUNKING_KEYS}
    return text, title or None, json.dumps(kept, ensure_ascii=False, sort_keys=True, default=str)


#: A chunk's metadata key holding the digest of the text it was cut from with how it was cut
#: (:func:`source_digest`): a run finds a long text stored, whole or in part, without chunking it again.
DIGEST_KEY = "parent_digest"
#: A chunk's metadata key holding the offset in the (stripped) text where chunking resumes after it (left
#: out when the chunk ends inside a sentence).
RESUME_KEY = "next_offset"
CHUNKING_KEYS = frozenset({DIGEST_KEY, RESUME_KEY})
#: Changes when :func:`chunk_text` would cut the same text differently.
CHUNKER_VERSION = 1


def source_digest(text: str, title: str | None, metadata: dict[str, object], model: str, window: int) -> str:
    """The digest of a long text and of everything that decides its chunks (title, metadata, the
    embedder whose tokens are counted, the window, the chunker)."""
    digest = hashlib.sha256()
    head = [CHUNKER_VERSION, model, window, title, _signature("", title, metadata)[2]]
    digest.update(json.dumps(head, ensure_ascii=False).encode())
    digest.update(b"\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def _longer_than(content: str, window: int, count_tokens: Callable[[str], int]) -> bool:
    """Whether ``content`` has more than ``window`` tokens, without tokenizing a long text whole: a
    text of many characters a token is judged by its beginning (cut at a space), which has no more
    tokens than the whole."""
    limit = window * _CHARS_PER_TOKEN
    if len(content) > limit:
        head = content[:limit]
        cut = max(head.rfind(" "), head.rfind("\n"))
        if count_tokens(head[:cut] if cut > 0 else head) > window:
            return True
    return count_tokens(content) > window


@dataclass
class _Long:
    """An input longer than the window, to chunk from where its stored chunks end."""

    passage_id: str
    item: PassageInput
    text: str
    source: str
    digest: str


@dataclass(frozen=True)
class StoredChunks:
    """A long text's chunks found stored from the same text cut the same way: ``count`` chunks in all,
    ``ids`` the stored ones from ``#0`` on without a gap (``whole``: all of them, and nothing else stored
    under its id); else chunking resumes at chunk ``first`` from ``offset`` in the text (chunk
    ``first - 1`` ended a sentence there)."""

    count: int
    ids: list[str]
    first: int
    offset: int
    whole: bool


#: Passage ids and their texts' digests -> what is stored of each (ids with nothing stored left out).
FindStored = Callable[[dict[str, str]], dict[str, StoredChunks]]


@dataclass
class Prepared:
    """Source id -> the passages to store for it; ``kept``: source id -> its chunks found stored and
    not cut again (reported skipped; they are not old versions to remove)."""

    parts: dict[str, list[Passage]]
    kept: dict[str, list[str]]


def prepare_sources(
    inputs: Sequence[PassageInput],
    embedder: Embedder,
    options: IndexingOptions,
    report: IndexReport,
    progress: ProgressCallback | None = None,
    find_stored: FindStored | None = None,
) -> Prepared:
    """Validate, id, de-duplicate and (if too long) chunk the inputs; problems go to the report.

    The passages to store for each source: the passage itself, or its chunks ``<id>#<n>``. A long text
    whose chunks ``find_stored`` finds stored (same digest) is not cut again up to there: stored whole,
    it is not chunked at all; stored in part (an interrupted run), chunking resumes after the last
    stored chunk that ends a sentence. ``progress("prepare", characters done, characters)`` as it goes,
    also while a long text is chunked.
    """
    prepared: dict[str, list[Passage]] = {}
    kept: dict[str, list[str]] = {}
    first: dict[str, tuple[tuple[str, str | None, str], str]] = {}  # id -> (signature, where)
    window = options.max_passage_tokens
    model_window = embedder.max_tokens
    if window is not None and model_window is not None:
        window = min(window, model_window)
    total = sum(len(item.text or "") for item in inputs)
    done = 0

    def tell(characters: int) -> None:
        if progress is not None:
            progress("prepare", characters, total)

    longs: list[_Long] = []
    waiting = 0  # characters of the long texts, told as they are chunked
    for number, item in enumerate(inputs):
        tell(done - waiting)
        done += len(item.text or "")
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
        if window is None or not _longer_than(content, window, embedder.token_count):
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
        digest = source_digest(text, item.title, item.metadata, embedder.model_name, window)
        prepared[passage_id] = []  # its place in the order; filled below
        longs.append(_Long(passage_id, item, text, source, digest))
        waiting += len(item.text)
    if longs and window is not None:
        stored = find_stored({x.passage_id: x.digest for x in longs}) if find_stored is not None else {}
        done = total - waiting
        for x in longs:
            found = stored.get(x.passage_id)
            if found is not None and found.whole:
                del prepared[x.passage_id]
                report.skipped.extend(found.ids)
                report.chunked[x.passage_id] = found.ids
                kept[x.passage_id] = found.ids
            else:
                start = (found.first, found.offset) if found is not None else (0, 0)
                chunks = _chunk_long(
                    x, window, embedder, options, report, partial(_shifted, tell, done), start
                )
                if chunks is None:
                    del prepared[x.passage_id]
                else:
                    prepared[x.passage_id] = chunks
                    if found is not None and found.first:
                        kept[x.passage_id] = found.ids[: found.first]
                        report.skipped.extend(kept[x.passage_id])
            done += len(x.item.text or "")
    tell(total)
    return Prepared(prepared, kept)


def _shifted(tell: Callable[[int], None], offset: int, at: int) -> None:
    tell(offset + at)


#: How often chunking a long text tells its progress, in characters.
_CHUNK_PROGRESS_EVERY = 1_000_000


def _chunk_long(
    long: _Long,
    window: int,
    embedder: Embedder,
    options: IndexingOptions,
    report: IndexReport,
    tell: Callable[[int], None],
    start: tuple[int, int] = (0, 0),
) -> list[Passage] | None:
    """A long input's chunks from chunk ``start[0]`` on, cut from offset ``start[1]`` (None, reported
    failed, when it needs more than ``max_chunks``)."""
    item = long.item
    title_tokens = embedder.token_count(item.title) if item.title else 0
    first, offset = start
    texts: list[tuple[str, int | None]] = []
    told = offset
    for chunk, end in iter_chunks(long.text, max(window - title_tokens - 2, 8), embedder.token_count, offset):
        texts.append((chunk, end))
        if options.max_chunks is not None and first + len(texts) > options.max_chunks:
            reason = _too_many_chunks(first + len(texts), window, options.max_chunks)
            report.failed.append(
                PassageFailure(passage_id=long.passage_id, source=long.source, reason=reason)
            )
            return None
        if end is not None and end - told >= _CHUNK_PROGRESS_EVERY:
            tell(end)
            told = end
    passage_id = long.passage_id
    count = first + len(texts)
    report.chunked[passage_id] = [f"{passage_id}#{n}" for n in range(count)]
    base = {**item.metadata, "parent_id": passage_id}
    passages = []
    for n, (chunk, end) in enumerate(texts, start=first):
        metadata = {**base, "chunk": n, "chunks": count, DIGEST_KEY: long.digest}
        if end is not None:
            metadata[RESUME_KEY] = end
        passages.append(Passage(id=f"{passage_id}#{n}", text=chunk, title=item.title, metadata=metadata))
    return passages


def find_stored_chunks(store: GraphStore, digests: dict[str, str]) -> dict[str, StoredChunks]:
    """What ``store`` holds of the long texts ``digests`` names: for each text with chunks stored from
    the same text cut the same way (their digest is the text's), the run of them from ``#0`` on."""
    versions = stored_versions(store, list(digests))
    stored = store.get_passages([i for ids in versions.values() for i in ids])
    found: dict[str, StoredChunks] = {}
    for source_id, ids in versions.items():
        numbered: dict[int, Passage] = {}
        for passage_id in ids:
            passage = stored.get(passage_id)
            number = passage.metadata.get("chunk") if passage is not None else None
            if passage is None or passage.metadata.get(DIGEST_KEY) != digests[source_id]:
                continue
            if isinstance(number, int) and passage_id == f"{source_id}#{number}":
                numbered[number] = passage
        if 0 not in numbered:
            continue
        count = numbered[0].metadata.get("chunks")
        run = 0
        while run in numbered:
            run += 1
        if not isinstance(count, int) or run > count:
            continue
        first = run
        while first > 0 and not isinstance(numbered[first - 1].metadata.get(RESUME_KEY), int):
            first -= 1
        offset = int(numbered[first - 1].metadata[RESUME_KEY]) if first else 0
        prefix = [f"{source_id}#{n}" for n in range(run)]
        found[source_id] = StoredChunks(count, prefix, first, offset, run == count and len(ids) == count)
    return found


def prepare_passages(
    inputs: Sequence[PassageInput],
    embedder: Embedder,
    options: IndexingOptions,
    report: IndexReport,
) -> list[Passage]:
    """:func:`prepare_sources`, flattened."""
    return [p for parts in prepare_sources(inputs, embedder, options, report).parts.values() for p in parts]


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


VANISHED_RETRIES = 3  # writes of one batch again after another writer deleted phrases it relied on


@dataclass
class _Ready:
    """One batch extracted and encoded, ready for the store."""

    phrase_records: list[PhraseRecord]
    records: list[PassageRecord]
    new_facts: int
    phrases: set[str]  # ids of the phrases it writes
    facts: set[str]  # ids of the facts its passages state
    names: dict[str, str]  # id -> name of every phrase its passages mention


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


#: Passages of a run timed (extracted and encoded) for its estimate of the time it takes.
SAMPLE = 32


@dataclass(frozen=True)
class IndexPlan:
    """What an index run is about to do: ``passages`` to extract, embed and write (``stored``: found
    stored with the same content), ``long_texts`` (source id -> its chunks, and how many of them are to
    index), and an estimate of the time from ``sample`` passages extracted and encoded in
    ``sample_seconds`` (none with a batch or less to index). The estimate leaves out the store's work,
    which runs beside the next batch's extraction."""

    passages: int
    stored: int
    long_texts: dict[str, tuple[int, int]]
    batch_size: int
    sample: int = 0
    sample_seconds: float = 0.0

    @property
    def estimate_seconds(self) -> float | None:
        return self.sample_seconds / self.sample * self.passages if self.sample else None


@runtime_checkable
class PlanListener(Protocol):
    """A progress callback that is also told the run's :class:`IndexPlan` before indexing starts."""

    def __call__(self, stage: str, done: int, total: int) -> None: ...

    def plan(self, plan: IndexPlan) -> None: ...


class IndexInterrupted(KeyboardInterrupt):
    """An index run stopped by Ctrl-C (or SIGTERM, where the caller maps it to one): ``report`` holds
    exactly what it wrote, whole batches only; ``planned`` is how many passages it was to write (None
    when it stopped before knowing, while reading or chunking)."""

    def __init__(self, report: IndexReport, planned: int | None) -> None:
        super().__init__("index run interrupted")
        self.report = report
        self.planned = planned


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
        self._planned: int | None = None  # passages this run writes, once known
        self._probed: dict[str, Extraction | PassageFailure] = {}  # extractions timed for the estimate

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
        (an updated passage's old version) waits for the batch in flight first.

        Ctrl-C (KeyboardInterrupt) lets the batch whose store work is running finish, drops the one
        being extracted, and raises :class:`IndexInterrupted` with the report of what was written."""
        report = IndexReport()
        self._planned = None
        try:
            return self._index(inputs, report)
        except KeyboardInterrupt as exc:
            raise IndexInterrupted(report, self._planned) from exc

    def _index(self, inputs: Sequence[PassageInput], report: IndexReport) -> IndexReport:
        t = time.perf_counter()
        prepared = prepare_sources(
            inputs,
            self.embedder,
            self.options,
            report,
            self.progress,
            partial(find_stored_chunks, self.store),
        )
        todo = self._plan_updates(prepared, report)
        t = self._tick(report, "prepare", t)
        report.new_synonym_edges += self._finish_synonyms()  # what an interrupted run left undone
        size = self.options.batch_size
        self._planned = len(todo)
        self._probed = {}
        if todo:
            self.progress("index", 0, len(todo))  # the total up front: a long run shows from its start
            self._tell_plan(todo, report)
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
                        future = pool.submit(self._store_batch, ready, report, (done, len(todo)))
                        inflight = _InFlight(future, ready, done, len(todo))
                self._wait(inflight, report)
                inflight = None
            finally:
                if inflight is not None:  # an error or an interrupt here: let the write in flight end
                    futures.wait([inflight.future])
        return report

    def _tell_plan(self, todo: Sequence[Passage], report: IndexReport) -> None:
        """Say what the run will index before it starts (:class:`IndexPlan`), to a progress callback
        that listens (:class:`PlanListener`): with more than a batch to index, the estimate of the time
        it takes comes from timing the extraction and encoding of its first :data:`SAMPLE` passages,
        whose extraction the first batch then uses."""
        if not isinstance(self.progress, PlanListener):
            return
        counts: Counter[str] = Counter(self._source_of[p.id] for p in todo)
        long_texts = {
            source: (len(chunks), counts[source])
            for source, chunks in report.chunked.items()
            if counts[source]
        }
        sample: list[Passage] = []
        seconds = 0.0
        if len(todo) > self.options.batch_size:
            sample = list(todo[:SAMPLE])
            t = time.perf_counter()
            self._probed = dict(zip([p.id for p in sample], self.extractor.extract(sample), strict=True))
            self.embedder.encode([passage_content(p.text, p.title) for p in sample])
            seconds = time.perf_counter() - t
        stored = len(set(report.skipped))
        self.progress.plan(
            IndexPlan(len(todo), stored, long_texts, self.options.batch_size, len(sample), seconds)
        )

    def _wait(self, inflight: _InFlight | None, report: IndexReport) -> None:
        """Wait for the batch in flight (its errors raised here; it told its progress itself)."""
        if inflight is None or inflight.waited:
            return
        t = time.perf_counter()
        inflight.future.result()
        inflight.waited = True
        self._tick(report, "store_wait", t)

    def _plan_updates(self, prepared: Prepared, report: IndexReport) -> list[Passage]:
        """What to write: passages not stored with the same content. Old versions to remove go to
        ``self._stale`` (removed when their new version is written), or now if nothing replaces them;
        the chunks ``prepared`` kept without cutting them again are neither."""
        self._stale = {}
        sources = prepared.parts
        kept = {sid: set(ids) for sid, ids in prepared.kept.items()}
        self._source_of = {p.id: sid for sid, parts in sources.items() for p in parts}
        versions = stored_versions(self.store, list(sources))
        versions = {sid: [i for i in ids if i not in kept.get(sid, ())] for sid, ids in versions.items()}
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
        fresh = [p for p in batch if p.id not in self._probed]
        extracted_now = dict(
            zip([p.id for p in fresh], self.extractor.extract(fresh) if fresh else [], strict=True)
        )
        results = [self._probed.pop(p.id) if p.id in self._probed else extracted_now[p.id] for p in batch]
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
        return _Ready(
            phrases, graph.records, len(new_fact_ids), set(new_ids), set(all_facts), dict(graph.phrase_names)
        )

    def _bring_vanished_phrases(self, ready: _Ready) -> None:
        """Add to ``ready`` the phrases its passages mention that were stored when the batch was prepared
        and are gone now (another writer deleted them in between), encoded as a first write would."""
        given = {p.id for p in ready.phrase_records}
        gone = sorted(self.store.missing_phrases([i for i in ready.names if i not in given]))
        if not gone:
            return
        vectors = self.embedder.encode([ready.names[i] for i in gone])
        ready.phrase_records.extend(
            PhraseRecord(i, ready.names[i], v) for i, v in zip(gone, vectors, strict=True)
        )
        ready.phrases.update(gone)

    def _store_batch(self, ready: _Ready, report: IndexReport, progress: tuple[int, int]) -> None:
        """Write one batch, then its synonym edges (in the worker thread), then tell ``progress`` (done,
        total) from this thread: the count is the store's as soon as the batch is in, not when the next
        batch has been extracted."""
        t = time.perf_counter()
        for attempt in range(VANISHED_RETRIES + 1):
            try:
                result = self.store.write_passages(ready.phrase_records, ready.records)
                break
            except PhrasesVanishedError:
                if attempt == VANISHED_RETRIES:
                    raise
                self._bring_vanished_phrases(ready)
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
        self.progress("index", *progress)

    def _finish_synonyms(self) -> int:
        """Synonym edges of the phrases the store marks pending: this batch's, and any a crash left."""
        o = self.options
        return finish_pending_synonyms(
            self.store, o.synonym_top_k, o.synonym_threshold, o.synonym_same_numbers
        )


def _attach_fact_vectors(records: list[PassageRecord], vectors: dict[str, np.ndarray]) -> None:
    """Each record's facts with their new vectors (a fact already stored keeps none: it is not rewritten)."""
    for record in records:
        record.facts = [
            FactRecord(f.id, f.subject_id, f.predicate, f.object_id, f.text, vectors.get(f.id))
            for f in record.facts
        ]
