"""KnowledgeService: the shared memory, a read-write lock, and one writer thread fed by a queue.

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
from hipporag_neo4j.service.locks import GuardedStore, ReadWriteLock
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
    """One HippoRAG for the whole process: many concurrent readers, one writer thread.

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
        self.lock = ReadWriteLock()
        self._guarded = GuardedStore(store or create_store(settings), self.lock)
        self.memory = HippoRAG(
            settings,
            store=cast(GraphStore, self._guarded),
            embedder=embedder,
            extractor=extractor,
            query_ner=query_ner,
        )
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
                _ = self.memory.embedder, self.memory.store, self.memory.retriever
            except HippoRAGError as exc:
                self._warm_error = str(exc)
                raise NotReadyError(f"not ready: {exc}") from exc
            self._ready, self._warm_error = True, None

    def readiness(self) -> dict[str, Any]:
        """Whether the model is loaded and the store answers; tries to warm up again if it had failed."""
        status: dict[str, Any] = {"ready": False, "backend": self.settings.backend}
        try:
            self.warm_up()
            with self.lock.read():
                meta = self.memory.store.meta()
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
        self.warm_up()
        with self.lock.read():
            return self.memory.retrieve(
                query,
                mode=mode,
                top_k=top_k,
                strategy=strategy,
                seed_nodes=seed_nodes,
                joined=joined,
                via=via,
            )

    def answer(
        self,
        query: str,
        *,
        mode: RetrievalMode | None = None,
        top_k: int | None = None,
        strategy: RetrievalStrategy | None = None,
    ) -> Answer:
        """Retrieve under the read lock, then call the reader LLM without holding it."""
        _ = self.memory.llm  # no LLM configured: fail before retrieving
        return self.memory.answer_from(self.retrieve(query, mode=mode, top_k=top_k, strategy=strategy))

    def stats(self) -> StoreStats:
        self.warm_up()
        with self.lock.read():
            return self.memory.stats()

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
        """Run ``fn`` as one writer step (writer thread only): its store writes are atomic for readers."""
        with self._guarded.step():
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
            self.memory.close()

    def __enter__(self) -> KnowledgeService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
