"""The REST API as clients use it: a real uvicorn process on 127.0.0.1, requests with httpx.

Most tests run the real app with test components (tests/support/server_harness.py: hash embedder, table
extraction, gates the test opens); the last one runs `hipporag-neo4j serve` with the real models.
"""

from __future__ import annotations

import signal
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from hipporag_neo4j.cli.main import main
from tests.support import llm_replay
from tests.support.llm_replay import ReplayServer, Reply
from tests.support.pipeline_support import dump_embedded, make_memory
from tests.support.server_support import ServerProcess, chain_corpus, harness, wait_for_file

pytestmark = pytest.mark.integration

KEY = {"X-API-Key": "test-key"}


@pytest.fixture
def small(tmp_path: Path) -> Iterator[tuple[ServerProcess, list[dict[str, str]]]]:
    passages, table = chain_corpus(6)
    server = harness(
        tmp_path,
        table,
        {"what relates to entity 2?": ["entity 2"]},
        env={"HIPPORAG_SERVER__SYNC_LIMIT": "3", "HIPPORAG_SERVER__MAX_BATCH": "8",
             "HIPPORAG_SERVER__MAX_BODY_BYTES": "4096"},
    )  # fmt: skip
    try:
        yield server, passages
    finally:
        server.terminate()


def wait_job(client: httpx.Client, location: str) -> dict[str, Any]:
    while True:
        job: dict[str, Any] = client.get(location).json()
        if job["status"] not in ("queued", "running"):
            return job


def test_auth_is_required_and_checked(small: tuple[ServerProcess, list[dict[str, str]]]) -> None:
    server, _ = small
    with httpx.Client(base_url=server.url) as client:
        assert client.get("/stats").status_code == 401
        wrong = client.get("/stats", headers={"X-API-Key": "test-kex"})
        assert wrong.status_code == 401 and "API key" in wrong.json()["detail"]
        assert wrong.headers["www-authenticate"] == "Bearer"
        assert (
            client.post("/query", json={"query": "x"}, headers={"Authorization": "Bearer nope"}).status_code
            == 401
        )
        assert client.get("/stats", headers={"Authorization": "Bearer test-key"}).status_code == 200
        assert client.get("/stats", headers=KEY).json()["passages"] == 0
        # liveness, readiness and the docs need no key
        assert client.get("/health").json() == {"status": "ok"}
        ready = client.get("/ready").json()
        assert ready["ready"] is True and ready["embedding_model"] == "hash-embedder"
        spec = client.get("/openapi.json").json()
        assert {"/passages", "/query", "/answer", "/jobs/{job_id}", "/stats", "/health", "/ready"} <= set(
            spec["paths"]
        )
        assert {"HTTPBearer", "APIKeyHeader"} <= set(spec["components"]["securitySchemes"])
        assert client.get("/docs").status_code == 200


