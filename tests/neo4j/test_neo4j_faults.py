"""The Neo4j server killed and started again under the product (issue 26, item 6), live.

The tests start a server of their own with ``scripts/neo4j_server.py`` (the pair of
``HIPPORAG_TEST_NEO4J_PAIR``, with or without GDS as ``HIPPORAG_TEST_NEO4J_GDS`` says) in a temporary home
on free ports, because they ``kill -9`` it: the session's shared server is never touched. Without a pair
they skip (a running server given by URI cannot be killed and restarted from here).

1. ``kill -9`` of the server in the middle of ``python -m hipporag_neo4j index`` (the real CLI, the real
   embedder and spaCy extraction), once the store shows some but not all passages; the server started
   again on the same home and the same command run again. The interrupted run exits 1 with one error
   naming the server (no traceback); what was committed is there after the restart; the re-run's
   namespace equals, node for node and relationship for relationship (properties, vectors and synonym
   scores included), that of an uninterrupted run made first on the fresh server; no duplicates.
2. Queries while the server restarts, in one process with the Python API and in ``serve``: answers,
   the server killed, a :class:`StoreUnavailableError` naming the server (HTTP 503 with a JSON message
   from ``serve``), the server started again, the same top 10 in the same processes (``serve`` not
   restarted). With GDS the query after the restart runs on a projection that exists in GDS's catalog
   (the old one died with the server's memory).
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import neo4j
import pytest

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.errors import StoreUnavailableError
from hipporag_neo4j.settings import load_settings
from tests.support.neo4j_support import (
    SERVER_SCRIPT,
    START_TIMEOUT,
    LocalNeo4j,
    namespace_dump,
    start_local_neo4j,
)
from tests.support.server_support import ServerProcess

pytestmark = [pytest.mark.neo4j, pytest.mark.integration]

REPO = Path(__file__).resolve().parents[2]
PAIR = os.environ.get("HIPPORAG_TEST_NEO4J_PAIR")
GDS = os.environ.get("HIPPORAG_TEST_NEO4J_GDS", "1") != "0"
#: Passages of the generated corpus: three index batches (256 each), so a kill can land between them.
N_PASSAGES = 600
QUESTIONS = [
    "Where was Anna Berg born?",
    "Who worked at the Kestrel Foundation with Felix Dahl?",
    "Which people were born in Tallinn?",
]
API_KEY = "test-key"


# --- a server of our own, killed and started again ---------------------------------------------------
class OwnServer:
    """A server started by scripts/neo4j_server.py that the tests may kill -9 and start again."""

    def __init__(self, server: LocalNeo4j) -> None:
        self.server = server
        self.starts = 1

    @property
    def uri(self) -> str:
        return self.server.uri

    @property
    def password(self) -> str:
        return self.server.password

    def env(self, namespace: str) -> dict[str, str]:
        return {
            "HIPPORAG_NEO4J_URI": self.uri,
            "HIPPORAG_NEO4J_USER": "neo4j",
            "HIPPORAG_NEO4J_PASSWORD": self.password,
            "HIPPORAG_NEO4J_DATABASE": "neo4j",
            "HIPPORAG_NAMESPACE": namespace,
        }

    def cypher(self, query: str, **params: Any) -> list[dict[str, Any]]:
        with neo4j.GraphDatabase.driver(self.uri, auth=("neo4j", self.password)) as driver:
            records, _, _ = driver.execute_query(query, params, database_="neo4j")
            return [r.data() for r in records]

    def kill9(self) -> None:
        """SIGKILL to the server's process group; back when the process is gone."""
        pid = int(self.server.state["pid"])
        os.killpg(pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while Path(f"/proc/{pid}").exists() and "Z" not in _state_of(pid):
            assert time.monotonic() < deadline, f"Neo4j pid {pid} survived SIGKILL"
            time.sleep(0.1)

    def start_again(self) -> None:
        """Start the server again on the same home (same ports, password and data)."""
        cmd = [sys.executable, str(SERVER_SCRIPT), "start", "--pair", str(self.server.state["pair"])]
        cmd += ["--home", str(self.server.home), "--json", "--timeout", str(START_TIMEOUT)]
        cmd += ["--watch-pid", str(os.getpid()), "--watch-remove-home"]  # stopped if the session dies
        if not self.server.state.get("gds"):
            cmd.append("--no-gds")
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=START_TIMEOUT + 900)
        assert result.returncode == 0, result.stderr[-3000:]
        state = json.loads(result.stdout)
        assert state["bolt_port"] == self.server.state["bolt_port"], "the restart moved the server's port"
        self.server.state = state
        self.starts += 1


def _state_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


@pytest.fixture(scope="module")
def own_server() -> Iterator[OwnServer]:
    if not PAIR:
        pytest.skip(
            "the server-fault tests kill -9 a server of their own: they need HIPPORAG_TEST_NEO4J_PAIR "
            "(lts or latest) for scripts/neo4j_server.py to start one"
        )
    server = start_local_neo4j(PAIR, gds=GDS)
    try:
        yield OwnServer(server)
    finally:
        server.stop()


