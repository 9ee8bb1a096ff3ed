"""Persistent LLM response cache in SQLite: re-indexing the same corpus makes no LLM call.

Keys are sha256 digests of the whole request (model, messages and every sampling parameter), see
:func:`request_key`. Only successful responses are stored. One connection guarded by a lock serves every
thread; WAL mode lets several processes share the file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hipporag_neo4j.common.sqlite import set_wal
from hipporag_neo4j.errors import ConfigError

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
)
"""


def request_key(request: Mapping[str, Any]) -> str:
    """sha256 of the request body (model, messages, temperature, max_tokens, response_format...)."""
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Response texts by request key. The file is opened on first use, not by the constructor."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                connection = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
                try:
                    set_wal(connection)
                    connection.execute(_SCHEMA)
                    connection.commit()
                except sqlite3.Error:
                    connection.close()
                    raise
            except (OSError, sqlite3.Error) as exc:
                raise ConfigError(f"cannot open the LLM cache llm.cache_path={self.path}: {exc}") from exc
            self._connection = connection
        return self._connection

    def get(self, key: str) -> str | None:
        """The cached response text, or None. A read error is logged and counts as a miss."""
        with self._lock:
            connection = self._open()
            try:
                row = connection.execute("SELECT text FROM responses WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as exc:
                log.warning("LLM cache read failed (%s); treating as a miss", exc)
                return None
        return None if row is None else str(row[0])

    def put(
        self, key: str, model: str, text: str, prompt_tokens: int = 0, completion_tokens: int = 0
    ) -> None:
        """Store a successful response. Write errors are logged, not raised: the cache is an optimisation."""
        with self._lock:
            connection = self._open()
            try:
                connection.execute(
                    "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                    (key, model, text, prompt_tokens, completion_tokens, time.time()),
                )
                connection.commit()
            except sqlite3.Error as exc:
                log.warning("LLM cache write failed (%s); response not cached", exc)

    def __len__(self) -> int:
        with self._lock:
            row = self._open().execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
