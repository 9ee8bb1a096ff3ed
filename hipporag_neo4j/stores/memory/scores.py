"""Passage scores and seeds held as arrays over a store's table of passage ids.

A query scores every passage of the store more than once: the walk of the modes that mix it with dense
scores ranks a pool of every passage, and HippoRAG 2's walk seeds every passage of a store of up to
``passage_seed_top_n`` with its dense score (1,890 on MuSiQue). As lists of :class:`PassageScore` and dicts
keyed by id, that is Python work per passage and per query; held as arrays it is a few numpy operations,
and a :class:`PassageScore` is made only for the rows a caller reads (the few ranked, the title
candidates). Each class behaves as the list or the dict it stands for (a store that does not know them,
Neo4j, reads them as such), with the same float values: the arithmetic below is the same IEEE operations
in the same order as the Python it replaces (``retrieval.fusion.min_max`` and ``mix``).
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

    def by_id(self) -> ScoreMap:
        """The scores keyed by passage id: ``{p.passage_id: p.score for p in self}``."""
        return ScoreMap(self.table, self.positions, self.scores)

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

    def seeds(self, count: int, weight: float) -> PassageSeeds:
        """HippoRAG 2's passage reset weights of the best ``count`` rows: each score min-max normalised
        over every row held, x ``weight``, zeros dropped (``retrieval.hipporag2.passage_seed_weights``)."""
        if count <= 0 or not len(self):
            return PassageSeeds(self.table, np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float64))
        normalised = min_max(self.scores)[:count]
        keep = normalised > 0
        return PassageSeeds(self.table, self.positions[:count][keep], normalised[keep] * weight)


def min_max(values: npt.NDArray[np.float64], floor: float | None = None) -> npt.NDArray[np.float64]:
    """``retrieval.fusion.min_max`` over an array: scaled to [0, 1] between ``floor`` (or the minimum) and
    the maximum; all equal: 1.0 when positive, else 0.0."""
    if not len(values):
        return values
    low = float(values.min()) if floor is None else min(floor, float(values.min()))
    high = float(values.max())
    if high <= low:
        return np.full(len(values), 1.0 if high > 0 else 0.0)
    normalised: npt.NDArray[np.float64] = (values - low) / (high - low)
    return normalised


class ScoreMap(Mapping[str, float]):
    """Scores by passage id over ``table``: ``values`` at ``positions`` (each once, any order). Looked up
    one id at a time; iterating reads every id (a dict made once). :meth:`top` ranks without a dict."""

    def __init__(self, table: IdTable, positions: npt.NDArray[np.intp], values: npt.NDArray[np.float64]):
        self.table = table
        self.positions = positions
        self.values_ = values
        self._dict: dict[str, float] | None = None

    def _all(self) -> dict[str, float]:
        if self._dict is None:
            ids = self.table.take(self.positions)
            self._dict = dict(zip(ids, self.values_.tolist(), strict=True))
        return self._dict

    def __getitem__(self, passage_id: str) -> float:
        if self._dict is not None:
            return self._dict[passage_id]
        position = self.table.find_many([passage_id])[0]
        if position is None:
            raise KeyError(passage_id)
        rows = np.flatnonzero(self.positions == position)
        if not len(rows):
            raise KeyError(passage_id)
        return float(self.values_[rows[0]])

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self.positions)

    def top(self, k: int) -> list[tuple[str, float]]:
        """``sorted(self.items(), key=lambda kv: (-kv[1], kv[0]))[:k]``: a partition, then the ids of the
        scores at or above the k-th only."""
        n = len(self.positions)
        if k <= 0 or not n:
            return []
        if k < n:
            negated = -self.values_
            kth = np.partition(negated, k - 1)[k - 1]
            rows = np.flatnonzero(negated <= kth)  # every score >= the k-th's (ties included)
        else:
            rows = np.arange(n)
        ids = self.table.take(self.positions[rows])
        ranked = sorted(zip(ids, self.values_[rows].tolist(), strict=True), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:k]


def mix_scores(graph: ScoreMap, dense: ScoreMap, graph_weight: float, dense_floor: float | None) -> ScoreMap:
    """``mix(min_max(graph, floor=0.0), min_max(dense, dense_floor), graph_weight)`` of
    ``retrieval.fusion`` over the union of both (same table), as arrays."""
    n = len(graph.table)
    g = np.zeros(n, dtype=np.float64)
    d = np.zeros(n, dtype=np.float64)
    g[graph.positions] = min_max(graph.values_, floor=0.0)
    d[dense.positions] = min_max(dense.values_, dense_floor)
    union = np.zeros(n, dtype=bool)
    union[graph.positions] = True
    union[dense.positions] = True
    positions = np.flatnonzero(union)
    values = graph_weight * g[positions] + (1.0 - graph_weight) * d[positions]
    return ScoreMap(graph.table, positions, values)


def score_maps(
    graph: Sequence[PassageScore], dense: Sequence[PassageScore]
) -> tuple[ScoreMap, ScoreMap] | None:
    """Both as :class:`ScoreMap` when both are array scores over one table, else None."""
    if isinstance(graph, PassageScores) and isinstance(dense, PassageScores) and graph.table is dense.table:
        return graph.by_id(), dense.by_id()
    return None


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