def test_bad_requests_get_clear_errors_and_change_nothing(
    small: tuple[ServerProcess, list[dict[str, str]]],
) -> None:
    server, passages = small
    with httpx.Client(base_url=server.url, headers=KEY) as client:
        bad_json = client.post(
            "/passages", content=b'{"passages": [', headers={"content-type": "application/json"}
        )
        assert bad_json.status_code == 422 and bad_json.json()["detail"][0]["type"] == "json_invalid"
        misspelt = client.post("/passages", json={"passages": [{"txt": "hello"}]})
        assert misspelt.status_code == 422
        assert {tuple(e["loc"]) for e in misspelt.json()["detail"]} == {
            ("body", "passages", 0, "text"),
            ("body", "passages", 0, "txt"),
        }
        assert client.post("/passages", json={"passages": []}).status_code == 422
        too_many = client.post("/passages", json={"passages": [{"text": f"t{i}"} for i in range(9)]})
        assert too_many.status_code == 422 and "limit is 8" in too_many.json()["detail"]
        too_big = client.post("/passages", json={"passages": [{"text": "x" * 5000}]})
        assert too_big.status_code == 413 and "4096 bytes" in too_big.json()["detail"]
        assert client.post("/query", json={"query": "x", "top_k": 0}).status_code == 422
        assert client.post("/query", json={"query": "x", "mode": "magic"}).status_code == 422
        blank = client.post("/query", json={"query": "   "})
        assert blank.status_code == 422 and "empty query" in blank.json()["detail"]
        assert client.request("DELETE", "/passages", json={"ids": []}).status_code == 422
        missing_job = client.get("/jobs/does-not-exist")
        assert missing_job.status_code == 404 and "does-not-exist" in missing_job.json()["detail"]
        no_llm = client.post("/answer", json={"query": "what relates to entity 2?"})
        assert no_llm.status_code == 501 and "no LLM configured" in no_llm.json()["detail"]
        assert client.get("/stats").json()["passages"] == 0  # nothing was written
        # the same passages, well formed, are indexed
        ok = client.post("/passages", json={"passages": passages[:2]})
        assert ok.status_code == 200 and ok.json()["indexed"] == ["p000", "p001"]


def test_index_as_job_query_delete(small: tuple[ServerProcess, list[dict[str, str]]]) -> None:
    server, passages = small
    with httpx.Client(base_url=server.url, headers=KEY) as client:
        batch = [*passages, {"id": "unknown", "text": "Nothing in the table."}, {"id": "blank", "text": " "}]
        started = client.post("/passages", json={"passages": batch})
        assert started.status_code == 202, started.text  # 8 passages > sync_limit 3: a job
        job = wait_job(client, started.headers["location"])
        assert job["status"] == "succeeded" and job["done"] == job["total"] == 8
        assert sorted(job["report"]["indexed"]) == [p["id"] for p in passages]
        reasons = {f["passage_id"]: f["reason"] for f in job["report"]["failed"]}
        assert reasons == {"unknown": "no extraction in table", "blank": "empty passage text"}
        assert any(j["id"] == job["id"] for j in client.get("/jobs").json())

        result = client.post("/query", json={"query": "what relates to entity 2?", "top_k": 2}).json()
        ids = [item["passage"]["id"] for item in result["passages"]]
        assert set(ids) == {"p001", "p002"}  # the two passages that name entity 2
        assert result["linked"][0]["phrase"] == "entity 2"
        assert result["passages"][0]["explanation"]["top_phrases"]
        terse = client.post(
            "/query", json={"query": "what relates to entity 2?", "top_k": 2, "explain": False}
        )
        assert all(item["explanation"]["top_phrases"] == [] for item in terse.json()["passages"])

        deleted = client.request("DELETE", "/passages", json={"ids": ["p001", "nope"]}).json()
        assert deleted["passages"] == ["p001"] and deleted["missing"] == ["nope"]
        assert client.get("/stats").json()["passages"] == 5
        after = client.post("/query", json={"query": "what relates to entity 2?", "top_k": 2}).json()
        assert "p001" not in [item["passage"]["id"] for item in after["passages"]]


