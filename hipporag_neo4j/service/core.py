"""KnowledgeService: a reader and a writer over one knowledge base, and one writer thread fed by a queue.

Readers never wait for the writer: they run on a reader of their own (:attr:`KnowledgeService.reader`)
and see the last committed graph version, whatever the writer is doing. On the embedded store the
reader has a store object of its own (its own SQLite connection, read transactions on the WAL, its own
snapshot, carried forward by the rows each commit appended); on Neo4j it shares the writer's store
object, whose reads run at one graph version each (the in-process copy is brought forward by the
writer's commits). A write step that commits twice (a chunk's passages, then its synonym edges) can be
seen between its commits: the passages are there, their synonym edges follow with the next commit.

Writes go through the queue in order: a small index or a delete is one step whose caller waits for
it; a large index is a job that runs one chunk per step and goes back to the end of the queue after
each chunk, so small writes are not stuck behind a long job. :meth:`KnowledgeService.close` lets the
step in progress finish (a chunk is stored completely or not at all), marks the jobs still queued as
interrupted, and only then closes the store.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar, cast

from hipporag_neo4j.api import HippoRAG, PassageLike, create_store, to_passage_input
from hipporag_neo4j.embedding.encoder import Embedder
from hipporag_neo4j.errors import HippoRAGError
from hipporag_neo4j.extraction.base import Extractor, QueryEntityExtractor
from hipporag_neo4j.models import (
    Answer,
    IndexReport,
    PassageInput,
    RetrievalMode,
    RetrievalResult,
    RetrievalStrategy,
    StoreStats,
)
from hipporag_neo4j.service.jobs import Job, JobRegistry
from hipporag_neo4j.settings import Settings
from hipporag_neo4j.stores.base import DeleteReport, GraphStore

log = logging.getLogger(__name__)
T = TypeVar("T")


class ServiceStoppedError(HippoRAGError):
    """The service is shutting down and takes no more writes."""


class NotReadyError(HippoRAGError):
    """The model or the store could not be loaded; the message says why."""


class _Work(Protocol):
    def step(self) -> bool:
        """Do one unit of work; True when more remains (the item goes back to the queue)."""

    def abandon(self, reason: str) -> None: ...


class _Call:
    """One write whose caller waits for its result."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        self.future: Future[Any] = Future()

    def step(self) -> bool:
        try:
            self.future.set_result(self.fn())
        except BaseException as exc:
            self.future.set_exception(exc)
        return False

    def abandon(self, reason: str) -> None:
        self.future.set_exception(ServiceStoppedError(reason))


class _IndexJob:
    """A large index, one chunk per step."""

    def __init__(
        self, service: KnowledgeService, job_id: str, passages: list[PassageInput], chunk: int
    ) -> None:
        self.service = service
        self.job_id = job_id
        self.passages = passages
        self.chunk = chunk
        self.position = 0

    def step(self) -> bool:
        jobs = self.service.jobs
        jobs.start(self.job_id)
        part = self.passages[self.position : self.position + self.chunk]
        try:
            report = self.service.run_write(lambda memory: memory.index(part))
        except Exception as exc:
            log.exception("index job %s failed at passage %d", self.job_id, self.position)
            jobs.finish(self.job_id, "failed", _describe(exc))
            return False
        self.position += len(part)
        jobs.progress(self.job_id, len(part), report)
        if self.position >= len(self.passages):
            jobs.finish(self.job_id, "succeeded")
            return False
        return True

    def abandon(self, reason: str) -> None:
        job = self.service.jobs.finish(
            self.job_id,
            "interrupted",
            f"{reason} after {self.position} of {len(self.passages)} passages; "
            "submit the same passages again to index the rest (stored ones are skipped)",
        )
        log.warning("index job %s interrupted: %s", job.id, job.error)


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, HippoRAGError) else f"{type(exc).__name__}: {exc}"


