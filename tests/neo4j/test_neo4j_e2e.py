"""The whole product on a live Neo4j, as a user drives it: the real CLI entry point (click's runner on
``hipporag_neo4j.cli.main.main``, or a subprocess for ``serve`` and ``mcp``) with ``--neo4j-uri`` and a
namespace of its own, the real embedder (all-MiniLM-L6-v2) and spaCy extraction; the LLM path through
the replay server (tests/support/llm_replay.py). Every test's namespace is deleted after it (conftest).
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from hipporag_neo4j.cli.main import MODES, STRATEGIES, main
from hipporag_neo4j.stores.neo4j.cypher import load_query, query_names
from tests.support.llm_replay import MODEL, ReplayServer, Reply
from tests.support.neo4j_support import (
    namespace_dump,
    neo4j_env,
    neo4j_settings_or_skip,
    random_namespace,
    run_cypher,
)
from tests.support.server_support import ServerProcess

pytestmark = pytest.mark.neo4j

REPO = Path(__file__).resolve().parents[2]
QUESTION = "Which Stanford professor studies Alzheimer's?"
IRCOT = "You answer multi-hop questions step by step"
CLUES = "You help a retrieval system find the passages"


class Cli:
    """``hipporag-neo4j --neo4j-uri ... --namespace NS <args>`` in process; (exit code, stdout)."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.env = {**neo4j_env(), "HIPPORAG_NAMESPACE": namespace}
        self.uri = self.env["HIPPORAG_NEO4J_URI"]

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
        result = CliRunner().invoke(
            main,
            ["--neo4j-uri", self.uri, "--namespace", self.namespace, *args],
            env={**self.env, **(env or {})},
            catch_exceptions=False,
        )
        return result.exit_code, result.stdout

    def json(self, *args: str, env: dict[str, str] | None = None, code: int = 0) -> Any:
        got, out = self("--json", *args, env=env)
        assert got == code, out
        return json.loads(out)


@pytest.fixture
def cli() -> Cli:
    neo4j_settings_or_skip()  # skip without a server
    return Cli(random_namespace())


def write_docs(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "thomas.txt").write_text(
        "Thomas Müller is a professor at Stanford University.", encoding="utf-8"
    )
    (folder / "lab.json").write_text(
        json.dumps(
            [{"id": "lab", "title": "Müller Lab", "text": "Thomas Müller studies Alzheimer's disease."}]
        ),
        encoding="utf-8",
    )
    return folder


def ids_of(result: dict[str, Any]) -> list[str]:
    return [p["passage"]["id"] for p in result["passages"]]


