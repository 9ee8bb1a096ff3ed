"""Progress a person can follow: each stage by name with its counts.

On a terminal, a bar per stage (``reading files``, ``chunking passages``, ``indexing passages``); when
stderr is not a terminal (a job under systemd, CI, ``nohup``), a timestamped line every ``interval``
seconds and one when a stage that printed ends, so a short run prints nothing; ``--quiet``: nothing.
It also remembers how far indexing got, for the message after Ctrl-C.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Literal

import click

LABELS = {
    "read": "reading files",
    "prepare": "chunking passages",
    "index": "indexing passages",
}

Style = Literal["bar", "log", "off"]


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


class Progress:
    """A ``(stage, done, total)`` callback for :meth:`HippoRAG.index_files` and ``index_openie``."""

    def __init__(self, style: Style, interval: float = 30.0) -> None:
        self.style = style
        self.interval = interval
        self.started = time.monotonic()
        self.last: dict[str, tuple[int, int]] = {}
        self._stage: str | None = None
        self._bar: Any = None
        self._bar_done = 0
        self._printed_at: float | None = None
        self._stage_printed = False

    @classmethod
    def for_stderr(cls, quiet: bool, interval: float) -> Progress:
        if quiet:
            return cls("off")
        return cls("bar" if sys.stderr.isatty() else "log", interval)

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.last[stage] = (done, total)
        if stage != self._stage:
            self._end_stage()
            self._stage = stage
            self._stage_printed = False
        if self.style == "bar":
            if self._bar is None:
                label = LABELS.get(stage, stage)
                self._bar = click.progressbar(
                    length=total, label=label, file=sys.stderr, show_pos=True, show_percent=True
                )
                self._bar.__enter__()
                self._bar_done = 0
            self._bar.update(done - self._bar_done)
            self._bar_done = done
        elif self.style == "log":
            now = time.monotonic()
            due = self._printed_at is None and now - self.started >= self.interval
            if due or (self._printed_at is not None and now - self._printed_at >= self.interval):
                self._line(stage, done, total)

    def _line(self, stage: str, done: int, total: int) -> None:
        share = f" ({100 * done / total:.0f}%)" if total else ""
        stamp = time.strftime("%H:%M:%S")
        click.echo(
            f"[{stamp}] {LABELS.get(stage, stage)}: {done:,}/{total:,}{share}, "
            f"{_elapsed(time.monotonic() - self.started)} elapsed",
            err=True,
        )
        self._printed_at = time.monotonic()
        self._stage_printed = True

    def _end_stage(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
        elif self.style == "log" and self._stage_printed and self._stage in self.last:
            self._line(self._stage, *self.last[self._stage])  # where a stage that was shown ended

    def finish(self) -> None:
        self._end_stage()
        self._stage = None

    def interrupted(self) -> str:
        """What was stored when Ctrl-C came, and that a re-run resumes."""
        done, total = self.last.get("index", (0, 0))
        if "index" not in self.last:
            stage = LABELS.get(self._stage or "read", "reading files")
            return (
                f"interrupted while {stage}: nothing was written to the store; run the same command again "
                "to start over"
            )
        return (
            f"interrupted: {done:,} of {total:,} passages were processed and written in whole batches before "
            "Ctrl-C (the batch in flight was not written); run the same command again to resume: what is "
            "stored is skipped, nothing is indexed twice"
        )
