"""Progress as a person follows it, through the CLI in its own process: timestamped lines naming the stage
and its counts when stderr is not a terminal (a job under systemd, CI, nohup), nothing with --quiet, and
Ctrl-C or SIGTERM during ``index`` saying exactly what was stored and that a re-run resumes (which it does,
without duplicates). Real embedder, spaCy, embedded store on disk."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def notes(folder: Path, count: int) -> None:
    folder.mkdir()
    for n in range(count):
        (folder / f"note{n:04d}.txt").write_text(f"Researcher {n} works in Lab {n % 50}.", encoding="utf-8")


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "hipporag_neo4j", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_log_lines_when_not_a_terminal_and_quiet(tmp_path: Path) -> None:
    notes(tmp_path / "notes", 300)
    run = start("index", "notes", "--progress-every", "0", cwd=tmp_path)
    _, err = run.communicate(timeout=900)
    assert run.returncode == 0, err
    lines = [line for line in err.splitlines() if line.startswith("[")]
    stages = {re.sub(r"^\[\d\d:\d\d:\d\d\] ([a-z ]+):.*", r"\1", line) for line in lines}
    assert {"reading files", "chunking passages", "indexing passages"} <= stages, err
    assert any(
        re.search(r"indexing passages: 300/300 \(100%\), \d+m\d\ds elapsed, [\d.,]+ passages/", x)
        for x in lines
    )
    assert "\r" not in err  # no bar redrawn into a log

    quiet = start("--store", "q", "index", "notes", "--quiet", "--progress-every", "0", cwd=tmp_path)
    _, err = quiet.communicate(timeout=900)
    assert quiet.returncode == 0 and not [x for x in err.splitlines() if x.startswith("[")], err


@pytest.mark.parametrize(
    ("signum", "code", "how"), [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")]
)
def test_ctrl_c_or_sigterm_during_index_says_exactly_what_was_stored_and_a_rerun_resumes(
    tmp_path: Path, signum: int, code: int, how: str
) -> None:
    notes(tmp_path / "notes", 700)  # three batches of 256
    run = start("index", "notes", "--progress-every", "0", cwd=tmp_path)
    assert run.stderr is not None
    seen = []
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        line = run.stderr.readline()
        seen.append(line)
        if re.search(r"indexing passages: (256|512)/700", line):
            break
    else:
        pytest.fail("no batch written in time: " + "".join(seen))
    run.send_signal(signum)
    out, rest = run.communicate(timeout=300)
    err = "".join(seen) + rest
    assert run.returncode == code, err
    said = re.search(
        rf"interrupted by {how}: written to the store before it stopped, in whole batches: (\d+) passages, "
        r"(\d+) new phrases, (\d+) new facts",
        err,
    )
    assert said, err
    assert "Run the same command again to resume" in err and "Traceback" not in err
    listed = start("--json", "list", cwd=tmp_path)
    out, _ = listed.communicate(timeout=300)
    assert len(json.loads(out)) == int(said[1])  # exactly what the message said, whole batches
    stats = start("--json", "stats", cwd=tmp_path)
    out, _ = stats.communicate(timeout=300)
    counts = json.loads(out)
    assert (counts["phrases"], counts["facts"]) == (int(said[2]), int(said[3]))

    again = start("--json", "index", "notes", cwd=tmp_path)
    out, err = again.communicate(timeout=900)
    assert again.returncode == 0, err
    report = json.loads(out)
    assert len(report["skipped"]) == int(said[1])  # what the message said was stored is there
    assert len(report["skipped"]) + len(report["indexed"]) == 700  # the rest indexed, nothing twice
