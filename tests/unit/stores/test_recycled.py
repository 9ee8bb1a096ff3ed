"""The carry's pool of large arrays (``stores/memory/recycled.py``): a buffer is handed out again only when
no array refers to it any more, never while a snapshot (or a query reading one) can still see it."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import scipy.sparse as sp

from hipporag_neo4j.stores.memory.recycled import Recycler

pytestmark = pytest.mark.unit


def test_a_buffer_is_reused_only_after_every_view_of_it_is_gone() -> None:
    pool = Recycler(min_bytes=0)
    first = pool.empty(1000, np.int32)
    first[:] = 7
    second = pool.empty(1000, np.int32)  # first is alive: a buffer of its own
    assert not np.shares_memory(first, second) and pool.reused == 0
    view = first[10:20]
    del first
    third = pool.empty(1000, np.int32)  # a slice of first is alive: still not reused
    assert not np.shares_memory(view, third) and pool.reused == 0
    assert np.all(view == 7)
    address = view.base.__array_interface__["data"][0]
    del view, second, third
    gc.collect()
    again = pool.empty(1000, np.int32)
    assert pool.reused == 1
    assert again.__array_interface__["data"][0] in {b.__array_interface__["data"][0] for b in pool._buffers}
    assert address in {b.__array_interface__["data"][0] for b in pool._buffers}


def test_a_csr_matrix_over_pooled_arrays_keeps_them_and_holds_them() -> None:
    """scipy keeps the pooled arrays (a view not much smaller than its buffer is not copied), and as long
    as the matrix lives its buffers are not handed out."""
    pool = Recycler(min_bytes=0)
    indices, data = pool.empty(500, np.int32), pool.empty(500, np.float64)
    indices[:] = np.arange(500) % 50
    data[:] = 1.0
    indptr = np.arange(0, 501, 5, dtype=np.int32)
    matrix = sp.csr_matrix((data, indices, indptr), shape=(100, 50), copy=False)
    assert np.shares_memory(matrix.indices, indices) and np.shares_memory(matrix.data, data)
    del indices, data
    fresh = [pool.empty(500, np.int32), pool.empty(500, np.float64)]
    assert pool.reused == 0 and not any(np.shares_memory(f, matrix.data) for f in fresh)
    assert not any(np.shares_memory(f, matrix.indices) for f in fresh)
    assert matrix.sum() == 500.0


def test_buffers_are_matched_by_dtype_and_size_and_free_ones_are_bounded() -> None:
    pool = Recycler(min_bytes=0, keep_free=2)
    for n in (1000, 1000, 2000, 4000):
        pool.empty(n, np.float64)  # each dropped at once: free right after
    assert pool.reused == 1  # the second 1000 took the first's buffer; 2000 and 4000 fit none
    # trimmed when 4000 was handed out: 2 free ones kept beside it, the least recently used let go
    assert sorted(len(b) for b in pool._buffers) == [1015, 2031, 4062]
    pool.empty(1000, np.int64)  # another dtype of the same byte size: a buffer of its own
    assert pool.reused == 1
    small = Recycler(min_bytes=1 << 20).empty(10, np.float64)  # below the floor: plain numpy
    assert small.base is None


def test_a_buffer_much_larger_than_asked_is_not_used() -> None:
    pool = Recycler(min_bytes=0)
    pool.empty(10_000, np.float64)
    handed = pool.empty(1000, np.float64)
    assert pool.reused == 0 and handed.base is not None and len(handed.base) < 10_000
