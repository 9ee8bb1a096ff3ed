"""A write held in the middle of its store writes, and readers asking meanwhile (issue 36, part 2).

:class:`HeldStore` wraps a store for a :class:`~hipporag_neo4j.service.KnowledgeService`: once armed, the
next ``write_synonyms`` that writes edges waits at a gate (the write step has committed its passages and
is inside its store writes). :func:`query_during_a_held_write` checks on any store that a query and a
stats call issued then return while the write is still held, from the last committed graph version.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hipporag_neo4j.service import KnowledgeService
from hipporag_neo4j.settings import Settings
from tests.support.fakes import FixedQueryNER, HashEmbedder, TableExtractor
from tests.support.server_support import chain_corpus

WAIT = 120.0
QUERY = "what about entity 5?"


class HeldStore:
    """``store`` with its next edge-writing ``write_synonyms`` after :meth:`arm` held until :attr:`release`.
    Everything else (reads, ``another`` on the embedded store) passes through."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.armed = False
        self.entered = threading.Event()
        self.release = threading.Event()

    def arm(self) -> None:
        self.armed = True

    def write_synonyms(self, edges: Any, *args: Any, **kwargs: Any) -> int:
        if edges and self.armed:
            self.armed = False
            self.entered.set()
            if not self.release.wait(WAIT):
                raise TimeoutError("the test never released the held write")
        return int(self._store.write_synonyms(edges, *args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def query_during_a_held_write(settings: Settings, store: Any, dim: int = 16) -> None:
    """Index chunk 1, then hold chunk 2's step between its passages and its synonym edges; a query and a
    stats call made then must return before the write ends and see chunk 2's passages (committed), not
    yet its edges; after the release the edges are there."""
    passages, table = chain_corpus(8, variants_from=4)  # chunk 2 names variants of chunk 1's phrases
    held = HeldStore(store)
    service = KnowledgeService(
        settings,
        store=held,  # type: ignore[arg-type]
        embedder=HashEmbedder(dim),
        extractor=TableExtractor(table),
        query_ner=FixedQueryNER({QUERY: ["entity 5"]}),
    )
    try:
        assert service.index(passages[:4]).new_synonym_edges == 0
        held.arm()
        with ThreadPoolExecutor(3) as pool:
            writing = pool.submit(service.index, passages[4:])
            assert held.entered.wait(WAIT), "the write never reached its synonym edges"
            try:
                asked = pool.submit(service.retrieve, QUERY, top_k=2)
                counted = pool.submit(service.stats)
                found = [item.passage.id for item in asked.result(timeout=WAIT).passages]
                stats = counted.result(timeout=WAIT)
                assert not writing.done(), "the write ended before the readers answered"
            finally:
                held.release.set()
            report = writing.result(timeout=WAIT)
        assert "p005" in found, found  # chunk 2's passages are committed and found
        assert (stats.passages, stats.synonym_edges) == (8, 0)  # its edges are not committed yet
        assert report.new_synonym_edges > 0
        final = service.stats()
        assert (final.passages, final.synonym_edges) == (8, report.new_synonym_edges)
    finally:
        held.release.set()
        service.close()
