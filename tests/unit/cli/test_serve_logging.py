"""``serve`` on Neo4j logged nine driver notices of about 1 kB at every start (issue 37 item 6): the
driver logs a server's INFORMATION notification at INFO on ``neo4j.notifications``, and ``serve`` logs at
INFO; the server's log now keeps that logger at WARNING (a WARNING notification, a deprecation, still
shows)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

NOTIFICATIONS = "neo4j.notifications"  # the driver's logger (checked below against the installed driver)

pytestmark = pytest.mark.unit


@pytest.fixture
def restore_logging() -> Iterator[None]:
    notifications = logging.getLogger(NOTIFICATIONS)
    root = logging.getLogger()
    levels, handlers = (notifications.level, root.level), list(root.handlers)
    yield
    notifications.setLevel(levels[0])
    root.setLevel(levels[1])
    root.handlers[:] = handlers


def test_the_driver_logs_notifications_where_serve_quiets_them() -> None:
    """The fact the setting rests on, read from the installed driver: its notification logger's name."""
    from neo4j._async.work import result

    assert result.notification_log.name == NOTIFICATIONS


def test_serve_keeps_driver_notifications_out_of_its_info_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, restore_logging: None
) -> None:
    pytest.importorskip("uvicorn")
    import uvicorn

    import hipporag_neo4j.server.app as app
    from hipporag_neo4j.cli.main import main

    ran: list[Any] = []
    monkeypatch.setattr(app, "create_app", lambda settings: object())
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: ran.append(args))
    # as a fresh process has it: no handler on the root logger (pytest's are put back after), so the
    # server's logging.basicConfig takes effect
    logging.getLogger(NOTIFICATIONS).setLevel(logging.NOTSET)
    logging.getLogger().handlers.clear()
    result = CliRunner().invoke(
        main, ["--store", str(tmp_path / "s"), "serve", "--create", "--no-auth", "--port", "0"]
    )
    assert result.exit_code == 0, result.output
    assert ran, "uvicorn.run was not reached"
    notifications = logging.getLogger(NOTIFICATIONS)
    assert not notifications.isEnabledFor(logging.INFO)  # "index or constraint already exists" and the like
    assert notifications.isEnabledFor(logging.WARNING)  # deprecations and other warnings still show
    assert logging.getLogger("hipporag_neo4j").isEnabledFor(logging.INFO)  # the server's own log at INFO
