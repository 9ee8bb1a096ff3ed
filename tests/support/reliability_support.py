"""Helpers of the reliability tests: run the worker process, compare whole stores, check one opens."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from hipporag_neo4j.stores.embedded.schema import TEXT_ROWS

WORKER = Path(__file__).resolve().parent / "reliability_worker.py"
TABLES = ("passages", "phrases", "mentions", "facts", "states", "synonyms", "synonyms_pending")
TIMEOUT = 120  # seconds a worker may take before the test fails (a normal run takes one or two)


def start_worker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def run_worker(*args: str, expect_kill: bool = False) -> subprocess.CompletedProcess[str]:
    proc = start_worker(*args)
    out, err = proc.communicate(timeout=TIMEOUT)
    if expect_kill:
        assert proc.returncode == -9, f"the worker was not killed (exit {proc.returncode}):\n{err}"
    else:
        assert proc.returncode == 0, f"worker {args} failed (exit {proc.returncode}):\n{err}"
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def dump_store(path: Path) -> dict[str, Any]:
    """Every row of every table (sorted), and the metadata but the graph version (a write counter) and
    the commit token (random per write)."""
    conn = sqlite3.connect(path / "graph.sqlite")
    try:
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        tables = {t: sorted(conn.execute(TEXT_ROWS[t]).fetchall()) if t in present else [] for t in TABLES}
        meta = dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key NOT IN ('graph_version', 'graph_token')"
            ).fetchall()
        )
        return {**tables, "meta": meta}
    finally:
        conn.close()


def assert_same_store(got: dict[str, Any], want: dict[str, Any]) -> None:
    """Equal row for row, synonym scores to the bit."""
    for table in want:
        if table == "synonyms":
            pairs, wanted = {r[:2] for r in got[table]}, {r[:2] for r in want[table]}
            assert pairs == wanted, (
                f"synonym edges differ: {len(wanted - pairs)} of {len(wanted)} missing, "
                f"{len(pairs - wanted)} extra"
            )
        assert got[table] == want[table], f"table {table} differs"


def assert_opens_cleanly(path: Path) -> None:
    """What a kill may leave: SQLite's own checks pass, and the store opens and reads."""
    if not (path / "graph.sqlite").exists():
        return  # killed before the store was created
    conn = sqlite3.connect(path / "graph.sqlite")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        conn.close()
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    store = EmbeddedStore(path)
    try:
        store.open("hash-embedder", 16)
        store.stats()
    finally:
        store.close()