def test_query_from_seed_nodes_over_the_joined_graph(tmp_path: Path) -> None:
    """seed_nodes, joined and via in the /query body (the enterprise graph imported beside the store)."""
    from hipporag_neo4j.common.text import make_phrase_id
    from hipporag_neo4j.linking.embedded import EmbeddedEnterpriseGraph
    from hipporag_neo4j.linking.graph_file import EntityGraph
    from hipporag_neo4j.linking.model import EnterpriseEdge, EnterpriseNode, SameAs

    passages, table = chain_corpus(6)
    server = harness(tmp_path, table, {})
    try:
        with httpx.Client(base_url=server.url, headers=KEY) as client:
            assert client.post("/passages", json={"passages": passages[:3]}).status_code == 200
            assert client.post("/passages", json={"passages": passages[4:]}).status_code == 200
            # entity 0..3 and entity 4..6 are two separate chains; your graph says a1 OWNS a5
            with EmbeddedEnterpriseGraph(tmp_path / "kb") as graph:
                nodes = [EnterpriseNode("a1", ("Account",), {"name": "one"}),
                         EnterpriseNode("a5", ("Account",), {"name": "five"})]  # fmt: skip
                graph.import_graph(EntityGraph(nodes, [EnterpriseEdge("a1", "OWNS", "a5")]))
                links = [SameAs(make_phrase_id("entity 1"), "a1", 1.0, "exact"),
                         SameAs(make_phrase_id("entity 5"), "a5", 1.0, "exact")]  # fmt: skip
                graph.write_links(links, "Account")
            plain = client.post("/query", json={"seed_nodes": ["a1"], "top_k": 6}).json()
            ids = [item["passage"]["id"] for item in plain["passages"]]
            assert ids and set(ids) <= {"p000", "p001", "p002"}  # its own chain only
            assert plain["seed_links"][0]["query_entity"] == "a1"
            via = client.post("/query", json={"seed_nodes": ["a1"], "via": ["OWNS"], "top_k": 6}).json()
            assert via["joined"] == ["OWNS"] and {"p004", "p005"} & {
                i["passage"]["id"] for i in via["passages"]
            }
            five = next(i for i in via["passages"] if i["passage"]["id"] in ("p004", "p005"))
            assert [n["node_id"] for n in five["linked_entities"]] == ["a5"]
            bad = client.post("/query", json={"seed_nodes": ["a1"], "via": ["NOT OK"]})
            assert bad.status_code == 422 and "relationship type" in bad.json()["detail"]
            assert client.post("/query", json={"query": ""}).status_code == 422
    finally:
        server.terminate()


def test_answer_reads_the_retrieved_passages_with_the_llm(tmp_path: Path, llm_server: ReplayServer) -> None:
    passages, table = chain_corpus(4)
    llm_server.script(
        Reply.completion("Passage 1 and 2 both name entity 2.\nAnswer: entity 1 and entity 3"),
        match=["what relates to entity 2?", "Passage 1: entity 1 relates to entity 2."],
    )
    llm = {"HIPPORAG_LLM__MODEL": llm_replay.MODEL, "HIPPORAG_LLM__BASE_URL": llm_server.base_url,
           "HIPPORAG_LLM__API_KEY": "sk-test", "HIPPORAG_LLM__MAX_RETRIES": "0"}  # fmt: skip
    server = harness(tmp_path, table, {"what relates to entity 2?": ["entity 2"]}, env=llm)
    try:
        with httpx.Client(base_url=server.url, headers=KEY, timeout=60) as client:
            client.post("/passages", json={"passages": passages})
            answer = client.post("/answer", json={"query": "what relates to entity 2?", "top_k": 2})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["answer"] == "entity 1 and entity 3"
        assert {p["passage"]["id"] for p in body["retrieval"]["passages"]} == {"p001", "p002"}
        assert len(llm_server.requests) == 1 and not llm_server.unmatched
    finally:
        server.terminate()


def test_queries_run_while_a_job_indexes(tmp_path: Path) -> None:
    passages, table = chain_corpus(12)
    queries = {f"what about entity {i}?": [f"entity {i}"] for i in range(13)}
    server = harness(tmp_path, table, queries, env={"HIPPORAG_SERVER__JOB_CHUNK": "4"}, hold_extract=2)
    gates = tmp_path / "gates"
    try:
        with httpx.Client(base_url=server.url, headers=KEY, timeout=60) as client:
            location = client.post(
                "/passages", json={"passages": passages}, params={"as_job": "true"}
            ).headers["location"]
            wait_for_file(gates / "extract-entered")  # chunk 2 is being extracted; chunk 1 is stored
            job = client.get(location).json()
            assert job["status"] == "running" and job["done"] == 4 and job["total"] == 12

            def ask(i: int) -> set[str]:
                response = client.post("/query", json={"query": f"what about entity {i}?", "top_k": 3})
                assert response.status_code == 200, response.text
                return {item["passage"]["id"] for item in response.json()["passages"]}

            with ThreadPoolExecutor(8) as pool:
                seen = list(pool.map(ask, [i % 4 for i in range(16)]))
            assert all(found and found <= {"p000", "p001", "p002", "p003"} for found in seen), seen
            assert client.get("/stats").json()["passages"] == 4

            (gates / "extract-release").touch()
            job = wait_job(client, location)
            assert job["status"] == "succeeded" and len(job["report"]["indexed"]) == 12
            assert "p009" in ask(9)
    finally:
        server.terminate()


