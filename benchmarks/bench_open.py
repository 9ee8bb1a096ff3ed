"""Issue 11, the embedded store at scale: open + first query, write_passages per batch, graph memory.

Works on synthetic stores built by ``bench_scale.build`` (same graph: N phrases, N/8 passages, 4N facts,
N synonym edges, random unit vectors of dim 384), kept in ``--workdir`` and built when missing.

Per size, each measurement in a fresh child process (so cold is cold for Python, not for the OS page
cache, which holds the files after the first run; that is said in the results):

* ``rebuild``: open with ``persist_snapshot=False`` (the snapshot built from SQL, as before the
  persisted snapshot) and answer one ``Retriever.retrieve`` query (hipporag mode, no model);
* ``build+persist``: the same with the persisted snapshot removed first: build, write, map;
* ``mapped``: open with the persisted snapshot present and answer the first query; then 20 more
  queries (hipporag and hipporag2 modes), linking included, and the process's memory
  (VmHWM, RssAnon, RssFile from /proc/self/status);
* optionally ``--baseline-code DIR``: the ``rebuild`` child run with the package from DIR (e.g. an
  export of the commit before the persisted snapshot), interleaved with ``mapped``.

Then ``write_passages`` per call: ``--append`` batches of 256 passages (2,048 new phrases, their facts
and synonym edges, objects drawn from all earlier phrases) appended to the store in this process, with
the WAL frames each commit wrote (``wal_autocheckpoint`` off during the measurement, a checkpoint after
each batch outside the timing).

    python benchmarks/bench_open.py --sizes 10000,100000,1000000 [--workdir DIR] [--baseline-code DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import common  # noqa: F401  (puts the repository on sys.path)

if "--code" in sys.argv:  # a child measuring another version of the package (--baseline-code)
    sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1])

import numpy as np
from bench_scale import MODEL, NamedEntities, RandomEmbedder, build, phrase_name, unit_vectors
from common import REPO, RESULTS, load_average, md_header, md_table, run_header, write_results

from hipporag_neo4j.common.text import fact_text, make_fact_id, make_passage_id, make_phrase_id
from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord, SynonymEdge

DIM = 384
PER = 8  # phrases per passage
BATCH = 256  # passages per write_passages call
FACTS = 32  # facts per passage


def proc_status() -> dict[str, float]:
    """VmRSS, VmHWM, RssAnon, RssFile of this process in MiB."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


def build_args(phrases: int, fact_vectors_per_phrase: float = 0.0) -> argparse.Namespace:
    return argparse.Namespace(
        fact_vectors_per_phrase=fact_vectors_per_phrase,
        phrases=phrases,
        phrases_per_passage=PER,
        relations_per_phrase=FACTS / PER,
        synonyms_per_phrase=1,
        synonym_threshold=0.8,
        batch=BATCH,
        dim=DIM,
        seed=0,
    )


