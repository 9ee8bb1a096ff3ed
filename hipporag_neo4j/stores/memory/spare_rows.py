"""Matrices that grow by appending rows: a buffer with spare rows past the matrix's end.

A matrix read from SQLite gets its buffer with room to spare (untouched rows cost address space, not
memory). A matrix memory-mapped from a persisted snapshot file (read-only) is grown without copying its
rows where the platform allows: a private, copy-on-write mapping of the file is placed at the start of a
larger anonymous reservation, so the old rows stay in the page cache, shared and unread until used, and
only the appended rows take memory of their own. The file is never written (a private mapping). At 1M
phrases this is what the first ``write_passages`` of a process would otherwise copy: 1.5 GiB.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
import weakref
from typing import Any

import numpy as np
import numpy.typing as npt

_PAGE = mmap.PAGESIZE
_MAP_FIXED = 0x10  # Linux and macOS alike (not exposed by the mmap module)


def _libc() -> Any:
    if not sys.platform.startswith(("linux", "darwin")):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int64,
        ]
        libc.munmap.restype = ctypes.c_int
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()
_FAILED = ctypes.c_void_p(-1).value


def reservable() -> bool:
    """Whether a mapped matrix can grow over its file here (else :func:`grown` copies it once)."""
    return _LIBC is not None


def _round_up(n: int) -> int:
    return -(-n // _PAGE) * _PAGE


def mapped_file(matrix: npt.NDArray[Any]) -> str | None:
    """The file ``matrix`` maps from its first byte (a whole ``np.memmap`` at offset 0, or a plain view
    of one), else None."""
    base = matrix.base
    while isinstance(base, np.ndarray) and not isinstance(base, np.memmap):
        base = base.base
    if (
        not isinstance(base, np.memmap)
        or base.offset != 0
        or not isinstance(base.filename, (str, os.PathLike))
        or not matrix.flags.c_contiguous
        or matrix.__array_interface__["data"][0] != base.__array_interface__["data"][0]
    ):
        return None
    return os.fspath(base.filename)


def reserved(matrix: npt.NDArray[Any], capacity: int) -> npt.NDArray[Any] | None:
    """A writable buffer of ``capacity`` rows whose first rows are ``matrix``'s, mapped from the same
    file copy-on-write rather than copied; None where ``matrix`` maps no file or the platform cannot."""
    path = mapped_file(matrix)
    if _LIBC is None or path is None or matrix.ndim != 2 or capacity < len(matrix):
        return None
    row_bytes = matrix.shape[1] * matrix.dtype.itemsize
    used = len(matrix) * row_bytes
    total = _round_up(max(capacity * row_bytes, 1))
    try:
        if os.stat(path).st_size < used:
            return None
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    prot = mmap.PROT_READ | mmap.PROT_WRITE
    try:
        address = _LIBC.mmap(None, total, prot, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        if address in (None, _FAILED):
            return None
        # the file's pages over the start of the reservation (only pages holding bytes of its rows:
        # a page wholly past the end of a file faults)
        if (
            used
            and _LIBC.mmap(address, _round_up(used), prot, mmap.MAP_PRIVATE | _MAP_FIXED, fd, 0) != address
        ):
            _LIBC.munmap(address, total)
            return None
    finally:
        os.close(fd)
    memory = (ctypes.c_char * total).from_address(address)
    weakref.finalize(memory, _LIBC.munmap, address, total)  # unmapped with the last array over it
    count = capacity * matrix.shape[1]
    grown: npt.NDArray[Any] = np.frombuffer(memoryview(memory), dtype=matrix.dtype, count=count).reshape(
        capacity, -1
    )
    return grown


def grown(
    matrix: npt.NDArray[Any], buffer: npt.NDArray[Any] | None, rows: npt.NDArray[Any]
) -> tuple[npt.NDArray[Any], npt.NDArray[Any], bool]:
    """``matrix`` then ``rows`` as one matrix, and its buffer: ``rows`` go into spare rows of ``buffer``
    (whose first rows must be ``matrix``'s, writable) when it has room, else into a new buffer with a
    quarter more room, reserved over ``matrix``'s file when it maps one, else copied. Returns whether
    ``matrix``'s rows were copied."""
    n, need = len(matrix), len(matrix) + len(rows)
    copied = False
    if buffer is None or len(buffer) < need or not buffer.flags.writeable:
        capacity = max(need, n + n // 4 + 64)
        buffer = reserved(matrix, capacity)
        if buffer is None:
            buffer = np.empty((capacity, *matrix.shape[1:]), dtype=matrix.dtype)
            buffer[:n] = matrix
            copied = True
    buffer[n:need] = rows
    return buffer[:need], buffer, copied
