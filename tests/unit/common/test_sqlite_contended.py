"""Statements that take SQLite's lock are run again while the database answers "locked" or "busy"
without having waited (hipporag_neo4j/common/sqlite.py): the WAL switch and ``BEGIN IMMEDIATE``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hipporag_neo4j.common.sqlite import begin_immediate, execute_contended

pytestmark = pytest.mark.unit


class Refusing:
    """A connection that answers ``errors`` (one per call) before it runs the statement."""

    def __init__(self, *errors: str) -> None:
        self.errors = list(errors)
        self.ran: list[str] = []

    def execute(self, sql: str) -> None:
        if self.errors:
            raise sqlite3.OperationalError(self.errors.pop(0))
        self.ran.append(sql)


def test_begin_immediate_waits_out_a_locked_database() -> None:
    conn = Refusing("database is locked", "database is busy")
    begin_immediate(conn, wait_s=5)  # type: ignore[arg-type]
    assert conn.ran == ["BEGIN IMMEDIATE"]


def test_another_error_is_raised_at_once_and_a_lock_that_stays_after_the_wait() -> None:
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        execute_contended(Refusing("no such table: x"), "BEGIN IMMEDIATE", 5)  # type: ignore[arg-type]
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        execute_contended(Refusing(*["database is locked"] * 100), "BEGIN IMMEDIATE", 0.05)  # type: ignore[arg-type]


def test_a_real_write_lock_held_elsewhere_is_waited_for(tmp_path: Path) -> None:
    path = str(tmp_path / "db.sqlite")
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("CREATE TABLE t(x)")
    holder.execute("BEGIN IMMEDIATE")
    waiter = sqlite3.connect(path, isolation_level=None, timeout=0)  # no busy handler at all
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        execute_contended(waiter, "BEGIN IMMEDIATE", 0.1)
    holder.execute("COMMIT")
    begin_immediate(waiter, wait_s=5)
    waiter.execute("INSERT INTO t VALUES (1)")
    waiter.execute("COMMIT")
    assert holder.execute("SELECT count(*) FROM t").fetchone() == (1,)