def ensure_store(path: Path, phrases: int, fact_vectors_per_phrase: float = 0.0) -> dict[str, Any]:
    if (path / "graph.sqlite").is_file():
        return {"built": False}
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    store = EmbeddedStore(path)
    store.open(MODEL, DIM)
    t = time.perf_counter()
    times, per_batch = build(store, build_args(phrases, fact_vectors_per_phrase), np.random.default_rng(0))
    store.close()
    tenth = max(1, len(per_batch) // 10)
    return {
        "built": True,
        "fact_vectors_per_phrase": fact_vectors_per_phrase,
        "build_s": round(time.perf_counter() - t, 1),
        "write_passages_ms_first_tenth": round(1000 * float(np.mean(per_batch[:tenth])), 1),
        "write_passages_ms_last_tenth": round(1000 * float(np.mean(per_batch[-tenth:])), 1),
        **{k: round(v, 1) for k, v in times.items()},
    }


# --- child: open + first query --------------------------------------------------------------------
def child(args: argparse.Namespace) -> dict[str, Any]:
    from hipporag_neo4j.retrieval.retriever import Retriever
    from hipporag_neo4j.settings import RetrievalSettings
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    path = Path(args.store)
    if args.variant == "build+persist":
        shutil.rmtree(path / "snapshot", ignore_errors=True)
    rng = np.random.default_rng(args.seed)
    n = args.phrases
    seeds = [sorted(rng.choice(n, 2, replace=False).tolist()) for _ in range(21)]
    entities = {
        f"How is {phrase_name(a)} related to {phrase_name(b)}?": [phrase_name(a), phrase_name(b)]
        for a, b in seeds
    }
    queries = list(entities)
    import hipporag_neo4j

    out: dict[str, Any] = {"variant": args.variant, "status_start": proc_status()}
    out["package"] = str(Path(hipporag_neo4j.__file__).parent)
    t0 = time.perf_counter()
    try:
        store = EmbeddedStore(path, persist_snapshot=args.variant != "rebuild")
    except TypeError:  # baseline code: no persisted snapshot
        store = EmbeddedStore(path)
    store.open(MODEL, DIM)
    retriever = Retriever(store, RandomEmbedder(DIM), RetrievalSettings(), NamedEntities(entities))  # type: ignore[arg-type]
    first = retriever.retrieve(queries[0], "hipporag")
    out["open_first_query_s"] = round(time.perf_counter() - t0, 3)
    out["first_query_timings_ms"] = {k: round(1000 * v, 1) for k, v in first.timings.items()}
    out["first_passages"] = [p.passage.id for p in first.passages]
    out["snapshot_builds"] = getattr(store, "snapshot_builds", None)
    out["snapshot_maps"] = getattr(store, "snapshot_maps", None)
    out["status_first_query"] = proc_status()
    if args.variant == "mapped":
        lat: dict[str, list[float]] = {}
        for mode in ("hipporag", "hipporag2"):
            for q in queries[1:11]:
                t = time.perf_counter()
                retriever.retrieve(q, mode)
                lat.setdefault(mode, []).append(time.perf_counter() - t)
            out[f"status_after_{mode}"] = proc_status()
        out["query_ms_p50"] = {m: round(1000 * float(np.median(v)), 1) for m, v in lat.items()}
        out["first_hipporag2_ms"] = round(1000 * lat["hipporag2"][0], 1)
        files = [f for f in (path / "snapshot").rglob("*.npy")]
        out["snapshot_files_mib"] = round(sum(f.stat().st_size for f in files) / 2**20, 1)
        graph = store._graph()
        vectors = graph.phrases.vectors.nbytes + graph.passage_vectors.nbytes
        out["snapshot_vectors_mib"] = round(vectors / 2**20, 1)
    store.close()
    return out


def run_child(
    args: argparse.Namespace, size: int, store: Path, variant: str, code: str | None = None
) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", "--variant", variant, "--store", str(store)]
    command += ["--phrases", str(size), "--seed", str(args.seed)]
    if code:
        command += ["--code", code]
    load_before = load_average()
    started = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO, timeout=args.timeout)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["code"] = "baseline" if code else "this commit"
    result["child_wall_s"] = round(time.perf_counter() - started, 1)
    result["load_before"], result["load_after"] = load_before, load_average()
    print(
        f"  [{size:,}] {variant} ({result['code']}): open + first query {result['open_first_query_s']} s",
        file=sys.stderr,
        flush=True,
    )
    return result


