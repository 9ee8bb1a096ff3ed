"""The ``neo4j`` suite: the Neo4j store side by side with the embedded store on MuSiQue (or, with
``--dataset tickets``, issue 37's generated ticket archive in ``tests/data/tickets``, extracted offline with
spaCy), live server, per PPR engine; and a synthetic namespace of ~100k phrases and ~1M edges where a
server-side PageRank may pay.

Same process, same encoder, rounds interleaved under the harness's protocol (at least 3 rounds, each
run's 1-minute load recorded, pairs at loads more than 1.0 apart dropped, the median of the per-round
ratios with their spread, no ratio from fewer than two pairs).

* server: ``--pair latest|lts`` starts one with ``scripts/neo4j_server.py`` in a temporary home (free
  loopback ports; latest = Neo4j 2026.01 + GDS 2.26: ``gds-weighted``; lts = 5.26 + GDS 2.13:
  ``gds-linear``) and stops it at the end; or ``--uri`` / ``HIPPORAG_NEO4J_PASSWORD`` for your own;
* engines: ``--engines gds,local``: one Neo4j memory per engine on the same namespace (``gds`` = the
  server's GDS engine, ``local`` = ``neo4j.ppr_engine=local``: the in-process copy);
* indexing: ``--index-rounds N`` rounds of (embedded, Neo4j; who goes first alternates), each a fresh
  store indexed with ``index_openie`` (encoder included); ``--index-rounds 0``: each store indexed once,
  wall times reported, no ratio claimed (the short run);
* projection build: for each GDS engine, each projection kind (phrase graph; phrases + passages) built
  ``--projection-repeats`` times under fresh names (Cypher aggregation, ``gds.graph.project`` in a
  ``WITH``: the only form the store uses, as a native projection cannot filter on the namespace
  property), median seconds;
* queries: ``--query-rounds`` passes over the questions; per question and mode every system (embedded,
  then each engine; who goes first rotates) after warm-up queries; p50/p95 of the wall time and of each
  retriever stage; each pass is a round of the protocol, embedded against each engine;
* answers: per mode and engine, how many questions have the identical top 10 (ids, in order);
* synthetic (``--synthetic-phrases``, 0 to skip): a namespace of N phrases, N/8 passages (8 "home"
  phrases each, mentioned), and ``--synthetic-edges`` RELATION/SYNONYM edges (9 relation edges per
  phrase to a uniformly drawn older phrase, so hubs form, and 1 synonym edge), written with UNWIND
  statements straight into Neo4j (no vectors: only PPR is measured); per engine the first call (the
  projection, or the in-process copy's graph read) and the warm p50 of HippoRAG's
  ``graph_passage_scores`` (5 phrase seeds) and HippoRAG 2's ``passage_node_scores`` (5 phrase + 5
  passage seeds), rounds interleaved between engines.

    python benchmarks/run.py neo4j --pair latest --questions 40 --index-rounds 0 --query-rounds 3
    python benchmarks/run.py neo4j --pair lts --questions 40 --index-rounds 0 --query-rounds 3
    python benchmarks/run.py neo4j --pair lts --dataset tickets --engines local,gds --synthetic-phrases 0
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from harness import (
    OPENIE_FILE,
    QUESTIONS_FILE,
    REPO,
    TIMED_RETRIEVAL,
    compare_or_refusal,
    dir_size_mib,
    drop_namespace_plain,
    interleaved,
    latency_summary,
    load_average,
    md_header,
    md_table,
    ratio_cell,
    require_files,
    require_rounds,
    run_header,
    start_server,
    stop_server,
    write_results,
)

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.embedding.encoder import create_embedder
from hipporag_neo4j.extraction.recorded import load_recorded_extraction
from hipporag_neo4j.settings import Settings, load_settings
from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.neo4j import Neo4jStore
from hipporag_neo4j.stores.neo4j.engines import read_graph_version
from hipporag_neo4j.stores.neo4j.projection import graph_name

MODES = ("hipporag2", "hipporag", "dense")
STORES = ("embedded", "neo4j")
TICKETS = REPO / "tests" / "data" / "tickets"


def openie_subset(path: Path, passages: int | None, into: Path) -> tuple[Path, int]:
    """The OpenIE file (or its first ``passages`` documents, written to ``into``) and its triple count."""
    records = [r for r in load_recorded_extraction(path).records if r.passage is not None]
    if passages is not None and passages < len(records):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["docs"] = data["docs"][:passages]
        target = into / "openie_subset.json"
        target.write_text(json.dumps(data), encoding="utf-8")
        path, records = target, records[:passages]
    return path, sum(len(r.extraction.triples) for r in records)


def settings_for(kind: str, args: argparse.Namespace, root: Path, namespace: str) -> Settings:
    """``embedded``, or ``neo4j:<engine>`` (``gds`` or ``local``) on one Neo4j namespace."""
    if kind == "embedded":
        return load_settings(
            {"store": {"backend": "embedded", "path": str(root / namespace)}, "retrieval": TIMED_RETRIEVAL},
            env_file=None,
        )
    return load_settings(
        {
            "store": {"backend": "neo4j"},
            "retrieval": TIMED_RETRIEVAL,
            "neo4j": {
                "uri": args.uri,
                "password": args.password,
                "namespace": namespace,
                "ppr_engine": kind.split(":", 1)[1],
                "vector_search": args.vector_search,
            },
        },
        env_file=None,
    )


def top_ids(
    memory: HippoRAG, question: str, mode: str, k: int
) -> tuple[list[str], list[float], float, dict[str, float]]:
    start = time.perf_counter()
    result = memory.retrieve(question, mode=mode, top_k=k)  # type: ignore[arg-type]
    wall = time.perf_counter() - start
    return (
        [p.passage.id for p in result.passages],
        [p.score for p in result.passages],
        wall,
        dict(result.timings),
    )


# --- GDS projection build time -------------------------------------------------------------------
def projection_times(store: Neo4jStore, repeats: int) -> dict[str, Any]:
    """Each projection kind built ``repeats`` times under a fresh name (then dropped): seconds."""
    version = read_graph_version(store.runner, store.namespace)
    found: dict[str, Any] = {}
    for kind in ("phrases", "passages"):
        catalog = store.projections(kind)  # type: ignore[arg-type]
        seconds, sizes = [], {}
        for attempt in range(repeats):
            name = graph_name(store.database, store.namespace, 10_000_000 + version * 100 + attempt, kind)  # type: ignore[arg-type]
            start = time.perf_counter()
            made = catalog._project(name, version)
            seconds.append(time.perf_counter() - start)
            sizes = {"nodes": made.node_count, "relationships": made.relationship_count}
            store.runner.read("gds_drop_graph", leader=True, graph_name=name)
            catalog.made_here.discard(name)
        found[kind] = {
            "median_s": round(statistics.median(seconds), 3),
            "runs_s": [round(x, 3) for x in seconds],
            **sizes,
            "load": load_average(),
        }
    return found


# --- synthetic namespace -----------------------------------------------------------------------------
def write_synthetic(store: Neo4jStore, phrases: int, edges: int, seed: int) -> dict[str, Any]:
    """N phrases, N/8 passages mentioning 8 home phrases each, ``edges`` edges (9 RELATION per phrase to a
    uniformly drawn older phrase, the rest SYNONYM), in UNWIND batches; the namespace's graph version
    bumped once at the end. Seconds per part."""
    rng = np.random.default_rng(seed)
    n_passages = max(1, phrases // 8)
    per = max(1, edges // max(1, phrases))
    n_relation = min(edges, (per - 1) * phrases) if per > 1 else 0
    timings: dict[str, float] = {}
    runner = store.runner

    def unwind(statement: str, rows: list[dict[str, Any]], batch: int = 20_000) -> None:
        for i in range(0, len(rows), batch):
            part = rows[i : i + batch]
            runner.transaction(
                lambda tx, part=part: tx._tx.run(statement, rows=part, namespace=store.namespace).consume(),
                write=True,
            )  # type: ignore[union-attr]

    start = time.perf_counter()
    unwind(
        "UNWIND $rows AS r "
        "CREATE (:Phrase {namespace: $namespace, id: r.id, name: r.name, passage_count: 1})",
        [{"id": f"s{i:07d}", "name": f"synthetic phrase {i}"} for i in range(phrases)],
    )
    unwind(
        "UNWIND $rows AS r CREATE (:Passage {namespace: $namespace, id: r.id, title: r.id, text: r.id})",
        [{"id": f"p{i:07d}"} for i in range(n_passages)],
    )
    timings["nodes_s"] = time.perf_counter() - start
    start = time.perf_counter()
    unwind(
        "UNWIND $rows AS r MATCH (d:Passage {namespace: $namespace, id: r.p}) "
        "MATCH (x:Phrase {namespace: $namespace, id: r.x}) CREATE (d)-[:MENTIONS {count: 1}]->(x)",
        [{"p": f"p{i // 8:07d}", "x": f"s{i:07d}"} for i in range(min(phrases, 8 * n_passages))],
    )
    timings["mentions_s"] = time.perf_counter() - start
    start = time.perf_counter()
    sources = np.repeat(np.arange(1, phrases), max(1, n_relation // max(1, phrases - 1)))[:n_relation]
    targets = (rng.random(len(sources)) * sources).astype(np.int64)
    unwind(
        "UNWIND $rows AS r MATCH (s:Phrase {namespace: $namespace, id: r.s}) "
        "MATCH (t:Phrase {namespace: $namespace, id: r.t}) "
        "CREATE (s)-[:RELATION {weight: r.w, predicates: ['p']}]->(t)",
        [
            {"s": f"s{s:07d}", "t": f"s{t:07d}", "w": 1.0}
            for s, t in zip(sources.tolist(), targets.tolist(), strict=True)
        ],
    )
    n_synonym = edges - len(sources)
    syn_s = rng.integers(1, phrases, n_synonym)
    syn_t = (rng.random(n_synonym) * syn_s).astype(np.int64)
    unwind(
        "UNWIND $rows AS r MATCH (s:Phrase {namespace: $namespace, id: r.s}) "
        "MATCH (t:Phrase {namespace: $namespace, id: r.t}) CREATE (s)-[:SYNONYM {score: r.w}]->(t)",
        [
            {"s": f"s{t:07d}", "t": f"s{s:07d}", "w": 0.9}
            for s, t in zip(syn_s.tolist(), syn_t.tolist(), strict=True)
        ],
    )
    timings["edges_s"] = time.perf_counter() - start
    runner.write(lambda tx: tx.run("meta_bump_version", namespace=store.namespace))
    return {
        "phrases": phrases,
        "passages": n_passages,
        "relation_edges": len(sources),
        "synonym_edges": int(n_synonym),
        **{k: round(v, 1) for k, v in timings.items()},
    }


def synthetic_queries(
    stores: dict[str, Neo4jStore], phrases: int, passages: int, queries: int, rounds: int, seed: int
) -> dict[str, Any]:
    """Per engine: the first call of each step (projection / graph read) and warm p50s, rounds
    interleaved between engines."""
    rng = np.random.default_rng(seed + 1)
    seeds = [
        (
            {f"s{i:07d}": 1.0 for i in rng.choice(phrases, 5, replace=False).tolist()},
            {f"p{i:07d}": 0.2 for i in rng.choice(passages, 5, replace=False).tolist()},
        )
        for _ in range(queries)
    ]
    d, it, tol = 0.5, 100, 1e-7

    def step(store: Neo4jStore, which: str, k: int) -> float:
        phrase_seeds, passage_seeds = seeds[k]
        start = time.perf_counter()
        if which == "graph_passage_scores":
            store.view().graph_passage_scores(phrase_seeds, WalkParams(d, it, tol), 200, 0)
        else:
            store.view().passage_node_scores(phrase_seeds, passage_seeds, WalkParams(d, it, tol), 200, 0)
        return time.perf_counter() - start

    found: dict[str, Any] = {name: {} for name in stores}
    for which in ("graph_passage_scores", "passage_node_scores"):
        for name, store in stores.items():
            found[name][which] = {"first_call_s": round(step(store, which, 0), 3)}
    runs: list[dict[str, Any]] = []
    for round_, order in enumerate(interleaved(list(stores), rounds)):
        for name in order:
            for which in ("graph_passage_scores", "passage_node_scores"):
                load_start = load_average()
                walls = [step(stores[name], which, k) for k in range(1, queries)]
                runs.append(
                    {
                        "system": name,
                        "step": which,
                        "round": round_,
                        "p50_ms": round(1000 * statistics.median(walls), 2),
                        "load_start": load_start,
                        "load_end": load_average(),
                    }
                )
    for name in stores:
        for which in ("graph_passage_scores", "passage_node_scores"):
            mine = [r["p50_ms"] for r in runs if r["system"] == name and r["step"] == which]
            found[name][which]["warm_p50_ms_per_round"] = mine
            found[name][which]["warm_p50_ms"] = round(statistics.median(mine), 2)
    names = list(stores)
    comparisons = {}
    if "local" in stores:
        for other in names:
            if other != "local":
                for which in ("graph_passage_scores", "passage_node_scores"):
                    comparisons[f"{other}/local {which}"] = compare_or_refusal(
                        [r for r in runs if r["step"] == which], "local", other, "p50_ms"
                    )
    return {"engines": found, "rounds": runs, "protocol": comparisons}


def open_neo4j(kind: str, args: argparse.Namespace, root: Path, namespace: str, embedder: Any) -> HippoRAG:
    return HippoRAG(settings_for(kind, args, root, namespace), embedder=embedder)


def engine_label(memory: HippoRAG) -> str:
    """The engine the memory's queries run: ``auto`` resolved (``local`` or the server's GDS engine)."""
    store = memory.store
    assert isinstance(store, Neo4jStore)
    return store.engine_choice()[0]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pair", choices=("latest", "lts"), help="start this server pair (else --uri)")
    parser.add_argument("--heap", default="3g", help="JVM heap of the server started with --pair")
    parser.add_argument("--uri", default="bolt://127.0.0.1:27687")
    parser.add_argument("--password", default=None, help="default: HIPPORAG_NEO4J_PASSWORD")
    parser.add_argument("--engines", default="gds,local", help="Neo4j PPR engines: gds (the server's), local")
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--passages", type=int, default=None, help="index only the first N (smoke runs)")
    parser.add_argument("--index-rounds", type=int, default=0, help="0: index once each, no ratio claimed")
    parser.add_argument("--query-rounds", type=int, default=3, help="passes over the questions (rounds)")
    parser.add_argument("--projection-repeats", type=int, default=3)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--vector-search", choices=("client", "index"), default="client")
    parser.add_argument("--skip-musique", action="store_true", help="no data set part (synthetic only)")
    parser.add_argument(
        "--dataset",
        choices=("musique", "tickets"),
        default="musique",
        help="musique: the published OpenIE; tickets: tests/data/tickets, spaCy extraction",
    )
    parser.add_argument("--synthetic-phrases", type=int, default=100_000, help="0: no synthetic part")
    parser.add_argument("--synthetic-edges", type=int, default=1_000_000)
    parser.add_argument("--synthetic-queries", type=int, default=20)
    parser.add_argument("--synthetic-rounds", type=int, default=3)
    parser.add_argument(
        "--transaction-memory",
        default="1800m",
        help="dbms.memory.transaction.total.max of the server started with --pair: a Cypher-aggregation "
        "projection of ~1M edges is one transaction of more than the 512m scripts/neo4j_server.py sets by "
        "default (seen live: MemoryPoolOutOfMemoryError)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--stem", default=None, help="default: neo4j_vs_embedded_musique[_<pair>]")
    args = parser.parse_args()
    if args.index_rounds:
        require_rounds(args.index_rounds, "--index-rounds")
    require_rounds(args.query_rounds, "--query-rounds")
    require_rounds(args.synthetic_rounds, "--synthetic-rounds")
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)  # expected ones; see issue 17 part 3
    stem = args.stem or (f"neo4j_vs_embedded_{args.dataset}" + (f"_{args.pair}" if args.pair else ""))
    header = run_header()
    root = Path(tempfile.mkdtemp(prefix="bench-neo4j-vs-embedded-"))
    home = root / "server"
    if args.pair:
        args.uri, args.password = start_server(args.pair, home, args.heap, args.transaction_memory)
    elif args.password is None:
        args.password = os.environ.get("HIPPORAG_NEO4J_PASSWORD", "")
    engines = [f"neo4j:{e}" for e in args.engines.split(",")]
    data: dict[str, Any] = {**header, "pair": args.pair, "uri": args.uri}
    namespaces: list[str] = []
    try:
        if not args.skip_musique:
            data.update(musique(args, root, engines, namespaces))
        if args.synthetic_phrases:
            namespace = f"bench_syn_{uuid.uuid4().hex[:10]}"
            namespaces.append(namespace)
            stores: dict[str, Neo4jStore] = {}
            for kind in engines:
                store = Neo4jStore(settings_for(kind, args, root, namespace).neo4j)
                store.open("synthetic-no-vectors", 384)
                stores[store.capabilities().ppr_engine] = store
            first = next(iter(stores.values()))
            print("writing the synthetic namespace", flush=True)
            written = write_synthetic(first, args.synthetic_phrases, args.synthetic_edges, args.seed)
            print(written, flush=True)
            synthetic: dict[str, Any] = {
                "graph": written,
                "transaction_memory": args.transaction_memory if args.pair else None,
            }
            synthetic["projection_build"] = {
                name: projection_times(store, args.projection_repeats)
                for name, store in stores.items()
                if name.startswith("gds")
            }
            synthetic.update(
                synthetic_queries(
                    stores,
                    args.synthetic_phrases,
                    written["passages"],
                    args.synthetic_queries,
                    args.synthetic_rounds,
                    args.seed,
                )
            )
            data["synthetic"] = synthetic
            for store in stores.values():
                store.close()
    finally:
        if not args.keep:
            for namespace in namespaces:
                try:
                    drop_namespace_plain(args.uri, args.password, namespace)
                except Exception as exc:
                    print(f"could not drop {namespace}: {exc}")
        shutil.rmtree(root / "kb", ignore_errors=True)
        if args.pair:
            stop_server(args.pair, home)
        shutil.rmtree(root, ignore_errors=True)
    data["load_after"] = load_average()
    json_path, md_path = write_results(stem, data, markdown(data))
    print(md_path.read_text())
    print(f"written to {json_path} and {md_path}")


def musique(
    args: argparse.Namespace, root: Path, engines: list[str], namespaces: list[str]
) -> dict[str, Any]:
    modes = args.modes.split(",")
    if args.dataset == "tickets":
        corpus = json.loads((TICKETS / "corpus.json").read_text(encoding="utf-8"))[: args.passages]
        questions_file = TICKETS / "questions.json"
        triples = 0
    else:
        require_files(OPENIE_FILE, QUESTIONS_FILE)
        questions_file = QUESTIONS_FILE
        openie, triples = openie_subset(OPENIE_FILE, args.passages, root)
    questions = [q["question"] for q in json.loads(questions_file.read_text())][: args.questions]
    embedder = create_embedder(load_settings(env_file=None).embedding)
    embedder.encode(["warm up the encoder"])
    indexing: dict[str, list[dict[str, Any]]] = {kind: [] for kind in STORES}
    memories: dict[str, HippoRAG] = {}
    rounds = args.index_rounds or 1
    for round_, order in enumerate(interleaved(STORES, rounds) if rounds > 1 else [list(STORES)]):
        for kind in order:
            namespace = f"bench_{uuid.uuid4().hex[:10]}"
            if kind == "neo4j":
                namespaces.append(namespace)
            memory = HippoRAG(
                settings_for(kind if kind == "embedded" else engines[0], args, root, namespace),
                embedder=embedder,
            )
            load_start = load_average()
            start = time.perf_counter()
            report = memory.index(corpus) if args.dataset == "tickets" else memory.index_openie(openie)
            wall = time.perf_counter() - start
            triples = triples or report.new_facts
            timings = {k: round(v, 3) for k, v in report.timings.items()}
            indexing[kind].append(
                {
                    "round": round_,
                    "wall_s": round(wall, 2),
                    "passages": len(report.indexed),
                    "synonym_edges": report.new_synonym_edges,
                    "triples_per_s": round(triples / wall, 1),
                    "store_mib": (round(dir_size_mib(root / namespace), 2) if kind == "embedded" else None),
                    "timings": timings,
                    "load_start": load_start,
                    "load_end": load_average(),
                }
            )
            print(kind, round_, round(wall, 1), timings, flush=True)
            old = memories.get(kind)
            memories[kind] = memory
            if old is not None:
                old.close()
                if kind == "neo4j":
                    drop_namespace_plain(args.uri, args.password, old.settings.neo4j.namespace)
                    namespaces.remove(old.settings.neo4j.namespace)

    # one memory per engine on the indexed namespace
    namespace = memories["neo4j"].settings.neo4j.namespace
    systems: dict[str, HippoRAG] = {"embedded": memories["embedded"]}
    systems[engine_label(memories["neo4j"])] = memories["neo4j"]
    for kind in engines[1:]:
        memory = open_neo4j(kind, args, root, namespace, embedder)
        systems[engine_label(memory)] = memory
    names = list(systems)
    others = names[1:]
    projections = {
        name: projection_times(systems[name].store, args.projection_repeats)  # type: ignore[arg-type]
        for name in others
        if name.startswith("gds")
    }
    per: dict[str, dict[str, dict[str, list[float]]]] = {m: {n: {} for n in names} for m in modes}
    answers: dict[str, dict[str, list[dict[str, Any]]]] = {m: {o: [] for o in others} for m in modes}
    for mode in modes:
        for name in names:
            for q in questions[:2]:
                top_ids(systems[name], q, mode, args.top_k)
    passes: list[dict[str, Any]] = []
    for pass_no in range(args.query_rounds):
        pass_walls: dict[tuple[str, str], list[float]] = {}
        pass_load_start = load_average()
        for qi, question in enumerate(questions):
            for mode in modes:
                shift = (qi + pass_no) % len(names)
                order = names[shift:] + names[:shift]
                found: dict[str, tuple[list[str], list[float]]] = {}
                for name in order:
                    ids, scores, wall, timings = top_ids(systems[name], question, mode, args.top_k)
                    pass_walls.setdefault((mode, name), []).append(wall)
                    bucket = per[mode][name]
                    bucket.setdefault("wall", []).append(wall)
                    for key, value in timings.items():
                        bucket.setdefault(key, []).append(value)
                    found[name] = (ids, scores)
                if pass_no == 0:
                    for other in others:
                        answers[mode][other].append(
                            compare_answers(qi, {"embedded": found["embedded"], "neo4j": found[other]})
                        )
        pass_load_end = load_average()
        passes += [
            {
                "mode": mode,
                "system": name,
                "round": pass_no + 1,
                "p50_ms": round(1000 * statistics.median(walls), 3),
                "load_start": pass_load_start,
                "load_end": pass_load_end,
            }
            for (mode, name), walls in pass_walls.items()
        ]
    stats = {
        "embedded": memories["embedded"].stats().model_dump(exclude={"extra"}),
        "neo4j": memories["neo4j"].stats().model_dump(exclude={"extra"}),
    }
    for memory in systems.values():
        memory.close()
    query: dict[str, Any] = {}
    for mode in modes:
        query[mode] = {n: {key: latency_summary(v) for key, v in per[mode][n].items()} for n in names}
        query[mode]["protocol"] = {
            other: compare_or_refusal([p for p in passes if p["mode"] == mode], "embedded", other, "p50_ms")
            for other in others
        }
    equal = {
        mode: {
            other: {
                "identical_top": sum(r["equal"] for r in answers[mode][other]),
                "same_set": sum(r["same_set"] for r in answers[mode][other]),
                "questions": len(answers[mode][other]),
            }
            for other in others
        }
        for mode in modes
    }
    index_ratio = [
        round(b["wall_s"] / a["wall_s"], 2)
        for a, b in zip(indexing["embedded"], indexing["neo4j"], strict=True)
    ]
    return {
        "dataset": args.dataset,
        "settings": {
            "top_k": args.top_k,
            "vector_search": args.vector_search,
            "engines": others,
            "modes": modes,
        },
        "triples": triples,
        "passages": args.passages or "all",
        "questions": len(questions),
        "indexing": indexing,
        "indexing_ratio_per_round": index_ratio,
        "indexing_protocol": (
            compare_or_refusal(
                [{**run, "system": kind} for kind in STORES for run in indexing[kind]],
                "embedded",
                "neo4j",
                "wall_s",
            )
            if args.index_rounds
            else {"refused": "--index-rounds 0: each store indexed once, no ratio claimed"}
        ),
        "projection_build": projections,
        "query_rounds": passes,
        "query": query,
        "answers": equal,
        "answer_rows": answers,
        "stats": stats,
    }


def compare_answers(qi: int, found: dict[str, tuple[list[str], list[float]]]) -> dict[str, Any]:
    """Whether both stores' top k are the same; if not, where they first differ and by how much."""
    (a_ids, a_scores), (b_ids, b_scores) = found["embedded"], found["neo4j"]
    row: dict[str, Any] = {
        "question": qi,
        "equal": a_ids == b_ids,
        "same_set": set(a_ids) == set(b_ids),
    }
    if a_ids != b_ids:
        first = next(
            i
            for i in range(max(len(a_ids), len(b_ids)))
            if i >= len(a_ids) or i >= len(b_ids) or a_ids[i] != b_ids[i]
        )
        row["first_difference_rank"] = first + 1
        if first < len(a_scores) and first < len(b_scores):
            row["scores_at_difference"] = [a_scores[first], b_scores[first]]
        row["max_score_difference"] = max(
            (abs(x - y) for x, y in zip(a_scores, b_scores, strict=False)), default=0.0
        )
    return row


