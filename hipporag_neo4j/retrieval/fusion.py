"""Passage scores in retrieval, and their fusion: min-max normalise and mix (HippoRAG appendix F.2
ensembles), fuse by rank (hipporag2), the best k.

Retrieval holds every passage score as one type, :class:`ScoreMap`: scores keyed by passage id, held as
arrays over a table of ids. What a store returns is taken into it once (:meth:`ScoreMap.of`): the array
scores of the in-process engines (:class:`~hipporag_neo4j.stores.memory.scores.PassageScores`, over the
store's own table of every passage) as they are, a plain list (Neo4j's GDS engines) over a small table of
its own ids (:class:`IdList`). Every operation below is a few numpy operations over it whichever store
answered, with the float values Python floats would give: the same IEEE operations in the same order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from hipporag_neo4j.stores.base import PassageScore
from hipporag_neo4j.stores.memory.scores import Explain, IdTable, PassageScores


class IdList:
    """A table of passage ids by position (each id once), for scores a store gave as a plain list."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids = list(ids)
        self.index = {pid: i for i, pid in enumerate(self.ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, positions: Sequence[int] | npt.NDArray[np.intp]) -> list[str]:
        ids = self.ids
        return [ids[int(i)] for i in positions]

    def find_many(self, values: Sequence[str]) -> list[int | None]:
        index = self.index
        return [index.get(v) for v in values]


class ScoreMap(Mapping[str, float]):
    """Passage scores by id over ``table``: ``values`` at ``positions`` (each once), in the order given (a
    store's scores: best first). ``explain``: the ``top_phrases`` of a position, worked out when read
    (:meth:`rows`). Looked up one id at a time; iterating reads every id, in order (a dict made once);
    :meth:`top` ranks without a dict."""

    def __init__(
        self,
        table: IdTable,
        positions: npt.NDArray[np.intp],
        values: npt.NDArray[np.float64],
        explain: Explain | None = None,
    ) -> None:
        self.table = table
        self.positions = positions
        self.values_ = values
        self.explain = explain
        self._dict: dict[str, float] | None = None

    @classmethod
    def of(cls, scores: Sequence[PassageScore]) -> ScoreMap:
        """A store's scores (best first) as a map in the same order: array scores over their table as
        they are; a plain list over a table of its ids (an id given twice: its first row)."""
        if isinstance(scores, PassageScores):
            return cls(scores.table, scores.positions, scores.scores, scores.explain)
        index: dict[str, int] = {}
        rows: list[PassageScore] = []
        for p in scores:
            if index.setdefault(p.passage_id, len(index)) == len(rows):
                rows.append(p)
        values = np.array([p.score for p in rows], dtype=np.float64)

        def explain(position: int) -> list[tuple[str, float]]:
            return rows[position].top_phrases

        return cls(IdList(list(index)), np.arange(len(rows), dtype=np.intp), values, explain)

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

    def __repr__(self) -> str:
        return f"ScoreMap({len(self)} passages)"

    def ids(self) -> list[str]:
        """The passage ids, in order."""
        return self.table.take(self.positions)

    def take(self, rows: npt.NDArray[np.intp]) -> ScoreMap:
        """The scores at ``rows`` (indices into the order held), in that order."""
        return ScoreMap(self.table, self.positions[rows], self.values_[rows], self.explain)

    def rows(self, passage_ids: Sequence[str]) -> dict[str, PassageScore]:
        """The scores of those of ``passage_ids`` held here, by id, each with its ``top_phrases``."""
        return PassageScores(self.table, self.positions, self.values_, self.explain).of(passage_ids)

    def with_values(self, values: npt.NDArray[np.float64]) -> ScoreMap:
        """Other scores of the same passages."""
        return ScoreMap(self.table, self.positions, values)

    def over(self, table: IdTable) -> ScoreMap:
        """The same scores over ``table``, which holds every id of this map."""
        found = table.find_many(self.ids())
        return ScoreMap(table, np.array(found, dtype=np.intp), self.values_)

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


NO_SCORES = ScoreMap.of([])  # (read only, as every ScoreMap)


def floor_below(dense: ScoreMap, n_passages: int) -> float | None:
    """The normalisation floor of dense scores: None when they hold every one of the ``n_passages``, else
    their minimum (those of the passages left out are below it; empty: None)."""
    if len(dense) >= n_passages or not len(dense):
        return None
    return float(dense.values_.min())


def one_table(a: ScoreMap, b: ScoreMap) -> tuple[ScoreMap, ScoreMap]:
    """Both over one table: as they are when they share one (a store's array scores), else over the union
    of their ids (plain lists: a table of their own each)."""
    if a.table is b.table:
        return a, b
    union = IdList(list(dict.fromkeys([*a.ids(), *b.ids()])))
    return a.over(union), b.over(union)


def min_max_values(values: npt.NDArray[np.float64], floor: float | None = None) -> npt.NDArray[np.float64]:
    """Scaled to [0, 1] between ``floor`` (or the minimum) and the maximum; all equal: 1.0 when positive,
    else 0.0."""
    if not len(values):
        return values
    low = float(values.min()) if floor is None else min(floor, float(values.min()))
    high = float(values.max())
    if high <= low:
        return np.full(len(values), 1.0 if high > 0 else 0.0)
    normalised: npt.NDArray[np.float64] = (values - low) / (high - low)
    return normalised


def min_max(scores: ScoreMap, floor: float | None = None) -> ScoreMap:
    """Scale to [0, 1]. ``floor`` is the minimum over passages not in ``scores`` (0 for graph scores of
    passages the walk never reached); all-equal scores map to 1.0 when positive, else 0.0."""
    return scores.with_values(min_max_values(scores.values_, floor))


def mix(graph: ScoreMap, dense: ScoreMap, graph_weight: float) -> ScoreMap:
    """graph_weight * graph + (1 - graph_weight) * dense over the union; a missing score counts as 0."""
    graph, dense = one_table(graph, dense)
    n = len(graph.table)
    g = np.zeros(n, dtype=np.float64)
    d = np.zeros(n, dtype=np.float64)
    g[graph.positions] = graph.values_
    d[dense.positions] = dense.values_
    union = np.zeros(n, dtype=bool)
    union[graph.positions] = True
    union[dense.positions] = True
    positions = np.flatnonzero(union)
    values = graph_weight * g[positions] + (1.0 - graph_weight) * d[positions]
    return ScoreMap(graph.table, positions, values)


RRF_K = 60  # reciprocal-rank constant (Cormack et al. 2009): damps the weight of the very first ranks


def ranks(scores: ScoreMap) -> npt.NDArray[np.int64]:
    """1-based ranks of the passages in the order held, highest score first, ties by id."""
    ids, values = scores.ids(), scores.values_.tolist()
    order = sorted(range(len(ids)), key=lambda i: (-values[i], ids[i]))
    ranked = np.zeros(len(ids), dtype=np.int64)
    ranked[order] = np.arange(1, len(ids) + 1, dtype=np.int64)
    return ranked


def rank_fusion(graph: ScoreMap, dense: ScoreMap, graph_weight: float, k: int = RRF_K) -> ScoreMap:
    """Weighted reciprocal-rank fusion: graph_weight / (k + graph rank) + (1 - graph_weight) / (k + dense
    rank). Only ranks count, so the heavy tail of PPR scores cannot drown the dense ranking (or the reverse);
    a passage missing from one list ranks just after its last entry there."""
    graph, dense = one_table(graph, dense)
    n = len(graph.table)
    g = np.full(n, len(graph) + 1, dtype=np.int64)
    d = np.full(n, len(dense) + 1, dtype=np.int64)
    g[graph.positions] = ranks(graph)
    d[dense.positions] = ranks(dense)
    union = np.zeros(n, dtype=bool)
    union[graph.positions] = True
    union[dense.positions] = True
    positions = np.flatnonzero(union)
    values = graph_weight / (k + g[positions]) + (1.0 - graph_weight) / (k + d[positions])
    return ScoreMap(graph.table, positions, values)
