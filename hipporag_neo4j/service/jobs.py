"""Index jobs: id, status, progress and the per-passage outcome, readable while the job runs."""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from hipporag_neo4j.models import IndexReport

JobStatus = Literal["queued", "running", "succeeded", "failed", "interrupted"]
FINISHED: frozenset[str] = frozenset({"succeeded", "failed", "interrupted"})


def _now() -> datetime:
    return datetime.now(UTC)


class Job(BaseModel):
    """An index job. ``done`` counts input passages handled so far (indexed, skipped or failed)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    status: JobStatus = "queued"
    total: int = Field(description="Passages submitted.")
    done: int = Field(0, description="Passages handled so far; a chunk is stored completely or not at all.")
    report: IndexReport = Field(default_factory=IndexReport, description="Indexed, skipped, failed so far.")
    error: str | None = Field(None, description="Why the job stopped early (failed or interrupted).")
    created_at: datetime = Field(default_factory=_now)
    started_at: datetime | None = None
    finished_at: datetime | None = None


def merge_report(into: IndexReport, part: IndexReport) -> None:
    into.indexed.extend(part.indexed)
    into.skipped.extend(part.skipped)
    into.failed.extend(part.failed)
    into.chunked.update(part.chunked)
    into.new_phrases += part.new_phrases
    into.new_facts += part.new_facts
    into.new_synonym_edges += part.new_synonym_edges
    for name in ("requests", "cached", "prompt_tokens", "completion_tokens", "retries"):
        setattr(into.usage, name, getattr(into.usage, name) + getattr(part.usage, name))
    for stage, seconds in part.timings.items():
        into.timings[stage] = into.timings.get(stage, 0.0) + seconds


class JobRegistry:
    """Jobs by id; the writer updates them, readers get copies. Keeps the newest ``keep`` finished jobs."""

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, total: int) -> Job:
        job = Job(id=uuid.uuid4().hex, total=total)
        with self._lock:
            self._jobs[job.id] = job
            self._evict()
        return job.model_copy(deep=True)

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            job = self._jobs.get(job_id)
            return job.model_copy(deep=True) if job is not None else None

    def all(self) -> list[Job]:
        with self._lock:
            return [job.model_copy(deep=True) for job in self._jobs.values()]

    def start(self, job_id: str) -> None:
        with self._lock:
            job = self._jobs[job_id]
            if job.status == "queued":
                job.status, job.started_at = "running", _now()

    def progress(self, job_id: str, handled: int, part: IndexReport) -> None:
        with self._lock:
            job = self._jobs[job_id]
            job.done += handled
            merge_report(job.report, part)

    def finish(self, job_id: str, status: JobStatus, error: str | None = None) -> Job:
        with self._lock:
            job = self._jobs[job_id]
            job.status, job.error, job.finished_at = status, error, _now()
            self._evict()
            return job.model_copy(deep=True)

    def _evict(self) -> None:
        finished = [jid for jid, job in self._jobs.items() if job.status in FINISHED]
        for jid in finished[: max(0, len(finished) - self._keep)]:
            del self._jobs[jid]