DATASET_NAMES = {"musique": "MuSiQue", "tickets": "the ticket archive (tests/data/tickets)"}


def markdown(data: dict[str, Any]) -> str:
    out = [
        md_header(
            f"Neo4j store vs embedded store: {DATASET_NAMES[data.get('dataset', 'musique')]} per PPR engine, "
            "and a synthetic namespace",
            data,
        )
    ]
    out.append(
        f"Server: {'started by the suite, pair ' + data['pair'] if data.get('pair') else data['uri']}.\n"
    )
    if "query" in data:
        out += musique_markdown(data)
    if "synthetic" in data:
        out += synthetic_markdown(data["synthetic"])
    return "\n".join(out)


def musique_markdown(data: dict[str, Any]) -> list[str]:
    out = []
    modes, others = data["settings"]["modes"], data["settings"]["engines"]
    out.append(
        f"## {DATASET_NAMES[data.get('dataset', 'musique')]}\n\n"
        f"vector_search = {data['settings']['vector_search']}; "
        f"top {data['settings']['top_k']}; {data['triples']} "
        f"{'OpenIE triples' if data.get('dataset', 'musique') == 'musique' else 'facts extracted'}; "
        f"{data['questions']} questions; Neo4j engines: {', '.join(others)}.\n"
    )
    for kind in STORES:
        st = data["stats"][kind]
        size = data["indexing"][kind][-1].get("store_mib")
        out.append(
            f"- {kind}: {st['passages']:,} passages, {st['phrases']:,} phrases, {st['facts']:,} facts, "
            f"{st['relation_edges']:,} relation and {st['synonym_edges']:,} synonym edges"
            + (f"; store on disk {size} MiB" if size is not None else "")
        )
    out.append("")
    out.append(
        "### Indexing from the published OpenIE (encoder included)\n"
        if data.get("dataset", "musique") == "musique"
        else "### Indexing with offline (spaCy) extraction (extraction and encoder included)\n"
    )
    rows = [
        [
            a["round"],
            a["wall_s"],
            b["wall_s"],
            ratio,
            f"{a['load_start'][0]} / {b['load_start'][0]}",
            ", ".join(f"{k} {v:.1f}" for k, v in a["timings"].items()),
            ", ".join(f"{k} {v:.1f}" for k, v in b["timings"].items()),
        ]
        for a, b, ratio in zip(
            data["indexing"]["embedded"],
            data["indexing"]["neo4j"],
            data["indexing_ratio_per_round"],
            strict=True,
        )
    ]
    out.append(
        md_table(
            [
                "round",
                "embedded s",
                "neo4j s",
                "ratio",
                "load at start (emb / neo4j)",
                "embedded stages s",
                "neo4j stages s",
            ],
            rows,
        )
    )
    protocol = data["indexing_protocol"]
    out.append(
        "\nIndexing ratio under the protocol: "
        + (
            f"**{ratio_cell(protocol)}**.\n"
            if "refused" not in protocol
            else f"not claimed ({protocol['refused']}).\n"
        )
    )
    if data.get("projection_build"):
        out.append("### GDS projection build (Cypher aggregation), MuSiQue\n")
        out += projection_table(data["projection_build"])
    out.append("### Warm queries (per question every system, who goes first rotating)\n")
    rows = []
    for mode in modes:
        q = data["query"][mode]
        e = q["embedded"]
        for other in others:
            n = q[other]
            stages = sorted((set(e) | set(n)) - {"wall"})
            rows.append(
                [
                    mode,
                    other,
                    e["wall"]["p50_ms"],
                    n["wall"]["p50_ms"],
                    ratio_cell(q["protocol"][other]),
                    "; ".join(
                        f"{s} {e.get(s, {}).get('p50_ms', '-')} / {n.get(s, {}).get('p50_ms', '-')}"
                        for s in stages
                    ),
                ]
            )
    out.append(
        md_table(
            [
                "mode",
                "engine",
                "embedded p50 ms",
                "neo4j p50 ms",
                "ratio under the protocol (per pass)",
                "stage p50 ms (embedded / neo4j)",
            ],
            rows,
        )
    )
    out.append("\n### Same answers (first pass)\n")
    rows = [
        [mode, other, f"{v['identical_top']}/{v['questions']}", f"{v['same_set']}/{v['questions']}"]
        for mode, per_engine in data["answers"].items()
        for other, v in per_engine.items()
    ]
    out.append(md_table(["mode", "engine", "identical top-k (ids in order)", "same top-k set"], rows))
    diffs = [(m, o, r) for m in modes for o in others for r in data["answer_rows"][m][o] if not r["equal"]]
    if diffs:
        out.append("\nDifferences:\n")
        for mode, other, r in diffs:
            out.append(
                f"- {mode} ({other}), question {r['question']}: first differing rank "
                f"{r.get('first_difference_rank')}, scores there {r.get('scores_at_difference')}, "
                f"largest score difference {r.get('max_score_difference'):.3g}"
            )
    out.append("")
    return out


