"""A real neo4j driver that records what the store sends, for the live tests (tests/neo4j/).

:class:`RecordingDriver` wraps the driver a live store uses: every statement is recorded by its shipped
``.cypher`` file name (as :class:`~tests.support.neo4j_fake.FakeDriver` names them), with its parameters,
transaction and access mode, and each result is read whole before the statement returns. So the hooks of
``after_statement`` (a callback per statement name) run between two statements of one transaction on the
real server: a write another store commits there is what a concurrent writer does, and Neo4j's READ
COMMITTED decides what the next statement of the reading transaction sees. This is how the live tests
put a commit between two reads of one query, or a projection dropped by another process, on demand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import neo4j

from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.driver import open_driver
from tests.support.neo4j_fake import SPLICED, statement_names


@dataclass
class LiveCall:
    name: str
    params: dict[str, Any]
    tx: int
    access_mode: str | None


class _Result:
    """A result read whole: ``keys``/``values``/``data`` as the runner uses them, and iteration."""

    def __init__(self, result: neo4j.Result) -> None:
        self._keys = tuple(result.keys())
        self._records = list(result)

    def keys(self) -> tuple[str, ...]:
        return self._keys

    def values(self) -> list[list[Any]]:
        return [list(r.values()) for r in self._records]

    def data(self) -> list[dict[str, Any]]:
        return [r.data() for r in self._records]

    def single(self) -> neo4j.Record | None:
        return self._records[0] if self._records else None

    def __iter__(self) -> Iterator[neo4j.Record]:
        return iter(self._records)


class _Transaction:
    def __init__(self, owner: RecordingDriver, tx: Any, number: int, access_mode: str | None) -> None:
        self._owner, self._tx, self._number, self._access_mode = owner, tx, number, access_mode

    def run(self, query: str, parameters: dict[str, Any] | None = None, **kw: Any) -> _Result:
        name = self._owner.name_of(query)
        params = dict(parameters or {}, **kw)
        self._owner.calls.append(LiveCall(name, params, self._number, self._access_mode))
        result = _Result(self._tx.run(query, params))
        for hook in list(self._owner.after_statement):
            hook(name)
        return result

    def __getattr__(self, attr: str) -> Any:  # commit, rollback, close, closed
        return getattr(self._tx, attr)

    def __enter__(self) -> _Transaction:
        return self

    def __exit__(self, *exc: object) -> None:
        self._tx.__exit__(*exc)


class _Session:
    def __init__(self, owner: RecordingDriver, session: neo4j.Session, access_mode: str | None) -> None:
        self._owner, self._session, self._access_mode = owner, session, access_mode

    def begin_transaction(self, **kw: Any) -> _Transaction:
        self._owner.next_tx += 1
        return _Transaction(
            self._owner, self._session.begin_transaction(**kw), self._owner.next_tx, self._access_mode
        )

    def run(self, query: str, parameters: dict[str, Any] | None = None, **kw: Any) -> _Result:
        """An auto-commit transaction (``CALL ... IN TRANSACTIONS`` statements)."""
        self._owner.next_tx += 1
        name = self._owner.name_of(query)
        params = dict(parameters or {}, **kw)
        self._owner.calls.append(LiveCall(name, params, self._owner.next_tx, self._access_mode))
        result = _Result(self._session.run(query, params))
        for hook in list(self._owner.after_statement):
            hook(name)
        return result

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._session, attr)

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self._session.__exit__(*exc)


@dataclass
class RecordingDriver:
    """The wrapped driver; ``calls`` is every statement run through it, in order."""

    driver: neo4j.Driver
    calls: list[LiveCall] = field(default_factory=list)
    after_statement: list[Callable[[str], None]] = field(default_factory=list)
    next_tx: int = 0
    names: dict[str, str] = field(default_factory=statement_names)

    def name_of(self, query: str) -> str:
        name = self.names.get(query) or self.names.get(SPLICED.sub("DIM", query))
        if name is None:
            raise AssertionError(f"not one of the shipped Cypher statements:\n{query}")
        return name

    def session(self, **kw: Any) -> _Session:
        return _Session(self, self.driver.session(**kw), kw.get("default_access_mode"))

    def named(self, name: str) -> list[LiveCall]:
        return [c for c in self.calls if c.name == name]

    def counts(self) -> Counter[str]:
        return Counter(c.name for c in self.calls)

    def after(self, name: str, action: Callable[[], None], times: int = 1) -> list[int]:
        """Run ``action`` after the next ``times`` statements named ``name``; returns the list the
        hook appends the count of its runs to (so a test can see that it ran)."""
        ran: list[int] = []

        def hook(statement: str) -> None:
            if statement == name and len(ran) < times:
                ran.append(len(ran) + 1)
                action()

        self.after_statement.append(hook)
        return ran

    def __getattr__(self, attr: str) -> Any:  # verify_connectivity, close, ...
        return getattr(self.driver, attr)


def recorded_store(settings: Neo4jSettings, model: str, dim: int) -> tuple[Neo4jStore, RecordingDriver]:
    """A live store opened through a :class:`RecordingDriver` (the calls of ``open`` are cleared)."""
    auth = (settings.user, settings.password.get_secret_value())
    driver = RecordingDriver(
        open_driver(settings.uri or "", auth, warn_notifications=settings.warn_notifications)
    )
    store = Neo4jStore(settings, driver=driver)  # type: ignore[arg-type]
    store.open(model, dim)
    driver.calls.clear()
    return store, driver
