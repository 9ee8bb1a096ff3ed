"""Progress lines (issue 37 item 3): a timer prints the stage's counts, rate and time left while nothing
reports (a long batch), the plan and estimate before indexing, and the interrupt message says exactly
what the report of the stopped run holds."""

from __future__ import annotations

import threading

from hipporag_neo4j.cli.progress import Progress
from hipporag_neo4j.indexing.pipeline import IndexInterrupted, IndexPlan
from hipporag_neo4j.models import IndexReport


def test_the_timer_prints_while_no_batch_ends() -> None:
    lines: list[str] = []
    enough = threading.Event()

    def sink(line: str) -> None:
        lines.append(line)
        if len(lines) >= 3:
            enough.set()

    progress = Progress("log", interval=0.02, sink=sink)
    progress("index", 0, 500)  # one call, then nothing: a batch that takes long
    assert enough.wait(30), lines
    progress.finish()
    assert all("indexing passages: 0/500 (0%)" in line for line in lines[:3]), lines
    assert "first batch" in lines[0]
    count = len(lines)
    assert not enough.clear() and not enough.wait(0.2) and len(lines) == count  # finish stops the timer


def test_rate_and_time_left_once_a_batch_is_written() -> None:
    lines: list[str] = []
    progress = Progress("log", interval=3600, sink=lines.append)
    progress("index", 0, 1000)
    progress._since["index"] = (progress._since["index"][0] - 10, 0)  # as if it started 10 s ago
    progress("index", 250, 1000)
    status = progress.status("index")
    assert status.startswith("indexing passages: 250/1,000 (25%)"), status
    assert "passages/s, about" in status and "left" in status, status
    progress.finish()


def test_the_plan_names_long_texts_and_the_estimate() -> None:
    lines: list[str] = []
    progress = Progress("log", interval=3600, sink=lines.append)
    progress.plan(IndexPlan(45_692, 10, {"big.txt": (45_692, 45_682)}, 256, sample=32, sample_seconds=8.0))
    assert (
        "to index: 45,692 passages (10 already stored, skipped); big.txt: 45,692 chunks, 45,682 to index"
        in lines[0]
    )
    assert "estimate: about 3h10m" in lines[1] and "the first 32 extracted and encoded in 8.0s" in lines[1]


def test_the_interrupt_message_says_what_the_report_holds() -> None:
    report = IndexReport(indexed=[f"p{n}" for n in range(1280)], skipped=["s1", "s2"], new_phrases=3456)
    report.new_facts, report.new_synonym_edges = 2345, 120
    message = Progress("log").interrupted(IndexInterrupted(report, 45_692), "SIGTERM")
    assert message.startswith(
        "interrupted by SIGTERM: written to the store before it stopped, in whole batches:"
    )
    assert "1,280 passages, 3,456 new phrases, 2,345 new facts, 120 synonym edges" in message
    assert "the other 44,412 of the 45,692 passages" in message
    assert "the 1,282 passages stored are skipped, the 44,412 others indexed" in message
    before = Progress("log").interrupted(KeyboardInterrupt(), "Ctrl-C")
    assert before.startswith("interrupted by Ctrl-C while reading files: nothing was written")