def projection_table(builds: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """The GDS projection builds per engine and projection (sizes, median, every run), then a blank line."""
    rows = [
        [engine, kind, p["nodes"], p["relationships"], p["median_s"], ", ".join(str(x) for x in p["runs_s"])]
        for engine, kinds in builds.items()
        for kind, p in kinds.items()
    ]
    return [md_table(["engine", "projection", "nodes", "relationships", "median s", "runs s"], rows), ""]


def synthetic_markdown(s: dict[str, Any]) -> list[str]:
    g = s["graph"]
    out = [
        "## Synthetic namespace\n",
        f"{g['phrases']:,} phrases, {g['passages']:,} passages (8 mentions each), "
        f"{g['relation_edges']:,} RELATION + {g['synonym_edges']:,} SYNONYM edges; written in "
        f"{g['nodes_s']} + {g['mentions_s']} + {g['edges_s']} s "
        f"(server transaction memory limit set to {s.get('transaction_memory') or 'as configured'}) "
        "(nodes, mentions, edges; UNWIND batches of 20,000). PPR steps with 5 phrase seeds (HippoRAG) and "
        "5 phrase + 5 passage seeds (HippoRAG 2's walk), damping 0.5, top 200.\n",
    ]
    if s.get("projection_build"):
        out += projection_table(s["projection_build"])
    rows = [
        [
            engine,
            which,
            v["first_call_s"],
            v["warm_p50_ms"],
            ", ".join(str(x) for x in v["warm_p50_ms_per_round"]),
        ]
        for engine, steps in s["engines"].items()
        for which, v in steps.items()
    ]
    out.append(
        md_table(
            ["engine", "step", "first call s (projection / graph read)", "warm p50 ms", "p50 per round"], rows
        )
    )
    if s.get("protocol"):
        out.append("")
        out.append(
            md_table(
                ["engine / local", "ratio under the protocol"],
                [[name, ratio_cell(c)] for name, c in s["protocol"].items()],
            )
        )
    out.append("")
    return out


if __name__ == "__main__":
    main()
