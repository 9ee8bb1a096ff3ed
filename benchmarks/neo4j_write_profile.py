"""Where an ``index_openie`` run on Neo4j spends its time: every statement of the store (by its
``cypher/*.cypher`` name: calls, rows sent, seconds) and the transactions' begin + commit (where the
server inserts the new vectors into its vector indexes), for one generated corpus (``scale_corpus.py``).
A profiling script, not a suite: it prints, and drops its namespace unless ``--keep``.

    python benchmarks/scale_corpus.py --size S --out /tmp/openie_S.json
    source neo4j.env  # HIPPORAG_NEO4J_URI, HIPPORAG_NEO4J_PASSWORD
    python benchmarks/neo4j_write_profile.py /tmp/openie_S.json
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_corpus import HashEmbedder

from hipporag_neo4j import HippoRAG
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.neo4j import runner
from hipporag_neo4j.stores.neo4j.store import Neo4jStore

#: name -> [calls, seconds, rows]
STATS: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0])


def instrument() -> None:
    run_query = runner.CypherTransaction.run_query
    transaction = runner.CypherRunner.transaction

    def timed_query(self: Any, query: Any, params: dict[str, Any]) -> Any:
        start = time.perf_counter()
        try:
            return run_query(self, query, params)
        finally:
            s = STATS[query.name]
            s[0] += 1
            s[1] += time.perf_counter() - start
            s[2] += sum(len(v) for v in params.values() if isinstance(v, list))

    def timed_transaction(
        self: Any, work: Callable[[Any], Any], *, write: bool, autocommit: bool = False
    ) -> Any:
        inside = [0.0]

        def measured(ctx: Any) -> Any:
            start = time.perf_counter()
            try:
                return work(ctx)
            finally:
                inside[0] += time.perf_counter() - start

        start = time.perf_counter()
        try:
            return transaction(self, measured, write=write, autocommit=autocommit)
        finally:
            if write and not autocommit:
                s = STATS["<begin + commit>"]
                s[0] += 1
                s[1] += time.perf_counter() - start - inside[0]

    runner.CypherTransaction.run_query = timed_query  # type: ignore[method-assign]
    runner.CypherRunner.transaction = timed_transaction  # type: ignore[method-assign]
    for method in STORE_STAGES:
        setattr(Neo4jStore, method, timed_stage(method, getattr(Neo4jStore, method)))


#: the store's methods the indexer calls, timed whole (statements, commits and Python work inside)
STORE_STAGES = (
    "missing_phrases",
    "missing_facts",
    "write_passages",
    "pending_synonym_phrases",
    "nearest_phrases",
    "write_synonyms",
)


def timed_stage(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            s = STATS[f"[store.{name}]"]
            s[0] += 1
            s[1] += time.perf_counter() - start

    return timed


def vector_commit(uri: str, password: str, count: int, rounds: int = 2) -> None:
    """``count`` nodes with a 384-d vector in one transaction, on a label without a vector index and on
    one with (``PhraseEmbedding384``, the store's index of 384-d phrases): statement and commit seconds,
    interleaved; the nodes are deleted after."""
    import neo4j
    import numpy as np

    rng = np.random.default_rng(0)
    statement = (
        "UNWIND $rows AS row CREATE (p:WriteProfileVector:{label} {{namespace: 'write_profile_vectors', "
        "id: row.id}}) SET p.embedding = row.embedding"
    )
    with neo4j.GraphDatabase.driver(uri, auth=("neo4j", password)) as driver:
        for n in range(rounds):
            for label in ("WriteProfileNoIndex", "PhraseEmbedding384"):
                rows = [
                    {"id": f"{label}{n}-{i}", "embedding": rng.standard_normal(384).tolist()}
                    for i in range(count)
                ]
                with driver.session() as session, session.begin_transaction() as tx:
                    start = time.perf_counter()
                    tx.run(statement.format(label=label), rows=rows).consume()
                    middle = time.perf_counter()
                    tx.commit()
                    end = time.perf_counter()
                took = f"statement {middle - start:.2f} s, commit {end - middle:.2f} s"
                print(f"{label:20s} {count} vectors: {took}, load {os.getloadavg()[0]:.1f}")
        with driver.session() as session:
            session.run(
                "MATCH (p:WriteProfileVector) CALL (p) { DETACH DELETE p } IN TRANSACTIONS OF 5000 ROWS"
            ).consume()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("openie", type=Path, nargs="?")
    parser.add_argument(
        "--vector-commit", type=int, help="only time N vectors' commit with and without index"
    )
    parser.add_argument("--namespace", default="write_profile")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--batch-size", type=int, default=500, help="neo4j.batch_size (rows per statement)")
    args = parser.parse_args()
    if args.vector_commit:
        vector_commit(
            os.environ["HIPPORAG_NEO4J_URI"], os.environ["HIPPORAG_NEO4J_PASSWORD"], args.vector_commit
        )
        return
    instrument()
    settings = load_settings(
        {
            "store": {"backend": "neo4j"},
            "neo4j": {
                "uri": os.environ["HIPPORAG_NEO4J_URI"],
                "password": os.environ["HIPPORAG_NEO4J_PASSWORD"],
                "namespace": args.namespace,
                "ppr_engine": "local",
                "batch_size": args.batch_size,
            },
        },
        env_file=None,
    )
    memory = HippoRAG(settings, embedder=HashEmbedder())
    load = os.getloadavg()[0]
    start = time.perf_counter()
    report = memory.index_openie(args.openie)
    wall = time.perf_counter() - start
    loads = f"load {load:.1f} -> {os.getloadavg()[0]:.1f}"
    print(f"batch_size {args.batch_size}: wall {wall:.2f} s, {len(report.indexed)} passages, {loads}")
    print("indexer stages (s):", {k: round(v, 2) for k, v in report.timings.items()})
    for name, (calls, seconds, rows) in sorted(STATS.items(), key=lambda x: -x[1][1]):
        print(f"{name:32s} calls {int(calls):6d} rows {int(rows):8d} s {seconds:8.2f}")
    stats = memory.stats()
    print(
        stats.model_dump_json(
            include={"passages", "phrases", "facts", "relation_edges", "synonym_edges", "mentions"}
        )
    )
    if not args.keep:
        memory.drop()
    memory.close()


if __name__ == "__main__":
    main()
