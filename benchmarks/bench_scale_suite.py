"""The ``scale-suite``: a namespace built through the product's write path at S, M, L (and XS), per store.

Unlike ``scale`` (synthetic graphs written straight through the store protocol), this suite indexes a
generated OpenIE file (``scale_corpus.py``: MuSiQue's statistics, preferential attachment, name variants)
with ``HippoRAG(settings, embedder=embedder_for(args)).index_openie(file)``, exactly as a user's index run,
so the figures include the indexer's batches, the "synonyms pending" marks and the synonym step through
the store's own vector search. Hash vectors (char 3-grams, 384 dims) stand in for the encoder.

Recorded per size and store (and per PPR engine on Neo4j): index wall and client CPU time, passages/s,
relationships/s (relation + synonym + mention edges written / wall), the client's peak RSS, every store
call of the index run (``write_passages``, ``nearest_phrases``, ``write_synonyms``: count, total, per
call), the synonym step per batch, the Neo4j server's heap and page cache settings and GDS projection
memory; warm p50 per mode (questions drawn from the corpus, entities given, ``--query-rounds`` passes
after one warm-up pass); the first query after a one-passage write (``--writes`` times; the passages are
deleted again so that the namespace stays reusable); a new process's first query (cold start: open +
first query, and its RSS), twice on Neo4j: the second new process finds the client copy the first
wrote to disk at that graph version (``neo4j.copy_cache``, kept in ``WORKDIR/copy-cache``; a package
without the setting measures two cold starts alike).

Big namespaces are built once: ``--keep`` leaves the store (embedded: ``WORKDIR/store_<size>``; Neo4j:
namespace ``scale_<size>``) and a later run with ``--keep`` finds it complete and reuses it (the result
file says ``reused``, and carries the index figures of the run that built it, from its JSON).

    python benchmarks/run.py scale-suite --size XS|S|M|L --store embedded|neo4j [--engines local,gds]
        [--uri bolt://... (password: HIPPORAG_NEO4J_PASSWORD) | --pair lts|latest] [--keep] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import harness
from bench_scale import NamedEntities
from harness import (
    RssSampler,
    latency_summary,
    load_average,
    md_header,
    md_table,
    peak_rss_mib,
    rss_mib,
    run_header,
    start_server,
    stop_server,
    write_results,
)
from scale_corpus import OPENIE_FILE, SIZES, HashEmbedder, write_corpus

from hipporag_neo4j import HippoRAG
from hipporag_neo4j.embedding.encoder import Embedder
from hipporag_neo4j.indexing import pipeline
from hipporag_neo4j.models import RETRIEVAL_MODES
from hipporag_neo4j.settings import Neo4jSettings, Settings, load_settings

HERE = Path(__file__).resolve().parent
DEFAULT_WORKDIR = Path("/tmp/hipporag-scale-suite")
TIMED_STORE_CALLS = ("write_passages", "nearest_phrases", "write_synonyms")


# --- settings and the corpus ------------------------------------------------------------------------
def settings_for(args: argparse.Namespace, engine: str | None) -> Settings:
    if args.store == "embedded":
        path = args.workdir / f"store_{args.size}"
        return load_settings(
            {"store": {"backend": "embedded", "path": str(path)}, "retrieval": harness.TIMED_RETRIEVAL},
            env_file=None,
        )
    group: dict[str, Any] = {
        "uri": args.uri,
        "password": args.password,
        "namespace": args.namespace or f"scale_{args.size}",
        "ppr_engine": engine or "local",
    }
    if "copy_cache_dir" in Neo4jSettings.model_fields:  # the on-disk client copy, in the work folder
        group["copy_cache_dir"] = str(args.workdir / "copy-cache")
    return load_settings(
        {"store": {"backend": "neo4j"}, "neo4j": group, "retrieval": harness.TIMED_RETRIEVAL}, env_file=None
    )


def embedder_for(args: argparse.Namespace) -> Embedder | None:
    """``--embedder hash``: the hash vectors (store cost alone); ``model``: None, so HippoRAG creates the
    encoder its settings name (the default model, as a user's run)."""
    return HashEmbedder() if args.embedder == "hash" else None


def corpus_file(args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """The generated OpenIE file of ``--size`` (made once per size and seed, in the work folder)."""
    path = args.workdir / f"openie_{args.size}_seed{args.seed}.json"
    summary_path = path.with_suffix(".summary.json")
    if not (path.is_file() and summary_path.is_file()):
        summary = write_corpus(args.size, path, seed=args.seed)
        summary_path.write_text(json.dumps(summary, indent=2))
    return path, json.loads(summary_path.read_text())


def questions(path: Path, count: int, seed: int) -> list[tuple[str, list[str]]]:
    """``count`` questions from the corpus's triples: the text names the subject and the predicate, the
    query NER returns subject and object (as an LLM's would for a two-hop question). Kept beside the corpus
    file once drawn: at L, parsing the corpus took 2-4 GB in the process whose memory is being measured."""
    kept = path.with_name(f"{path.stem}.questions{count}.json")
    if kept.is_file():
        return [(q, list(entities)) for q, entities in json.loads(kept.read_text())]
    docs = json.loads(path.read_text())["docs"]
    rng = random.Random(seed + 1)
    out: list[tuple[str, list[str]]] = []
    for doc in rng.sample(docs, min(count, len(docs))):
        subject, predicate, obj = rng.choice(doc["extracted_triples"])
        out.append((f"Which {predicate} of {subject} relates to {obj}?", [subject, obj]))
    del docs
    kept.write_text(json.dumps(out))
    return out


# --- instrumentation --------------------------------------------------------------------------------
class CallTimer:
    """Wraps named methods of one object: per call seconds (and rows for ``nearest_phrases``)."""

    def __init__(self, target: Any, names: tuple[str, ...]) -> None:
        self.calls: dict[str, list[float]] = {name: [] for name in names}
        for name in names:
            setattr(target, name, self._wrap(name, getattr(target, name)))

    def _wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def timed_call(*a: Any, **kw: Any) -> Any:
            start = time.perf_counter()
            try:
                return method(*a, **kw)
            finally:
                self.calls[name].append(time.perf_counter() - start)

        return timed_call

    def summary(self) -> dict[str, Any]:
        return {
            name: {"calls": len(s), "total_s": round(sum(s), 3), **latency_summary(s)}
            for name, s in self.calls.items()
        }


def neo4j_memory(args: argparse.Namespace) -> dict[str, Any]:
    """The server's heap, page cache and transaction memory settings, and its version."""
    import neo4j

    with neo4j.GraphDatabase.driver(args.uri, auth=("neo4j", args.password)) as driver:
        rows, _, _ = driver.execute_query(
            "SHOW SETTINGS YIELD name, value WHERE name STARTS WITH 'server.memory' "
            "OR name STARTS WITH 'dbms.memory.transaction' RETURN name, value"
        )
        version, _, _ = driver.execute_query("CALL dbms.components() YIELD versions RETURN versions[0] AS v")
    return {"settings": {r["name"]: r["value"] for r in rows}, "version": version[0]["v"]}


# --- the stages ----------------------------------------------------------------------------------------
def expected_passages(summary: dict[str, Any]) -> int:
    return int(summary["passages"])


def build(args: argparse.Namespace, path: Path, summary: dict[str, Any]) -> dict[str, Any]:
    """Index the corpus (or find it complete with ``--keep``); the index figures."""
    memory = HippoRAG(settings_for(args, args.engines[0]), embedder=embedder_for(args))
    stats = memory.stats()
    if args.keep and stats.passages >= expected_passages(summary):
        previous = harness.RESULTS / f"{args.stem}.json"
        built = json.loads(previous.read_text()).get("index") if previous.is_file() else None
        memory.close()
        return {"reused": True, "stats": stats.model_dump(), "built_by": built}
    timer = CallTimer(memory.store, TIMED_STORE_CALLS)
    batches: list[dict[str, Any]] = []
    last = [time.perf_counter()]

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "index" and done:
            now = time.perf_counter()
            seconds = now - last[0]
            batches.append({"done": done, "seconds": round(seconds, 3), "load": load_average()[0]})
            last[0] = now
            if args.verbose:
                print(f"  index {done:,}/{total:,} {seconds:.1f}s", file=sys.stderr, flush=True)

    # the synonym step of each index batch (and the one that finishes what a crash left, first)
    steps: list[dict[str, Any]] = []
    original = pipeline.finish_pending_synonyms

    def synonym_step(store: Any, *args: Any, **kwargs: Any) -> int:  # the step's own arguments, as given
        start = time.perf_counter()
        edges = original(store, *args, **kwargs)
        steps.append({"seconds": round(time.perf_counter() - start, 3), "new_edges": edges})
        return edges

    pipeline.finish_pending_synonyms = synonym_step
    cpu0, wall0, load0 = time.process_time(), time.perf_counter(), load_average()
    try:
        with RssSampler(0.2) as rss:
            report = memory.index_openie(path, progress=progress)
    finally:
        pipeline.finish_pending_synonyms = original
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    stats = memory.stats()
    memory.close()
    edges = stats.relation_edges + stats.synonym_edges + stats.mentions
    return {
        "reused": False,
        "wall_s": round(wall, 2),
        "client_cpu_s": round(cpu, 2),
        "passages_per_s": round(len(report.indexed) / wall, 1),
        "relationships_per_s": round(edges / wall, 1),
        "client_peak_rss_mib": round(rss.peak_mib, 1),
        "indexed": len(report.indexed),
        "failed": len(report.failed),
        "timings_s": {k: round(v, 2) for k, v in report.timings.items()},
        "store_calls": timer.summary(),
        "synonym_step_per_batch": latency_summary([step["seconds"] for step in steps[1:]]),
        "synonym_steps": steps,
        "batches": batches,
        "loads": {"start": load0, "end": load_average()},
        "stats": stats.model_dump(),
    }


def one_passage_doc(number: int, seed: int) -> dict[str, Any]:
    """One new passage (HippoRAG's JSON), naming phrases of the stored corpus's vocabulary."""
    rng = random.Random(seed * 1000 + number)
    subject = f"scale suite write {number} {rng.randrange(10**9)}"
    triples = [[subject, "is written after", "united states"], [subject, "names", f"entity {number}"]]
    text = " ".join(f"{s} {p} {o}." for s, p, o in triples)
    return {
        "title": subject,
        "text": text,
        "passage": f"{subject}\n{text}",
        "extracted_entities": [subject],
        "extracted_triples": triples,
    }


def queries(args: argparse.Namespace, engine: str | None, qs: list[tuple[str, list[str]]]) -> dict[str, Any]:
    """Warm p50 per mode, then the first query after each of ``--writes`` one-passage writes."""
    ner = NamedEntities({q: ents for q, ents in qs})
    memory = HippoRAG(settings_for(args, engine), embedder=embedder_for(args), query_ner=ner)
    out: dict[str, Any] = {"modes": {}, "loads": {"start": load_average()}}
    t = time.perf_counter()
    memory.retrieve(qs[0][0], mode="hipporag2")
    out["first_query_s"] = round(time.perf_counter() - t, 3)
    for mode in RETRIEVAL_MODES:
        seconds: list[float] = []
        for rnd in range(args.query_rounds + 1):
            for q, _ in qs:
                t = time.perf_counter()
                memory.retrieve(q, mode=mode)  # type: ignore[arg-type]
                if rnd:  # the first pass warms
                    seconds.append(time.perf_counter() - t)
        out["modes"][mode] = latency_summary(seconds)
    writes: list[dict[str, float]] = []
    written: list[str] = []
    for n in range(args.writes):
        doc_path = args.workdir / f"write_{args.size}_{n}.json"
        doc_path.write_text(json.dumps({"docs": [one_passage_doc(n, args.seed)]}))
        t = time.perf_counter()
        report = memory.index_openie(doc_path)
        write_s = time.perf_counter() - t
        written += report.indexed
        q = qs[n % len(qs)][0]
        t = time.perf_counter()
        memory.retrieve(q, mode="hipporag2")
        writes.append({"write_s": round(write_s, 3), "first_query_s": round(time.perf_counter() - t, 3)})
    if written:
        memory.delete(written)
    out["after_write"] = writes
    if args.store == "neo4j" and engine == "gds":
        store: Any = memory.store
        out["gds_projections"] = store.gds_projections()
    out["client_rss_mib"] = round(rss_mib(), 1)
    out["client_peak_rss_mib"] = round(peak_rss_mib(), 1)
    out["loads"]["end"] = load_average()
    memory.close()
    return out


def cold_start(args: argparse.Namespace, engine: str | None, q: tuple[str, list[str]]) -> dict[str, Any]:
    """A new process: open + its first hipporag2 query, and its RSS (``--child-cold``)."""
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child-cold",
        "--size",
        args.size,
        "--store",
        args.store,
        "--workdir",
        str(args.workdir),
        "--namespace",
        args.namespace or f"scale_{args.size}",
        "--engines",
        engine or "local",
        "--query",
        json.dumps(q),
        "--embedder",
        args.embedder,
    ]
    if args.uri:
        cmd += ["--uri", args.uri]
    env = {**os.environ, "HIPPORAG_NEO4J_PASSWORD": args.password or ""}
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def child_cold(args: argparse.Namespace) -> None:
    q, ents = json.loads(args.query)
    start = time.perf_counter()
    memory = HippoRAG(
        settings_for(args, args.engines[0]), embedder=embedder_for(args), query_ner=NamedEntities({q: ents})
    )
    memory.retrieve(q, mode="hipporag2")
    first = time.perf_counter() - start
    t = time.perf_counter()
    memory.retrieve(q, mode="hipporag2")
    second = time.perf_counter() - t
    memory.close()
    print(
        json.dumps(
            {
                "open_and_first_query_s": round(first, 3),
                "second_query_s": round(second, 3),
                "rss_mib": round(rss_mib(), 1),
                "peak_rss_mib": round(peak_rss_mib(), 1),
            }
        )
    )


# --- output -----------------------------------------------------------------------------------------------
def markdown(data: dict[str, Any]) -> str:
    lines = [md_header(f"Scale suite: size {data['size']}, store {data['store']}", data["header"])]
    c = data["corpus"]
    lines += [
        f"Corpus: `scale_corpus.py` size {data['size']}: {c['passages']:,} passages, {c['triples']:,} "
        f"triples, {c['phrases']:,} generated phrases (seed {c['seed']}, variant rate {c['variant_rate']}, "
        f"MuSiQue's reuse rate {c['reuse_rate']}); "
        + (
            "hash vectors (`HashEmbedder`, 384 dims)."
            if data.get("embedder", "hash") == "hash"
            else f"the encoder the settings name ({data['embedder_model']})."
        ),
        "",
    ]
    if data.get("neo4j"):
        n = data["neo4j"]
        shown = ", ".join(f"{k} = {v}" for k, v in sorted(n["settings"].items()))
        lines += [f"Neo4j {n['version']}: {shown}"]
        lines.append("")
    ix = data["index"]
    s = ix["stats"]
    lines += [
        "## Index (`index_openie`)",
        "",
        f"Graph: {s['passages']:,} passages, {s['phrases']:,} phrases, {s['facts']:,} facts, "
        f"{s['relation_edges']:,} relation edges, {s['synonym_edges']:,} synonym edges, "
        f"{s['mentions']:,} mentions.",
        "",
    ]
    built = ix if not ix.get("reused") else ix.get("built_by")
    if ix.get("reused"):
        lines += ["Reused a namespace built by an earlier run (`--keep`); its index figures follow.", ""]
    if built:
        lines += [
            md_table(
                ["wall s", "client CPU s", "passages/s", "relationships/s", "client peak RSS MiB", "loads"],
                [
                    [
                        built["wall_s"],
                        built["client_cpu_s"],
                        built["passages_per_s"],
                        built["relationships_per_s"],
                        built["client_peak_rss_mib"],
                        f"{built['loads']['start'][0]} → {built['loads']['end'][0]}",
                    ]
                ],
            ),
            "",
            "Indexer stages (s): " + ", ".join(f"{k} {v}" for k, v in built["timings_s"].items()),
            "",
            "Synonym step per index batch (nearest phrases of the batch's new phrases + their edges "
            "written, ms): " + ", ".join(f"{k} {v}" for k, v in built["synonym_step_per_batch"].items()),
            "",
            md_table(
                ["store call", "calls", "total s", "p50 ms", "p95 ms", "max ms"],
                [
                    [name, v["calls"], v["total_s"], v.get("p50_ms"), v.get("p95_ms"), v.get("max_ms")]
                    for name, v in built["store_calls"].items()
                ],
            ),
            "",
        ]
    lines += ["## Queries", ""]
    rows = []
    for engine, q in data["queries"].items():
        cold = data["cold_start"].get(engine) or {}
        again = data.get("cold_start_again", {}).get(engine)
        after = q["after_write"]
        rows.append(
            [
                engine,
                *(q["modes"][m].get("p50_ms") for m in RETRIEVAL_MODES),
                ", ".join(f"{w['first_query_s'] * 1000:.0f}" for w in after),
                cold["open_and_first_query_s"] * 1000 if cold else None,
                again["open_and_first_query_s"] * 1000 if again else None,
                cold.get("rss_mib"),
                q["client_peak_rss_mib"],
                f"{q['loads']['start'][0]} → {q['loads']['end'][0]}",
            ]
        )
    lines += [
        md_table(
            [
                "engine",
                *(f"{m} p50 ms" for m in RETRIEVAL_MODES),
                "first query after a 1-passage write ms",
                "cold start (open + 1st query) ms",
                "again (copy on disk) ms",
                "cold process RSS MiB",
                "client peak RSS MiB",
                "loads",
            ],
            rows,
        ),
        "",
        f"{data['questions']} questions, {data['query_rounds']} timed passes after one warm-up pass; "
        "entities given to the query NER (no model time).",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", choices=tuple(SIZES), default="XS")
    parser.add_argument("--store", choices=("embedded", "neo4j"), default="embedded")
    parser.add_argument(
        "--engines", default="local,gds", type=lambda s: s.split(","), help="Neo4j PPR engines"
    )
    parser.add_argument("--uri", help="a running Neo4j (password: HIPPORAG_NEO4J_PASSWORD)")
    parser.add_argument(
        "--pair", choices=("lts", "latest"), help="start this pair instead (harness.start_server)"
    )
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--transaction-memory", default="512m")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    parser.add_argument(
        "--keep", action="store_true", help="keep the store / namespace and reuse it when complete"
    )
    parser.add_argument("--out-dir", type=Path, help="write the results here (default benchmarks/results)")
    parser.add_argument("--namespace", help="the Neo4j namespace (default scale_<size>)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--query-rounds", type=int, default=3)
    parser.add_argument("--writes", type=int, default=3)
    parser.add_argument(
        "--embedder",
        choices=("hash", "model"),
        default="hash",
        help="hash vectors (default) or the encoder the settings name (one M run of issue 35)",
    )
    parser.add_argument("--stem", help="result file stem (default scale_suite_<size>_<store>)")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument(
        "--no-cold-start",
        action="store_true",
        help="skip the new processes' first queries (at L on Neo4j, after --writes, each reads the "
        "namespace over Bolt: ~20 minutes)",
    )
    parser.add_argument("--child-cold", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--query", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.password = os.environ.get("HIPPORAG_NEO4J_PASSWORD")
    if args.child_cold:
        child_cold(args)
        return
    if not OPENIE_FILE.is_file():
        sys.exit(f"MuSiQue's OpenIE (the statistics the corpus follows) not found: {OPENIE_FILE}")
    args.stem = args.stem or f"scale_suite_{args.size}_{args.store}"
    if args.out_dir is not None:
        harness.RESULTS = args.out_dir
    args.workdir.mkdir(parents=True, exist_ok=True)
    header = run_header()
    home = args.workdir / f"neo4j-{args.pair}"
    if args.store == "neo4j" and args.pair:
        args.uri, args.password = start_server(args.pair, home, args.heap, args.transaction_memory)
    if args.store == "neo4j" and not args.uri:
        sys.exit("--store neo4j needs --uri (and HIPPORAG_NEO4J_PASSWORD) or --pair")
    engines: list[str | None] = list(args.engines) if args.store == "neo4j" else [None]
    try:
        path, summary = corpus_file(args)
        data: dict[str, Any] = {"header": header, "size": args.size, "store": args.store, "corpus": summary}
        data["embedder"] = args.embedder
        if args.embedder == "model":
            data["embedder_model"] = load_settings(env_file=None).embedding.model
        if args.store == "neo4j":
            data["neo4j"] = neo4j_memory(args)
        data["index"] = build(args, path, summary)
        qs = questions(path, args.questions, args.seed)
        data["questions"], data["query_rounds"] = len(qs), args.query_rounds
        data["queries"], data["cold_start"], data["cold_start_again"] = {}, {}, {}
        for engine in engines:
            label = engine or "embedded"
            data["queries"][label] = queries(args, engine, qs)
            if args.no_cold_start:
                continue
            data["cold_start"][label] = cold_start(args, engine, qs[0])
            if args.store == "neo4j":  # a second new process: finds the copy the first left on disk
                data["cold_start_again"][label] = cold_start(args, engine, qs[0])
        if not args.keep:
            memory = HippoRAG(settings_for(args, engines[0]), embedder=embedder_for(args))
            memory.drop()
        header["load_after"] = load_average()
        paths = write_results(args.stem, data, markdown(data))
        print("\n".join(str(p) for p in paths))
    finally:
        if args.store == "neo4j" and args.pair:
            stop_server(args.pair, home)


if __name__ == "__main__":
    main()
