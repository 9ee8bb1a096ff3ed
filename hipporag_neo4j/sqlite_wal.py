"""SQLite's WAL switch, made safe for processes that open one new database at once."""

from __future__ import annotations

import sqlite3
import time


def set_wal(conn: sqlite3.Connection, wait_s: float = 30.0) -> None:
    """Switch to WAL. SQLite does not call the busy handler for this switch, so when two processes open
    one new store at once the loser gets "database is locked" at once: wait and retry instead."""
    deadline = time.monotonic() + wait_s
    pause = 0.01
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            contended = "locked" in str(exc) or "busy" in str(exc)
            if not contended or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)
