"""The suite is hermetic towards a user's Neo4j (issue 36, part 1), live.

1. A user who sourced ``neo4j.env`` (``HIPPORAG_NEO4J_URI``, ``..._PASSWORD``) and keeps a ``.env`` and a
   ``hipporag.toml`` naming the same server in the directory they run pytest from: a pytest of the
   suite's own tests whose module- and session-scoped fixtures build stores from the settings
   (:data:`FIXTURE_TESTS`) leaves that database exactly as it was (counts in all, per label and per
   relationship type, the namespaces in it, indexes, constraints, GDS projections). The session's
   test server stands for the user's database. Before issue 36 the module-scoped ``demo_store`` of the
   explorer tests wrote 455 nodes into it.
   A namespace a module-scoped fixture made and left is deleted at the session's end.
2. A run stopped from outside stops the servers it started: a pytest that started its own server
   (``HIPPORAG_TEST_NEO4J_PAIR``) gets SIGTERM once the server answers; the server's JVM is gone when
   the run has ended, its ports closed, its home removed, and the run ended by SIGTERM. With ``kill -9``
   (no handler runs) the watcher ``scripts/neo4j_server.py`` started beside the server stops it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.settings import load_settings
from tests.support import neo4j_support
from tests.support.neo4j_support import (
    START_TIMEOUT,
    database_snapshot,
    neo4j_server_or_skip,
    neo4j_settings_or_skip,
    random_namespace,
    run_cypher,
)

REPO = Path(__file__).resolve().parents[2]
PAIR = os.environ.get("HIPPORAG_TEST_NEO4J_PAIR")
#: Set (to a file name) only in the pytest that :func:`test_a_run_stopped_from_outside_stops_its_server`
#: starts: the held test writes the server it got into the file, then waits to be stopped.
HOLD = "HIPPORAG_TEST_HERMETIC_HOLD"

#: Tests of the suite whose module-scoped fixtures make a store from the settings the environment and the
#: working directory give: with the user's HIPPORAG_NEO4J_URI they would index into the user's database.
FIXTURE_TESTS = [
    # demo_store (module): load_settings() + HippoRAG, index_openie, import_graph, link, index
    "tests/integration/test_explorer.py::test_embedded_store_explorer_reads",
    # store (module): the CLI in process, ``index`` of three notes (real embedder, spaCy)
    "tests/integration/test_query_many.py::test_several_questions_as_arguments_print_json_lines_in_order",
    # indexed_store (module): the CLI, ``index --openie``
    "tests/integration/test_newcomer_defects.py::test_stats_and_reembed_print_readable_lines",
    # the session-scoped fixture below
    "tests/neo4j/test_neo4j_hermetic.py::test_a_session_scoped_fixture_sees_no_user_setting",
]


# --- 1. the user's database is left alone -------------------------------------------------------------
@pytest.fixture(scope="session")
def settings_of_a_session_fixture() -> dict[str, Any]:
    """What a session-scoped fixture gets from :func:`load_settings` (the environment, ``.env`` and
    ``hipporag.toml`` of the working directory)."""
    settings = load_settings()
    return {
        "backend": settings.backend,
        "neo4j_uri": settings.neo4j.uri,
        "sources": settings.sources(),
        "cwd": sorted(os.listdir(".")),
    }


def test_a_session_scoped_fixture_sees_no_user_setting(settings_of_a_session_fixture: dict[str, Any]) -> None:
    seen = settings_of_a_session_fixture
    assert seen["sources"] == {}, f"a session-scoped fixture saw the user's settings: {seen}"
    assert seen["backend"] == "embedded" and seen["neo4j_uri"] is None, seen
    assert not {".env", "hipporag.toml"} & set(seen["cwd"]), seen


def namespaces_in(server: tuple[str, str, str, str]) -> dict[str, int]:
    """Nodes per ``namespace`` property in the whole database."""
    query = "MATCH (n) WITH properties(n)['namespace'] AS ns WHERE ns IS NOT NULL RETURN ns, count(*) AS n"
    rows = run_cypher(server, query)  # (a map lookup: no warning where no node has the property yet)
    return {str(r["ns"]): int(r["n"]) for r in rows}


def pytest_command(*tests: str) -> list[str]:
    """A pytest of the repository's own configuration over ``tests`` (paths from the repository root),
    whatever directory it runs in."""
    paths = [str(REPO / test) for test in tests]
    return [
        sys.executable,
        *("-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(REPO)),
        *("-c", str(REPO / "pyproject.toml"), *paths),
    ]


def without_test_servers(environ: dict[str, str]) -> dict[str, str]:
    """The environment without the variables that name or start a test server (HIPPORAG_TEST_NEO4J_*)
    and without any product setting; PYTHONPATH on this checkout."""
    kept = {k: v for k, v in environ.items() if not k.upper().startswith("HIPPORAG_")}
    kept |= {k: v for k, v in environ.items() if k.upper().startswith("HIPPORAG_TEST_")}
    kept = {k: v for k, v in kept.items() if not k.upper().startswith("HIPPORAG_TEST_NEO4J_")}
    return kept | {"PYTHONPATH": str(REPO)}


def test_the_suite_leaves_the_database_of_the_users_environment_unchanged(tmp_path: Path) -> None:
    server = neo4j_server_or_skip()
    uri, user, password, database = server
    # some data of the user's (deleted at the end of this test like any test namespace)
    mine = random_namespace()
    note = f"(:Note_{mine} {{note: $note}})"
    run_cypher(server, f"CREATE {note}-[:LINKS_{mine}]->{note}", note=f"user-{mine}")
    # the user's shell (source neo4j.env) and the directory they run pytest from
    env = without_test_servers(dict(os.environ)) | {
        "HIPPORAG_NEO4J_URI": uri,
        "HIPPORAG_NEO4J_USER": user,
        "HIPPORAG_NEO4J_PASSWORD": password,
        "HIPPORAG_NEO4J_DATABASE": database,
    }
    cwd = tmp_path / "user"
    cwd.mkdir()
    (cwd / ".env").write_text(
        f"HIPPORAG_NEO4J_URI={uri}\nHIPPORAG_NEO4J_USER={user}\nHIPPORAG_NEO4J_PASSWORD={password}\n"
    )
    (cwd / "hipporag.toml").write_text(
        f'[neo4j]\nuri = "{uri}"\nuser = "{user}"\npassword = "{password}"\ndatabase = "{database}"\n'
    )
    before, namespaces_before = database_snapshot(server), namespaces_in(server)

    result = subprocess.run(
        pytest_command(*FIXTURE_TESTS), env=env, cwd=cwd, capture_output=True, text=True, timeout=1800
    )

    after, namespaces_after = database_snapshot(server), namespaces_in(server)
    new = sorted(set(namespaces_after) - set(namespaces_before))
    if new or after != before:  # leave the session's server clean for the tests after this one
        neo4j_support.delete_namespaces(server, new)
        neo4j_support.drop_new_schema(server, before["indexes"] + before["constraints"], vector_only=False)
    output = (result.stdout + result.stderr)[-6000:]
    assert namespaces_after == namespaces_before, (
        f"the suite wrote into the database of the user's environment: namespaces {new} appeared\n{output}"
    )
    assert after == before, f"the database of the user's environment changed: {before} -> {after}\n{output}"
    assert result.returncode == 0, output
    assert f"{len(FIXTURE_TESTS)} passed" in result.stdout, output


@pytest.fixture(scope="module")
def namespace_of_a_module_fixture() -> str:
    """A namespace a module-scoped fixture writes into and does not clean up (it is set up before a
    test's own clean-up starts counting namespaces)."""
    settings = neo4j_settings_or_skip()
    server = neo4j_server_or_skip()
    run_cypher(server, "CREATE (:Passage {namespace: $ns, id: 'left-by-a-fixture'})", ns=settings.namespace)
    return settings.namespace


def test_the_namespace_of_a_module_fixture_is_deleted_at_session_end(
    namespace_of_a_module_fixture: str,
) -> None:
    """The session's end deletes it before it compares the database (tests/conftest.py
    ``_neo4j_database_unchanged``, which fails the session if it were left)."""
    assert namespace_of_a_module_fixture in neo4j_support.session_namespaces
    assert namespace_of_a_module_fixture not in neo4j_support.created_namespaces  # not this test's


# --- 2. a run stopped from outside stops its servers --------------------------------------------------
def test_a_server_held_until_the_run_is_stopped() -> None:
    """Run only in the pytest that the test below starts (with HIPPORAG_TEST_HERMETIC_HOLD): gets the
    session's server (started for HIPPORAG_TEST_NEO4J_PAIR), says which it is, and waits to be stopped."""
    ready = os.environ.get(HOLD)
    if not ready:
        pytest.skip("run by test_a_run_stopped_from_outside_stops_its_server, in a pytest of its own")
    neo4j_server_or_skip()
    local = neo4j_support.local_server()
    assert local is not None, "HIPPORAG_TEST_NEO4J_PAIR is set: the session must have started a server"
    info = {"pid": local.state["pid"], "bolt_port": local.state["bolt_port"]}
    info |= {"http_port": local.state["http_port"], "home": str(local.home), "pytest_pid": os.getpid()}
    partial = Path(ready + ".part")
    partial.write_text(json.dumps(info))
    partial.rename(ready)
    time.sleep(900)
    pytest.fail("nobody stopped this run")


def gone(pid: int) -> bool:
    """No process ``pid`` runs (a zombie waiting for init to reap it has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def processes_naming(text: str) -> list[str]:
    """Command lines of the processes that mention ``text`` (a server's home: its JVM, its watcher)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or gone(int(proc.name)):
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{proc.name}: {cmdline[:200]}")
    return found


def wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


@pytest.mark.skipif(
    not PAIR or not Path("/proc").is_dir(),
    reason="needs HIPPORAG_TEST_NEO4J_PAIR (the run under test starts a server of its own) and /proc",
)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_run_stopped_from_outside_stops_its_server(tmp_path: Path, signum: signal.Signals) -> None:
    ready = tmp_path / "ready.json"
    # the run's temporary files (its empty working directory, the server's home) under this test's, so
    # that what a killed run cannot remove itself is removed with this test's
    (tmp_path / "tmp").mkdir()
    env = without_test_servers(dict(os.environ)) | {
        "HIPPORAG_TEST_NEO4J_PAIR": str(PAIR),
        "HIPPORAG_TEST_NEO4J_GDS": "0",  # a quicker start; stopping it is the point
        HOLD: str(ready),
        "TMPDIR": str(tmp_path / "tmp"),
    }
    log = tmp_path / "pytest.log"
    with log.open("wb") as out:
        run = subprocess.Popen(
            pytest_command("tests/neo4j/test_neo4j_hermetic.py::test_a_server_held_until_the_run_is_stopped"),
            env=env,
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        up = wait_for(lambda: ready.exists() or run.poll() is not None, START_TIMEOUT + 600)
        assert up and ready.exists(), f"the run did not get its server:\n{log.read_text()[-4000:]}"
        info = json.loads(ready.read_text())
        pid, home = int(info["pid"]), Path(info["home"])
        assert not gone(pid) and answers(info["bolt_port"]), info

        run.send_signal(signum)
        code = run.wait(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    output = log.read_text()[-4000:]
    assert code == -signum, f"the run ended with {code}, not by {signum.name}:\n{output}"
    if signum == signal.SIGKILL:  # no handler ran: the watcher notices within a second and stops it
        assert wait_for(lambda: gone(pid) and not home.exists(), 120), f"pid {pid} or {home} left"
    assert gone(pid), f"the server's JVM (pid {pid}) outlived the run stopped by {signum.name}"
    assert not answers(info["bolt_port"]) and not answers(info["http_port"]), info
    assert wait_for(lambda: not home.exists(), 10), f"{home} left behind"
    assert wait_for(lambda: not processes_naming(str(home)), 10), processes_naming(str(home))
