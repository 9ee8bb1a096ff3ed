"""Many writers on one Neo4j namespace (issue 36, part 3): four CLI ``index`` runs (overlapping sets of the
same files) and two ``serve`` processes (each its writer thread, fed by concurrent one-passage requests
of the same documents) index at the same time, their phrases and facts all shared. Nothing reaches a user
as an error (no deadlock, no transient error: every process exits 0, every request answers 200), and the
namespace ends with the counts and the edges of one serial run of the same documents. Real processes, the
real embedding model and spaCy, a live server.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.neo4j_support import (
    neo4j_env,
    neo4j_server_or_skip,
    random_namespace,
    run_cypher,
)

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "hipporag_neo4j" / "demo" / "corpus.json"
KEY = "many-writers-key"
DOCS = 24
CLI_RUNS = 4
SERVES = 2


def records() -> list[dict[str, str]]:
    notes = json.loads(DEMO.read_text(encoding="utf-8"))[:DOCS]
    return [{"id": f"d{i:02d}", "title": n["title"], "text": n["text"]} for i, n in enumerate(notes)]


def env_for(namespace: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("HIPPORAG_")}
    return {**base, **neo4j_env(), "HIPPORAG_NAMESPACE": namespace, "PYTHONPATH": str(REPO)}


def cli_index(paths: list[Path], namespace: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hipporag_neo4j", "index", *map(str, paths), "--extractor", "spacy"],
        env=env_for(namespace), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_serve(namespace: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**env_for(namespace), "HIPPORAG_SERVER__API_KEY": KEY}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hipporag_neo4j", "serve", "--host", "127.0.0.1", "--port", str(port),
             "--create"],
            env=env, cwd=log.parent, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    return proc, f"http://127.0.0.1:{port}"


def wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            if httpx.get(f"{url}/ready", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"serve not ready: {log.read_text()[-3000:]}")


def graph(namespace: str) -> dict[str, Any]:
    """Counts of nodes and relationships by label and type, and the set of edges by their ends' ids."""
    cypher = functools.partial(run_cypher, neo4j_server_or_skip())
    nodes = cypher(
        "MATCH (n {namespace: $ns}) UNWIND labels(n) AS label RETURN label, count(*) AS n", ns=namespace
    )
    edges = cypher(
        "MATCH (a {namespace: $ns})-[r]->(b {namespace: $ns}) "
        "RETURN a.id AS a, type(r) AS type, b.id AS b, r.score AS score",
        ns=namespace,
    )
    return {
        "nodes": {row["label"]: row["n"] for row in nodes},
        "relationships": len(edges),
        "edges": sorted((e["a"], e["type"], e["b"], round(e["score"] or 0.0, 5)) for e in edges),
    }


def serial_reference(tmp_path: Path, files: list[Path], docs: list[dict[str, str]]) -> dict[str, Any]:
    """The same documents written one after the other: one CLI run of every file, then the records
    through the Python API (what a server's writer thread calls)."""
    from hipporag_neo4j import HippoRAG
    from hipporag_neo4j.settings import load_settings

    namespace = random_namespace()
    done = cli_index(files, namespace, tmp_path)
    _, err = done.communicate(timeout=900)
    assert done.returncode == 0, err
    uri, user, password, database = neo4j_server_or_skip()
    neo4j = {"uri": uri, "user": user, "password": password, "database": database, "namespace": namespace}
    settings = load_settings({"store": {"backend": "neo4j"}, "neo4j": neo4j}, env_file=None)
    with HippoRAG(settings) as memory:
        assert not memory.index(docs).failed
    return graph(namespace)


