"""Readers and writers on one ``serve`` process: query latency with and without writes (issue 36, part 2).

A real ``hipporag-neo4j serve`` (API key, one process) over the demo notes (the first ``--notes`` of
``hipporag_neo4j/demo/corpus.json``, indexed through the API), on the embedded store or a Neo4j namespace
(``--store neo4j`` with ``--neo4j-env``: the ``neo4j.env`` of a server, e.g. from scripts/neo4j_server.py).
Load is bounded and loopback only: ``--clients`` threads (each its own keep-alive connection) send
``--requests`` requests each, as fast as answered. Two kinds of run, interleaved per round:

* ``reads``: every request a ``POST /query`` (the demo questions in turn);
* ``rw``: the same, except every ``--write-every``-th request of each client (staggered across clients) is
  a one-passage ``POST /passages`` of a new note; the notes written are deleted after the run, so every run
  starts from the same graph.

Each run records the latency of reads and writes (p50, p95, p99, max), errors and the 1-minute load at its
start and end; the comparison is read p99 of ``rw`` over ``reads`` per client count, under the protocol of
``harness.py`` (the issue's target: at most 1.5). ``--checkout`` runs the server from another checkout
(e.g. the code before a change) with the same client.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import harness
import httpx
import numpy as np

DEMO = harness.REPO / "hipporag_neo4j" / "demo"
KEY = "bench-rw-key"
NAMESPACE = "bench_rw_load"
PEOPLE = ["Ada Novak", "Bruno Salas", "Chen Wei", "Dana Okafor", "Elif Kaya", "Femi Adeyemi", "Greta Lund"]
PLACES = ["Stanford University", "Debrecen", "Semmelweis University", "Budapest", "Oslo", "Lagos", "Lyon"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def read_env_file(path: Path) -> dict[str, str]:
    return dict(
        line.removeprefix("export ").split("=", 1)
        for line in path.read_text().splitlines()
        if line.startswith("export ")
    )


class Server:
    """``hipporag-neo4j serve`` from ``checkout`` on a free loopback port, its log in ``log``."""

    def __init__(self, checkout: Path, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        full = {k: v for k, v in os.environ.items() if not k.startswith("HIPPORAG_")}
        full.update(env, PYTHONPATH=str(checkout), HIPPORAG_SERVER__API_KEY=KEY)
        command = [sys.executable, "-m", "hipporag_neo4j", "serve", "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--create"]
        with log.open("w") as out:
            self.proc = subprocess.Popen(
                command, cwd=checkout, env=full, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited ({self.proc.returncode}): {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/ready", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"serve not ready in 300 s: {log.read_text()[-2000:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def note(run: str, k: int) -> dict[str, str]:
    person, place = PEOPLE[k % len(PEOPLE)], PLACES[(k // len(PEOPLE)) % len(PLACES)]
    text = f"{person} gave talk {k} of series {run} at {place}, about memory research with {PEOPLE[k % 3]}."
    return {"id": f"rw-{run}-{k:05d}", "text": text, "title": f"Talk {k} ({run})"}


def one_run(
    url: str, kind: str, clients: int, requests: int, write_every: int, questions: list[str], run: str
) -> dict[str, Any]:
    reads: list[float] = []
    writes: list[float] = []
    errors: list[str] = []
    written: list[str] = []
    lock = threading.Lock()
    start_gate = threading.Barrier(clients)

    def client(c: int) -> None:
        with httpx.Client(base_url=url, headers={"X-API-Key": KEY}, timeout=120) as http:
            start_gate.wait()
            for j in range(requests):
                is_write = kind == "rw" and (j + c) % write_every == 0
                began = time.perf_counter()
                try:
                    if is_write:
                        body = note(run, c * requests + j)
                        response = http.post("/passages", json={"passages": [body]})
                    else:
                        question = questions[(c + j) % len(questions)]
                        response = http.post("/query", json={"query": question, "top_k": 5})
                    ok = response.status_code == 200
                    detail = f"{response.status_code} {response.text[:200]}"
                except httpx.HTTPError as exc:
                    ok, detail = False, f"{type(exc).__name__}: {exc}"
                took = time.perf_counter() - began
                with lock:
                    (writes if is_write else reads).append(took)
                    if not ok:
                        errors.append(detail)
                    elif is_write:
                        written.append(body["id"])

    load_start = harness.load_average()
    began = time.perf_counter()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    load_end = harness.load_average()
    if written:  # every run starts from the same graph
        with httpx.Client(base_url=url, headers={"X-API-Key": KEY}, timeout=600) as http:
            gone = http.request("DELETE", "/passages", json={"ids": written})
            gone.raise_for_status()
            http.post("/query", json={"query": questions[0], "top_k": 5}).raise_for_status()
    return {
        "kind": kind,
        "clients": clients,
        "reads": percentiles(reads),
        "writes": percentiles(writes),
        "errors": len(errors),
        "error_samples": errors[:5],
        "written": len(written),
        "wall_s": round(wall, 3),
        "load_start": load_start,
        "load_end": load_end,
    }


def percentiles(seconds: list[float]) -> dict[str, float]:
    if not seconds:
        return {"n": 0}
    ms = np.asarray(seconds) * 1000.0
    out = {"n": len(ms)}
    for p in (50, 95, 99):
        out[f"p{p}_ms"] = round(float(np.percentile(ms, p)), 1)
    out["max_ms"] = round(float(ms.max()), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=["embedded", "neo4j"], default="embedded")
    parser.add_argument("--neo4j-env", type=Path, help="neo4j.env of a running server (--store neo4j)")
    parser.add_argument("--clients", default="16,32", help="client counts, comma-separated")
    parser.add_argument("--requests", type=int, default=30, help="requests per client per run")
    parser.add_argument("--write-every", type=int, default=10)
    parser.add_argument("--notes", type=int, default=26)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkout", type=Path, default=harness.REPO, help="run the server from here")
    parser.add_argument("--stem", help="result file stem (default rw_load_<store>)")
    args = parser.parse_args()
    harness.require_rounds(args.rounds)
    header = harness.run_header()
    counts = [int(x) for x in args.clients.split(",")]
    corpus = json.loads((DEMO / "corpus.json").read_text(encoding="utf-8"))[: args.notes]
    questions = [q["question"] for q in json.loads((DEMO / "questions.json").read_text(encoding="utf-8"))]

    env: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-rw-") as tmp:
        if args.store == "neo4j":
            if args.neo4j_env is None:
                sys.exit("--store neo4j needs --neo4j-env (the neo4j.env of a running server)")
            found = read_env_file(args.neo4j_env)
            if not found["HIPPORAG_NEO4J_URI"].split("//", 1)[1].startswith(("127.0.0.1", "localhost")):
                sys.exit("loopback only: the Neo4j server must be on 127.0.0.1")
            env.update(
                HIPPORAG_NEO4J__URI=found["HIPPORAG_NEO4J_URI"],
                HIPPORAG_NEO4J__PASSWORD=found["HIPPORAG_NEO4J_PASSWORD"],
                HIPPORAG_NEO4J__NAMESPACE=NAMESPACE,
                HIPPORAG_NEO4J__PPR_ENGINE="local",
            )
            harness.drop_namespace_plain(
                found["HIPPORAG_NEO4J_URI"], found["HIPPORAG_NEO4J_PASSWORD"], NAMESPACE
            )
        else:
            env["HIPPORAG_STORE__PATH"] = str(Path(tmp) / "kb")
        server = Server(args.checkout, env, Path(tmp) / "serve.log")
        runs: list[dict[str, Any]] = []
        try:
            with httpx.Client(base_url=server.url, headers={"X-API-Key": KEY}, timeout=600) as http:
                http.post("/passages", json={"passages": corpus}).raise_for_status()
                stats = http.get("/stats").json()
                for q in questions:  # warm: snapshot, caches
                    http.post("/query", json={"query": q, "top_k": 5}).raise_for_status()
            for round_no, order in enumerate(harness.interleaved(["reads", "rw"], args.rounds)):
                for clients in counts:
                    for kind in order:
                        run = one_run(
                            server.url,
                            kind,
                            clients,
                            args.requests,
                            args.write_every,
                            questions,
                            f"r{round_no}c{clients}",
                        )
                        run["round"] = round_no
                        run["system"] = kind
                        run["read_p99_ms"] = run["reads"].get("p99_ms")
                        runs.append(run)
                        print(
                            json.dumps(
                                {
                                    k: run[k]
                                    for k in (
                                        "round",
                                        "kind",
                                        "clients",
                                        "reads",
                                        "writes",
                                        "errors",
                                        "load_start",
                                    )
                                }
                            ),
                            flush=True,
                        )
        finally:
            server.stop()
            if args.store == "neo4j":
                harness.drop_namespace_plain(
                    env["HIPPORAG_NEO4J__URI"], env["HIPPORAG_NEO4J__PASSWORD"], NAMESPACE
                )
    header["load_after"] = harness.load_average()
    comparisons = {
        str(c): harness.compare_or_refusal(
            [r for r in runs if r["clients"] == c], "reads", "rw", "read_p99_ms"
        )
        for c in counts
    }
    checkout_commit = subprocess.run(
        ["git", "-C", str(args.checkout), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    data = {
        **header,
        "store": args.store,
        "checkout": str(args.checkout),
        "checkout_commit": checkout_commit,
        "base_stats": stats,
        "runs": runs,
        "comparisons": comparisons,
        "settings": vars(args) | {"neo4j_env": str(args.neo4j_env), "checkout": str(args.checkout)},
    }
    harness.write_results(args.stem or f"rw_load_{args.store}", data, markdown(data, counts))


def markdown(data: dict[str, Any], counts: list[int]) -> str:
    s = data["settings"]
    lines = [
        harness.md_header(f"Readers and writers on one serve process ({data['store']} store)", data),
        f"One `serve` (API key) from `{data['checkout']}` (commit `{data.get('checkout_commit', '')[:12]}`) "
        f"over {data['base_stats'].get('passages')} demo "
        f"notes; {s['requests']} requests per client per run; `rw`: every {s['write_every']}th request of "
        "each client a one-passage write (deleted after the run). Latencies in ms. Target (issue 36): "
        "read p99 of `rw` at most 1.5x that of `reads`, 0 errors.",
        "",
    ]
    rows = []
    for r in data["runs"]:
        rd, wr = r["reads"], r["writes"]
        rows.append(
            [
                r["round"],
                r["clients"],
                r["kind"],
                rd.get("p50_ms"),
                rd.get("p99_ms"),
                rd.get("max_ms"),
                wr.get("n", 0),
                wr.get("p50_ms"),
                wr.get("p99_ms"),
                r["errors"],
                r["wall_s"],
                f"{r['load_start'][0]} / {r['load_end'][0]}",
            ]
        )
    lines.append(
        harness.md_table(
            [
                "round",
                "clients",
                "run",
                "read p50",
                "read p99",
                "read max",
                "writes",
                "write p50",
                "write p99",
                "errors",
                "wall s",
                "load 1m start / end",
            ],
            rows,
        )
    )
    lines += ["", "Read p99, `rw` / `reads` (median of interleaved pairs, spread):", ""]
    lines.append(
        harness.md_table(
            ["clients", "ratio"], [[c, harness.ratio_cell(data["comparisons"][str(c)])] for c in counts]
        )
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
