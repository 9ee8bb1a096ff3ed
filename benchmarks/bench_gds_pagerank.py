"""The ``gds-pagerank`` suite: the server-side PageRank of the GDS engines on an indexed namespace (issue 35
item 4). Needs a namespace indexed already (``index_openie`` of MuSiQue, say) on a running server, and
optionally the embedded store of the same OpenIE file.

* end to end: ``--query-rounds`` passes over the questions, per question and mode the embedded store (when
  ``--embedded``), the Neo4j store with the server's GDS engine and with ``local`` (order rotating); p50 per
  pass, ratios under the harness's protocol (pairs at loads more than 1.0 apart dropped);
* concurrency: the GDS statements those questions sent (captured with their parameters), replayed with each
  ``--concurrency`` value, interleaved; p50 per value and whether the answers are those of the first value
  (passage ids in order, scores to 1e-9 relative, explaining phrases);
* supersteps: ``gds.pageRank.stats`` from each question's seeds with ``maxIterations`` 100 against the cap
  ``engines.gds.supersteps`` derives from damping and tolerance: GDS's own ``ranIterations`` and the cap.

    python benchmarks/run.py gds-pagerank --uri bolt://127.0.0.1:7687 --namespace NS --embedded DIR
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import time
from typing import Any

import neo4j
from harness import (
    QUESTIONS_FILE,
    TIMED_RETRIEVAL,
    compare_or_refusal,
    load_average,
    md_header,
    md_table,
    ratio_cell,
    require_rounds,
    run_header,
    write_results,
)

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.embedding.encoder import create_embedder
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.neo4j.cypher import load_query
from hipporag_neo4j.stores.neo4j.engines.gds import supersteps

MODES = ("hipporag2", "hipporag")


def open_memory(args: argparse.Namespace, system: str, embedder: Any) -> HippoRAG:
    if system == "embedded":
        settings = load_settings(
            {"store": {"backend": "embedded", "path": args.embedded}, "retrieval": TIMED_RETRIEVAL},
            env_file=None,
        )
    else:
        neo = {"uri": args.uri, "password": args.password, "namespace": args.namespace, "ppr_engine": system}
        settings = load_settings(
            {"store": {"backend": "neo4j"}, "neo4j": neo, "retrieval": TIMED_RETRIEVAL}, env_file=None
        )
    return HippoRAG(settings, embedder=embedder)


def end_to_end(
    args: argparse.Namespace, memories: dict[str, HippoRAG], questions: list[str]
) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    """Passes over the questions; the GDS statements of the first pass, captured."""
    captured: list[tuple[str, dict[str, Any]]] = []
    runner = memories["gds"].store.runner  # type: ignore[attr-defined]
    original = runner.read

    def read(name: str, *a: Any, **kw: Any) -> Any:
        if name.startswith(("gds_passage", "gds_ppr")):
            captured.append((name, dict(kw)))
        return original(name, *a, **kw)

    names = list(memories)
    for mode in MODES:  # warm: copies read, projections made
        for name in names:
            memories[name].retrieve(questions[0], mode=mode, top_k=10)  # type: ignore[arg-type]
    runner.read = read
    runs: list[dict[str, Any]] = []
    for pass_no in range(args.query_rounds):
        walls: dict[tuple[str, str], list[float]] = {}
        start_load = load_average()
        for qi, question in enumerate(questions):
            for mode in MODES:
                shift = (qi + pass_no) % len(names)
                for name in names[shift:] + names[:shift]:
                    t = time.perf_counter()
                    memories[name].retrieve(question, mode=mode, top_k=10)  # type: ignore[arg-type]
                    walls.setdefault((mode, name), []).append(time.perf_counter() - t)
        if pass_no == 0:
            runner.read = original
        end_load = load_average()
        runs += [
            {
                "mode": mode,
                "system": name,
                "round": pass_no + 1,
                "p50_ms": round(1000 * statistics.median(w), 3),
                "load_start": start_load,
                "load_end": end_load,
            }
            for (mode, name), w in walls.items()
        ]
    return runs, captured


def same(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    if [r["passage_id"] for r in a] != [r["passage_id"] for r in b]:
        return False
    for x, y in zip(a, b, strict=True):
        if abs(x["score"] - y["score"]) > 1e-9 * abs(x["score"]):
            return False
        if [t["phrase"] for t in x["top_phrases"]] != [t["phrase"] for t in y["top_phrases"]]:
            return False
    return True


def concurrency(
    driver: neo4j.Driver, captured: list[tuple[str, dict[str, Any]]], values: list[int], rounds: int
) -> dict[str, Any]:
    times: dict[tuple[int, str], list[float]] = {}
    answers: dict[tuple[int, int], list[dict[str, Any]]] = {}
    loads = [load_average()]
    with driver.session() as session:
        for round_no in range(rounds):
            for qi, (name, params) in enumerate(captured):
                shift = (qi + round_no) % len(values)
                for value in values[shift:] + values[:shift]:
                    t = time.perf_counter()
                    rows = [
                        dict(r)
                        for r in session.run(load_query(name).text, **{**params, "concurrency": value})
                    ]
                    times.setdefault((value, name), []).append(time.perf_counter() - t)
                    if round_no == 0:
                        answers[(value, qi)] = rows
            loads.append(load_average())
    equal: dict[tuple[int, str], int] = {}
    for qi, (name, _) in enumerate(captured):
        for value in values:
            key = (value, name)
            equal[key] = equal.get(key, 0) + same(answers[(values[0], qi)], answers[(value, qi)])
    return {
        "loads": loads,
        "rows": [
            {
                "statement": name,
                "concurrency": value,
                "p50_ms": round(1000 * statistics.median(ts), 2),
                "calls": len(ts),
                "same_answers_as_first": equal.get((value, name)),
            }
            for (value, name), ts in sorted(times.items(), key=lambda kv: (kv[0][1], kv[0][0]))
        ],
    }


def ran_iterations(
    driver: neo4j.Driver, captured: list[tuple[str, dict[str, Any]]], walk: WalkParams
) -> dict[str, Any]:
    """GDS's ranIterations uncapped (maxIterations 100) from each statement's first seed."""
    ran = []
    with driver.session() as session:
        for _, params in captured:
            label = "Passage" if params["seeds"][0].get("kind") == "passage" else "Phrase"
            row = session.run(
                f"MATCH (s:{label} {{namespace: $namespace, id: $id}}) "
                "CALL gds.pageRank.stats($graph_name, {sourceNodes: [s], dampingFactor: $damping, "
                "maxIterations: 100, tolerance: $tolerance, relationshipWeightProperty: 'weight'}) "
                "YIELD ranIterations RETURN ranIterations",
                namespace=params["namespace"],
                id=params["seeds"][0]["id"],
                graph_name=params["graph_name"],
                damping=walk.damping,
                tolerance=walk.tolerance,
            ).single()
            if row is not None:
                ran.append(int(row["ranIterations"]))
    return {"cap": supersteps(walk), "ran_uncapped_max": max(ran, default=None), "runs": len(ran)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--uri", required=True)
    parser.add_argument("--password", default=os.environ.get("HIPPORAG_NEO4J_PASSWORD", ""))
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--embedded", default=None, help="the embedded store of the same corpus")
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--query-rounds", type=int, default=3)
    parser.add_argument("--concurrency", default="1,2,4")
    parser.add_argument("--stem", default="gds_pagerank")
    args = parser.parse_args()
    require_rounds(args.query_rounds, "--query-rounds")
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)
    header = run_header()
    questions = [q["question"] for q in json.loads(QUESTIONS_FILE.read_text())][: args.questions]
    embedder = create_embedder(load_settings(env_file=None).embedding)
    systems = (["embedded"] if args.embedded else []) + ["gds", "local"]
    memories = {s: open_memory(args, s, embedder) for s in systems}
    engine = memories["gds"].store.capabilities().ppr_engine  # type: ignore[attr-defined]
    runs, captured = end_to_end(args, memories, questions)
    walk = WalkParams.of(memories["gds"].settings.retrieval)
    driver = neo4j.GraphDatabase.driver(args.uri, auth=("neo4j", args.password))
    try:
        replay = concurrency(
            driver, captured, [int(v) for v in args.concurrency.split(",")], args.query_rounds
        )
        iterations = ran_iterations(driver, captured, walk)
    finally:
        driver.close()
        for memory in memories.values():
            memory.close()
    base = "embedded" if args.embedded else "local"
    protocol = {
        mode: {
            other: compare_or_refusal([r for r in runs if r["mode"] == mode], base, other, "p50_ms")
            for other in systems
            if other != base
        }
        for mode in MODES
    }
    data = {
        **header,
        "namespace": args.namespace,
        "gds_engine": engine,
        "questions": len(questions),
        "runs": runs,
        "protocol": protocol,
        "concurrency": replay,
        "supersteps": iterations,
        "load_after": load_average(),
    }
    out = [md_header(f"GDS PageRank on namespace {args.namespace} ({engine})", header)]
    out.append("\n### Warm p50 per mode (ms, per pass) and ratios under the protocol\n")
    rows = []
    for mode in MODES:
        for name in systems:
            p50s = [r["p50_ms"] for r in runs if r["mode"] == mode and r["system"] == name]
            ratio = ratio_cell(protocol[mode][name]) if name != base else "base"
            rows.append([mode, engine if name == "gds" else name, ", ".join(f"{p:.1f}" for p in p50s), ratio])
    out.append(md_table(["mode", "system", "p50 per pass", f"/ {base}"], rows))
    out.append("\n### Threads of each GDS call (`concurrency`), the captured statements replayed\n")
    out.append(f"loads per round: {replay['loads']}\n")
    out.append(
        md_table(
            ["statement", "concurrency", "p50 ms", "calls", "same answers as the first value"],
            [
                [r["statement"], r["concurrency"], r["p50_ms"], r["calls"], r["same_answers_as_first"]]
                for r in replay["rows"]
            ],
        )
    )
    out.append(
        f"\n### Supersteps\n\nmaxIterations from damping {walk.damping} and tolerance {walk.tolerance}: "
        f"{iterations['cap']}; GDS's ranIterations uncapped (maxIterations 100), largest over "
        f"{iterations['runs']} runs: {iterations['ran_uncapped_max']}\n"
    )
    json_path, md_path = write_results(args.stem, data, "\n".join(out))
    print(md_path.read_text())
    print(f"written to {json_path} and {md_path}")


if __name__ == "__main__":
    main()
