"""SQLite helpers shared by the embedded store, the enterprise graph beside it and the LLM cache: the WAL
switch made safe for processes that open one new database at once, and statements over many ids."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from typing import TypeVar


def set_wal(conn: sqlite3.Connection, wait_s: float = 30.0) -> None:
    """Switch to WAL. SQLite does not call the busy handler for this switch, so when two processes open
    one new store at once the loser gets "database is locked" at once: wait and retry instead."""
    execute_contended(conn, "PRAGMA journal_mode=WAL", wait_s)


def begin_immediate(conn: sqlite3.Connection, wait_s: float = 30.0) -> None:
    """``BEGIN IMMEDIATE`` (the write lock), waiting for it. The busy timeout covers most waits, but not
    every one: while another process switches a new file to WAL, SQLite answers "database is locked"
    without calling the busy handler (CI saw it when two writers started on one new store at once)."""
    execute_contended(conn, "BEGIN IMMEDIATE", wait_s)


def execute_contended(conn: sqlite3.Connection, sql: str, wait_s: float) -> None:
    """Run ``sql`` (a statement that does nothing before it has its lock), again after a pause while
    SQLite answers that the database is locked or busy, for at most ``wait_s`` seconds."""
    deadline = time.monotonic() + wait_s
    pause = 0.01
    while True:
        try:
            conn.execute(sql)
            return
        except sqlite3.OperationalError as exc:
            contended = "locked" in str(exc) or "busy" in str(exc)
            if not contended or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


T = TypeVar("T")
SQL_CHUNK = 900  # SQLite's default limit of bound parameters is 999


def chunks(items: Sequence[T], size: int = SQL_CHUNK) -> Iterator[Sequence[T]]:
    """``items`` in slices small enough to bind as the parameters of one statement."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def placeholders(n: int) -> str:
    """``?,?,...`` for an ``IN (...)`` of ``n`` values."""
    return ",".join("?" * n)
