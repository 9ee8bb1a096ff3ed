"""Issue 19: the first query after a write, this code (snapshot brought forward) vs the code before
(snapshot rebuilt from SQL after any write), side by side.

Per size, on a copy of a synthetic store (``bench_open.ensure_store``: N phrases, N/8 passages, 4N facts, N
synonym edges; dim 384) whose persisted snapshot is current for the code measured (a warm-up child opens
it and answers one query first, untimed), each in child processes:

* ``fresh``: one child appends a batch (256 passages, 2,048 new phrases, their facts and synonym edges:
  ``bench_open.batch_records``; ``write_passages`` then ``write_synonyms``, both timed), exits; a new
  child opens the store and answers one ``Retriever.retrieve`` query (hipporag mode, no model): "open +
  first query";
* ``same``: one child appends the batch and then answers the query in the same process.

Codes alternate per round (A B, then B A). ``--baseline-code DIR`` is the package before this change
(``git archive 6d8919a hipporag_neo4j | tar -x -C DIR``). The first query's top passages are recorded
for both codes (they must agree).

    python benchmarks/bench_first_query.py --sizes 10000,100000 --baseline-code DIR [--rounds 2]
    python benchmarks/bench_first_query.py --sizes 1000000 --store-1m /work/bench-1m/store-1000000 ...
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import harness  # noqa: F401  (puts the repository on sys.path)

if "--code" in sys.argv:  # a child measuring another version of the package (--baseline-code)
    sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1])

import numpy as np
from bench_open import BATCH, DIM, PER, batch_records, ensure_store
from bench_scale import MODEL, NamedEntities, RandomEmbedder, phrase_name
from harness import REPO, load_average, md_header, md_table, run_header, write_results


def _query(store: Any, phrases: int) -> tuple[list[str], float]:
    from hipporag_neo4j.retrieval.retriever import Retriever
    from hipporag_neo4j.settings import RetrievalSettings

    a, b = 7 % phrases, (phrases // 2) % phrases
    question = f"How is {phrase_name(a)} related to {phrase_name(b)}?"
    entities = {question: [phrase_name(a), phrase_name(b)]}
    retriever = Retriever(store, RandomEmbedder(DIM), RetrievalSettings(), NamedEntities(entities))  # type: ignore[arg-type]
    t = time.perf_counter()
    result = retriever.retrieve(question, "hipporag")
    return [p.passage.id for p in result.passages], time.perf_counter() - t


def child(args: argparse.Namespace) -> dict[str, Any]:
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    out: dict[str, Any] = {"task": args.task}
    t0 = time.perf_counter()
    store = EmbeddedStore(Path(args.store))
    store.open(MODEL, DIM)
    conn = store._connect()
    n0 = int(conn.execute("SELECT COUNT(*) FROM phrases").fetchone()[0])
    out["phrases_before"] = n0
    if args.task in ("append", "append+query"):
        phrases, records, edges = batch_records(np.random.default_rng(n0), n0)
        t = time.perf_counter()
        store.write_passages(phrases, records)
        out["write_passages_s"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        store.write_synonyms(edges)
        out["write_synonyms_s"] = round(time.perf_counter() - t, 3)
        t0 = time.perf_counter()  # the query clock starts after the write
    if args.task in ("query", "append+query", "warm"):
        top, query_s = _query(store, n0)
        out["first_query_s"] = round(query_s, 3)
        out["open_first_query_s"] = round(time.perf_counter() - t0, 3)
        out["top"] = top[:5]
    for counter in ("snapshot_builds", "snapshot_maps", "snapshot_updates"):
        out[counter] = getattr(store, counter, None)
    store.close()
    return out


def run_child(args: argparse.Namespace, store: Path, task: str, code: str | None) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", "--task", task, "--store", str(store)]
    if code:
        command += ["--code", code]
    load = load_average()
    done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO, timeout=args.timeout)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["load_before"] = load
    return result


def measure(
    args: argparse.Namespace, base: Path, code_name: str, code: str | None, how: str
) -> dict[str, Any]:
    scratch = Path(args.workdir) / "scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    t = time.perf_counter()
    scratch.mkdir(parents=True)
    # the database only: each code builds its own persisted snapshot in the warm-up (never the original's)
    subprocess.run(["cp", *[str(f) for f in base.glob("graph.sqlite*")], str(scratch)], check=True)
    copy_s = time.perf_counter() - t
    warm = run_child(args, scratch, "warm", code)  # a persisted snapshot current for this code
    row: dict[str, Any] = {"code": code_name, "how": how, "copy_s": round(copy_s, 1), "warm": warm}
    if how == "same":
        row.update(run_child(args, scratch, "append+query", code))
    else:
        appended = run_child(args, scratch, "append", code)
        queried = run_child(args, scratch, "query", code)
        row.update({k: appended[k] for k in ("write_passages_s", "write_synonyms_s", "phrases_before")})
        row.update({k: v for k, v in queried.items() if k not in ("phrases_before", "task")})
    print(
        f"  {code_name:9} {how:5}: write {row['write_passages_s']} + {row['write_synonyms_s']} s, "
        f"first query {row['open_first_query_s']} s",
        file=sys.stderr,
        flush=True,
    )
    shutil.rmtree(scratch, ignore_errors=True)
    return row


def markdown(data: dict[str, Any]) -> str:
    lines = [md_header("First query after a write: brought forward vs rebuilt (issue 19)", data), ""]
    lines.append(
        f"One batch ({BATCH} passages, {BATCH * PER:,} new phrases, their facts and synonym edges) appended "
        "to a copy of the store, then one hipporag-mode query. `fresh`: the query in a new process (open + "
        "first query); `same`: in the writing process after its writes. Each store copy was first opened and "
        "queried once by the code measured (untimed), so its persisted snapshot was current before the write."
    )
    for size, rows in data["results"].items():
        lines += ["", f"### {int(size):,} phrases", ""]
        table = [
            [
                r["code"],
                r["how"],
                f"{r['write_passages_s']:.2f}",
                f"{r['write_synonyms_s']:.2f}",
                f"{r['open_first_query_s']:.2f}",
                f"{r.get('snapshot_builds')}/{r.get('snapshot_updates')}/{r.get('snapshot_maps')}",
                ", ".join(t[:12] for t in r["top"][:3]),
                str(r["load_before"][0]),
            ]
            for r in rows
        ]
        lines.append(
            md_table(
                [
                    "code",
                    "query in",
                    "write_passages s",
                    "write_synonyms s",
                    "first query s",
                    "builds/updates/maps",
                    "top 3",
                    "load",
                ],
                table,
            )
        )
        for how in ("fresh", "same"):
            new = [r["open_first_query_s"] for r in rows if r["code"] == "this" and r["how"] == how]
            old = [r["open_first_query_s"] for r in rows if r["code"] == "baseline" and r["how"] == how]
            if new and old:
                lines.append(
                    f"\n{how}: first query median {np.median(new):.2f} s (this) vs {np.median(old):.2f} s "
                    f"(before) = **{np.median(new) / np.median(old):.3f}x**"
                )
            wn = [
                r["write_passages_s"] + r["write_synonyms_s"]
                for r in rows
                if r["code"] == "this" and r["how"] == how
            ]
            wo = [
                r["write_passages_s"] + r["write_synonyms_s"]
                for r in rows
                if r["code"] == "baseline" and r["how"] == how
            ]
            if wn and wo:
                lines.append(
                    f"{how}: write (passages + synonyms) median {np.median(wn):.2f} s vs "
                    f"{np.median(wo):.2f} s = {np.median(wn) / np.median(wo):.2f}x"
                )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--workdir", default="/tmp/bench-first-query")
    parser.add_argument("--baseline-code", default=None)
    parser.add_argument("--store-1m", default=None, help="an existing 1M store to copy (never written)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--hows", default="fresh,same")
    parser.add_argument("--stem", default="first_query")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--task", default="query")
    parser.add_argument("--store", default="")
    parser.add_argument("--code", default=None)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    data: dict[str, Any] = {**run_header(), "results": {}}
    codes: list[tuple[str, str | None]] = [("this", None)]
    if args.baseline_code:
        codes.append(("baseline", args.baseline_code))
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    for size in [int(s) for s in args.sizes.split(",")]:
        if size == 1_000_000 and args.store_1m:
            base = Path(args.store_1m)
        else:
            base = Path(args.workdir) / f"store-{size}"
            data.setdefault("builds", {})[size] = ensure_store(base, size)
        print(f"[{size:,}] base {base}", file=sys.stderr, flush=True)
        rows = []
        for r in range(args.rounds):
            order = codes if r % 2 == 0 else codes[::-1]
            for how in args.hows.split(","):
                for name, code in order:
                    rows.append(measure(args, base, name, code, how))
                    data["results"][size] = rows
                    write_results(args.stem, data, markdown(data))
    data["load_after"] = load_average()
    write_results(args.stem, data, markdown(data))


if __name__ == "__main__":
    main()
