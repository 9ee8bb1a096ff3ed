"""Can the server-side PPR skip the parts of the graph the seeds do not reach? (issue 35, item 4)

Times ONLY the PPR step of a question (the store call the retrieval makes: ``passage_scores`` in
``hipporag`` mode, ``passage_node_scores`` in ``hipporag2``), with the seeds the product itself computes:
each question is first retrieved once through ``HippoRAG(...).retrieve`` with the ``gds`` and the
``local`` engine and the engines' calls are recorded; then every candidate replays the same call,
interleaved (the order rotates per question and round), on a kept scale-suite namespace:

- ``gds-full``: the product's GDS engine (one weighted ``gds.pageRank.stream`` over the whole warm
  projection, then the passage aggregation, one statement);
- ``local``: the product's in-process engine on the client copy;
- ``gds-tol1e-4``: as ``gds-full`` with tolerance 1e-4 instead of 1e-6 (fewer supersteps);
- ``sub-k1`` / ``sub-k2``: a per-question projection of the seeds' k-hop neighbourhood (Cypher
  aggregation ``gds.graph.project``), the product's own statement on it, then ``gds.graph.drop``. Every
  node keeps its true out-weight: the weight of its edges leaving the neighbourhood goes to one sink
  node (directed relationships, so the sink sends nothing back), so inside the neighbourhood the walk is
  the full graph's walk minus the mass that leaves and would come back. Over ``--cap`` nodes: skipped;
- ``gds_top_nodes=<N>``: the engine with the opt-in setting ``neo4j.gds_top_nodes`` (the statement
  ``gds_passage_scores_top``: like ``gds-top<N>``, scores still divided by the sum over every node
  reached; ``hipporag`` mode only);
- ``gds-top<N>``: as ``gds-full``, the walk's stream cut to its N best nodes (``ORDER BY score DESC
  LIMIT N``) before the node look-ups and the MENTIONS aggregation (``hipporag`` mode only);
- ``cypher-push-<tolerance>``: no GDS at all, one read-only Cypher statement that pushes the seeds' mass
  hop by hop (the truncated PPR series, unrolled over GDS's superstep count, a node's mass at a hop
  dropped below the tolerance) and aggregates passages as the product does (``hipporag`` mode only);
- ``rwr-<ratio>``: ``gds.graph.sample.rwr`` (alpha) from the full projection, random walks with
  restarts from the seeds (restart probability 1 - damping, weighted), the product's statement on the
  sample (its relationships are those among the sampled nodes: out-weights renormalised), then dropped.

``gds.graph.filter`` is not a candidate: its predicates see labels and projected properties only, and the
product's projections carry no node property, so it cannot say "reached from these seeds" without a
property written per question first.

Quality against ``gds-full`` on the same call: overlap of the top-5 passages (the statement's ranking)
and of the top-10 phrases (a plain ``gds.pageRank.stream`` on the same graph and seeds, untimed).

    source /work/wt/neo4j-gds-m/neo4j.env   # the server holding the kept scale_M namespace
    PYTHONPATH=. python benchmarks/bench_gds_reach.py --uri bolt://127.0.0.1:7721 --namespace scale_M \\
        --corpus /work/se-data/scaleM-neo4j/openie_M_seed0.json --copy-cache /tmp/gds-reach/copy-cache \\
        --questions 20 --rounds 3 --modes hipporag,hipporag2 --stem gds_reach_M_latest

Writes ``results/<stem>.json`` and ``.md``. Never writes to the namespace; every per-question graph is
dropped again (a ``finally`` drops whatever of this run is still in the catalog).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import neo4j
import numpy as np
from bench_scale import NamedEntities
from bench_scale_suite import questions
from harness import TIMED_RETRIEVAL, load_average, md_header, md_table, run_header, write_results
from scale_corpus import HashEmbedder

from hipporag_neo4j import HippoRAG
from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.neo4j.engines.gds import GdsPpr, normalised, normalised_reset, supersteps

REPO = Path(__file__).resolve().parent.parent
PREFIX = "bench_reach_"  # every graph this run makes starts with it
SINK = 1 << 40  # a node id no store node has: the sink of the out-weight leaving a neighbourhood

# The neighbourhood of the seeds, projected: nodes of the namespace within k hops over the phrase graph
# (hipporag) or the phrase graph plus MENTIONS (hipporag2), each of their edges inside it as a directed
# relationship both ways (one from each end), the weight of every edge leaving it to the sink.
SUB_PROJECT = """
UNWIND $seeds AS seed
OPTIONAL MATCH (ph:Phrase {namespace: $namespace, id: seed.id}) WHERE seed.kind = 'phrase'
OPTIONAL MATCH (pa:Passage {namespace: $namespace, id: seed.id}) WHERE seed.kind = 'passage'
WITH collect(DISTINCT coalesce(ph, pa)) AS inside
CALL (inside) {
  UNWIND inside AS u
  MATCH (u)-[:RELS]-(v) WHERE v.namespace = $namespace AND v <> u
  RETURN collect(DISTINCT v) AS hop1
}
WITH inside + [v IN hop1 WHERE NOT v IN inside] AS inside, [v IN hop1 WHERE NOT v IN inside] AS frontier
HOP2
WITH inside WHERE size(inside) <= $cap
UNWIND inside AS u
CALL (u, inside) {
  OPTIONAL MATCH (u)-[r:RELS]-(v) WHERE v.namespace = $namespace AND v <> u
  WITH v, WEIGHT AS w, v IN inside AS kept
  RETURN CASE WHEN kept THEN v END AS v, kept, sum(w) AS w
}
WITH gds.graph.project(
       $graph_name, u, CASE WHEN kept THEN v WHEN NOT kept THEN $sink END,
       {relationshipProperties: {weight: coalesce(w, 1.0)}}, {}
     ) AS g
