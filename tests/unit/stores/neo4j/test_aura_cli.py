"""``hipporag-neo4j aura sessions list|delete`` as a user runs them (click's CliRunner, settings from the
environment), against the fake at our session interface (``FakeSessions``) or, where the translation of
the client's answers and errors is the point, the installed ``graphdatascience`` with its ``GdsSessions``
replaced. No Aura account is used.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hipporag_neo4j.cli.main import main
from hipporag_neo4j.stores.neo4j.aura import SessionSummary
from tests.support.aura_fakes import FakeSessions

pytestmark = pytest.mark.unit

OURS = "hipporag-neo4j-kb"  # session_name("neo4j", "kb")


class Sessions(FakeSessions):
    """The fake manager, with sessions that exist until deleted (``delete`` answers False otherwise)."""

    def __init__(self, *names: str) -> None:
        super().__init__()
        for name in names:
            self.get_or_create(name, "4GB", timedelta(minutes=60))

    def list(self) -> list[SessionSummary]:
        return [
            SessionSummary(s.name, s.memory, s.status, "2026-11-30 14:00:00", "1:00:00")
            for s in super().list()
        ]

    def delete(self, name: str) -> bool:
        self.deleted.append(name)
        if name not in self.names:
            return False
        i = self.names.index(name)
        del self.names[i], self.memories[i], self.ttls[i]
        return True


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """Aura API credentials and namespace ``kb`` in the environment, in a directory without a .env."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HIPPORAG_NAMESPACE", "kb")
    monkeypatch.setenv("HIPPORAG_NEO4J__AURA__CLIENT_ID", "client")
    monkeypatch.setenv("HIPPORAG_NEO4J__AURA__CLIENT_SECRET", "hunter2")
    return monkeypatch


def use(monkeypatch: pytest.MonkeyPatch, sessions: Sessions) -> None:
    """The store builds its session manager from the settings; hand it the fake instead."""
    from hipporag_neo4j.stores.neo4j import store

    monkeypatch.setattr(store, "AuraSessions", lambda settings: sessions)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_list_shows_every_session_and_marks_this_namespaces(env: pytest.MonkeyPatch) -> None:
    use(env, Sessions(OURS, "notebook-analysis"))
    code, out, _ = run("aura", "sessions", "list")
    assert code == 0
    assert f"* {OURS}  4GB  Ready  expires 2026-11-30 14:00:00, ttl 1:00:00" in out
    assert "  notebook-analysis  4GB  Ready" in out

    code, out, _ = run("--json", "aura", "sessions", "list")
    payload = json.loads(out)
    assert code == 0 and payload["this_namespace"] == OURS
    assert [(s["name"], s["this_namespace"]) for s in payload["sessions"]] == [
        (OURS, True),
        ("notebook-analysis", False),
    ]
    assert payload["sessions"][0]["memory"] == "4GB" and payload["sessions"][0]["ttl"] == "1:00:00"

    use(env, Sessions())
    code, out, _ = run("--namespace", "other", "aura", "sessions", "list")
    assert code == 0 and "no GDS sessions (this namespace's would be hipporag-neo4j-other)" in out


def test_delete_removes_this_namespaces_session_by_default(env: pytest.MonkeyPatch) -> None:
    sessions = Sessions(OURS, "notebook-analysis")
    use(env, sessions)
    code, out, _ = run("aura", "sessions", "delete")
    assert code == 0 and f"deleted GDS session {OURS}" in out
    assert sessions.deleted == [OURS] and sessions.names == ["notebook-analysis"]

    code, out, err = run("--json", "aura", "sessions", "delete")  # gone already
    assert code == 1 and json.loads(out) == {"session": OURS, "deleted": False}
    assert f"no GDS session named '{OURS}'" in err and "aura sessions list" in err


def test_delete_by_name_refuses_a_session_it_did_not_start_unless_forced(env: pytest.MonkeyPatch) -> None:
    sessions = Sessions(OURS, "notebook-analysis", "hipporag-neo4j-old")
    use(env, sessions)
    code, _, err = run("aura", "sessions", "delete", "notebook-analysis")
    assert code == 1 and "not started by hipporag-neo4j" in err and "--force" in err
    assert sessions.deleted == []

    code, out, _ = run("aura", "sessions", "delete", "hipporag-neo4j-old")
    assert code == 0 and "deleted GDS session hipporag-neo4j-old" in out
    code, out, _ = run("aura", "sessions", "delete", "--force", "notebook-analysis")
    assert code == 0 and sessions.names == [OURS]


