"""The parts of one graph version on the embedded store, for :class:`~.memory.view.MemoryView`: its
snapshot (phrases, graph, passage vectors; the fact index read on first use), the IVF indexes of large
matrices, and the passage rows and exact names read from SQLite."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from hipporag_neo4j.graph.joined import JoinedMatrix
from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import GraphJoin, Matrix, PhraseHit
from hipporag_neo4j.stores.memory.graph import FactIndex, GraphSnapshot, PhraseIndex
from hipporag_neo4j.stores.memory.queries import Candidates
from hipporag_neo4j.stores.memory.strings import StringTable


class SnapshotStore(Protocol):
    """What the parts ask of the embedded store beside its snapshot (``EmbeddedStore``)."""

    @property
    def cache_lock(self) -> AbstractContextManager[Any]: ...

    def candidates(self, kind: str, matrix: Matrix) -> Candidates | None: ...

    def fact_index(self, graph: GraphSnapshot) -> FactIndex: ...

    def joined(self, graph: GraphSnapshot, join: GraphJoin, with_passages: bool) -> JoinedMatrix: ...

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]: ...

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]: ...

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]: ...


class SnapshotParts:
    """The snapshot ``graph`` of graph ``version`` and the store it came from."""

    def __init__(self, store: SnapshotStore, graph: GraphSnapshot, version: int) -> None:
        self.store = store
        self.snapshot = graph
        self._version = version

    @property
    def version(self) -> int:
        return self._version

    def _counts(self, phrase_ids: set[str]) -> Mapping[str, int]:
        graph = self.snapshot
        found = {pid: graph.phrases.position(pid) for pid in phrase_ids}
        return {pid: int(graph.passage_counts[i]) for pid, i in found.items() if i is not None}

    def phrases(self) -> tuple[PhraseIndex, Callable[[set[str]], Mapping[str, int]]]:
        return self.snapshot.phrases, self._counts

    def graph(self) -> tuple[GraphSnapshot, AbstractContextManager[Any]]:
        return self.snapshot, self.store.cache_lock

    def facts(self) -> tuple[FactIndex, PhraseIndex]:
        return self.store.fact_index(self.snapshot), self.snapshot.phrases

    def dense(self) -> tuple[StringTable, Matrix]:
        return self.snapshot.passage_ids, self.snapshot.passage_vectors

    def candidates(self, kind: str, matrix: Matrix) -> Candidates | None:
        return self.store.candidates(kind, matrix)

    def joined(self, graph: GraphSnapshot, join: GraphJoin, with_passages: bool) -> JoinedMatrix:
        return self.store.joined(graph, join, with_passages)

    def phrases_by_name(self, names: Sequence[str]) -> dict[str, PhraseHit]:
        return self.store.phrases_by_name(names)

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        return self.store.get_passages(ids)

    def passage_titles(self, ids: Sequence[str]) -> dict[str, str | None]:
        return self.store.passage_titles(ids)

    def passage_count(self) -> int:
        return len(self.snapshot.passage_ids)
