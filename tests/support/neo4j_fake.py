"""A recorded-result fake of the slice of the neo4j driver the store uses.

``driver.session(database=..., default_access_mode=..., bookmark_manager=...)`` ->
``session.begin_transaction()`` -> ``tx.run(text, params).data()`` / ``tx.commit()``. Each statement text
is mapped back to its ``.cypher`` file name; what it returns is programmed per name with
:meth:`FakeDriver.on`: a list of records, an exception to raise, or a function of the parameters. Every
call is recorded with its transaction, so tests assert what ran, in which transaction, with which
parameters, and what was committed.

Causal consistency is modelled the way a cluster behaves: each committed write transaction mints a
bookmark; a read transaction whose session did not start from the latest write's bookmark may be served
by a follower that has not applied it, and its calls are recorded with ``causal=False``. Sessions that
share a bookmark manager (``neo4j.GraphDatabase.bookmark_manager()``) carry the bookmarks forward.

What a live server computes is tested on one (tests/neo4j/, through :mod:`tests.support.live_driver`,
which names the statements as this fake does); :mod:`tests.support.neo4j_emulation` computes the graph
reads of the Aura tests only (no Aura account here).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hipporag_neo4j.stores.neo4j.cypher import load_script, query_names

Records = list[dict[str, Any]]
#: A per-dimension name as the store splices it (hipporag_phrase_embedding_384, PhraseEmbedding384).
SPLICED = re.compile(r"(?<=[A-Za-z]_embedding_)\d+\b|(?<=[A-Za-z]Embedding)\d+\b")
Response = Records | BaseException | Callable[[dict[str, Any]], Records]


def statement_names() -> dict[str, str]:
    """Statement text -> file name (``name`` or ``name#i`` for the i-th statement of a script)."""
    names: dict[str, str] = {}
    for name in query_names():
        script = load_script(name)
        for i, query in enumerate(script):
            names[query.text] = name if len(script) == 1 else f"{name}#{i}"
    return names


@dataclass
class Call:
    name: str
    params: dict[str, Any]
    tx: int
    access_mode: str | None
    database: str | None
    causal: bool = True  # False: a read that may have seen a follower behind the latest write


@dataclass
class FakeResult:
    records: Records

    def data(self) -> Records:
        return [dict(r) for r in self.records]

    def keys(self) -> tuple[str, ...]:
        return tuple(self.records[0]) if self.records else ()

    def values(self) -> list[list[Any]]:
        return [list(r.values()) for r in self.records]


@dataclass
class FakeTransaction:
    driver: FakeDriver
    id: int
    access_mode: str | None
    database: str | None
    session: FakeSession | None = None
    bookmarks: frozenset[str] = frozenset()  # what the session started this transaction from
    state: str = "open"

    @property
    def causal(self) -> bool:
        latest = self.driver.latest_write_bookmark
        return self.access_mode == "WRITE" or latest is None or latest in self.bookmarks

    def run(self, query: str, parameters: dict[str, Any] | None = None, **kw: Any) -> FakeResult:
        assert self.state == "open", f"run on a {self.state} transaction"
        name = self.driver.names.get(query)
        if name is None:  # a statement with a dimension spliced into its per-dimension names
            name = self.driver.names.get(SPLICED.sub("DIM", query))
            if name is not None:
                self.driver.spliced.append((name, query))
        if name is None:
            raise AssertionError(f"not one of the shipped Cypher statements:\n{query}")
        params = dict(parameters or {}, **kw)
        self.driver.calls.append(
            Call(name, params, self.id, self.access_mode, self.database, causal=self.causal)
        )
        return FakeResult(self.driver.respond(name, params))

    def commit(self) -> None:
        assert self.state == "open"
        self.state = "committed"
        self.driver.committed.append(self.id)
        if self.access_mode == "WRITE":
            self.driver.bookmark_count += 1
            bookmark = f"fake:bookmark:{self.driver.bookmark_count}"
            self.driver.latest_write_bookmark = bookmark
            if self.session is not None and self.session.bookmark_manager is not None:
                self.session.bookmark_manager.update_bookmarks(self.bookmarks, [bookmark])

    def rollback(self) -> None:
        if self.state == "open":
            self.state = "rolled back"
            self.driver.rolled_back.append(self.id)

    def close(self) -> None:
        self.rollback()

    def __enter__(self) -> FakeTransaction:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class FakeSession:
    driver: FakeDriver
    database: str | None
    access_mode: str | None
    bookmark_manager: Any = None

    def begin_transaction(self, **kw: Any) -> FakeTransaction:
        self.driver.next_tx += 1
        bookmarks = frozenset(self.bookmark_manager.get_bookmarks()) if self.bookmark_manager else frozenset()
        self.driver.sessions_bookmark_managers.append(self.bookmark_manager)
        return FakeTransaction(
            self.driver, self.driver.next_tx, self.access_mode, self.database, self, bookmarks
        )

    def run(self, query: str, parameters: dict[str, Any] | None = None, **kw: Any) -> FakeResult:
        """An auto-commit transaction: one statement, committed when it succeeds."""
        tx = self.begin_transaction()
        try:
            result = tx.run(query, parameters, **kw)
        except BaseException:
            tx.rollback()
            raise
        tx.commit()
        return result

    def close(self) -> None:
        pass

    def __enter__(self) -> FakeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class FakeDriver:
    calls: list[Call] = field(default_factory=list)
    committed: list[int] = field(default_factory=list)
    rolled_back: list[int] = field(default_factory=list)
    next_tx: int = 0
    closed: bool = False
    names: dict[str, str] = field(default_factory=statement_names)
    responses: dict[str, list[Response]] = field(default_factory=dict)
    bookmark_count: int = 0
    latest_write_bookmark: str | None = None
    sessions_bookmark_managers: list[Any] = field(default_factory=list)
    spliced: list[tuple[str, str]] = field(default_factory=list)  # (name, text) of spliced statements

    def on(self, name: str, *responses: Response) -> FakeDriver:
        """Program ``name``'s results: used in order, the last one for every later call."""
        assert name in self.names.values(), f"unknown statement {name}"
        self.responses[name] = list(responses)
        return self

    def respond(self, name: str, params: dict[str, Any]) -> Records:
        queue = self.responses.get(name)
        if not queue:
            return []
        response = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(response, BaseException):
            raise response
        if callable(response):
            return response(params)
        return response

    def session(
        self,
        database: str | None = None,
        default_access_mode: str | None = None,
        bookmark_manager: Any = None,
        **kw: Any,
    ) -> FakeSession:
        return FakeSession(self, database, default_access_mode, bookmark_manager)

    def verify_connectivity(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    # --- helpers for assertions ---------------------------------------------------------------
    def named(self, name: str) -> list[Call]:
        return [c for c in self.calls if c.name == name]

    def names_run(self) -> list[str]:
        return [c.name for c in self.calls]


def server(
    driver: FakeDriver,
    *,
    version: str = "5.26.0",
    edition: str = "community",
    gds: str | None = "2.13.2",
    apoc: str | None = None,
) -> FakeDriver:
    """Program the capability queries of a server."""
    driver.on("server_components", [{"name": "Neo4j Kernel", "versions": [version], "edition": edition}])
    plugins = [{"name": n} for n, v in (("gds.version", gds), ("apoc.version", apoc)) if v]
    driver.on("server_plugins", plugins)
    if gds:
        driver.on("server_gds_version", [{"version": gds}])
    if apoc:
        driver.on("server_apoc_version", [{"version": apoc}])
    return driver
