"""Many writers on one Neo4j namespace (issue 36, part 3): four CLI ``index`` runs and two ``serve``
processes (each its writer thread, fed by concurrent one-passage requests) index overlapping documents at
the same time. Nothing reaches a user as an error (no deadlock, no transient error: every process exits 0,
every request answers 200), and the namespace ends with the counts and the edges of one serial run of the
same documents. Real processes, the real embedding model and spaCy, a live server.
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


def cli_index(path: Path, namespace: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hipporag_neo4j", "index", str(path), "--extractor", "spacy"],
        env=env_for(namespace), cwd=path.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
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


def test_four_cli_runs_and_two_servers_at_once_equal_one_serial_run(tmp_path: Path) -> None:
    neo4j_server_or_skip()
    docs = records()
    union = tmp_path / "all.jsonl"
    union.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")

    serial = random_namespace()
    done = cli_index(union, serial)
    _, err = done.communicate(timeout=900)
    assert done.returncode == 0, err
    reference = graph(serial)
    assert reference["nodes"].get("Passage") == DOCS and reference["relationships"] > 0

    namespace = random_namespace()
    # each CLI run its own file of an overlapping window (every document in two runs), same ids
    files = []
    for k in range(CLI_RUNS):
        window = [docs[(k * DOCS // CLI_RUNS + i) % DOCS] for i in range(DOCS // 2)]
        path = tmp_path / f"run{k}" / "part.jsonl"
        path.parent.mkdir()
        path.write_text("".join(json.dumps(d) + "\n" for d in window), encoding="utf-8")
        files.append(path)
    serves = [start_serve(namespace, tmp_path / f"serve{k}.log") for k in range(SERVES)]
    try:
        for k, (proc, url) in enumerate(serves):
            wait_ready(proc, url, tmp_path / f"serve{k}.log")
        runs = [cli_index(path, namespace) for path in files]

        def post(job: tuple[str, dict[str, str]]) -> int:
            url, doc = job
            with httpx.Client(base_url=url, headers={"X-API-Key": KEY}, timeout=600) as client:
                return client.post("/passages", json={"passages": [doc]}).status_code

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
    assert statuses == [200] * len(jobs)
    for run, (_out, err) in zip(runs, outcomes, strict=True):
        assert run.returncode == 0, err
        assert "Traceback" not in err, err
    for k in range(SERVES):
        log = (tmp_path / f"serve{k}.log").read_text()
        assert "Traceback" not in log, log[-3000:]
    got = graph(namespace)
    assert got["nodes"] == reference["nodes"]
    assert got["relationships"] == reference["relationships"]
    assert got["edges"] == reference["edges"]
