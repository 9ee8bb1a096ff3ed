"""Many strings in two numpy arrays (UTF-8 bytes + offsets), so a snapshot of a million phrase ids and
names is a few flat arrays that can be saved and memory-mapped, not a million Python objects (a list of
str plus a dict of positions took ~1.5 GiB at 1M phrases, benchmarks/results/scale.md).

Lookup by value goes through a permutation of the positions sorted by the strings' bytes (binary search,
~20 comparisons at 1M); strings appended later (a writer keeping its phrase index warm between batches)
sit in a list and a dict until the next rebuild.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from hipporag_neo4j.stores.memory.recycled import ARRAYS

_BULK = 256  # lookups from which a table decodes itself once instead of searching per string
#: find_all searches value by value while a table holds more than this many strings per value asked
#: (one binary search in Python costs about what the vectorised search costs per 256 strings it reads)
_PER_VALUE_SEARCH = 256

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]


class StringTable(Sequence[str]):
    """An immutable base of strings (arrays) plus an in-memory tail of appended strings."""

    def __init__(self, data: U8, offsets: I64, order: I64 | None = None) -> None:
        self.data = data
        self.offsets = offsets
        self.order = order  # positions sorted by the strings' UTF-8 bytes, or None: no lookup by value
        self._base = len(offsets) - 1
        self._tail: list[str] = []
        self._tail_position: dict[str, int] = {}
        self._decoded: list[str] | None = None
        self._index: dict[str, int] | None = None
        self._view: memoryview | None = None

    @classmethod
    def of(cls, strings: Sequence[str], searchable: bool = False) -> StringTable:
        encoded = [s.encode("utf-8") for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
        order = None
        if searchable:
            order = np.array(sorted(range(len(encoded)), key=encoded.__getitem__), dtype=np.int64)
        return cls(data, offsets, order)

    def __len__(self) -> int:
        return self._base + len(self._tail)

    def _bytes(self, i: int) -> bytes:
        if self._view is None:
            self._view = memoryview(self.data.reshape(-1))  # type: ignore[arg-type]  # cheaper slices
        return self._view[self.offsets[i] : self.offsets[i + 1]].tobytes()

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        i = int(i)
        if i < 0:
            i += len(self)
        if 0 <= i < self._base:
            return self._bytes(i).decode("utf-8")
        if self._base <= i < len(self):
            return self._tail[i - self._base]
        raise IndexError(i)

    def __iter__(self) -> Iterator[str]:
        raw = self.data.tobytes()
        bounds = self.offsets.tolist()
        for i in range(self._base):
            yield raw[bounds[i] : bounds[i + 1]].decode("utf-8")
        yield from self._tail

    def take(self, positions: Sequence[int] | npt.NDArray[np.intp]) -> list[str]:
        """The strings at ``positions``; many at once go through :meth:`decoded`."""
        if len(positions) < _BULK:
            return [self[int(i)] for i in positions]
        everything = self.decoded()
        return [everything[int(i)] for i in positions]

    def decoded(self) -> list[str]:
        """Every string as a Python list, decoded once and kept: only tables read in bulk pay for it
        (the passage ids, which HippoRAG 2's walk reads all of per query), not the million phrases."""
        if self._decoded is None or len(self._decoded) != len(self):
            self._decoded = list(self)
        return self._decoded

    def find_many(self, values: Sequence[str]) -> list[int | None]:
        """Positions of ``values`` (None where absent); many at once through a dict kept beside
        :meth:`decoded`."""
        if len(values) < _BULK:
            return [self.find(v) for v in values]
        if self._index is None or len(self._index) != len(self):
            self._index = {v: i for i, v in enumerate(self.decoded())}
        index = self._index
        return [index.get(v) for v in values]

    def find(self, value: str) -> int | None:
        """Position of ``value``, or None."""
        if self.order is None:
            raise TypeError("this string table has no lookup by value")
        if self._index is not None and len(self._index) == len(self):
            return self._index.get(value)
        key = value.encode("utf-8")
        order = self.order
        lo, hi = 0, self._base
        while lo < hi:
            mid = (lo + hi) // 2
            if self._bytes(int(order[mid])) < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < self._base and self._bytes(int(order[lo])) == key:
            return int(order[lo])
        return self._tail_position.get(value)

    def find_all(self, values: Sequence[str]) -> list[int | None]:
        """Positions of ``values`` (None where absent), as :meth:`find`; strings of one width (the md5 ids)
        in one vectorised binary search over the sorted permutation, without decoding the table. A few
        values are searched one by one: the vectorised search reads the whole table (0.14 s for the
        dozens of ids of a one-passage write at 1.2M phrases, against microseconds each)."""
        if self.order is None:
            raise TypeError("this string table has no lookup by value")
        if len(values) * _PER_VALUE_SEARCH < self._base:
            return [self.find(v) for v in values]
        encoded = [v.encode("utf-8") for v in values]
        lengths = np.diff(self.offsets)
        width = int(lengths[0]) if self._base else 0
        if (
            self._tail
            or not width
            or int(lengths.min()) != width
            or int(lengths.max()) != width
            or any(b"\0" in e for e in encoded)
            or bool((self.data == 0).any())  # numpy's fixed-width bytes ignore trailing NULs
        ):
            return [self.find(v) for v in values]
        keys = self.data.reshape(-1).view(f"S{width}")[self.order]
        right = np.array([e if len(e) == width else b"" for e in encoded], dtype=f"S{width}")
        at = np.minimum(np.searchsorted(keys, right), self._base - 1)
        hit = (keys[at] == right) & np.array([len(e) == width for e in encoded], dtype=np.bool_)
        positions = self.order[at]
        return [int(p) if h else None for p, h in zip(positions.tolist(), hit.tolist(), strict=True)]

    def without_appended(self) -> StringTable:
        """The base strings alone, as a table of their own (the same arrays; nothing copied)."""
        return StringTable(self.data, self.offsets, self.order)

    @property
    def base_count(self) -> int:
        """How many strings are in the base arrays (the rest were appended)."""
        return self._base

    def append(self, values: Sequence[str]) -> None:
        for value in values:
            if self.order is not None:
                self._tail_position[value] = len(self)
            self._tail.append(value)

    def extended(self, values: Sequence[str]) -> StringTable:
        """A new table of this one's strings then ``values``, as base arrays (no tail), with the sorted
        permutation merged rather than re-sorted: equal to ``StringTable.of(list(self) + values)`` for a
        table of distinct strings (the incremental snapshot's ids)."""
        if self._tail:
            raise ValueError("extend a table without appended strings")
        encoded = [v.encode("utf-8") for v in values]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        # the new arrays from the carry's pool (recycled): at 1M phrases a copy of ~100 MB per write
        offsets = ARRAYS.empty(len(self.offsets) + len(encoded), np.int64)
        offsets[: len(self.offsets)] = self.offsets
        np.cumsum(lengths, out=offsets[len(self.offsets) :])
        offsets[len(self.offsets) :] += self.offsets[-1]
        added = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        size = int(self.data.size)
        data = ARRAYS.empty(size + len(added), np.uint8)
        data[:size] = self.data.reshape(-1)
        data[size:] = added
        order = None
        if self.order is not None:
            ranked = sorted(range(len(encoded)), key=encoded.__getitem__)
            at = [self._insertion_point(encoded[k]) for k in ranked]
            # np.insert(self.order, at, new positions), copied in runs between the insertion points
            order = ARRAYS.empty(len(self.order) + len(ranked), np.int64)
            done = 0
            for i, (point, k) in enumerate(zip(at, ranked, strict=True)):
                order[done + i : point + i] = self.order[done:point]
                order[point + i] = self._base + k
                done = point
            order[done + len(ranked) :] = self.order[done:]
        return StringTable(data, offsets, order)

    def _insertion_point(self, key: bytes) -> int:
        """Where ``key`` goes in the sorted permutation (after equal strings: a stable sort's place)."""
        assert self.order is not None
        lo, hi = 0, self._base
        while lo < hi:
            mid = (lo + hi) // 2
            if self._bytes(int(self.order[mid])) <= key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def arrays(self) -> tuple[U8, I64, I64 | None]:
        """The base arrays; a table with appended strings is rebuilt first (snapshots are written from
        freshly built tables, so this does not happen on the query path)."""
        if self._tail:
            merged = StringTable.of(list(self), searchable=self.order is not None)
            return merged.data, merged.offsets, merged.order
        return self.data, self.offsets, self.order