def test_readers_do_not_wait_for_a_write_in_progress(tmp_path: Path) -> None:
    # chunk 1: p000-p003; chunk 2: p004-p007 name variants of chunk-1 phrases, so its step writes the
    # passages, then synonym edges (the first edges written: chunk 1 has none); the harness holds that
    # write at a gate until the readers have answered: they must answer while the write is in progress,
    # from the last committed graph version (chunk 2's passages, its synonym edges not yet)
    passages, table = chain_corpus(8, variants_from=4)
    queries = {"what about entity 5?": ["entity 5"]}
    server = harness(tmp_path, table, queries, env={"HIPPORAG_SERVER__JOB_CHUNK": "4"}, hold_synonyms=1)
    gates = tmp_path / "gates"
    try:
        with httpx.Client(base_url=server.url, headers=KEY, timeout=60) as client:
            first = client.post("/passages", json={"passages": passages[:4]}).json()
            assert first["new_synonym_edges"] == 0
            location = client.post(
                "/passages", json={"passages": passages[4:]}, params={"as_job": "true"}
            ).headers["location"]
            wait_for_file(gates / "write-entered")  # chunk 2's passages are written, its synonyms are not

            def ask(_: int) -> set[str]:
                response = client.post("/query", json={"query": "what about entity 5?", "top_k": 2})
                assert response.status_code == 200, response.text
                return {item["passage"]["id"] for item in response.json()["passages"]}

            with ThreadPoolExecutor(6) as pool:
                stats = [
                    (s["passages"], s["synonym_edges"])
                    for s in pool.map(lambda _: client.get("/stats").json(), range(6))
                ]
                found = list(pool.map(ask, range(6)))
            # every reader answered with the write still held at its gate
            assert not (gates / "write-release").exists()
            assert client.get(location).json()["status"] == "running"
            assert stats == [(8, 0)] * 6  # the last commit: chunk 2's passages, its edges not yet
            assert all("p005" in ids for ids in found), found
            (gates / "write-release").touch()
            job = wait_job(client, location)
            final = client.get("/stats").json()
            assert job["status"] == "succeeded" and final["synonym_edges"] > 0
            assert (final["passages"], final["synonym_edges"]) == (8, job["report"]["new_synonym_edges"])
    finally:
        server.terminate()