RETURN g.nodeCount AS nodes, g.relationshipCount AS relationships
"""
HOP2 = """
CALL (frontier) {
  UNWIND frontier AS u
  MATCH (u)-[:RELS]-(v) WHERE v.namespace = $namespace AND v <> u
  RETURN collect(DISTINCT v) AS hop2
}
WITH inside + [v IN hop2 WHERE NOT v IN inside] AS inside
"""
RELS = {"hipporag": "RELATION|SYNONYM", "hipporag2": "RELATION|SYNONYM|MENTIONS"}
WEIGHT = (
    "CASE type(r) WHEN 'RELATION' THEN toFloat(r.weight) WHEN 'SYNONYM' THEN toFloat(r.score) ELSE 1.0 END"
)

RWR = """
UNWIND $seeds AS seed
OPTIONAL MATCH (ph:Phrase {namespace: $namespace, id: seed.id}) WHERE seed.kind = 'phrase'
OPTIONAL MATCH (pa:Passage {namespace: $namespace, id: seed.id}) WHERE seed.kind = 'passage'
WITH collect(DISTINCT coalesce(ph, pa)) AS found
CALL gds.graph.sample.rwr($graph_name, $from_graph, {
  startNodes: found, samplingRatio: $ratio, restartProbability: $restart,
  relationshipWeightProperty: 'weight', concurrency: 1, randomSeed: 7, logProgress: false
})
YIELD nodeCount, relationshipCount
RETURN nodeCount AS nodes, relationshipCount AS relationships
"""

# The top phrases of a weighted PPR on a graph (quality only, untimed).
TOP_PHRASES = """
UNWIND $seeds AS seed
OPTIONAL MATCH (ph:Phrase {namespace: $namespace, id: seed.id}) WHERE seed.kind = 'phrase'
OPTIONAL MATCH (pa:Passage {namespace: $namespace, id: seed.id}) WHERE seed.kind = 'passage'
WITH coalesce(ph, pa) AS source, seed.weight AS weight WHERE source IS NOT NULL
WITH collect([source, weight]) AS found, sum(weight) AS total
CALL gds.pageRank.stream($graph_name, {
  sourceNodes: [p IN found | [p[0], p[1] / total]], dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance, concurrency: 1,
  relationshipWeightProperty: 'weight', logProgress: false
})
YIELD nodeId, score
WITH nodeId, score WHERE score > 0
WITH gds.util.asNode(nodeId) AS node, score
WHERE node IS NOT NULL AND node:Phrase AND node.namespace = $namespace
RETURN node.id AS id ORDER BY score DESC, id LIMIT $top
"""


def top_nodes_statement(mode: str) -> str:
    """The product's statement with the walk's stream cut to its $top_nodes best nodes before any node
    look-up and aggregation (the rest of the statement unchanged)."""
    name = "gds_passage_nodes_weighted" if mode == "hipporag2" else "gds_passage_scores_weighted"
    text = (REPO / "cypher" / f"{name}.cypher").read_text()
    cut = "YIELD nodeId, score\nWITH nodeId, score WHERE score > 0"
    if cut not in text:
        raise RuntimeError(f"{name}: the stream's first line changed; update this benchmark")
    return text.replace(
        cut,
        "YIELD nodeId, score\nWITH nodeId, score WHERE score > 0\nORDER BY score DESC LIMIT $top_nodes",
        1,
    )


PUSH_HEAD = """
UNWIND $seeds AS seed
MATCH (phrase:Phrase {namespace: $namespace, id: seed.id})
WITH collect({n: phrase, m: seed.weight}) AS layer, sum(seed.weight) AS total_weight
WITH [e IN layer | {n: e.n, m: e.m / total_weight}] AS layer
WITH layer, layer AS acc
"""
PUSH_STEP = """
CALL (layer) {
  UNWIND layer AS e
  WITH e.n AS n, e.m AS m
  MATCH (n)-[r:RELATION|SYNONYM]-(v:Phrase) WHERE v.namespace = $namespace AND v <> n
  WITH n, m, v, WEIGHT AS w
  WITH n, m, collect([v, w]) AS out, sum(w) AS out_weight
  UNWIND out AS edge
  WITH edge[0] AS v, sum($damping * m * edge[1] / out_weight) AS m
  RETURN collect({n: v, m: m}) AS reached, collect(CASE WHEN m > $eps THEN {n: v, m: m} END) AS next
}
WITH next AS layer, acc + reached AS acc
"""
PUSH_SUM = """
UNWIND acc AS e
WITH e.n AS node, sum(e.m) AS score
"""


def push_statement(steps: int, tail: str) -> str:
    """(b) PPR without GDS, in one read-only Cypher statement: the truncated series
    sum_t d^t (P^T)^t e over ``steps`` hops, pushed hop by hop from the seeds; a node whose mass at a
    hop is at most ``$eps`` (GDS's tolerance / (1 - d)) keeps it but pushes it no further, as a node
    of GDS's Pregel PageRank adds a change of at most the tolerance and halts;
    then ``tail``: the product's MENTIONS aggregation, or the top phrases."""
    return PUSH_HEAD + PUSH_STEP.replace("WEIGHT", WEIGHT) * steps + PUSH_SUM + tail


PUSH_PASSAGES = (
    "WITH collect({node: node, score: score}) AS hits, sum(score) AS total\n"
    + (
        (REPO / "cypher" / "gds_passage_scores_weighted.cypher")
        .read_text()
        .split("WITH collect({node: node, score: score}) AS hits, sum(score) AS total\n", 1)[1]
    )
)
PUSH_PHRASES = "RETURN node.id AS id ORDER BY score DESC, id LIMIT $top\n"


def sub_project_statement(mode: str, k: int) -> str:
    text = SUB_PROJECT.replace("HOP2", HOP2 if k >= 2 else "").replace("RELS", RELS[mode])
    return text.replace("WEIGHT", WEIGHT)


@dataclass
class Call:
    """One recorded PPR call of a question: its arguments, and the engine objects it was made on."""

    mode: str
    question: str
    args: tuple[Any, ...]  # positional arguments of the engine method, as recorded
    kwargs: dict[str, Any]

    @property
    def walk(self) -> WalkParams:
        return self.args[2] if self.mode == "hipporag2" else self.args[1]

    def seed_rows(self) -> list[dict[str, Any]]:
        """The statement's $seeds: {id, weight, kind}, weights summing to 1 (as the engines do)."""
        if self.mode == "hipporag2":
            reset = normalised_reset(dict(self.args[0]), self.args[1])
            return [{"id": s.id, "weight": s.weight, "kind": s.kind} for s in reset]
        return [{"id": i, "weight": w, "kind": "phrase"} for i, w in sorted(normalised(self.args[0]).items())]


class Recorder:
    """Wraps one engine's two store-facing methods; records the calls of the question being asked."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        for name in ("passage_scores", "passage_node_scores"):
            setattr(engine, name, self._wrap(name, getattr(engine, name)))

    def _wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*a: Any, **kw: Any) -> Any:
            self.calls.append((name, a, kw))
            return method(*a, **kw)

        recorded.original = method  # type: ignore[attr-defined]
        return recorded


def settings_for(args: argparse.Namespace, engine: str) -> Any:
    group = {
        "uri": args.uri,
        "password": os.environ["HIPPORAG_NEO4J_PASSWORD"],
        "namespace": args.namespace,
        "ppr_engine": engine,
        "copy_cache_dir": str(args.copy_cache),
    }
    return load_settings(
        {"store": {"backend": "neo4j"}, "neo4j": group, "retrieval": TIMED_RETRIEVAL}, env_file=None
    )


def overlap(a: list[str], b: list[str], n: int) -> float | None:
    want = b[:n]
    if not want:
        return None
    return len(set(a[:n]) & set(want)) / len(want)


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.driver = neo4j.GraphDatabase.driver(
            args.uri, auth=("neo4j", os.environ["HIPPORAG_NEO4J_PASSWORD"])
        )
        qs = questions(args.corpus, args.questions, 0)
        ner = NamedEntities({q: e for q, e in qs})
        self.qs = [q for q, _ in qs]
        self.mem = {
            e: HippoRAG(settings_for(args, e), embedder=HashEmbedder(), query_ner=ner)
            for e in ("gds", "local")
        }
        self.engines = {e: m.store.ppr_engine() for e, m in self.mem.items()}
        self.recorders = {e: Recorder(engine) for e, engine in self.engines.items()}
        self.made: set[str] = set()
        self.found = {
            r["graphName"] for r in self.run("CALL gds.graph.list() YIELD graphName RETURN graphName")
        }

    def run(self, cypher: str, **params: Any) -> list[dict[str, Any]]:
        with self.driver.session() as session:
            return session.run(cypher, **params).data()

    def record(self, mode: str) -> dict[str, list[Call]]:
        """Each question once per engine: the calls it made (the seeds are the product's)."""
        out: dict[str, list[Call]] = {e: [] for e in self.mem}
        method = "passage_node_scores" if mode == "hipporag2" else "passage_scores"
        for q in self.qs:
            for e, m in self.mem.items():
                rec = self.recorders[e]
                rec.calls.clear()
                m.retrieve(q, mode=mode)
                mine = [c for c in rec.calls if c[0] == method]
                if len(mine) != 1:
                    raise RuntimeError(f"{e} {mode}: {len(mine)} {method} calls for {q!r}")
                _, a, kw = mine[0]
                out[e].append(Call(mode, q, a, kw))
        return out

    # --- candidates: each returns the ranked passage ids -------------------------------------------
    def product(self, engine: str, call: Call, walk: WalkParams | None = None) -> list[str]:
        method = "passage_node_scores" if call.mode == "hipporag2" else "passage_scores"
        fn = getattr(self.engines[engine], method).original
        args = list(call.args)
        if walk is not None:
            args[2 if call.mode == "hipporag2" else 1] = walk
        return [p.passage_id for p in fn(*args, **call.kwargs)]

    def on_graph(self, graph: str, call: Call, top_nodes: int | None = None) -> list[str]:
        """The product's own statement (walk + aggregation) on another graph of the catalog; with
        ``top_nodes`` the statement of :func:`top_nodes_statement`."""
        engine = self.engines["gds"]
        walk = call.walk
        if top_nodes is not None:
            rows = self.run(
                top_nodes_statement(call.mode),
                seeds=call.seed_rows()
                if call.mode == "hipporag2"
                else [{"id": s["id"], "weight": s["weight"]} for s in call.seed_rows()],
                graph_name=graph,
                namespace=self.args.namespace,
                damping=walk.damping,
                max_iterations=supersteps(walk),
                tolerance=walk.tolerance,
                concurrency=engine.concurrency,
                limit=call.args[3] if call.mode == "hipporag2" else call.args[2],
                explain_phrases=call.args[4] if call.mode == "hipporag2" else call.args[3],
                top_nodes=top_nodes,
            )
            return [str(r["passage_id"]) for r in rows]
        common = {
            "leader": True,
            "graph_name": graph,
            "namespace": self.args.namespace,
            "damping": walk.damping,
            "max_iterations": supersteps(walk),
            "tolerance": walk.tolerance,
            "concurrency": engine.concurrency,
        }
        if call.mode == "hipporag2":
            limit, explain = call.args[3], call.args[4]
            rows = engine.runner.read(
                "gds_passage_nodes_weighted",
                seeds=call.seed_rows(),
                limit=limit,
                explain_phrases=explain,
                **common,
            )
        else:
            limit, explain = call.args[2], call.args[3]
            seeds = [{"id": s["id"], "weight": s["weight"]} for s in call.seed_rows()]
            rows = engine.runner.read(
                "gds_passage_scores_weighted", seeds=seeds, limit=limit, explain_phrases=explain, **common
            )
        return [str(r["passage_id"]) for r in rows]

    def drop(self, graph: str) -> None:
        self.run("CALL gds.graph.drop($g, false) YIELD graphName RETURN graphName", g=graph)
        self.made.discard(graph)

    def per_question(
        self, call: Call, info: dict[str, Any], make: Callable[[str], list[dict[str, Any]]]
    ) -> list[str] | None:
        """Make a graph for this call (``make(name)``: its nodes and relationships, no row = over the
        cap), run the product's statement on it, drop it; the two parts timed into ``info``."""
        graph = f"{PREFIX}{uuid.uuid4().hex[:12]}"
        self.made.add(graph)
        try:
            t0 = time.perf_counter()
            rows = make(graph)
            if not rows:
                info.update(nodes=None, over_cap=True)
                return None
            info.update(nodes=rows[0]["nodes"], relationships=rows[0]["relationships"])
            t1 = time.perf_counter()
            ranked = self.on_graph(graph, call)
            info.setdefault("split_ms", []).append([t1 - t0, time.perf_counter() - t1])
            if self.args.quality_phrases and "phrases" not in info:
                info["phrases"] = self.top_phrases(graph, call)
            return ranked
        finally:
            if graph in self.made:
                self.drop(graph)

    def sub(self, call: Call, k: int, info: dict[str, Any]) -> list[str] | None:
        return self.per_question(
            call,
            info,
            lambda graph: self.run(
                sub_project_statement(call.mode, k),
                seeds=call.seed_rows(),
                namespace=self.args.namespace,
                cap=self.args.cap,
                graph_name=graph,
                sink=SINK,
            ),
        )

    def rwr(self, call: Call, ratio: float, full: str, info: dict[str, Any]) -> list[str] | None:
        return self.per_question(
            call,
            info,
            lambda graph: self.run(
                RWR,
                seeds=call.seed_rows(),
                namespace=self.args.namespace,
                graph_name=graph,
                from_graph=full,
                ratio=ratio,
                restart=1.0 - call.walk.damping,
            ),
        )

    def push(self, call: Call, tolerance: float, info: dict[str, Any]) -> list[str]:
        walk = replace(call.walk, tolerance=tolerance)
        params = {
            "seeds": [{"id": x["id"], "weight": x["weight"]} for x in call.seed_rows()],
            "namespace": self.args.namespace,
            "damping": walk.damping,
            "eps": tolerance / (1.0 - walk.damping),
        }
        steps = supersteps(walk) - 1
        rows = self.run(
            push_statement(steps, PUSH_PASSAGES), limit=call.args[2], explain_phrases=call.args[3], **params
        )
        if self.args.quality_phrases and "phrases" not in info:
            info["phrases"] = [
                r["id"] for r in self.run(push_statement(steps, PUSH_PHRASES), top=10, **params)
            ]
        return [str(r["passage_id"]) for r in rows]

    def top_phrases(self, graph: str, call: Call, walk: WalkParams | None = None) -> list[str]:
        w = walk or call.walk
        rows = self.run(
            TOP_PHRASES,
            seeds=call.seed_rows(),
            namespace=self.args.namespace,
            graph_name=graph,
            damping=w.damping,
            max_iterations=supersteps(w),
            tolerance=w.tolerance,
            top=10,
        )
        return [r["id"] for r in rows]

    def cleanup(self) -> None:
        rows = self.run("CALL gds.graph.list() YIELD graphName RETURN graphName")
        for r in rows:  # this run's graphs, and the product's projections it made
            if r["graphName"] not in self.found:
                self.drop(r["graphName"])


def split(infos: list[dict[str, Any]], part: int) -> float | None:
    """p50 of one part of the timed calls of a per-question graph: 0 = make it, 1 = walk + aggregate."""
    values = [x[part] * 1000 for info in infos for x in info.get("split_ms", [])]
    return round(statistics.median(values), 1) if values else None


def full_graph(bench: Bench, mode: str) -> str:
    kind = "passages" if mode == "hipporag2" else "phrases"
    current = bench.engines["gds"].catalogs(kind).current
    if current is None:
        raise RuntimeError(f"no warm {kind} projection after the recording pass")
    return str(current.name)


def measure(bench: Bench, mode: str, rounds: int) -> dict[str, Any]:
    calls = bench.record(mode)
    gds_calls, local_calls = calls["gds"], calls["local"]
    same = sum(1 for a, b in zip(gds_calls, local_calls, strict=True) if a.seed_rows() == b.seed_rows())
    full = full_graph(bench, mode)
    tol = lambda c: replace(c.walk, tolerance=1e-4)  # noqa: E731
    candidates: dict[str, Callable[[int, dict[str, Any]], list[str] | None]] = {
        "gds-full": lambda i, info: bench.product("gds", gds_calls[i]),
        "local": lambda i, info: bench.product("local", local_calls[i]),
        "gds-tol1e-4": lambda i, info: bench.product("gds", gds_calls[i], tol(gds_calls[i])),
    }
    for n in bench.args.top_nodes:
        candidates[f"gds-top{n}"] = lambda i, info, n=n: bench.on_graph(full, gds_calls[i], n)
    if mode == "hipporag":
        gds = bench.engines["gds"]
        for n in bench.args.opt_in:  # the engine's opt-in setting, as the product runs it
            engine = GdsPpr(
                gds.runner,
                gds.catalogs,
                gds.namespace,
                weighted=True,
                concurrency=gds.concurrency,
                top_nodes=n,
            )
            candidates[f"gds_top_nodes={n}"] = lambda i, info, e=engine: [
                p.passage_id for p in e.passage_scores(*gds_calls[i].args, **gds_calls[i].kwargs)
            ]
        for t in bench.args.push:
            candidates[f"cypher-push-{t:g}"] = lambda i, info, t=t: bench.push(gds_calls[i], t, info)
    for k in bench.args.hops:
        candidates[f"sub-k{k}"] = lambda i, info, k=k: bench.sub(gds_calls[i], k, info)
    for ratio in bench.args.rwr:
        candidates[f"rwr-{ratio}"] = lambda i, info, r=ratio: bench.rwr(gds_calls[i], r, full, info)
    names = list(candidates)
    ms: dict[str, list[float]] = {n: [] for n in names}
    infos: dict[str, list[dict[str, Any]]] = {n: [{} for _ in bench.qs] for n in names}
    ranked: dict[str, list[list[str] | None]] = {n: [None] * len(bench.qs) for n in names}
    loads = []
    errors: dict[str, str] = {}
    for name in names:  # warm every candidate once (first projections, query plans)
        try:
            candidates[name](0, {})
        except (neo4j.exceptions.Neo4jError, StoreError) as exc:
            errors[name] = str(exc)[:240]
    names = [n for n in names if n not in errors]
    for r in range(rounds):
        loads.append(load_average()[0])
        for i in range(len(bench.qs)):
            shift = (r * len(bench.qs) + i) % len(names)
            for name in names[shift:] + names[:shift]:
                info = infos[name][i]
                t = time.perf_counter()
                try:
                    result = candidates[name](i, info)
                except (
                    neo4j.exceptions.Neo4jError,
                    StoreError,
                ) as exc:  # recorded, and the candidate left out
                    info["error"] = str(exc)[:200]
                    result = None
                elapsed = (time.perf_counter() - t) * 1000
                if result is None:
                    continue
                ms[name].append(elapsed)
                ranked[name][i] = result
    loads.append(load_average()[0])
    # quality against gds-full
    reference_phrases = [bench.top_phrases(full, c) for c in gds_calls]
    tol_phrases = [bench.top_phrases(full, c, tol(c)) for c in gds_calls]
    rows: dict[str, Any] = {}
    for name in names:
        p5 = [
            overlap(ranked[name][i] or [], ranked["gds-full"][i] or [], 5)
            for i in range(len(bench.qs))
            if ranked[name][i] is not None
        ]
        phrases = None
        if name == "gds-tol1e-4":
            phrases = tol_phrases
        elif name.startswith(("sub-", "rwr-", "cypher-push")):
            phrases = [infos[name][i].get("phrases") for i in range(len(bench.qs))]
        p10 = None
        if phrases is not None:
            vals = [
                overlap(p, ref, 10)
                for p, ref in zip(phrases, reference_phrases, strict=True)
                if p is not None
            ]
            p10 = [v for v in vals if v is not None]
        nodes = [x["nodes"] for x in infos[name] if x.get("nodes") is not None]
        rows[name] = {
            "n": len(ms[name]),
            "p50_ms": round(statistics.median(ms[name]), 1) if ms[name] else None,
            "p95_ms": round(float(np.percentile(ms[name], 95)), 1) if ms[name] else None,
            "project_p50_ms": split(infos[name], 0),
            "walk_p50_ms": split(infos[name], 1),
            "top5_passage_overlap": round(statistics.mean(p5), 3) if p5 else None,
            "top5_min": round(min(p5), 2) if p5 else None,
            "top10_phrase_overlap": round(statistics.mean(p10), 3) if p10 else None,
            "nodes_p50": int(statistics.median(nodes)) if nodes else None,
            "nodes_max": max(nodes) if nodes else None,
            "over_cap": sum(1 for x in infos[name] if x.get("over_cap")),
            "errors": sorted({x["error"] for x in infos[name] if "error" in x}),
        }
    seeds = [len(c.seed_rows()) for c in gds_calls]
    return {
        "mode": mode,
        "full_graph": full,
        "questions": len(bench.qs),
        "rounds": rounds,
        "same_seeds_gds_local": same,
        "seeds_p50": int(statistics.median(seeds)),
        "seeds_max": max(seeds),
        "loads_per_round": loads,
        "candidates": rows,
        "failed_at_warm_up": errors,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", required=True)
    ap.add_argument("--namespace", default="scale_M")
    ap.add_argument("--corpus", type=Path, required=True, help="the scale suite's openie_<size>_seed0.json")
    ap.add_argument("--copy-cache", type=Path, required=True, help="neo4j.copy_cache_dir of the local engine")
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", default="hipporag,hipporag2")
    ap.add_argument("--hops", default="1,2")
    ap.add_argument("--rwr", default="0.01,0.05", help="samplingRatio values of gds.graph.sample.rwr")
    ap.add_argument("--top-nodes", default="1000,5000", help="gds-topN: the walk's N best nodes aggregated")
    ap.add_argument("--opt-in", default="1000", help="neo4j.gds_top_nodes values run through the engine")
    ap.add_argument("--push", default="1e-6,1e-4", help="cypher-push tolerances (hipporag mode only)")
    ap.add_argument("--cap", type=int, default=60_000, help="largest neighbourhood projected (nodes)")
    ap.add_argument("--no-quality-phrases", dest="quality_phrases", action="store_false")
    ap.add_argument("--stem", default="gds_reach_M_latest")
    args = ap.parse_args()
    args.hops = [int(x) for x in args.hops.split(",") if x]
    args.opt_in = [int(x) for x in args.opt_in.split(",") if x]
    args.push = [float(x) for x in args.push.split(",") if x]
    args.top_nodes = [int(x) for x in args.top_nodes.split(",") if x]
    args.rwr = [float(x) for x in args.rwr.split(",") if x]
    header = run_header()
    bench = Bench(args)
    versions = bench.run(
        "CALL dbms.components() YIELD name, versions RETURN versions[0] AS neo4j "
        "UNION ALL CALL gds.version() YIELD gdsVersion RETURN gdsVersion AS neo4j"
    )
    results: list[dict[str, Any]] = []
    try:
        for mode in args.modes.split(","):
            res = measure(bench, mode, args.rounds)
            results.append(res)
            print(res, file=sys.stderr, flush=True)
    finally:
        bench.cleanup()
        left = bench.run("CALL gds.graph.list() YIELD graphName RETURN collect(graphName) AS names")[0][
            "names"
        ]
    data = {**header, "versions": [v["neo4j"] for v in versions], "results": results, "graphs_left": left}
    data["load_after"] = load_average()
    write_results(args.stem, data, markdown(data))


def markdown(data: dict[str, Any]) -> str:
    out = [
        md_header("GDS PPR restricted to the seeds' reach (issue 35 item 4)", data),
        f"Neo4j / GDS: {' / '.join(data['versions'])}; "
        f"graphs left in the catalog at the end: {data['graphs_left']}",
        "",
    ]
    for res in data["results"]:
        out += [
            f"## `{res['mode']}` ({res['questions']} questions x {res['rounds']} rounds, full graph "
            f"`{res['full_graph']}`; seeds per question p50 {res['seeds_p50']}, max {res['seeds_max']}; "
            f"seeds equal for gds and local in {res['same_seeds_gds_local']}/{res['questions']})",
            "",
            f"1-minute load at each round start and at the end: {res['loads_per_round']}",
            "",
            *[f"- `{n}` failed at warm-up, left out: {e}" for n, e in res["failed_at_warm_up"].items()],
            *[f"- `{n}` errors: {c['errors']}" for n, c in res["candidates"].items() if c["errors"]],
            "",
        ]
        ref = res["candidates"]["gds-full"]["p50_ms"]
        rows = []
        for name, c in res["candidates"].items():
            ratio = round(c["p50_ms"] / ref, 2) if c["p50_ms"] and ref else None
            rows.append(
                [
                    name,
                    c["n"],
                    c["p50_ms"],
                    c["p95_ms"],
                    ratio,
                    c["top5_passage_overlap"],
                    c["top5_min"],
                    c["top10_phrase_overlap"],
                    c["project_p50_ms"],
                    c["walk_p50_ms"],
                    c["nodes_p50"],
                    c["nodes_max"],
                    c["over_cap"],
                ]
            )
        out += [
            md_table(
                [
                    "candidate",
                    "timed calls",
                    "p50 ms",
                    "p95 ms",
                    "p50 / gds-full",
                    "top-5 passages overlap (mean)",
                    "min",
                    "top-10 phrases overlap",
                    "make graph p50 ms",
                    "walk + aggregate p50 ms",
                    "graph nodes p50",
                    "max",
                    "over cap",
                ],
                rows,
            ),
            "",
        ]
    return "\n".join(out)


if __name__ == "__main__":
    main()