# --- the corpus, the CLI, the dump --------------------------------------------------------------------
def write_corpus(path: Path, n: int = N_PASSAGES) -> Path:
    """``n`` short biographies as JSONL: people, cities and organisations recur, so later batches add
    mentions, relations and synonym edges to phrases of earlier ones."""
    first = ["Anna", "Boris", "Clara", "David", "Elena", "Felix", "Greta", "Hugo"]
    first += ["Irene", "Jonas", "Karla", "Lukas", "Maria", "Nils", "Olga", "Pavel"]
    last = ["Berg", "Castell", "Dahl", "Ekman", "Fischer", "Gruber", "Holm", "Ivanov", "Jensen", "Keller"]
    cities = ["Vienna", "Oslo", "Lyon", "Porto", "Krakow", "Tallinn", "Ghent", "Bergen", "Turin", "Graz"]
    orgs = ["Northwind Institute", "Acme Laboratories", "Blue River University", "Kestrel Foundation"]
    lines = []
    for i in range(n):
        person = f"{first[i % 16]} {last[(i // 16) % 10]}"
        colleague = f"{first[(i * 7 + 3) % 16]} {last[(i * 3 + 1) % 10]}"
        text = (
            f"{person} was born in {cities[(i * 3) % 10]} in {1900 + i % 97}. "
            f"{person} later worked at the {orgs[i % 4]} with {colleague}."
        )
        lines.append(json.dumps({"id": f"doc{i:04d}", "title": person, "text": text}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def index_command(server: OwnServer, namespace: str, corpus: Path) -> list[str]:
    return [
        sys.executable, "-m", "hipporag_neo4j", "--neo4j-uri", server.uri, "--namespace", namespace,
        "index", str(corpus), "--extractor", "spacy",
    ]  # fmt: skip


def cli_env(server: OwnServer, namespace: str) -> dict[str, str]:
    return {**os.environ, **server.env(namespace), "PYTHONPATH": str(REPO)}


def run_index(server: OwnServer, namespace: str, corpus: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        index_command(server, namespace, corpus),
        env=cli_env(server, namespace),
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=corpus.parent,
    )


def passage_ids(server: OwnServer, namespace: str) -> set[str]:
    rows = server.cypher("MATCH (p:Passage {namespace: $ns}) RETURN p.id AS id", ns=namespace)
    return {str(r["id"]) for r in rows}


def assert_same(got: Any, want: Any, where: str = "") -> None:
    """Equal, floats within 1e-5 (vectors and scores of the same texts through the same model)."""
    if isinstance(want, float) or isinstance(got, float):
        assert isinstance(got, int | float) and isinstance(want, int | float), f"{where}: {got!r} vs {want!r}"
        assert math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-6), f"{where}: {got!r} vs {want!r}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{where}: keys {got} vs {want}"
        for key in want:
            assert_same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {len(got)} vs {len(want)} items"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} vs {want!r}"


def assert_no_duplicates(dump: dict[str, Any]) -> None:
    keys = [(tuple(n["labels"]), n["props"].get("id")) for n in dump["nodes"]]
    assert len(keys) == len(set(keys)), "a node is stored twice"
    ends = [(r["a"], r["type"], r["b"]) for r in dump["relationships"]]
    assert len(ends) == len(set(ends)), "a relationship is stored twice"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("faults") / "corpus.jsonl")


@pytest.fixture(scope="module")
def reference(own_server: OwnServer, corpus: Path) -> tuple[str, dict[str, Any]]:
    """The corpus indexed without interruption on the fresh server: (namespace, dump)."""
    namespace = "ref" + uuid.uuid4().hex[:12]
    result = run_index(own_server, namespace, corpus)
    assert result.returncode == 0, result.stderr[-3000:]
    dump = namespace_dump(own_server.cypher, namespace)
    assert len([n for n in dump["nodes"] if "Passage" in n["labels"]]) == N_PASSAGES
    assert any(r["type"] == "SYNONYM" for r in dump["relationships"]), "the corpus must make synonym edges"
    return namespace, dump


