"""Many readers or one writer, and a store wrapper that takes the write side only around writes.

A query runs under :meth:`ReadWriteLock.read` for its whole duration, so it sees one state of the
store. The writer thread runs each step (one chunk of passages, one delete) in
:meth:`GuardedStore.step`: extraction and embedding run while readers keep querying; the exclusive
lock is taken at the step's first store write and held to the step's end, so readers never see half
a step (e.g. a chunk's passages without its synonym edges).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hipporag_neo4j.stores.base import GraphStore

#: Store methods that only read. In a writer step any other method takes the exclusive lock first, so a
#: write method added to the protocol later is guarded even before it is listed; a read method missing
#: here would hold the lock through extraction (correct, but readers wait).
#: tests/unit/service/test_service_locks.py fails until every protocol method is in one of the two lists.
READ_METHODS = frozenset(
    {
        "meta",
        "view",
        "reembed_state",
        "pending_synonym_phrases",
        "list_passages",
        "passages_by_parent",
        "existing_passages",
        "missing_phrases",
        "missing_facts",
        "phrases_by_name",
        "personalized_pagerank",
        "graph_passage_scores",
        "dense_passage_scores",
        "nearest_phrases",
        "nearest_facts",
        "passage_node_scores",
        "get_passages",
        "passage_titles",
        "passage_count",
        "stats",
        "iter_texts",
    }
)


#: Store methods that write (or open and close the store); documentation and the completeness test.
WRITE_METHODS = frozenset(
    {
        "open",
        "close",
        "write_passages",
        "write_synonyms",
        "delete_passages",
        "drop_namespace",
        "set_embeddings",
        "set_embedding_model",
        "open_for_reembed",
        "set_reembed_state",
        "finish_reembed",
    }
)


class ReadWriteLock:
    """Shared for readers, exclusive for the writer; a waiting writer holds back new readers."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if self._readers == 0:
                    self._cond.notify_all()

    def acquire_write(self) -> None:
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writer or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writer = True

    def release_write(self) -> None:
        with self._cond:
            self._writer = False
            self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        self.acquire_write()
        try:
            yield
        finally:
            self.release_write()


class GuardedStore:
    """A :class:`GraphStore` whose writes, inside a writer :meth:`step`, hold ``lock`` exclusively.

    Only the writer thread calls :meth:`step`; readers call through unchanged (they hold the read lock).
    """

    def __init__(self, store: GraphStore, lock: ReadWriteLock) -> None:
        self._store = store
        self._lock = lock
        self._in_step = False
        self._held = False

    @property
    def inner(self) -> GraphStore:
        return self._store

    @contextmanager
    def step(self) -> Iterator[None]:
        self._in_step = True
        try:
            yield
        finally:
            self._in_step = False
            if self._held:
                self._held = False
                self._lock.release_write()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store, name)
        if name in READ_METHODS or not callable(attr):
            return attr
        return self._guard(attr)

    def _guard(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(*args: Any, **kwargs: Any) -> Any:
            if self._in_step and not self._held:
                self._lock.acquire_write()
                self._held = True
            return method(*args, **kwargs)

        return guarded
