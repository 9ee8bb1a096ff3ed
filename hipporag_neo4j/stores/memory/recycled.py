"""Large arrays handed out again once nothing refers to them: the carry's CSR arrays and id tables.

Carrying a graph version forward by a write copies its CSR arrays and id tables into new ones
(``rows.spliced``, ``StringTable.extended``): at 1M phrases ~300 MB per write. An array of that size is
new memory from the kernel (malloc maps anything over 32 MiB on its own), and new memory can cost far more
than the copy: on a VM that hands free pages back to its host, memory freed a few seconds earlier cost
0.2 s per 96 MB to touch again, against 0.008 s right after it was freed
(benchmarks/results/carry_memory_and_push.md). The version before the base is dropped once a newer one is
served, so its arrays, the same size give or take a write, are free again two carries later: they are
reused here, and memory the process holds is never handed back in between.

A buffer is reused only when nothing but this pool refers to it: every array handed out is a view whose
``base`` is the buffer, so the buffer's reference count says whether any view (a snapshot, a query still
reading an older version) is alive. Nothing is ever written into memory a live array can see.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np
import numpy.typing as npt

#: arrays smaller than this come from numpy (malloc keeps and reuses such blocks itself)
MIN_BYTES = 8 << 20
#: room past the size asked for, so the next versions (a write adds a few entries) fit the same buffer
SLACK = 1 / 64
#: free buffers kept for reuse; a carry asks for up to 9 large arrays (CSR arrays of the phrase graph and
#: the walk graph, the phrase id and name tables)
KEEP_FREE = 12


class Recycler:
    """A pool of 1-D buffers; :meth:`empty` is ``np.empty`` as a view of a free one of its dtype that
    fits, when there is one."""

    def __init__(self, min_bytes: int = MIN_BYTES, keep_free: int = KEEP_FREE) -> None:
        self.min_bytes = min_bytes
        self.keep_free = keep_free
        self._buffers: list[npt.NDArray[Any]] = []
        self._lock = threading.Lock()
        self.reused = 0  # arrays served from a free buffer (tests, benchmarks)

    def empty(self, n: int, dtype: Any) -> npt.NDArray[Any]:
        """An uninitialised 1-D array of ``n`` items of ``dtype``."""
        kind = np.dtype(dtype)
        size = n * kind.itemsize
        if size < self.min_bytes:
            return np.empty(n, dtype=kind)
        with self._lock:
            best: int | None = None
            for i in range(len(self._buffers)):
                if (
                    self._buffers[i].dtype == kind
                    and n <= len(self._buffers[i]) <= n * 1.25
                    and self._idle(i)
                    and (best is None or len(self._buffers[i]) < len(self._buffers[best]))
                ):
                    best = i
            if best is not None:
                self._buffers.append(self._buffers.pop(best))  # most recently used last
                self.reused += 1
            else:
                self._buffers.append(np.empty(n + int(n * SLACK), dtype=kind))
            # a view of the same dtype, nearly the buffer's length (scipy copies a view of an array
            # more than twice its size: sparse._sputils._prune_array)
            handed: npt.NDArray[Any] = self._buffers[-1][:n]
            self._trim()
            return handed

    def _idle(self, i: int) -> bool:
        """Whether nothing but the pool refers to buffer ``i``: its list and getrefcount's argument
        (no name may hold it while this runs: a loop's name, or enumerate's cached tuple, counts too)."""
        return sys.getrefcount(self._buffers[i]) == 2

    def _trim(self) -> None:
        """Forget the least recently used free buffers past ``keep_free`` (their memory goes back)."""
        free = [i for i in range(len(self._buffers)) if self._idle(i)]
        for i in reversed(free[: max(len(free) - self.keep_free, 0)]):
            del self._buffers[i]


#: the process's pool (the carries of every store in it; one lineage per store, so few sizes)
ARRAYS = Recycler()