def test_index_query_every_mode_list_reindex_delete_reembed_doctor(cli: Cli, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    report = cli.json("index", str(docs), "--extractor", "spacy")
    assert len(report["indexed"]) == 2 and not report["failed"]
    again = cli.json("index", str(docs), "--extractor", "spacy")
    assert again["indexed"] == [] and len(again["skipped"]) == 2  # a re-run duplicates nothing

    for mode in MODES:
        result = cli.json("query", QUESTION, "--mode", mode, "--top-k", "2")
        assert result["mode"] == mode
        assert "lab" in ids_of(result), (mode, result)
    code, out = cli("query", QUESTION, "--mode", "hipporag", "--explain")
    assert code == 0 and "via:" in out and "linked (query entity" in out
    code, out = cli("query", QUESTION, "--explain")
    assert code == 0 and "facts (cosine" in out and "seeds (walk start" in out

    listed = cli.json("list")
    assert len(listed) == 2 and "lab" in {p["id"] for p in listed}
    stats = cli.json("stats")
    assert stats["backend"] == "neo4j" and stats["passages"] == 2
    assert stats["extra"]["namespace"] == cli.namespace

    # an edited file is re-indexed: its old passage replaced, nothing duplicated
    (docs / "thomas.txt").write_text(
        "Thomas Müller is a professor at Stanford University and a member of its Alzheimer's center.",
        encoding="utf-8",
    )
    edited = cli.json("index", str(docs), "--extractor", "spacy")
    assert len(edited["indexed"]) == 1 and len(edited["skipped"]) == 1
    assert cli.json("stats")["passages"] == 2
    found = cli.json("query", "member of the Alzheimer's center", "--mode", "dense", "--top-k", "1")
    assert "member of its Alzheimer's center" in found["passages"][0]["passage"]["text"]

    code, out = cli("delete", "lab", "missing-id")
    assert code == 3 and "deleted 1 passage (1 not found)" in out
    assert cli.json("stats")["passages"] == 1

    counts = cli.json("reembed")
    assert counts["passage"] == 1 and counts["phrase"] > 0
    assert cli.json("query", QUESTION, "--mode", "dense", "--top-k", "1")["passages"]

    doctor = cli.json("doctor")
    assert not [c for c in doctor["checks"] if c.get("status") == "error"], doctor
    text = json.dumps(doctor)
    assert "runs in process" in text or "gds" in text.lower(), doctor  # the PPR engine, said plainly


def test_every_strategy_through_the_replayed_llm(
    cli: Cli,
    tmp_path: Path,
    llm_server: ReplayServer,
) -> None:
    cli.json("index", str(write_docs(tmp_path / "docs")), "--extractor", "spacy")
    llm = ["--llm-model", MODEL, "--llm-base-url", llm_server.base_url]
    env = {"HIPPORAG_LLM__API_KEY": "sk-test-replay-0000", "HIPPORAG_LLM__MAX_RETRIES": "0"}
    llm_server.script(
        Reply.completion("Thomas Müller is a professor at Stanford. More text."),
        Reply.completion("He studies Alzheimer's disease. So the answer is: Thomas Müller."),
        system=IRCOT,
    )
    llm_server.script(Reply.completion('{"clues": ["Thomas Müller studies Alzheimer\'s"]}'), system=CLUES)
    for strategy in STRATEGIES:
        got = cli.json(
            *llm, "query", QUESTION, "--mode", "dense", "--strategy", strategy, "--top-k", "2", env=env
        )
        assert got["strategy"] == strategy and "lab" in ids_of(got), (strategy, got)
        if strategy == "ircot":
            assert len(got["thoughts"]) == 2
        if strategy == "clues":
            assert got["clues"] == ["Thomas Müller studies Alzheimer's"]
    assert llm_server.requests_to(IRCOT) and llm_server.requests_to(CLUES)


def server_tuple() -> tuple[str, str, str, str]:
    env = neo4j_env()
    return (
        env["HIPPORAG_NEO4J_URI"],
        env["HIPPORAG_NEO4J_USER"],
        env["HIPPORAG_NEO4J_PASSWORD"],
        env["HIPPORAG_NEO4J_DATABASE"],
    )


EXPLORE = [name for name in query_names() if name.startswith("explore_")]


def test_link_about_browser_queries_unlink_over_a_user_graph(cli: Cli, tmp_path: Path) -> None:
    """Your graph (made with Cypher, labels named after the test namespace so they are deleted after):
    link, `about` one of your nodes, every Browser saved query, unlink (your nodes untouched)."""
    cli.json("index", str(write_docs(tmp_path / "docs")), "--extractor", "spacy")
    target = server_tuple()
    person, org = f"Person_{cli.namespace}", f"Org_{cli.namespace}"
    ids = run_cypher(
        target,
        "CREATE (a:$($person) {name: 'Thomas Müller'})"
        "-[:WORKS_AT]->(b:$($org) {name: 'Stanford University'}) "
        "RETURN elementId(a) AS person, elementId(b) AS org",
        person=person,
        org=org,
    )[0]
    links = [cli.json("link", "--label", label, "--property", "name") for label in (person, org)]
    assert all(r["new_links"] >= 1 for r in links), links

    about = cli.json("about", ids["person"], "--top-k", "2")
    assert "lab" in ids_of(about), about  # the lab passage names Thomas Müller
    joined = cli.json("about", ids["org"], "--via", "WORKS_AT", "--top-k", "2")
    assert joined["passages"], joined

    phrase = run_cypher(
        target,
        "MATCH (p:Phrase {namespace: $ns})-[:SAME_AS]->() RETURN p.name AS name ORDER BY name LIMIT 1",
        ns=cli.namespace,
    )[0]["name"]
    values = {
        "namespace": cli.namespace,
        "passage_id": "lab",
        "name": phrase,
        "node_id": ids["person"],
        "types": ["WORKS_AT"],
        "names": [phrase],
        "ids": ["lab"],
    }
    ran = {}
    for name in EXPLORE:
        query = load_query(name)
        ran[name] = run_cypher(target, query.text, **{k: values[k] for k in query.parameters})
    overview = ran["explore_overview"]
    assert len(overview) == 1 and overview[0]["passages"] == 2 and overview[0]["embedding_dim"] == 384
    hubs = ran["explore_hub_phrases"]
    assert hubs and [h["passages"] for h in hubs] == sorted((h["passages"] for h in hubs), reverse=True)
    assert ran["explore_passage"][0]["d"]["id"] == "lab" and ran["explore_passage"][0]["phrases"]
    assert ran["explore_phrase"][0]["p"]["name"] == phrase and ran["explore_phrase"][0]["passages"]
    answer = ran["explore_answer"]  # the explorer's Ask view: the passages and the phrases it drew
    assert [d["id"] for d in answer[0]["passages"]] == ["lab"] and answer[0]["links"], answer
    node = ran["explore_node"]  # the explorer's view of one of your nodes: its links and relationships
    assert node[0]["n"]["name"] == "Thomas Müller" and node[0]["links"] and node[0]["relationships"], node
    for name in ("explore_same_as", "explore_joined_node", "explore_joined_passage", "explore_joined_paths"):
        assert ran[name], f"{name} returned nothing over a linked graph"
    assert set(ran) == set(EXPLORE)

    removed = cli.json("unlink")
    assert removed["removed"] >= 2
    left = run_cypher(target, "MATCH (n:$($person))-[:WORKS_AT]->(m:$($org)) RETURN n.name AS a, m.name AS b",
                      person=person, org=org)  # fmt: skip
    assert left == [{"a": "Thomas Müller", "b": "Stanford University"}]  # your graph untouched
    same_as = run_cypher(
        target, "MATCH (:Phrase {namespace: $ns})-[r:SAME_AS]->() RETURN count(r) AS n", ns=cli.namespace
    )
    assert same_as[0]["n"] == 0


def test_eval_on_the_demo_data(cli: Cli, tmp_path: Path) -> None:
    demo = REPO / "hipporag_neo4j" / "demo"
    report = tmp_path / "report.json"
    code, out = cli(
        "eval", "--questions", str(demo / "questions.json"), "--corpus", str(demo / "corpus.json"),
        "--openie", str(demo / "openie_demo.json"), "--mode", "dense", "--mode", "hipporag",
        "--top-k", "5", "--report", str(report),
    )  # fmt: skip
    assert code == 0, out
    data = json.loads(report.read_text(encoding="utf-8"))
    text = json.dumps(data)
    assert "hipporag" in text and "dense" in text, text[:2000]


# --- serve and mcp answering from a Neo4j store ---------------------------------------------------
def test_serve_answers_from_a_neo4j_store(cli: Cli, tmp_path: Path) -> None:
    cli.json("index", str(write_docs(tmp_path / "docs")), "--extractor", "spacy")
    env = {**cli.env, "HIPPORAG_SERVER__API_KEY": "test-key"}
    server = ServerProcess(["-m", "hipporag_neo4j", "serve", "--port", "{port}"], env=env, cwd=tmp_path)
    try:
        server.wait_until_up()
        headers = {"Authorization": "Bearer test-key"}
        r = httpx.post(
            f"{server.url}/query", json={"query": QUESTION, "top_k": 2}, headers=headers, timeout=120
        )
        assert r.status_code == 200, r.text
        assert "lab" in [p["passage"]["id"] for p in r.json()["passages"]]
        stats = httpx.get(f"{server.url}/stats", headers=headers, timeout=60).json()
        assert stats["backend"] == "neo4j" and stats["passages"] == 2
    finally:
        assert server.terminate() or True
        server.kill()


def test_mcp_answers_from_a_neo4j_store(cli: Cli, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    cli.json("index", str(write_docs(tmp_path / "docs")), "--extractor", "spacy")
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hipporag_neo4j", "mcp"],
        env={**os.environ, **cli.env, "PYTHONPATH": str(REPO)},
        cwd=str(tmp_path),
    )

    async def ask() -> str:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("recall", {"query": QUESTION, "top_k": 2})
            return "".join(getattr(c, "text", "") for c in result.content)

    text = anyio.run(ask)
    assert "Alzheimer" in text


# --- issue 8's guarantees on Neo4j -----------------------------------------------------------------
WORKER = Path(__file__).resolve().parents[1] / "support" / "reliability_worker.py"


def worker(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(REPO)},
    )