# --- write_passages per batch ------------------------------------------------------------------------
def batch_records(
    rng: np.random.Generator, n0: int
) -> tuple[list[PhraseRecord], list[PassageRecord], list[SynonymEdge]]:
    """One batch like bench_scale.build's, continuing a store of n0 phrases."""
    first, last = n0, n0 + PER * BATCH
    ids = {i: make_phrase_id(phrase_name(i)) for i in range(first, last)}

    def pid(i: int) -> str:
        return ids[i] if i in ids else make_phrase_id(phrase_name(i))

    vectors = unit_vectors(rng, last - first, DIM)
    phrases = [PhraseRecord(pid(i), phrase_name(i), vectors[i - first]) for i in range(first, last)]
    passage_vectors = unit_vectors(rng, BATCH, DIM)
    records = []
    for k in range(BATCH):
        p = n0 // PER + k
        home = range(first + k * PER, first + (k + 1) * PER)
        subjects = rng.integers(home.start, home.stop, FACTS)
        objects = rng.integers(0, home.stop, FACTS)
        predicates = rng.integers(0, 50, FACTS)
        mentions: Counter[str] = Counter(pid(i) for i in home)
        facts = {}
        for s, o, q in zip(subjects.tolist(), objects.tolist(), predicates.tolist(), strict=True):
            sn, on, pred = phrase_name(s), phrase_name(o), f"relation {q}"
            mentions[pid(s)] += 1
            mentions[pid(o)] += 1
            fid = make_fact_id(sn, pred, on)
            facts[fid] = FactRecord(fid, pid(s), pred, pid(o), fact_text(sn, pred, on))
        text = f"Passage {p} is about " + ", ".join(phrase_name(i) for i in home) + "."
        passage = Passage(id=make_passage_id(text, f"title {p}"), text=text, title=f"title {p}")
        records.append(PassageRecord(passage, passage_vectors[k], dict(mentions), list(facts.values())))
    new = np.arange(first, last)
    older = (rng.random(len(new)) * new).astype(np.int64)
    scores = rng.uniform(0.8, 1.0, len(new))
    edges = [
        SynonymEdge(pid(a), pid(b), float(c))
        for a, b, c in zip(new.tolist(), older.tolist(), scores.tolist(), strict=True)
    ]
    return phrases, records, edges