def test_shutdown_while_a_job_runs_finishes_the_chunk_and_loses_nothing(tmp_path: Path) -> None:
    everything, table = chain_corpus(20)
    passages, queued = everything[:16], everything[16:]
    env = {"HIPPORAG_SERVER__JOB_CHUNK": "4"}
    server = harness(tmp_path, table, env=env, hold_extract=2)
    gates = tmp_path / "gates"
    try:
        with httpx.Client(base_url=server.url, headers=KEY) as client:
            started = client.post("/passages", json={"passages": passages}, params={"as_job": "true"})
            assert started.status_code == 202
            wait_for_file(gates / "extract-entered")  # chunk 2 of 4 in progress
            second = client.post("/passages", json={"passages": queued}, params={"as_job": "true"})
            assert second.json()["status"] == "queued"
        server.proc.send_signal(signal.SIGTERM)
        server.wait_for_log("shutting down: finishing the writer's step in progress")
        (gates / "extract-release").touch()
        assert server.terminate()
    finally:
        server.kill()
    assert "interrupted: the service shut down after 8 of 16 passages" in server.log
    assert "interrupted: the service shut down after 0 of 4 passages" in server.log  # the queued job

    # exactly chunks 1 and 2 are stored, and they are the graph a direct build of those 8 passages gives
    stored = dump_embedded(tmp_path / "kb")
    assert sorted(row[0] for row in stored["passages"]) == [p["id"] for p in passages[:8]]
    with make_memory(tmp_path / "direct8", table) as memory:
        memory.index(passages[:8])
    assert stored == dump_embedded(tmp_path / "direct8")

    # a restarted server given the same passages indexes the rest: the graph of a full build
    (gates / "extract-entered").unlink()
    server = harness(tmp_path, table, env=env)
    try:
        with httpx.Client(base_url=server.url, headers=KEY) as client:
            job = wait_job(
                client,
                client.post("/passages", json={"passages": passages}, params={"as_job": "true"}).headers[
                    "location"
                ],
            )
        assert job["status"] == "succeeded"
        assert len(job["report"]["skipped"]) == 8 and len(job["report"]["indexed"]) == 8
    finally:
        server.terminate()
    with make_memory(tmp_path / "direct16", table) as memory:
        memory.index(passages)
    assert dump_embedded(tmp_path / "kb") == dump_embedded(tmp_path / "direct16")


def test_serve_refuses_unsafe_auth_settings(tmp_path: Path) -> None:
    runner = CliRunner()
    no_key = runner.invoke(main, ["--store", str(tmp_path / "s"), "serve", "--create"])
    assert no_key.exit_code == 1 and "HIPPORAG_SERVER__API_KEY" in no_key.output
    open_to_all = runner.invoke(
        main, ["--store", str(tmp_path / "s"), "serve", "--create", "--host", "0.0.0.0", "--no-auth"]
    )
    assert open_to_all.exit_code == 1 and "only allowed on a loopback host" in open_to_all.output


def test_serve_command_with_the_real_models(tmp_path: Path) -> None:
    server = ServerProcess(
        ["-m", "hipporag_neo4j", "--store", str(tmp_path / "kb"), "serve", "--create", "--port", "{port}"],
        env={"HIPPORAG_SERVER__API_KEY": "s3cret", "HF_HUB_OFFLINE": "1"},
        cwd=tmp_path,
    )
    try:
        server.wait_until_up()
        with httpx.Client(
            base_url=server.url, headers={"Authorization": "Bearer s3cret"}, timeout=120
        ) as client:
            assert client.get("/ready").json()["embedding_model"] == "all-MiniLM-L6-v2"
            report = client.post(
                "/passages",
                json={
                    "passages": [
                        {
                            "id": "t",
                            "title": "Thomas",
                            "text": "Thomas is a professor at Stanford University.",
                        },
                        {"id": "a", "text": "Thomas studies Alzheimer's disease."},
                        {"id": "m", "text": "Maria plays the violin in Vienna."},
                    ]
                },
            ).json()
            assert report["indexed"] == ["t", "a", "m"] and report["failed"] == []
            result = client.post(
                "/query", json={"query": "Which Stanford professor studies Alzheimer's?", "top_k": 2}
            )
            assert {p["passage"]["id"] for p in result.json()["passages"]} == {"t", "a"}
            assert client.get("/stats", headers={"Authorization": "Bearer s3cre"}).status_code == 401
        # the model is loaded once per process, on whichever runtime serves it (ONNX Runtime by default)
        log = server.log
        assert log.count("Loaded embedding model") + log.count("Loading SentenceTransformer model") == 1, log
        assert server.terminate()
    finally:
        server.kill()
    assert sqlite3.connect(tmp_path / "kb" / "graph.sqlite").execute(
        "SELECT count(*) FROM passages"
    ).fetchone() == (3,)
