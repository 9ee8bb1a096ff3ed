"""A store wrapper that plays another writer deleting what an index run relies on, in the gap between
the run's look-up and its write (used on both stores)."""

from __future__ import annotations

from typing import Any


class OtherWriterDeletesInTheGap:
    """The store, except that right after this run asks which phrases are missing (and finds the shared
    phrase stored), another writer deletes the only passage that named it, and with it the phrase: what
    an update (the old version removed) or a DELETE by another process does in that gap."""

    def __init__(self, inner: Any, delete_ids: list[str]) -> None:
        self._inner = inner
        self.delete_ids = delete_ids
        self.raced = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def missing_phrases(self, ids: Any) -> set[str]:
        missing: set[str] = self._inner.missing_phrases(ids)
        if not self.raced:
            self.raced = True
            self._inner.delete_passages(self.delete_ids)
        return missing