def append_batches(path: Path, k: int) -> dict[str, Any]:
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    store = EmbeddedStore(path)
    store.open(MODEL, DIM)
    conn = store._connect()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    n0 = int(conn.execute("SELECT COUNT(*) FROM phrases").fetchone()[0])
    rng = np.random.default_rng(n0)
    ms, frames = [], []
    load_before = load_average()
    for j in range(k):
        phrases, records, edges = batch_records(rng, n0 + j * PER * BATCH)
        t = time.perf_counter()
        store.write_passages(phrases, records)
        ms.append(1000 * (time.perf_counter() - t))
        frames.append(int(conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.write_synonyms(edges)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return {
        "phrases_before": n0,
        "batches": k,
        "ms": [round(v, 1) for v in ms],
        "ms_median": round(float(np.median(ms)), 1),
        "wal_frames_per_batch_median": int(np.median(frames)),
        "load_before": load_before,
        "load_after": load_average(),
    }


def markdown(data: dict[str, Any]) -> str:
    lines = [
        md_header("Embedded store at scale: open + first query, writes per batch, memory (issue 11)", data)
    ]
    sizes = data["sizes"]
    lines += [
        "",
        "Synthetic stores of `bench_scale.build` (N phrases, N/8 passages, 4N facts, N synonym edges, random "
        "unit vectors of dim 384). Every open is a fresh child process; the OS page cache holds the files "
        'after the first run, so "cold" is cold for Python, not for the disk.',
        "",
        "## Open + first query (hipporag mode, no model), seconds",
        "",
    ]
    rows = []
    for size in sizes:
        for r in data["open"].get(str(size), []):
            st = r["status_first_query"]
            rows.append(
                [
                    size,
                    r["variant"],
                    r["code"],
                    r["open_first_query_s"],
                    r.get("snapshot_builds"),
                    r.get("snapshot_maps"),
                    st.get("VmHWM"),
                    st.get("RssAnon"),
                    st.get("RssFile"),
                    r["load_before"][0],
                ]
            )
    lines.append(
        md_table(
            [
                "phrases",
                "variant",
                "code",
                "open + first query s",
                "builds",
                "maps",
                "peak RSS MiB",
                "anon MiB",
                "file MiB",
                "load",
            ],
            rows,
        )
    )
    lines += ["", "## Memory of a process that opened the mapped snapshot and ran 40 queries (MiB)", ""]
    rows = []
    for size in sizes:
        mapped = [r for r in data["open"].get(str(size), []) if r["variant"] == "mapped"]
        if not mapped:
            continue
        r = mapped[-1]
        st = r["status_after_hipporag2"]
        rows.append(
            [
                size,
                r["snapshot_files_mib"],
                r["snapshot_vectors_mib"],
                st["VmHWM"],
                st["RssAnon"],
                st["RssFile"],
                round(st["VmHWM"] * 1024 / size, 2),
                round((st["RssAnon"] + st["RssFile"]) * 1024 / size, 2),
                r["query_ms_p50"]["hipporag"],
                r["query_ms_p50"]["hipporag2"],
                r["first_hipporag2_ms"],
            ]
        )
    lines.append(
        md_table(
            [
                "phrases",
                "snapshot files",
                "of which vectors",
                "peak RSS",
                "RssAnon",
                "RssFile",
                "peak KiB / phrase",
                "resident KiB / phrase",
                "hipporag p50 ms",
                "hipporag2 p50 ms",
                "first hipporag2 ms",
            ],
            rows,
        )
    )
    built = [(size, data["stores"].get(str(size), {})) for size in sizes]
    built = [(size, b) for size, b in built if b.get("built")]
    if built:
        lines += ["", "## The build of each store (`bench_scale.build`, batches of 256 passages)", ""]
        rows = [
            [
                size,
                b.get("code", "this commit"),
                b["build_s"],
                b.get("write_passages"),
                b["write_passages_ms_first_tenth"],
                b["write_passages_ms_last_tenth"],
            ]
            for size, b in built
        ]
        lines.append(
            md_table(
                ["phrases", "code", "build s", "write_passages s", "ms per call, first tenth", "last tenth"],
                rows,
            )
        )
    lines += [
        "",
        "## write_passages per call (256 passages, 2,048 new phrases) appended to a store of N phrases",
        "",
    ]
    rows = []
    for size in sizes:
        w = data["writes"].get(str(size))
        if w:
            rows.append(
                [
                    size,
                    w["phrases_before"],
                    w["batches"],
                    w["ms_median"],
                    min(w["ms"]),
                    max(w["ms"]),
                    w["wal_frames_per_batch_median"],
                    w["load_before"][0],
                ]
            )
    lines.append(
        md_table(
            [
                "size",
                "phrases before",
                "batches",
                "ms median",
                "min",
                "max",
                "WAL frames per commit (4 KiB)",
                "load",
            ],
            rows,
        )
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--workdir", default="/tmp/hipporag-open")
    parser.add_argument(
        "--baseline-code", help="a directory holding the package before the persisted snapshot"
    )
    parser.add_argument("--append", type=int, default=6, help="write_passages calls appended per size")
    parser.add_argument("--repeats", type=int, default=2, help="mapped / rebuild pairs per size")
    parser.add_argument(
        "--skip-rebuild-at", type=int, default=10**9, help="no rebuild children from this size up (slow)"
    )
    parser.add_argument(
        "--fact-vectors-per-phrase",
        type=float,
        default=0.0,
        help="stores built here: embedded facts per phrase (bench_scale.build's option; 0: none)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--stem", default="open")
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--phrases", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--code", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    if args.render_only:
        data = json.loads((RESULTS / f"{args.stem}.json").read_text())
        (RESULTS / f"{args.stem}.md").write_text(markdown(data))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    data: dict[str, Any] = {**run_header(), "sizes": sizes}
    data["open"], data["writes"], data["stores"] = {}, {}, {}
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    for size in sizes:
        store = workdir / f"store-{size}"
        data["stores"][str(size)] = ensure_store(store, size, args.fact_vectors_per_phrase)
        runs = [run_child(args, size, store, "build+persist")]
        for _ in range(args.repeats):
            runs.append(run_child(args, size, store, "mapped"))
            if size < args.skip_rebuild_at:
                runs.append(run_child(args, size, store, "rebuild"))
            if args.baseline_code and size < args.skip_rebuild_at:
                runs.append(run_child(args, size, store, "rebuild", code=args.baseline_code))
        data["open"][str(size)] = runs
        write_results(args.stem, data, markdown(data))
    for size in sizes if args.append else []:  # last: appending changes the stores (--append 0: kept)
        data["writes"][str(size)] = append_batches(workdir / f"store-{size}", args.append)
        data["load_after"] = data["writes"][str(size)]["load_after"]
        print(
            f"  [{size:,}] write_passages median {data['writes'][str(size)]['ms_median']} ms",
            file=sys.stderr,
            flush=True,
        )
        write_results(args.stem, data, markdown(data))


if __name__ == "__main__":
    main()