def test_four_cli_runs_and_two_servers_at_once_equal_one_serial_run(tmp_path: Path) -> None:
    neo4j_server_or_skip()
    notes = records()
    folder = tmp_path / "docs"
    folder.mkdir()
    files = []
    for note in notes:  # the CLI's documents: one file each, its path the passage id
        path = folder / f"{note['id']}.md"
        path.write_text(f"# {note['title']}\n\n{note['text']}\n", encoding="utf-8")
        files.append(path)
    # the servers' documents: the same texts under ids of their own (their phrases and facts are the
    # files' phrases and facts: every MERGE contended), each sent to both servers
    docs = [{**note, "id": f"r{note['id']}"} for note in notes]
    reference = serial_reference(tmp_path, files, docs)
    assert reference["nodes"].get("Passage") == 2 * DOCS and reference["relationships"] > 0

    namespace = random_namespace()
    serves = [start_serve(namespace, tmp_path / f"serve{k}.log") for k in range(SERVES)]
    try:
        for k, (proc, url) in enumerate(serves):
            wait_ready(proc, url, tmp_path / f"serve{k}.log")
        # each CLI run an overlapping window of the files (every file in two runs)
        runs = [
            cli_index(
                [files[(k * DOCS // CLI_RUNS + i) % DOCS] for i in range(DOCS // 2)], namespace, tmp_path
            )
            for k in range(CLI_RUNS)
        ]

        def post(job: tuple[str, dict[str, str]]) -> tuple[int, str]:
            url, doc = job
            with httpx.Client(base_url=url, headers={"X-API-Key": KEY}, timeout=600) as client:
                answer = client.post("/passages", json={"passages": [doc]})
                return answer.status_code, "" if answer.status_code == 200 else answer.text

        # every document to both servers, one passage per request, 8 requests in flight
        jobs = [(url, doc) for doc in docs for _, url in serves]
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(post, jobs))
        outcomes = [run.communicate(timeout=900) for run in runs]
    finally:
        for proc, _ in serves:
            proc.terminate()
        for proc, _ in serves:
            proc.wait(60)
    logs = [(tmp_path / f"serve{k}.log").read_text() for k in range(SERVES)]
    failed = [body for _, body in statuses if body]
    assert [status for status, _ in statuses] == [200] * len(jobs), (failed, [log[-6000:] for log in logs])
    for run, (_out, err) in zip(runs, outcomes, strict=True):
        assert run.returncode == 0, err
        assert "Traceback" not in err, err
    for log in logs:
        assert "Traceback" not in log, log[-3000:]
    got = graph(namespace)
    assert got["nodes"] == reference["nodes"]
    assert got["relationships"] == reference["relationships"]
    assert got["edges"] == reference["edges"]


def test_a_phrase_deleted_between_the_check_and_the_write_is_written_again() -> None:
    from hipporag_neo4j import HippoRAG
    from hipporag_neo4j.settings import load_settings
    from hipporag_neo4j.stores.neo4j import Neo4jStore
    from tests.support.fakes import HashEmbedder, TableExtractor
    from tests.support.neo4j_support import TEST_EMBEDDING_DIM, neo4j_settings_or_skip
    from tests.support.racing import OtherWriterDeletesInTheGap

    n4j = neo4j_settings_or_skip(ppr_engine="local")
    settings = load_settings(
        {"llm": {"model": None}, "store": {"backend": "neo4j"}, "neo4j": n4j.model_dump()}, env_file=None
    )
    first, second = "Marta Silva works in Porto.", "Marta Silva was born in Braga."
    table = {first: [["marta silva", "works in", "porto"]], second: [["marta silva", "born in", "braga"]]}
    embedder = HashEmbedder(TEST_EMBEDDING_DIM)
    with HippoRAG(settings, store=Neo4jStore(n4j), embedder=embedder, extractor=TableExtractor(table)) as one:
        one.index([{"id": "a", "text": first}])
    racing = OtherWriterDeletesInTheGap(Neo4jStore(n4j), ["a"])
    with HippoRAG(settings, store=racing, embedder=embedder, extractor=TableExtractor(table)) as other:  # type: ignore[arg-type]
        report = other.index([{"id": "b", "text": second}])
        stats = other.stats()
    assert racing.raced and report.indexed == ["b"] and not report.failed
    assert (stats.passages, stats.phrases) == (1, 2)  # "marta silva" written again, with "braga"
