"""The default mode (``hipporag2``) on a large synthetic store: warm p50 side by side, stages, memory.

Works on a store kept by ``bench_open.py`` / ``bench_scale.py`` (``--store DIR``, its persisted snapshot
present, so every worker maps it). One worker process per variant, each loaded once:

* ``before``: the package from ``--baseline-code DIR`` (e.g. ``git archive 6d8919a hipporag_neo4j |
  tar -x -C DIR``), default settings;
* ``after``: this checkout's package, default settings;
* optional ``--also NAME=JSON``: this checkout with retrieval settings overridden (e.g.
  ``'top-all={"passage_seed_top_n": null}'``).

Each worker opens the store, answers one warm-up query (first-query costs: the fact index, the passage
graph), then the parent sends the same ``--queries`` questions to the workers alternated per question
(rotating who goes first), and each answers ``Retriever.retrieve(q, "hipporag2")`` with the
random-vector embedder and a query NER naming two graph phrases (as ``bench_open.py``: no model time).
Per worker: p50 / p95 of the retrieve, p50 of each stage in ``timings``, the top 10 of each query,
and the process's memory after the queries (VmHWM, RssAnon, RssFile from /proc/self/status); with
``--hipporag-queries K`` each worker then answers K ``hipporag`` queries too (as ``open_1m.md``'s
memory row did) before memory is read again.

``--no-fact-vectors``: the workers' stores answer the fact search with no facts, as a store whose facts
have no vectors does (``open_1m.md``'s synthetic store): the figure comparable to that file's.

    python benchmarks/bench_default_scale.py --store DIR --baseline-code DIR [--baseline-store DIR]
        [--queries 20] [--stem NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import harness  # noqa: F401  (puts the repository on sys.path)

if "--code" in sys.argv:  # a worker measuring another version of the package
    sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1])

import numpy as np
from harness import REPO, latency_summary, load_average, md_header, md_table, run_header, write_results

DIM = 384
STAGES = ("query_ner", "encode", "link", "fact_search", "dense_search", "ppr_and_aggregation", "other")


def proc_status() -> dict[str, float]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


def queries(phrases: int, count: int, seed: int) -> dict[str, list[str]]:
    from bench_scale import phrase_name

    rng = np.random.default_rng(seed)
    pairs = [sorted(rng.choice(phrases, 2, replace=False).tolist()) for _ in range(count)]
    return {
        f"How is {phrase_name(a)} related to {phrase_name(b)}?": [phrase_name(a), phrase_name(b)]
        for a, b in pairs
    }


# --- worker ---------------------------------------------------------------------------------------
def worker(args: argparse.Namespace) -> None:
    """Answers one query per stdin line ({"query": q} or {"memory": k}) with one JSON line."""
    from bench_scale import MODEL, NamedEntities, RandomEmbedder

    import hipporag_neo4j
    from hipporag_neo4j.retrieval.retriever import Retriever
    from hipporag_neo4j.settings import RetrievalSettings
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    if args.no_fact_vectors:
        EmbeddedStore.nearest_facts = lambda self, vector, top_k: []  # type: ignore[method-assign,assignment]
    entities = queries(args.phrases, args.queries + 1 + args.hipporag_queries, args.seed)
    store = EmbeddedStore(Path(args.store))
    store.open(MODEL, DIM)
    settings = RetrievalSettings(**json.loads(args.settings))
    retriever = Retriever(store, RandomEmbedder(DIM), settings, NamedEntities(entities))  # type: ignore[arg-type]
    names = list(entities)
    t = time.perf_counter()
    first = retriever.retrieve(names[-1], "hipporag2")  # warm-up: not among the timed queries
    hello = {
        "package": str(Path(hipporag_neo4j.__file__).parent),
        "warmup_ms": round(1000 * (time.perf_counter() - t), 1),
        "warmup_timings_ms": {k: round(1000 * v, 1) for k, v in first.timings.items()},
        "passage_seed_top_n": getattr(settings, "passage_seed_top_n", None),
        "status_after_warmup": proc_status(),
    }
    print(json.dumps(hello), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if "query" in request:
            t = time.perf_counter()
            result = retriever.retrieve(request["query"], "hipporag2")
            elapsed = time.perf_counter() - t
            timings = {k: v for k, v in result.timings.items() if k != "total"}
            timings["other"] = elapsed - sum(timings.values())
            seeds = result.passages[0].explanation.passage_seeds if result.passages else 0
            reply = {
                "s": elapsed,
                "timings": timings,
                "top10": [p.passage.id for p in result.passages[:10]],
                "passage_seeds": seeds,
            }
        else:
            before = proc_status()
            lat = []
            for q in names[args.queries : args.queries + request["memory"]]:
                t = time.perf_counter()
                retriever.retrieve(q, "hipporag")
                lat.append(time.perf_counter() - t)
            reply = {
                "status_after_hipporag2": before,
                "status_after_hipporag": proc_status(),
                "hipporag_ms_p50": round(1000 * float(np.median(lat)), 1) if lat else None,
            }
        print(json.dumps(reply), flush=True)
    store.close()


# --- parent ---------------------------------------------------------------------------------------
class Worker:
    def __init__(
        self, name: str, args: argparse.Namespace, code: str | None, settings: dict[str, Any]
    ) -> None:
        # the package before reads the store as it was written; this one may upgrade its own copy
        store = args.baseline_store if code and args.baseline_store else args.store
        command = [
            sys.executable,
            __file__,
            "--worker",
            "--store",
            store,
            "--phrases",
            str(args.phrases),
        ]
        command += [
            "--queries",
            str(args.queries),
            "--seed",
            str(args.seed),
            "--settings",
            json.dumps(settings),
        ]
        command += ["--hipporag-queries", str(args.hipporag_queries)]
        if args.no_fact_vectors:
            command.append("--no-fact-vectors")
        if code:
            command += ["--code", code]
        env = {**os.environ, "PYTHONPATH": code or str(REPO)}
        self.name, self.code, self.settings = name, code, settings
        t = time.perf_counter()
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO, env=env
        )
        self.hello = self.read()
        self.hello["open_and_warmup_s"] = round(time.perf_counter() - t, 1)
        print(f"  {name}: warm-up {self.hello['warmup_ms']} ms ({self.hello['package']})", file=sys.stderr)

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.name} ended (exit status {self.process.wait()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self.read()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=600)


def run(args: argparse.Namespace) -> dict[str, Any]:
    data: dict[str, Any] = {**run_header(), "store": args.store, "phrases": args.phrases}
    data["baseline_store"] = args.baseline_store
    data["no_fact_vectors"] = args.no_fact_vectors
    specs: list[tuple[str, str | None, dict[str, Any]]] = []
    if args.baseline_code:
        specs.append(("before", args.baseline_code, {}))
    specs.append(("after", None, {}))
    for item in args.also:
        name, _, settings = item.partition("=")
        specs.append((name, None, json.loads(settings)))
    workers = [Worker(name, args, code, settings) for name, code, settings in specs]
    names = list(queries(args.phrases, args.queries + 1 + args.hipporag_queries, args.seed))[: args.queries]
    replies: dict[str, list[dict[str, Any]]] = {w.name: [] for w in workers}
    data["load_queries_start"] = load_average()
    for i, q in enumerate(names):
        rotation = i % len(workers)
        for w in workers[rotation:] + workers[:rotation]:
            replies[w.name].append(w.ask({"query": q}))
        print(
            f"  query {i + 1}/{len(names)}: "
            + ", ".join(f"{w.name} {1000 * replies[w.name][-1]['s']:.0f} ms" for w in workers),
            file=sys.stderr,
            flush=True,
        )
    data["load_queries_end"] = load_average()
    memory = {w.name: w.ask({"memory": args.hipporag_queries}) for w in workers}
    for w in workers:
        w.close()
    base = workers[0].name
    data["variants"] = {}
    for w in workers:
        r = replies[w.name]
        seconds = [x["s"] for x in r]
        stages = {s: [x["timings"].get(s, 0.0) for x in r] for s in STAGES}
        data["variants"][w.name] = {
            "code": w.code or "this checkout",
            "settings": w.settings,
            "hello": w.hello,
            "latency": latency_summary(seconds),
            "stage_p50_ms": {s: round(1000 * float(np.median(v)), 2) for s, v in stages.items()},
            "passage_seeds": sorted({x["passage_seeds"] for x in r}),
            "same_top10_as_" + base: sum(
                x["top10"] == y["top10"] for x, y in zip(r, replies[base], strict=True)
            ),
            "top10_overlap_with_" + base: round(
                float(
                    np.mean(
                        [
                            len(set(x["top10"]) & set(y["top10"])) / 10
                            for x, y in zip(r, replies[base], strict=True)
                        ]
                    )
                ),
                3,
            ),
            "memory": memory[w.name],
            "top10": [x["top10"] for x in r],
        }
    data["load_after"] = load_average()
    return data


def markdown(data: dict[str, Any]) -> str:
    lines = [md_header("The default mode (hipporag2) on a large synthetic store, side by side", data)]
    v = data["variants"]
    base = next(iter(v))
    p50 = {k: x["latency"]["p50_ms"] for k, x in v.items()}
    lines += [
        "",
        f"Store `{data['store']}`, {data['phrases']:,} phrases (bench_scale.build). Fact search: "
        + (
            "answered with no facts, as a store whose facts have no vectors"
            if data["no_fact_vectors"]
            else "over the store's fact vectors"
        )
        + f". One worker process per variant, the {len(v[base]['top10'])} queries alternated per query "
        f"(rotating who goes first), after one warm-up query each; load during the queries "
        f"{data['load_queries_start']} → {data['load_queries_end']}.",
        "",
        "## Warm hipporag2 retrieve, ms",
        "",
    ]
    lines.append(
        md_table(
            [
                "variant",
                "code",
                "settings",
                "p50",
                "p95",
                f"p50 / {base}",
                "passage seeds",
                f"same top 10 as {base}",
                "top-10 overlap",
            ],
            [
                [
                    k,
                    x["code"],
                    json.dumps(x["settings"]) if x["settings"] else "defaults",
                    x["latency"]["p50_ms"],
                    x["latency"]["p95_ms"],
                    round(p50[k] / p50[base], 3),
                    ", ".join(str(s) for s in x["passage_seeds"]),
                    f"{x['same_top10_as_' + base]} / {len(x['top10'])}",
                    x["top10_overlap_with_" + base],
                ]
                for k, x in v.items()
            ],
        )
    )
    lines += ["", "## p50 by stage (`RetrievalResult.timings`; other = the rest of the call), ms", ""]
    lines.append(
        md_table(["variant", *STAGES], [[k, *(x["stage_p50_ms"][s] for s in STAGES)] for k, x in v.items()])
    )
    lines += ["", "## Memory of each worker (MiB; per phrase in KiB)", ""]
    rows = []
    for k, x in v.items():
        for when in ("status_after_hipporag2", "status_after_hipporag"):
            st = x["memory"][when]
            rows.append(
                [
                    k,
                    when.removeprefix("status_after_"),
                    st["VmHWM"],
                    round(st["VmHWM"] * 1024 / data["phrases"], 3),
                    st["VmRSS"],
                    st["RssAnon"],
                    st["RssFile"],
                ]
            )
    lines.append(
        md_table(
            [
                "variant",
                "after the queries of",
                "peak RSS (VmHWM)",
                "peak KiB / phrase",
                "RSS",
                "RssAnon",
                "RssFile",
            ],
            rows,
        )
    )
    lines += [
        "",
        "Warm-up query (first after open) per worker: "
        + "; ".join(f"{k} {x['hello']['warmup_ms']} ms" for k, x in v.items()),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", required=True)
    parser.add_argument("--phrases", type=int, help="phrases in the store (default: counted)")
    parser.add_argument("--baseline-code", help="a directory holding the package before")
    parser.add_argument(
        "--baseline-store",
        help="the store the package before opens (default --store): a copy, when this package upgrades "
        "--store's schema on open",
    )
    parser.add_argument("--also", action="append", default=[], help="NAME=JSON of retrieval settings")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--hipporag-queries", type=int, default=0)
    parser.add_argument("--no-fact-vectors", action="store_true")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--stem", default="default_scale")
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--settings", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--code", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    from harness import RESULTS

    if args.render_only:
        data = json.loads((RESULTS / f"{args.stem}.json").read_text())
        (RESULTS / f"{args.stem}.md").write_text(markdown(data))
        return
    if args.phrases is None:
        import sqlite3

        conn = sqlite3.connect(f"file:{Path(args.store) / 'graph.sqlite'}?mode=ro", uri=True)
        args.phrases = int(conn.execute("SELECT COUNT(*) FROM phrases").fetchone()[0])
        conn.close()
    data = run(args)
    write_results(args.stem, data, markdown(data))


if __name__ == "__main__":
    main()