def finish(proc: subprocess.Popen[str], expect_kill: bool = False) -> str:
    out, err = proc.communicate(timeout=600)
    if expect_kill:
        assert proc.returncode == -9, f"the worker was not killed (exit {proc.returncode}):\n{err}"
    else:
        assert proc.returncode == 0, f"worker failed (exit {proc.returncode}):\n{err}"
    return out


def dump_namespace(namespace: str) -> dict[str, Any]:
    """Every node and relationship of the namespace, with all their properties (vectors and synonym
    scores included) and the metadata node's content, sorted (:func:`neo4j_support.namespace_dump`)."""
    return namespace_dump(functools.partial(run_cypher, server_tuple()), namespace)


def worker_env(namespace: str) -> dict[str, str]:
    return {**neo4j_env(), "HIPPORAG_NAMESPACE": namespace}


@pytest.fixture
def reference() -> Iterator[dict[str, Any]]:
    neo4j_settings_or_skip()
    ns = random_namespace()
    finish(worker("index", "neo4j", env=worker_env(ns)))
    yield dump_namespace(ns)


def test_kill_9_mid_index_then_rerun_equals_an_uninterrupted_run(reference: dict[str, Any]) -> None:
    ns = random_namespace()
    finish(worker("index", "neo4j", "--kill-after", "write_passages:3", env=worker_env(ns)), expect_kill=True)
    partial = dump_namespace(ns)
    assert 0 < len(partial["nodes"]) < len(reference["nodes"])
    finish(worker("index", "neo4j", env=worker_env(ns)))
    got = dump_namespace(ns)
    assert got == reference
    assert any(r["type"] == "SYNONYM" for r in got["relationships"]), "synonym edges are compared too"


