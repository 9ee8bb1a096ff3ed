"""A Neo4j server for the ``neo4j``-marked tests, or a skip that says why there is none; and the clean-up
that leaves that server as the tests found it.

Where the server comes from, in order:

1. ``HIPPORAG_TEST_NEO4J_URI`` (with ``..._USER``, ``..._PASSWORD``, ``..._DATABASE``): a running server
   (the GitHub workflow's service container, a shared server).
2. ``HIPPORAG_TEST_NEO4J_PAIR`` (``lts`` or ``latest``): the tests start a private server of that pinned
   pair once per session with ``scripts/neo4j_server.py`` (the one ``make neo4j`` runs: Neo4j, GDS and
   APOC from Maven Central), in a temporary home on free loopback ports, stopped (and its home removed)
   at the end. ``HIPPORAG_TEST_NEO4J_GDS=0`` starts it without the GDS plugin (the ``local`` engine).
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
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
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
#: Seconds a server started for HIPPORAG_TEST_NEO4J_PAIR may take to answer on Bolt (once resolved).
START_TIMEOUT = 300

#: Index and constraint names the clean-up may drop (spliced into DROP statements, so checked first).
SCHEMA_NAME = re.compile(r"^hipporag_[A-Za-z0-9_]+$")

_server: dict[str, Any] = {}
#: Namespaces handed out since the last clean-up (the conftest fixture empties it after each test).
created_namespaces: list[str] = []
#: Every namespace handed out in the session, by a test or by a fixture of any scope: a module- or
#: session-scoped fixture makes its namespace before a test's own clean-up starts counting, so the
#: session's end deletes these too before it compares the database with the snapshot.
session_namespaces: list[str] = []


# --- a server built from Maven Central by scripts/neo4j_server.py ---------------------------------------
SERVER_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "neo4j_server.py"

#: Every server this process started and has not stopped yet (the session's, and the ones tests start
#: for themselves), by home; a home is here from before its start command runs. Stopped by
#: :func:`stop_started_servers`: at exit, and on SIGTERM / SIGHUP (tests/conftest.py), when neither the
#: fixtures' finalizers nor atexit run.
_started: dict[Path, LocalNeo4j] = {}
#: ``scripts/neo4j_server.py start`` commands under way (a signal to the session stops them first: the
#: script then stops the server it launched).
_starting: list[subprocess.Popen[str]] = []
#: Other servers to stop with them (testcontainers).
_other_stops: list[Callable[[], None]] = []
#: The process that owns them (a child forked by a test inherits the lists, not the servers).
_owner_pid = os.getpid()


@dataclass
class LocalNeo4j:
    """A Neo4j started by ``scripts/neo4j_server.py`` in a temporary home (``stop()`` ends it and removes
    the home)."""

    home: Path
    state: dict[str, Any]

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.state['bolt_port']}"

    @property
    def password(self) -> str:
        return str(self.state["password"])

    def describe(self) -> str:
        gds = f"GDS {self.state['gds']}" if self.state.get("gds") else "no GDS"
        return (
            f"Neo4j {self.state['neo4j']} ({self.state['pair']} pair, {gds}, "
            f"Java {self.state['java_major']}) at {self.uri}, "
            f"started in {self.state.get('started_seconds')} s"
        )

    def stop(self, timeout: float = 90.0) -> None:
        """Stop the server (SIGKILL after ``timeout`` seconds) and remove its home."""
        _started.pop(self.home, None)
        if self.home.exists():
            cmd = [sys.executable, str(SERVER_SCRIPT), "stop", "--home", str(self.home)]
            subprocess.run([*cmd, "--timeout", str(timeout)], capture_output=True, timeout=timeout + 90)
        shutil.rmtree(self.home, ignore_errors=True)


def start_local_neo4j(pair: str, gds: bool = True, timeout: float = START_TIMEOUT) -> LocalNeo4j:
    """Start a server of ``pair`` (lts, latest) with ``scripts/neo4j_server.py`` in a fresh temporary home
    on free loopback ports (the script resolves the pinned jars with Maven once into ~/.m2). The server is
    tied to this process (``--watch-pid``): it stops when this process ends, even by ``kill -9``."""
    home = Path(tempfile.mkdtemp(prefix=f"hipporag-test-neo4j-{pair}-"))
    cmd = [sys.executable, str(SERVER_SCRIPT), "start", "--pair", pair, "--home", str(home), "--json"]
    cmd += ["--timeout", str(timeout), "--watch-pid", str(os.getpid()), "--watch-remove-home"]
    if not gds:
        cmd.append("--no-gds")
    server = _started[home] = LocalNeo4j(home, {})
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _starting.append(process)
    try:
        out, err = process.communicate(timeout=timeout + 900)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    finally:
        _starting.remove(process)
    if process.returncode != 0:
        server.stop()
        raise RuntimeError(f"scripts/neo4j_server.py start --pair {pair} failed:\n{err[-3000:]}")
    server.state = json.loads(out)
    return server


def stop_started_servers(timeout: float = 30.0) -> None:
    """Stop every server this process started and has not stopped (SIGKILL after ``timeout`` seconds):
    start commands under way get SIGTERM first (the script stops what it launched), then each home is
    stopped and removed, then the containers."""
    if os.getpid() != _owner_pid:
        return
    for process in list(_starting):
        with contextlib.suppress(OSError):
            process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=timeout + 30)
    for server in list(_started.values()):
        server.stop(timeout=timeout)
    while _other_stops:
        with contextlib.suppress(Exception):  # the others still get stopped
            _other_stops.pop()()


atexit.register(stop_started_servers)


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
    _other_stops.append(container.stop)
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
    pair = os.environ.get("HIPPORAG_TEST_NEO4J_PAIR")
    if pair:
        gds = os.environ.get("HIPPORAG_TEST_NEO4J_GDS", "1") != "0"
        server = start_local_neo4j(pair, gds=gds)
        _server["local"] = server
        found = (server.uri, "neo4j", server.password, "neo4j")
        if gds and not server_has_gds(found):
            raise RuntimeError(f"{server.describe()}: the GDS plugin did not load (see {server.home}/logs)")
        return found
    reason = _docker_reason()
    if reason is not None:
        return (
            "Neo4j tests need HIPPORAG_TEST_NEO4J_URI (a running server), HIPPORAG_TEST_NEO4J_PAIR (lts "
            "or latest: the tests start one with scripts/neo4j_server.py, built from Maven Central) or "
            f"Docker for testcontainers: {reason}"
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


def local_server() -> LocalNeo4j | None:
    """The server the tests started themselves (HIPPORAG_TEST_NEO4J_PAIR), if any."""
    server = _server.get("local")
    return server if isinstance(server, LocalNeo4j) else None


def stop_local_server() -> None:
    """Stop the server started for HIPPORAG_TEST_NEO4J_PAIR, if any (end of the session)."""
    server = _server.pop("local", None)
    if server is not None:
        server.stop()


def random_namespace() -> str:
    namespace = "t" + uuid.uuid4().hex[:16]
    created_namespaces.append(namespace)
    session_namespaces.append(namespace)
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
        "warn_notifications": True,  # a deprecated statement fails the test (pyproject filterwarnings)
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
        "HIPPORAG_NEO4J__WARN_NOTIFICATIONS": "true",
    }


# --- looking at and cleaning the database -----------------------------------------------------------
def run_cypher(server: tuple[str, str, str, str], query: str, **params: Any) -> list[dict[str, Any]]:
    """Cypher outside the store (a driver of its own), for set-up, inspection and clean-up."""
    import neo4j

    uri, user, password, database = server
    with neo4j.GraphDatabase.driver(uri, auth=(user, password)) as driver:
        records, _, _ = driver.execute_query(query, params, database_=database)
        return [r.data() for r in records]


def namespace_dump(cypher: Callable[..., list[dict[str, Any]]], namespace: str) -> dict[str, Any]:
    """Every node of the namespace with its labels and every property but the namespace and the graph
    version that wrote it (``written_in``; the metadata node also without its creation time and graph
    version: these count writes, not content), and every
    relationship from a namespace node with its type, ends and properties; sorted. ``cypher(query,
    **params)`` runs a query on the server (:func:`run_cypher` or a server of the test's own)."""
    nodes = cypher(
        "MATCH (n {namespace: $ns}) "
        "RETURN labels(n) AS labels, properties(n) AS props ORDER BY n.id, labels(n)",
        ns=namespace,
    )
    for node in nodes:
        node["labels"] = sorted(node["labels"])
        node["props"].pop("namespace")
        node["props"].pop("written_in", None)
        if "HippoRAGMeta" in node["labels"]:
            for volatile in ("created_at", "graph_version"):
                node["props"].pop(volatile, None)
    rels = cypher(
        "MATCH (a {namespace: $ns})-[r]->(b) "
        "RETURN a.id AS a, type(r) AS type, b.id AS b, labels(b) AS b_labels, properties(r) AS props "
        "ORDER BY a, type, b",
        ns=namespace,
    )
    for rel in rels:
        rel["b_labels"] = sorted(rel["b_labels"])
    nodes.sort(key=lambda n: (str(n["props"].get("id")), n["labels"]))
    rels.sort(key=lambda r: (str(r["a"]), r["type"], str(r["b"])))
    return {"nodes": nodes, "relationships": rels}


def server_has_gds(server: tuple[str, str, str, str]) -> bool:
    rows = run_cypher(server, "SHOW PROCEDURES YIELD name WHERE name = 'gds.graph.list' RETURN count(*) AS n")
    return bool(rows and rows[0]["n"])


def _quoted(name: str) -> str:
    """A label or relationship type as a Cypher identifier (backticks doubled inside)."""
    return "`" + name.replace("`", "``") + "`"


def database_snapshot(server: tuple[str, str, str, str]) -> dict[str, Any]:
    """What the tests must leave as they found it: node and relationship counts (in all, per label and
    per relationship type: the database's count store, no scan), index, constraint and GDS projection
    names."""
    nodes = run_cypher(server, "MATCH (n) RETURN count(n) AS n")[0]["n"]
    rels = run_cypher(server, "MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    labels: dict[str, int] = {}
    for row in run_cypher(server, "CALL db.labels() YIELD label RETURN label"):
        count = run_cypher(server, f"MATCH (n:{_quoted(row['label'])}) RETURN count(n) AS n")[0]["n"]
        if count:
            labels[row["label"]] = count
    types: dict[str, int] = {}
    for row in run_cypher(server, "CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t"):
        count = run_cypher(server, f"MATCH ()-[r:{_quoted(row['t'])}]->() RETURN count(r) AS n")[0]["n"]
        if count:
            types[row["t"]] = count
    indexes = sorted(r["name"] for r in run_cypher(server, "SHOW INDEXES YIELD name RETURN name"))
    constraints = sorted(r["name"] for r in run_cypher(server, "SHOW CONSTRAINTS YIELD name RETURN name"))
    projections: list[str] = []
    if server_has_gds(server):
        listed = run_cypher(server, "CALL gds.graph.list() YIELD graphName RETURN graphName")
        projections = sorted(r["graphName"] for r in listed)
    return {
        "nodes": nodes,
        "relationships": rels,
        "labels": labels,
        "relationship_types": types,
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


def server_summary() -> str | None:
    """One line for the end of the run: which server the Neo4j tests used, and the PPR engine the store
    picks there by default (``neo4j.ppr_engine=auto``)."""
    from hipporag_neo4j.stores.neo4j.capabilities import decide

    server = server_found()
    if server is None:
        return None
    components = run_cypher(server, "CALL dbms.components() YIELD name, versions, edition RETURN *")
    kernel = next(c for c in components if c["name"] == "Neo4j Kernel")
    gds = run_cypher(server, "RETURN gds.version() AS v")[0]["v"] if server_has_gds(server) else None
    engine = decide(kernel["versions"][0], kernel["edition"], gds, None).ppr_engine
    local = local_server()
    where = local.describe() if local is not None else f"{server[0]} (Neo4j {kernel['versions'][0]})"
    from hipporag_neo4j.stores.neo4j.capabilities import AUTO_LOCAL_MAX_EDGES

    limit = f"{AUTO_LOCAL_MAX_EDGES:,}"
    auto = f"local up to {limit} graph edges, {engine} above" if engine != "local" else engine
    return f"Neo4j tests ran on {where}; GDS {gds or 'absent'}; PPR engine (auto): {auto}"


def remember_summary() -> None:
    """Keep :func:`server_summary` for the end of the run (the server is stopped before pytest prints)."""
    try:
        _server["summary"] = server_summary()
    except Exception as exc:  # information only: never fail the session over it
        _server["summary"] = f"Neo4j test server: no summary ({type(exc).__name__}: {exc})"


def remembered_summary() -> str | None:
    summary = _server.get("summary")
    return summary if isinstance(summary, str) else None
