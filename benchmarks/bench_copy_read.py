"""A new client's read of a Neo4j namespace into its in-process copy, with the driver's ``data()`` walk
and without it (the bulk reads take the values as decoded: ``CypherTransaction.run_query(plain=True)``).

Each run opens a new store with the on-disk copy cache off, reads every part of the copy a query of each
mode uses (phrases and their vectors, facts, passage vectors, the graph) and records its wall and CPU
seconds; the two ways alternate, A B, B A, ... (harness.interleaved) and are compared per round
(harness.compare). The answers of both are checked equal.

    python benchmarks/run.py copy-read --uri bolt://127.0.0.1:7750 --namespace scale_S --rounds 3

Needs HIPPORAG_NEO4J_PASSWORD; the namespace must have been written with the hash vectors of
``scale_corpus.py`` (the scale suite's default), or give ``--model`` its model's name.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import harness
import numpy as np
from scale_corpus import HashEmbedder

from hipporag_neo4j import load_settings
from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.neo4j import runner as runner_module
from hipporag_neo4j.stores.neo4j.store import Neo4jStore

SYSTEMS = ("data", "plain")


@contextmanager
def walked(system: str) -> Iterator[None]:
    """``data``: every statement through the driver's ``Result.data()`` (the code before the change)."""
    if system == "plain":
        yield
        return
    original = runner_module.CypherTransaction.run_query

    def through_data(self: Any, query: Any, params: Any, *, plain: bool = False) -> Any:
        return original(self, query, params, plain=False)

    runner_module.CypherTransaction.run_query = through_data  # type: ignore[method-assign]
    try:
        yield
    finally:
        runner_module.CypherTransaction.run_query = original  # type: ignore[method-assign]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def read_once(args: argparse.Namespace, system: str) -> dict[str, Any]:
    settings = load_settings(
        {
            "store": {"backend": "neo4j"},
            "neo4j": {
                "uri": args.uri,
                "password": os.environ.get("HIPPORAG_NEO4J_PASSWORD", ""),
                "namespace": args.namespace,
                "ppr_engine": "local",
                "copy_cache": False,
            },
        },
        env_file=None,
    )
    embedder = HashEmbedder()
    store = Neo4jStore(settings.neo4j)
    store.open(args.model or embedder.model_name, embedder.dimension)
    query = np.asarray(embedder.encode(["which river flows through the city"])[0], dtype=np.float32)
    load_start = harness.load_average()
    wall, cpu = time.perf_counter(), cpu_seconds()
    with walked(system):
        view = store.view()
        phrases = view.nearest_phrases(query[None, :], 5, -1.0, None)
        seeds = {hit.id: 1.0 for hit in phrases[0]}
        answers = (
            [hit.id for hit in phrases[0]],
            [hit.id for hit in view.nearest_facts(query, 5)],
            [p.passage_id for p in view.dense_passage_scores(query, 5)],
            [p.passage_id for p in view.graph_passage_scores(seeds, WalkParams(0.5, 100, 1e-8), 5, 2)],
        )
    out = {
        "system": system,
        "wall_s": round(time.perf_counter() - wall, 3),
        "cpu_s": round(cpu_seconds() - cpu, 3),
        "load_start": load_start,
        "load_end": harness.load_average(),
        "answers": answers,
    }
    store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--uri", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--model", help="the namespace's embedding model name (default: the hash vectors')")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stem", default="copy_read")
    args = parser.parse_args()
    harness.require_rounds(args.rounds)
    header = harness.run_header()
    runs: list[dict[str, Any]] = []
    for round_no, order in enumerate(harness.interleaved(SYSTEMS, args.rounds), start=1):
        for system in order:
            run = {"round": round_no, **read_once(args, system)}
            print(f"round {round_no} {system}: {run['wall_s']} s wall, {run['cpu_s']} CPU s", flush=True)
            runs.append(run)
    if len({repr(run["answers"]) for run in runs}) != 1:
        raise SystemExit("the two ways gave different answers")
    header["load_after"] = harness.load_average()
    ratios = {key: harness.compare(runs, "data", "plain", key) for key in ("wall_s", "cpu_s")}
    data = {"header": header, "namespace": args.namespace, "runs": runs, "ratios": ratios}
    rows = [
        [r["round"], r["system"], r["wall_s"], r["cpu_s"], r["load_start"][0], r["load_end"][0]] for r in runs
    ]
    md = harness.md_header(f"A new client's read of namespace {args.namespace} into its copy", header)
    md += "\n" + harness.md_table(["round", "way", "wall s", "client CPU s", "load start", "load end"], rows)
    md += "\n\n| figure | plain / data (median) | min | max | pairs kept |\n| --- | --- | --- | --- | --- |\n"
    for key, r in ratios.items():
        md += f"| {key} | {r['ratio_median']} | {r['ratio_min']} | {r['ratio_max']} | {len(r['pairs'])} |\n"
    harness.write_results(args.stem, data, md)
    print(md)


if __name__ == "__main__":
    main()