def test_two_indexers_at_once_equal_one(reference: dict[str, Any]) -> None:
    ns = random_namespace()
    procs = [worker("index", "neo4j", env=worker_env(ns)) for _ in range(2)]
    for proc in procs:
        finish(proc)
    assert dump_namespace(ns) == reference


def test_queries_during_indexing_see_whole_batches(reference: dict[str, Any]) -> None:
    ns = random_namespace()
    indexer = worker("index", "neo4j", "--slow", "0.05", env=worker_env(ns))
    time.sleep(0.5)
    reader = worker("read", "neo4j", "--seconds", "8", env=worker_env(ns))
    finish(indexer)
    seen = json.loads(finish(reader))  # the reader exits non-zero on a partial batch
    assert seen["loops"] > 0 and len(seen["states"]) >= 1, seen
    assert dump_namespace(ns) == reference


def test_cli_output_has_no_server_notifications(cli: Cli, tmp_path: Path) -> None:
    """Issue 17: no "Received notification from DBMS server" in what a user sees."""
    docs = write_docs(tmp_path / "docs")
    proc = subprocess.run(
        [sys.executable, "-m", "hipporag_neo4j", "--neo4j-uri", cli.uri, "--namespace", cli.namespace,
         "index", str(docs), "--extractor", "spacy"],
        env={**os.environ, **cli.env, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=600,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    query = subprocess.run(
        [sys.executable, "-m", "hipporag_neo4j", "--neo4j-uri", cli.uri, "--namespace", cli.namespace,
         "query", QUESTION, "--mode", "hipporag"],
        env={**os.environ, **cli.env, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=600,
        cwd=tmp_path,
    )  # fmt: skip
    assert query.returncode == 0, query.stderr
    for output in (proc.stdout + proc.stderr, query.stdout + query.stderr):
        found = re.search(r"notification from DBMS|Neo4jWarning|property key does not exist", output)
        assert found is None, output
