"""A Neo4j server for the ``neo4j``-marked tests, or a skip that says why there is none; and the clean-up
that leaves that server as the tests found it.

Where the server comes from, in order:

1. ``HIPPORAG_TEST_NEO4J_URI`` (with ``..._USER``, ``..._PASSWORD``, ``..._DATABASE``): a running server
   (the GitHub workflow's service container, a shared server).
2. ``HIPPORAG_TEST_NEO4J_HOME``: a Neo4j distribution folder (``bin/neo4j``, ``conf/``, ``lib/``). The
   tests start a private server from it once per session, as testcontainers does with an image: its own
   copy of ``conf/``, a fresh temporary data folder, free loopback ports, authentication off, stopped
   (and its folder removed) at the end. The project never downloads or builds a Neo4j.
3. A testcontainers Neo4j with GDS and APOC when a Docker engine answers.
4. Otherwise ``pytest.skip`` with the reason.

Every call to :func:`neo4j_settings_or_skip` gives a fresh random namespace and registers it; the
``conftest.py`` fixtures delete every registered namespace after each test (pass or fail), with the GDS
projections and the vector indexes the test left behind, and compare the whole database's counts of
nodes, relationships, indexes and constraints before and after the session.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.settings import Neo4jSettings

#: Pinned current image (GDS 2.17+ there: weighted source nodes). NEO4J_PLUGINS makes the image's
#: entrypoint copy the plugin jars it ships (GDS under products/, APOC core under labs/, per the image's
#: neo4j-plugins.json) and download any it does not ship (network needed).
NEO4J_IMAGE = "neo4j:2025.11.2-community"
#: Neo4j 5.26 LTS with GDS 2.13 (unweighted sources: the linear fallback).
NEO4J_LTS_IMAGE = "neo4j:5.26.12-community"

#: Environment of the test container, as the compose file and the CI workflow set it. The entrypoint
#: turns NEO4J_<name> into a setting with ``_`` -> ``.`` and ``__`` -> ``_`` (docker-neo4j
#: docker-entrypoint.sh), and Neo4j refuses unknown settings at start (strict validation), so the
#: single-underscore form is the one that means dbms.security.procedures.unrestricted.
CONTAINER_ENV = {
    "NEO4J_PLUGINS": '["graph-data-science","apoc"]',
    "NEO4J_dbms_security_procedures_unrestricted": "gds.*,apoc.*",
}
TEST_PASSWORD = "hipporag-test-password"
TEST_EMBEDDING_DIM = 16
#: Seconds a server started from HIPPORAG_TEST_NEO4J_HOME may take to answer on Bolt.
START_TIMEOUT = 180

#: Index and constraint names the clean-up may drop (spliced into DROP statements, so checked first).
SCHEMA_NAME = re.compile(r"^hipporag_[A-Za-z0-9_]+$")

_server: dict[str, Any] = {}
#: Namespaces handed out since the last clean-up (the conftest fixture empties it after each test).
created_namespaces: list[str] = []


# --- a server from a distribution folder ----------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalNeo4j:
    """A Neo4j started from a distribution folder with its own conf and data (``stop()`` ends it)."""

    home: Path
    root: Path
    bolt_port: int
    http_port: int
    process: subprocess.Popen[bytes]

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def log(self) -> Path:
        return self.root / "console.log"

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)


def local_conf(home: Path, root: Path, bolt_port: int, http_port: int) -> Path:
    """A copy of ``home/conf`` with the settings of a private test server appended (later lines win)."""
    conf = root / "conf"
    shutil.copytree(home / "conf", conf)
    settings = {
        "server.default_listen_address": "127.0.0.1",
        "server.default_advertised_address": "127.0.0.1",
        "server.bolt.listen_address": f"127.0.0.1:{bolt_port}",
        "server.bolt.advertised_address": f"127.0.0.1:{bolt_port}",
        "server.http.listen_address": f"127.0.0.1:{http_port}",
        "server.http.advertised_address": f"127.0.0.1:{http_port}",
        "server.https.enabled": "false",
        "server.directories.data": str(root / "data"),
        "server.directories.logs": str(root / "logs"),
        "server.directories.run": str(root / "run"),
        "server.directories.transaction.logs.root": str(root / "data" / "transactions"),
        "server.memory.heap.initial_size": "512m",
        "server.memory.heap.max_size": "1g",
        "server.memory.pagecache.size": "256m",
        "dbms.security.auth_enabled": "false",
        "dbms.security.procedures.unrestricted": "gds.*,apoc.*",
        "db.logs.query.enabled": "OFF",
        "dbms.usage_report.enabled": "false",
    }
    # Neo4j refuses a setting declared twice: drop ours from the copy, then append them
    kept = [
        line
        for line in (home / "conf" / "neo4j.conf").read_text(encoding="utf-8").splitlines()
        if line.split("=", 1)[0].strip() not in settings
    ]
    lines = [*kept, "", "# hipporag-neo4j test server", *(f"{k}={v}" for k, v in settings.items())]
    (conf / "neo4j.conf").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return conf


def start_local_neo4j(home: Path, timeout: float = START_TIMEOUT) -> LocalNeo4j:
    """Start ``home/bin/neo4j console`` on free loopback ports with a fresh data folder; wait for Bolt."""
    import neo4j

    launcher = home / "bin" / "neo4j"
    if not launcher.is_file() or not (home / "conf" / "neo4j.conf").is_file():
        raise RuntimeError(f"HIPPORAG_TEST_NEO4J_HOME={home} is not a Neo4j distribution (no bin/neo4j)")
    root = Path(tempfile.mkdtemp(prefix="hipporag-test-neo4j-"))
    bolt_port, http_port = free_port(), free_port()
    conf = local_conf(home, root, bolt_port, http_port)
    env = {**os.environ, "NEO4J_CONF": str(conf), "NEO4J_HOME": str(home)}
    with (root / "console.log").open("wb") as log:
        process = subprocess.Popen(
            [str(launcher), "console"], stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    server = LocalNeo4j(home, root, bolt_port, http_port, process)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            text = server.log.read_text(errors="replace")[-3000:]
            shutil.rmtree(root, ignore_errors=True)
            raise RuntimeError(f"Neo4j from {home} exited with {process.returncode}:\n{text}")
        try:
            with neo4j.GraphDatabase.driver(server.uri, auth=("neo4j", "")) as driver:
                driver.verify_connectivity()
            return server
        except Exception:
            if time.monotonic() > deadline:
                text = server.log.read_text(errors="replace")[-3000:]
                server.stop()
                raise RuntimeError(f"Neo4j from {home} did not answer within {timeout} s:\n{text}") from None
            time.sleep(1)


# --- testcontainers -------------------------------------------------------------------------------
def _docker_reason() -> str | None:
    """None when a Docker engine answers, else why not."""
    try:
        import docker  # testcontainers' dependency

        docker.from_env().ping()
    except Exception as exc:  # any failure means: no usable engine here
        return f"no Docker engine answers ({type(exc).__name__}: {exc})"
    return None


def _start_container() -> tuple[str, str, str]:
    try:
        from testcontainers.community.neo4j import Neo4jContainer
    except ImportError:  # testcontainers before the community/ split
        from testcontainers.neo4j import Neo4jContainer
    image = os.environ.get("HIPPORAG_TEST_NEO4J_IMAGE", NEO4J_IMAGE)
    container = Neo4jContainer(image, password=TEST_PASSWORD)
    for key, value in CONTAINER_ENV.items():
        container.with_env(key, value)
    container.start()
    atexit.register(container.stop)
    return container.get_connection_url(), "neo4j", TEST_PASSWORD


def setting_of_env(name: str) -> str | None:
    """The neo4j.conf setting the image's entrypoint writes for environment variable ``name`` (None for
    the variables it reads itself), by its rule: strip NEO4J_, ``_`` -> ``.``, then ``..`` -> ``_``."""
    if not name.startswith("NEO4J_") or name in {
        "NEO4J_AUTH",
        "NEO4J_PLUGINS",
        "NEO4J_ACCEPT_LICENSE_AGREEMENT",
    }:
        return None
    return name.removeprefix("NEO4J_").replace("_", ".").replace("..", "_")


# --- which server ----------------------------------------------------------------------------------
def _find_server() -> tuple[str, str, str, str] | str:
    """(uri, user, password, database), or the reason there is none."""
    uri = os.environ.get("HIPPORAG_TEST_NEO4J_URI")
    if uri:
        return (
            uri,
            os.environ.get("HIPPORAG_TEST_NEO4J_USER", "neo4j"),
            os.environ.get("HIPPORAG_TEST_NEO4J_PASSWORD", ""),
            os.environ.get("HIPPORAG_TEST_NEO4J_DATABASE", "neo4j"),
        )
    home = os.environ.get("HIPPORAG_TEST_NEO4J_HOME")
    if home:
        server = start_local_neo4j(Path(home))
        atexit.register(server.stop)
        _server["local"] = server
        return server.uri, "neo4j", "", "neo4j"
    reason = _docker_reason()
    if reason is not None:
        return (
            "Neo4j tests need HIPPORAG_TEST_NEO4J_URI (a running server), HIPPORAG_TEST_NEO4J_HOME (a Neo4j "
            f"distribution folder to start one from) or Docker for testcontainers: {reason}"
        )
    uri, user, password = _start_container()
    return uri, user, password, "neo4j"


def neo4j_server_or_skip() -> tuple[str, str, str, str]:
    """(uri, user, password, database) of a reachable server, or skip the test with the reason. The
    server is found (or started) once per session; the first call snapshots the database."""
    if "found" not in _server:
        try:
            _server["found"] = _find_server()
        except RuntimeError as exc:
            _server["found"] = f"the Neo4j test server did not start: {exc}"
        found = _server["found"]
        if not isinstance(found, str):
            _server["before"] = database_snapshot(found)
    found = _server["found"]
    if isinstance(found, str):
        pytest.skip(found)
    return found


def stop_local_server() -> None:
    """Stop the server started from HIPPORAG_TEST_NEO4J_HOME, if any (end of the session)."""
    server = _server.pop("local", None)
    if server is not None:
        server.stop()


def random_namespace() -> str:
    namespace = "t" + uuid.uuid4().hex[:16]
    created_namespaces.append(namespace)
    return namespace


def neo4j_settings_or_skip(**overrides: Any) -> Neo4jSettings:
    """Settings for a reachable server with a fresh namespace (skips the test when there is none)."""
    uri, user, password, database = neo4j_server_or_skip()
    values: dict[str, Any] = {
        "uri": uri,
        "user": user,
        "password": password,
        "database": database,
        "namespace": random_namespace(),
    }
    values.update(overrides)
    return Neo4jSettings(**values)


def neo4j_env() -> dict[str, str]:
    """HIPPORAG_NEO4J_* of the test server, for a CLI subprocess (namespace not included)."""
    uri, user, password, database = neo4j_server_or_skip()
    return {
        "HIPPORAG_NEO4J_URI": uri,
        "HIPPORAG_NEO4J_USER": user,
        "HIPPORAG_NEO4J_PASSWORD": password,
        "HIPPORAG_NEO4J_DATABASE": database,
    }


# --- looking at and cleaning the database -----------------------------------------------------------
def run_cypher(server: tuple[str, str, str, str], query: str, **params: Any) -> list[dict[str, Any]]:
    """Cypher outside the store (a driver of its own), for set-up, inspection and clean-up."""
    import neo4j

    uri, user, password, database = server
    with neo4j.GraphDatabase.driver(uri, auth=(user, password)) as driver:
        records, _, _ = driver.execute_query(query, params, database_=database)
        return [r.data() for r in records]


def server_has_gds(server: tuple[str, str, str, str]) -> bool:
    rows = run_cypher(server, "SHOW PROCEDURES YIELD name WHERE name = 'gds.graph.list' RETURN count(*) AS n")
    return bool(rows and rows[0]["n"])


def database_snapshot(server: tuple[str, str, str, str]) -> dict[str, Any]:
    """What the tests must leave as they found it: node and relationship counts, index and constraint
    names."""
    nodes = run_cypher(server, "MATCH (n) RETURN count(n) AS n")[0]["n"]
    rels = run_cypher(server, "MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    indexes = sorted(r["name"] for r in run_cypher(server, "SHOW INDEXES YIELD name RETURN name"))
    constraints = sorted(r["name"] for r in run_cypher(server, "SHOW CONSTRAINTS YIELD name RETURN name"))
    projections: list[str] = []
    if server_has_gds(server):
        listed = run_cypher(server, "CALL gds.graph.list() YIELD graphName RETURN graphName")
        projections = sorted(r["graphName"] for r in listed)
    return {
        "nodes": nodes,
        "relationships": rels,
        "indexes": indexes,
        "constraints": constraints,
        "projections": projections,
    }


def snapshot_before() -> dict[str, Any] | None:
    """The snapshot taken when the session first reached the server (None when it never did)."""
    return _server.get("before")


def server_found() -> tuple[str, str, str, str] | None:
    found = _server.get("found")
    return None if found is None or isinstance(found, str) else found


def _delete_in_batches(server: tuple[str, str, str, str], match: str, **params: Any) -> None:
    while True:
        rows = run_cypher(
            server, f"{match} WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS deleted", **params
        )
        if not rows or not rows[0]["deleted"]:
            return


def delete_namespaces(server: tuple[str, str, str, str], namespaces: list[str]) -> None:
    """Delete every node of ``namespaces`` (with its relationships), the user nodes a test made with a
    label or a marker that names its namespace, and the namespaces' GDS projections."""
    if not namespaces:
        return
    if server_has_gds(server):
        for namespace in namespaces:
            run_cypher(
                server,
                "CALL gds.graph.list() YIELD graphName WHERE graphName CONTAINS $part "
                "CALL gds.graph.drop(graphName, false) YIELD graphName AS dropped RETURN dropped",
                part=f".{namespace}.",
            )
    _delete_in_batches(server, "MATCH (n) WHERE n.namespace IN $namespaces", namespaces=namespaces)
    # user graphs of the tests: labels like Customer_<namespace>, markers like note = 'user-<namespace>'
    _delete_in_batches(
        server,
        "MATCH (n) WHERE any(label IN labels(n) WHERE any(ns IN $namespaces WHERE label ENDS WITH ns)) "
        "OR any(ns IN $namespaces WHERE n.note = 'user-' + ns)",
        namespaces=namespaces,
    )


def drop_new_schema(server: tuple[str, str, str, str], keep: list[str], vector_only: bool) -> list[str]:
    """Drop the ``hipporag_`` indexes (only the vector ones with ``vector_only``) and constraints that
    are not in ``keep`` (the names a snapshot saw); the names dropped."""
    dropped: list[str] = []
    if not vector_only:
        for row in run_cypher(server, "SHOW CONSTRAINTS YIELD name RETURN name"):
            name = str(row["name"])
            if SCHEMA_NAME.match(name) and name not in keep:
                run_cypher(server, f"DROP CONSTRAINT {name} IF EXISTS")
                dropped.append(name)
    for row in run_cypher(server, "SHOW INDEXES YIELD name, type, owningConstraint RETURN *"):
        name = str(row["name"])
        if vector_only and row["type"] != "VECTOR":
            continue
        if SCHEMA_NAME.match(name) and name not in keep and row["owningConstraint"] is None:
            run_cypher(server, f"DROP INDEX {name} IF EXISTS")
            dropped.append(name)
    return dropped
