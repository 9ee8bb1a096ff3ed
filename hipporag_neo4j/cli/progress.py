"""Progress a person can follow: each stage by name with its counts, a rate and the time left.

On a terminal, a bar per stage (``reading files``, ``chunking passages``, ``indexing passages``); when
stderr is not a terminal (a job under systemd, CI, ``nohup``), a timestamped line every ``interval``
seconds from a timer, whether or not a batch ended meanwhile (a batch of slow LLM calls can take minutes),
with the stage's rate and an estimate of the time left, and one line when a stage that printed ends, so a
short run prints nothing; ``--quiet``: nothing. With a log configured (``--verbose``, or an application's
logging), the lines go to the ``hipporag_neo4j.progress`` logger instead of plain stderr.

Before indexing starts it says what the run will do (:class:`~hipporag_neo4j.indexing.pipeline.IndexPlan`):
how many passages, the chunks of each long text, and roughly how long it will take. After Ctrl-C or
SIGTERM it says exactly what was written (:meth:`Progress.interrupted`).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

import click

from hipporag_neo4j.indexing.pipeline import IndexInterrupted, IndexPlan

LABELS = {
    "read": "reading files",
    "prepare": "chunking passages",
    "index": "indexing passages",
}
#: What a stage counts, where its label does not say it.
UNITS = {"read": "files", "prepare": "characters", "index": "passages"}
#: Long texts named one by one in the plan; the others are counted.
PLAN_TEXTS = 5

Style = Literal["bar", "log", "off"]
LOG = logging.getLogger("hipporag_neo4j.progress")


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def _rate(per_second: float, unit: str) -> str:
    if per_second >= 100:
        return f"{per_second:,.0f} {unit}/s"
    if per_second >= 1:
        return f"{per_second:.1f} {unit}/s"
    return f"{per_second * 60:.1f} {unit}/min"


def _stderr(text: str) -> None:
    click.echo(text, err=True)


class Progress:
    """A ``(stage, done, total)`` callback for :meth:`HippoRAG.index_files` and ``index_openie`` that
    also listens to the run's plan (:class:`~hipporag_neo4j.indexing.pipeline.PlanListener`).

    ``sink`` takes each line (default: stderr, or the log when one is configured)."""

    def __init__(
        self, style: Style, interval: float = 30.0, sink: Callable[[str], None] | None = None
    ) -> None:
        self.style = style
        self.interval = interval
        self.sink = sink
        self.started = time.monotonic()
        self.last: dict[str, tuple[int, int]] = {}
        self.plan_told: IndexPlan | None = None
        self._since: dict[str, tuple[float, int]] = {}  # stage -> (when it started, its count then)
        self._stage: str | None = None
        self._bar: Any = None
        self._bar_done = 0
        self._stage_printed = False
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None

    @classmethod
    def for_stderr(cls, quiet: bool, interval: float) -> Progress:
        if quiet:
            return cls("off")
        return cls("bar" if sys.stderr.isatty() else "log", interval)

    def __call__(self, stage: str, done: int, total: int) -> None:
        with self._lock:
            if stage not in self._since:
                self._since[stage] = (time.monotonic(), done)
            self.last[stage] = (done, total)
            if stage != self._stage:
                self._end_stage()
                self._stage = stage
                self._stage_printed = False
            if self.style == "bar":
                self._update_bar(stage, done, total)
            elif self.style == "log":
                if self.interval <= 0:
                    self._line(stage)
                elif self._timer is None:
                    self._timer = threading.Thread(target=self._tick, name="hipporag-progress", daemon=True)
                    self._timer.start()

    def _update_bar(self, stage: str, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = click.progressbar(
                length=total,
                label=LABELS.get(stage, stage),
                file=sys.stderr,
                show_pos=True,
                show_percent=True,
            )
            self._bar.__enter__()
            self._bar_done = 0
        self._bar.update(done - self._bar_done)
        self._bar_done = done

    def _tick(self) -> None:
        """The timer: a line every ``interval`` seconds (counted from the start) until :meth:`finish`."""
        beat = 1
        while not self._stop.wait(max(0.0, self.started + beat * self.interval - time.monotonic())):
            beat += 1
            with self._lock:
                if self._stage is not None:
                    self._line(self._stage)

    def say(self, text: str) -> None:
        """One line: to ``sink``, else to the log when one is configured for INFO, else to stderr."""
        if self.style == "off":
            return
        with self._lock:
            if self.sink is not None:
                self.sink(f"[{time.strftime('%H:%M:%S')}] {text}")
            elif LOG.isEnabledFor(logging.INFO) and LOG.hasHandlers():
                LOG.info(text)
            else:
                _stderr(f"[{time.strftime('%H:%M:%S')}] {text}")

    def status(self, stage: str) -> str:
        """``indexing passages: 512/45,692 (1%), 4m10s elapsed, 2.1 passages/s, about 5h58m left``."""
        done, total = self.last[stage]
        now = time.monotonic()
        share = f" ({100 * done / total:.0f}%)" if total else ""
        unit = UNITS.get(stage, "items")
        counted = f" {unit}" if stage == "prepare" else ""
        elapsed = _elapsed(now - self.started)
        text = f"{LABELS.get(stage, stage)}: {done:,}/{total:,}{counted}{share}, {elapsed} elapsed"
        since, at_start = self._since.get(stage, (now, done))
        rate = (done - at_start) / (now - since) if now > since else 0.0
        if rate > 0:
            text += f", {_rate(rate, unit)}"
            if done < total:
                text += f", about {_elapsed((total - done) / rate)} left"
        elif stage == "index" and done < total:
            estimate = self.plan_told.estimate_seconds if self.plan_told is not None else None
            size = self.plan_told.batch_size if self.plan_told is not None else None
            batch = (
                f"the first batch ({min(size, total):,} passages) in progress"
                if size
                else "first batch in progress"
            )
            if estimate is not None:
                text += f", {batch}; about {_elapsed(estimate - (now - since))} left by the first estimate"
            else:
                text += f", {batch}"
        return text

    def _line(self, stage: str) -> None:
        self.say(self.status(stage))
        self._stage_printed = True

    def plan(self, plan: IndexPlan) -> None:
        """Before indexing: how many passages, the chunks of long texts, and roughly how long."""
        with self._lock:
            self.plan_told = plan
            if self._bar is not None:
                _stderr("")  # below the bar drawn so far, not on its line
            stored = f" ({plan.stored:,} already stored, skipped)" if plan.stored else ""
            text = f"to index: {plan.passages:,} passages{stored}"
            biggest = sorted(plan.long_texts.items(), key=lambda kv: -kv[1][1])
            for source, (chunks, todo) in biggest[:PLAN_TEXTS]:
                left = "all to index" if todo == chunks else f"{todo:,} to index"
                text += f"; {source}: {chunks:,} chunks, {left}"
            if len(biggest) > PLAN_TEXTS:
                more = sum(todo for _, (_, todo) in biggest[PLAN_TEXTS:])
                text += f"; {len(biggest) - PLAN_TEXTS:,} more long texts ({more:,} chunks to index)"
            self.say(text)
            if plan.estimate_seconds is not None:
                rate = plan.sample / plan.sample_seconds if plan.sample_seconds > 0 else 0.0
                self.say(
                    f"estimate: about {_elapsed(plan.estimate_seconds)} for {plan.passages:,} passages "
                    f"({_rate(rate, 'passages')}: the first {plan.sample} extracted and encoded in "
                    f"{plan.sample_seconds:.1f}s; the store's work is not counted)"
                )

    def _end_stage(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
        elif self.style == "log" and self._stage_printed and self._stage in self.last:
            self._line(self._stage)  # where a stage that was shown ended

    def finish(self) -> None:
        """Stop the timer and close the stage; safe to call more than once."""
        self._stop.set()
        with self._lock:
            self._end_stage()
            self._stage = None

    def interrupted(self, exc: BaseException, how: str = "Ctrl-C") -> str:
        """What was stored when Ctrl-C (or SIGTERM, ``how``) stopped the run, exactly, and what a re-run
        does."""
        if not isinstance(exc, IndexInterrupted):
            stage = LABELS.get(self._stage or "read", "reading files")
            return (
                f"interrupted by {how} while {stage}: nothing was written to the store; run the same "
                "command again to start over"
            )
        report = exc.report
        written = len(report.indexed)
        stored_before = len(set(report.skipped))
        wrote = [
            f"{written:,} passage{'s' if written != 1 else ''}",
            f"{report.new_phrases:,} new phrases",
            f"{report.new_facts:,} new facts",
            f"{report.new_synonym_edges:,} synonym edges",
        ]
        if report.removed:
            wrote.append(f"{len(report.removed):,} old versions of updated passages removed")
        if exc.planned is None:
            stage = LABELS.get(self._stage or "prepare", "chunking passages")
            if not any((written, report.new_synonym_edges, report.removed)):
                return (
                    f"interrupted by {how} while {stage}: nothing was written to the store; run the same "
                    "command again to start over"
                )
            return (
                f"interrupted by {how} while {stage}: written to the store: {', '.join(wrote)}; run the "
                "same command again to go on"
            )
        failed = sum(1 for f in report.failed if f.passage_id is not None)
        left = max(exc.planned - written, 0)
        failed_note = f" ({failed:,} of them failed extraction and are retried)" if failed else ""
        return (
            f"interrupted by {how}: written to the store before it stopped, in whole batches: "
            f"{', '.join(wrote)}. Not written: the other {left:,} of the {exc.planned:,} passages this run "
            f"was to index (the batch being extracted included){failed_note}. Run the same command again "
            f"to resume: the {written + stored_before:,} passages stored are skipped, the {left:,} others "
            "indexed, nothing twice"
        )