# --- 1. kill -9 during index ----------------------------------------------------------------------------
def test_kill_9_of_the_server_mid_index_then_rerun_equals_an_uninterrupted_run(
    own_server: OwnServer, corpus: Path, reference: tuple[str, dict[str, Any]]
) -> None:
    namespace = "cut" + uuid.uuid4().hex[:12]
    proc = subprocess.Popen(
        index_command(own_server, namespace, corpus),
        env=cli_env(own_server, namespace),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=corpus.parent,
    )
    try:
        seen: set[str] = set()
        while not seen:  # the first batch committed
            assert proc.poll() is None, f"index ended before any passage was stored:\n{proc.stderr}"
            seen = passage_ids(own_server, namespace)
            time.sleep(0.2)
        assert len(seen) < N_PASSAGES, "the kill must land mid-run (all passages were stored already)"
        own_server.kill9()
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, f"exit {proc.returncode}\n{out}\n{err}"
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    assert f"Neo4j at {own_server.uri} is unavailable" in errors[0], err
    assert "resumes" in errors[0], err
    assert "defunct connection" not in err, "the driver's own log line reached the user"

    own_server.start_again()
    kept = passage_ids(own_server, namespace)
    assert seen <= kept, f"committed passages lost: {sorted(seen - kept)[:5]}"
    assert len(kept) < N_PASSAGES

    rerun = run_index(own_server, namespace, corpus)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"indexed {N_PASSAGES - len(kept)} passages, skipped {len(kept)}" in rerun.stdout, rerun.stdout

    got = namespace_dump(own_server.cypher, namespace)
    _, want = reference
    assert_no_duplicates(got)
    assert [len(got["nodes"]), len(got["relationships"])] == [len(want["nodes"]), len(want["relationships"])]
    assert_same(got, want, "namespace")


# --- 2. queries while the server restarts ----------------------------------------------------------------
def top10(memory: HippoRAG, question: str, mode: str) -> list[str]:
    return [p.passage.id for p in memory.retrieve(question, top_k=10, mode=mode).passages]  # type: ignore[arg-type]


def rest_top10(serve: ServerProcess, question: str, mode: str) -> httpx.Response:
    return httpx.post(
        f"{serve.url}/query",
        json={"query": question, "top_k": 10, "mode": mode},
        headers={"Authorization": f"Bearer {API_KEY}"},
        timeout=300,
    )


def ids_of(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [p["passage"]["id"] for p in response.json()["passages"]]


def projections(server: OwnServer, namespace: str) -> set[str]:
    rows = server.cypher(
        "CALL gds.graph.list() YIELD graphName WHERE graphName CONTAINS $part RETURN graphName",
        part=f".{namespace}.",
    )
    return {str(r["graphName"]) for r in rows}


def test_queries_while_the_server_restarts_fail_clearly_then_answer_the_same(
    own_server: OwnServer, reference: tuple[str, dict[str, Any]], tmp_path: Path
) -> None:
    namespace, _ = reference
    # With GDS, ppr_engine=gds: this graph is small, where ``auto`` would run PPR in process, and the
    # projection's life across a restart is what is checked.
    engine = "gds" if GDS else "auto"
    settings = load_settings(
        {
            "neo4j": {
                "uri": own_server.uri,
                "password": own_server.password,
                "namespace": namespace,
                "ppr_engine": engine,
            }
        }
    )
    memory = HippoRAG(settings, create=False)
    env = {
        **own_server.env(namespace),
        "HIPPORAG_NEO4J__PPR_ENGINE": engine,
        "HIPPORAG_SERVER__API_KEY": API_KEY,
    }
    serve = ServerProcess(["-m", "hipporag_neo4j", "serve", "--port", "{port}"], env=env, cwd=tmp_path)
    modes = ["hipporag2", "hipporag"]
    try:
        serve.wait_until_up()
        engine = memory.store.capabilities().ppr_engine  # type: ignore[attr-defined]
        assert engine == ("local" if not GDS else "gds-weighted" if PAIR == "latest" else "gds-linear")
        before = {(q, m): top10(memory, q, m) for q in QUESTIONS for m in modes}
        assert all(before.values())
        for (q, m), ids in before.items():
            assert ids_of(rest_top10(serve, q, m)) == ids, (q, m)
        if GDS:
            assert projections(own_server, namespace), "the GDS engine made no projection"

        own_server.kill9()
        with pytest.raises(StoreUnavailableError) as raised:
            top10(memory, QUESTIONS[0], "hipporag2")
        assert f"Neo4j at {own_server.uri} is unavailable" in str(raised.value)
        assert isinstance(raised.value.__cause__, neo4j.exceptions.DriverError)  # the driver's, as the cause
        down = rest_top10(serve, QUESTIONS[0], "hipporag2")
        assert down.status_code == 503, down.text
        assert f"Neo4j at {own_server.uri} is unavailable" in down.json()["detail"], down.text

        own_server.start_again()
        if GDS:
            assert projections(own_server, namespace) == set(), "GDS projections outlived the server"
        after = {(q, m): top10(memory, q, m) for q in QUESTIONS for m in modes}
        assert after == before
        for (q, m), ids in before.items():
            assert ids_of(rest_top10(serve, q, m)) == ids, (q, m)
        assert serve.proc.poll() is None, "serve was restarted"
        ready = httpx.get(f"{serve.url}/ready", timeout=60)
        assert ready.status_code == 200, ready.text
        if GDS:
            live = projections(own_server, namespace)
            current = {c.current.name for c in memory.store._catalogs.values() if c.current}  # type: ignore[attr-defined]
            assert current and current <= live, (current, live)
    finally:
        serve.terminate()
        serve.kill()
        memory.close()
    if GDS:  # each process dropped the projections it made when it closed
        assert projections(own_server, namespace) == set()