class KnowledgeService:
    """Two HippoRAG objects for the whole process: :attr:`memory` for the writer thread, :attr:`reader`
    for every read (many at once, never waiting for the writer). They share the embedding model.

    Components default to the ones the settings describe (as for :class:`HippoRAG`); pass them to use
    others (tests pass fakes).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: GraphStore | None = None,
        embedder: Embedder | None = None,
        extractor: Extractor | None = None,
        query_ner: QueryEntityExtractor | None = None,
    ) -> None:
        self.settings = settings
        self._query_ner = query_ner
        self.memory = HippoRAG(
            settings, store=store or create_store(settings), embedder=embedder, extractor=extractor
        )
        self._reader: HippoRAG | None = None
        self.jobs = JobRegistry(settings.server.keep_jobs)
        self._queue: queue.Queue[_Work | None] = queue.Queue()
        self._stopping = threading.Event()
        self._warm_lock = threading.Lock()
        self._ready = False
        self._warm_error: str | None = None
        self._writer = threading.Thread(target=self._run_writer, name="hipporag-writer", daemon=True)
        self._writer.start()

    # --- readiness ------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Load the embedding model, open the store and build the retriever (once per process)."""
        with self._warm_lock:
            if self._ready:
                return
            try:
                # the writer's store first: it creates a new store (and finishes synonym edges an
                # interrupted run left), so the reader finds it made and has nothing to write
                _ = self.memory.embedder, self.memory.store
                self.memory.finish_synonyms()
                self._reader = HippoRAG(
                    self.settings,
                    store=self.memory.store.for_readers(),
                    embedder=self.memory.embedder,
                    query_ner=self._query_ner,
                    writes=False,
                )
                _ = self._reader.retriever
            except HippoRAGError as exc:
                self._warm_error = str(exc)
                raise NotReadyError(f"not ready: {exc}") from exc
            self._ready, self._warm_error = True, None

    @property
    def reader(self) -> HippoRAG:
        """The HippoRAG every read runs on (after :meth:`warm_up`): the last committed graph version."""
        self.warm_up()
        assert self._reader is not None  # warm_up made it or raised
        return self._reader

    def readiness(self) -> dict[str, Any]:
        """Whether the model is loaded and the store answers; tries to warm up again if it had failed."""
        status: dict[str, Any] = {"ready": False, "backend": self.settings.backend}
        try:
            meta = self.reader.store.meta()
        except HippoRAGError as exc:
            status["detail"] = str(exc)
            return status
        status.update(
            ready=True,
            embedding_model=self.memory.embedder.model_name,
            store_schema_version=meta.schema_version if meta else None,
        )
        return status

    # --- reads: many at once -------------------------------------------------------------------
    def retrieve(
        self,
        query: str,
        *,
        mode: RetrievalMode | None = None,
        top_k: int | None = None,
        strategy: RetrievalStrategy | None = None,
        seed_nodes: Sequence[str] = (),
        joined: bool | None = None,
        via: Sequence[str] | None = None,
    ) -> RetrievalResult:
        return self.reader.retrieve(
            query, mode=mode, top_k=top_k, strategy=strategy, seed_nodes=seed_nodes, joined=joined, via=via
        )

    def answer(
        self,
        query: str,
        *,
        mode: RetrievalMode | None = None,
        top_k: int | None = None,
        strategy: RetrievalStrategy | None = None,
    ) -> Answer:
        """Retrieve, then call the reader LLM."""
        _ = self.reader.llm  # no LLM configured: fail before retrieving
        return self.reader.answer_from(self.retrieve(query, mode=mode, top_k=top_k, strategy=strategy))

    def stats(self) -> StoreStats:
        return self.reader.stats()

    # --- writes: one at a time, in order -------------------------------------------------------
    def index(self, passages: Sequence[PassageLike]) -> IndexReport:
        """Index now (in the writer's queue) and return the report."""
        inputs = [to_passage_input(p) for p in passages]
        return self._call(lambda memory: memory.index(inputs))

    def submit_index(self, passages: Sequence[PassageLike]) -> Job:
        """Queue a job that indexes ``passages`` chunk by chunk; follow it with :meth:`job`."""
        inputs = [to_passage_input(p) for p in passages]
        self._check_open()
        self.warm_up()
        job = self.jobs.create(len(inputs))
        self._queue.put(_IndexJob(self, job.id, inputs, self.settings.server.job_chunk))
        return job

    def job(self, job_id: str) -> Job | None:
        return self.jobs.get(job_id)

    def delete(self, passage_ids: Sequence[str]) -> DeleteReport:
        ids = list(passage_ids)
        return self._call(lambda memory: memory.delete(ids))

    def _call(self, fn: Callable[[HippoRAG], T]) -> T:
        self._check_open()
        self.warm_up()
        call = _Call(lambda: self.run_write(fn))
        self._queue.put(call)
        return cast(T, call.future.result())

    def run_write(self, fn: Callable[[HippoRAG], T]) -> T:
        """Run ``fn`` as one writer step (writer thread only); readers see each of its commits."""
        return fn(self.memory)

    def _check_open(self) -> None:
        if self._stopping.is_set():
            raise ServiceStoppedError("the service is shutting down")

    def _run_writer(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                break
            if self._stopping.is_set():  # nothing new starts once shutdown began
                item.abandon("the service shut down")
            elif item.step():
                if self._stopping.is_set():
                    item.abandon("the service shut down")
                else:
                    self._queue.put(item)

    # --- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        """Finish the writer's current step, interrupt what is still queued, close the store."""
        if not self._stopping.is_set():
            self._stopping.set()
            running = [job.id for job in self.jobs.all() if job.status == "running"]
            if running:  # work cut short is worth a warning; a normal shutdown is not
                log.warning(
                    "shutting down: finishing the writer's step in progress, then closing the store; "
                    "running jobs stop after it: %s (run them again to resume)",
                    ", ".join(running),
                )
            else:
                log.info("shutting down: closing the store (no job running)")
            self._queue.put(None)
            self._writer.join()
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item.abandon("the service shut down")
            if self._reader is not None and self._reader.store_object is not self.memory.store_object:
                self._reader.close()
            self.memory.close()

    def __enter__(self) -> KnowledgeService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
