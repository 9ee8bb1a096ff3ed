"""Passage scores and seeds held as arrays over a store's table of passage ids.

A query scores every passage of the store more than once: the walk of the modes that mix it with dense
scores ranks a pool of every passage, and HippoRAG 2's walk seeds every passage of a store of up to
``passage_seed_top_n`` with its dense score (1,890 on MuSiQue). As lists of :class:`PassageScore` and dicts
keyed by id, that is Python work per passage and per query; held as arrays it is a few numpy operations,
and a :class:`PassageScore` is made only for the rows a caller reads (the few ranked, the title
candidates). Each class behaves as the list or the dict it stands for (a store that does not know them,
Neo4j, reads them as such). Retrieval takes these scores as they are into its one score type,
``retrieval.fusion.ScoreMap``, where they are normalised, mixed and ranked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, Protocol, TypeGuard, overload, runtime_checkable

import numpy as np
import numpy.typing as npt

from hipporag_neo4j.stores.base import PassageScore

Explain = Callable[[int], list[tuple[str, float]]]  # a passage's top phrases, by its position


class IdTable(Protocol):
    """A store's passage ids by position (the embedded store's ``StringTable``)."""

    def __len__(self) -> int: ...

    def take(self, positions: Sequence[int] | npt.NDArray[np.intp]) -> list[str]: ...

    def find_many(self, values: Sequence[str]) -> list[int | None]: ...


@runtime_checkable
class PassageTitles(Protocol):
    """A store that reads passages' titles alone (no text): HippoRAG 2's title seeds read the titles of
    dense retrieval's best 100 per query."""

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]:
        """Title by id of the stored passages among ``ids``."""
        ...


class ExplainedLater(PassageScore):
    """A passage score whose ``top_phrases`` are worked out when first read: a mode that mixes the walk
    with dense scores ranks a pool of every passage and shows the phrases of the few it returns. Equal to
    a :class:`PassageScore` of the same values."""

    def __init__(self, passage_id: str, score: float, explain: Callable[[], list[tuple[str, float]]]) -> None:
        object.__setattr__(self, "passage_id", passage_id)
        object.__setattr__(self, "score", score)
        object.__setattr__(self, "_explain", explain)
        object.__setattr__(self, "_top", None)

    @property
    def top_phrases(self) -> list[tuple[str, float]]:
        top: list[tuple[str, float]] | None = self.__dict__["_top"]
        if top is None:
            top = self.__dict__["_explain"]()
            object.__setattr__(self, "_top", top)
        return top

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PassageScore):
            return NotImplemented
        return (self.passage_id, self.score, self.top_phrases) == (
            other.passage_id,
            other.score,
            other.top_phrases,
        )

    def __hash__(self) -> int:
        return hash((self.passage_id, self.score))

    def __repr__(self) -> str:
        return repr(PassageScore(self.passage_id, self.score, self.top_phrases))

    def __reduce__(self) -> tuple[Any, ...]:  # pickled as the plain score it equals
        return (PassageScore, (self.passage_id, self.score, self.top_phrases))


class PassageScores(Sequence[PassageScore]):
    """Passage scores, best first: ``positions`` in ``table`` (each once) and their ``scores`` (float64,
    the values a list of :class:`PassageScore` would hold); ``explain``: the ``top_phrases`` of a
    position, worked out when read (:class:`ExplainedLater`). Equal to that list."""

    def __init__(
        self,
        table: IdTable,
        positions: npt.NDArray[np.intp],
        scores: npt.NDArray[np.float64],
        explain: Explain | None = None,
    ) -> None:
        self.table = table
        self.positions = positions
        self.scores = scores
        self.explain = explain

    def _score(self, passage_id: str, score: float, position: int) -> PassageScore:
        if self.explain is None:
            return PassageScore(passage_id, score)
        return ExplainedLater(passage_id, score, partial(self.explain, position))

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, i: int) -> PassageScore: ...

    @overload
    def __getitem__(self, i: slice) -> PassageScores: ...

    def __getitem__(self, i: int | slice) -> PassageScore | PassageScores:
        if isinstance(i, slice):
            return PassageScores(self.table, self.positions[i], self.scores[i], self.explain)
        position = int(self.positions[i])
        return self._score(self.table.take([position])[0], float(self.scores[i]), position)

    def __iter__(self) -> Iterator[PassageScore]:
        ids = self.table.take(self.positions)
        rows = zip(ids, self.scores.tolist(), self.positions.tolist(), strict=True)
        return (self._score(pid, s, position) for pid, s, position in rows)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # mutable arrays, as a list

    def __repr__(self) -> str:
        return f"PassageScores({len(self)} passages)"

    def of(self, passage_ids: Sequence[str]) -> dict[str, PassageScore]:
        """The scores of those of ``passage_ids`` held here, by id (as ``{p.passage_id: p for p in self}``
        restricted to them)."""
        found: dict[str, PassageScore] = {}
        for pid, position in zip(passage_ids, self.table.find_many(passage_ids), strict=True):
            if position is None:
                continue
            rows = np.flatnonzero(self.positions == position)
            if len(rows):
                found[pid] = self._score(pid, float(self.scores[rows[0]]), position)
        return found


class PassageSeeds(Mapping[str, float]):
    """Passage reset weights: ``weights`` at ``positions`` of ``table`` (a position given twice sums, in
    order). As a mapping, the dict of those sums by passage id."""

    def __init__(self, table: IdTable, positions: npt.NDArray[np.intp], weights: npt.NDArray[np.float64]):
        self.table = table
        self.positions = positions
        self.weights = weights
        self._dict: dict[str, float] | None = None

    def plus(self, extra: Mapping[str, float]) -> PassageSeeds:
        """These seeds and ``extra`` (ids -> weights) added to them; ids not in the table are left out
        (a walk over the table's passages has no node for them)."""
        if not extra:
            return self
        found = self.table.find_many(list(extra))
        rows = [(p, w) for p, w in zip(found, extra.values(), strict=True) if p is not None]
        if not rows:
            return self
        positions = np.concatenate([self.positions, np.array([p for p, _ in rows], dtype=np.intp)])
        weights = np.concatenate([self.weights, np.array([w for _, w in rows], dtype=np.float64)])
        return PassageSeeds(self.table, positions, weights)

    def add_to(self, reset: npt.NDArray[np.float64], offset: int) -> None:
        """Add the positive weights to ``reset[offset + position]``, in order (as ``+=`` per seed)."""
        keep = self.weights > 0
        np.add.at(reset, offset + self.positions[keep], self.weights[keep])

    def _all(self) -> dict[str, float]:
        if self._dict is None:
            sums: dict[str, float] = {}
            for pid, w in zip(self.table.take(self.positions), self.weights.tolist(), strict=True):
                sums[pid] = sums.get(pid, 0.0) + w
            self._dict = sums
        return self._dict

    def __getitem__(self, passage_id: str) -> float:
        return self._all()[passage_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(np.unique(self.positions)) if self._dict is None else len(self._dict)

    def __repr__(self) -> str:
        return f"PassageSeeds({len(self.positions)} seeds)"


def same_table(seeds: Mapping[str, float], table: Any) -> TypeGuard[PassageSeeds]:
    """Whether ``seeds`` are array seeds over ``table`` itself (positions valid there)."""
    return isinstance(seeds, PassageSeeds) and seeds.table is table