def test_missing_credentials_or_extra_are_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("aura", "sessions", "list")
    assert code == 1 and out == ""
    assert "needs Aura API credentials" in err and "HIPPORAG_NEO4J__AURA__CLIENT_SECRET" in err

    monkeypatch.setenv("HIPPORAG_NEO4J__AURA__CLIENT_ID", "client")
    monkeypatch.setenv("HIPPORAG_NEO4J__AURA__CLIENT_SECRET", "hunter2")
    monkeypatch.setitem(sys.modules, "graphdatascience", None)  # as if the [aura] extra were not installed
    code, _, err = run("aura", "sessions", "delete")
    assert code == 1 and "pip install 'hipporag-neo4j[aura]'" in err and "hunter2" not in err


def test_the_client_answers_and_errors_reach_the_user(env: pytest.MonkeyPatch) -> None:
    """Through the real manager (:class:`AuraSessions`) with the client's ``GdsSessions`` replaced: its
    ``SessionInfo`` rows are listed, and an Aura API failure is one line naming what failed."""
    pytest.importorskip("graphdatascience", reason="the [aura] extra is not installed")
    import graphdatascience.session as client

    calls: dict[str, Any] = {}

    class GdsSessions:
        def __init__(self, api_credentials: Any) -> None:
            calls["client_id"] = api_credentials.client_id

        def list(self) -> list[Any]:
            created = datetime(2026, 11, 23, 14, 0)
            return [
                client.SessionInfo(
                    "id1", OURS, client.SessionMemory.m_8GB.value, "inst", "Ready",
                    datetime(2026, 11, 30, 14, 0), created, "user", None, timedelta(minutes=45),
                )
            ]  # fmt: skip

        def delete(self, session_name: str) -> bool:
            raise RuntimeError("401 Unauthorized: invalid client credentials")

    env.setattr(client, "GdsSessions", GdsSessions)
    code, out, _ = run("--json", "aura", "sessions", "list")
    assert code == 0 and calls["client_id"] == "client"
    (row,) = json.loads(out)["sessions"]
    assert row == {
        "name": OURS,
        "memory": "8GB",
        "status": "Ready",
        "expiry": "2026-11-30 14:00:00",
        "ttl": "0:45:00",
        "this_namespace": True,
    }
    code, _, err = run("aura", "sessions", "delete")
    assert code == 1
    assert f"Aura API: deleting GDS session {OURS} failed: 401 Unauthorized" in err


def test_doctor_checks_the_aura_api_when_the_aura_engine_is_chosen(env: pytest.MonkeyPatch) -> None:
    """``doctor`` with neo4j.ppr_engine=aura adds an ``aura`` check: the API answers the credentials, and
    whether this namespace's session runs (listed, never started)."""
    import neo4j

    from hipporag_neo4j.diagnostics import doctor
    from hipporag_neo4j.errors import StoreError
    from hipporag_neo4j.settings import load_settings
    from tests.support.neo4j_fake import FakeDriver, server

    driver = server(FakeDriver(), version="5.27-aura", edition="enterprise", gds=None)
    env.setattr(neo4j.GraphDatabase, "driver", lambda *a, **k: driver)
    env.setenv("HIPPORAG_NEO4J_URI", "neo4j+s://abcd1234.databases.neo4j.io")
    env.setenv("HIPPORAG_NEO4J__PPR_ENGINE", "aura")
    sessions = Sessions(OURS)
    use(env, sessions)
    _, out, _ = run("--json", "doctor")  # exit code: also the embedding and spaCy checks
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert checks["store"]["status"] == "ok" and "PPR engine: aura" in checks["store"]["detail"]
    assert checks["aura"]["status"] == "ok", checks["aura"]
    assert f"session {OURS} is Ready (4GB, expires 2026-11-30 14:00:00)" in checks["aura"]["detail"]
    assert sessions.names == [OURS]  # nothing started, nothing deleted

    settings = load_settings()
    use(env, Sessions())
    idle = doctor._check("aura", lambda: doctor._aura(settings))
    assert idle["status"] == "ok" and "is not running: the first query starts it" in idle["detail"]

    class Refused(Sessions):
        def list(self) -> list[SessionSummary]:
            raise StoreError("Aura API: listing GDS sessions failed: 401 Unauthorized")

    use(env, Refused())
    refused = doctor._check("aura", lambda: doctor._aura(settings))
    assert refused["status"] == "error" and "401 Unauthorized" in refused["detail"]
