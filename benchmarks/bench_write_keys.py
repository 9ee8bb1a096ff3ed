"""``write_passages`` before and after integer keys (schema version 2), side by side (issue 19).

One store of N phrases is written by the code before (``--old-commit``, its package taken with ``git
archive`` and run in a child process), or given (``--source-store``, written by that code). Two copies:
the code before appends to one; this code opens the other (which upgrades it to schema version 2: the
upgrade is timed) and appends to it. The two children then take turns, batch by batch (A B A B), each
``write_passages`` call 256 passages / 2,048 new phrases / 8,192 facts as in ``bench_open.py`` (same
records on both sides), then ``write_synonyms`` of the batch. With ``wal_autocheckpoint`` off, each commit's
WAL is read frame by frame: frames, distinct pages, and (``--owners``) the pages per B-tree from ``dbstat``.

    python benchmarks/bench_write_keys.py --sizes 10000,100000 [--batches 4] [--owners]
    python benchmarks/bench_write_keys.py --source-store /work/bench-1m/store-1000000 --batches 4
"""

from __future__ import annotations

import os
import sys

if os.environ.get("BENCH_PACKAGE"):  # a child: the package under test, imported before common's path
    sys.path.insert(0, os.environ["BENCH_PACKAGE"])
    import hipporag_neo4j  # noqa: F401

import argparse
import json
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from bench_open import BATCH, DIM, PER, batch_records, ensure_store
from bench_scale import MODEL
from bench_write_pages import page_owners, wal_pages
from harness import REPO, load_average, md_header, md_table, run_header, write_results


# --- child -------------------------------------------------------------------------------------------
def serve(path: Path) -> None:
    """Commands on stdin, one JSON answer per line on stdout: open, batch J [owners], build N, quit."""
    import hipporag_neo4j
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    def answer(data: dict[str, Any]) -> None:
        print(json.dumps(data), flush=True)

    store = EmbeddedStore(path, persist_snapshot=False)
    conn: Any = None
    n0 = 0
    rng = np.random.default_rng(0)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "build":
            answer(ensure_store(path, int(words[1])))
        elif words[0] == "open":
            t = time.perf_counter()
            meta = store.open(MODEL, DIM)
            opened = time.perf_counter() - t
            conn = store._connect()
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("PRAGMA wal_autocheckpoint=0")
            n0 = int(conn.execute("SELECT COUNT(*) FROM phrases").fetchone()[0])
            rng = np.random.default_rng(n0)
            answer(
                {
                    "open_s": round(opened, 3),
                    "schema_version": meta.schema_version,
                    "phrases": n0,
                    "package": str(Path(hipporag_neo4j.__file__).parent),
                }
            )
        elif words[0] == "snapshot":  # the retrieval snapshot built from SQL (its reads of the link tables)
            store._snapshot = store._phrases = None
            t = time.perf_counter()
            store._graph()
            answer({"snapshot_s": round(time.perf_counter() - t, 2)})
        elif words[0] == "batch":
            j = int(words[1])
            phrases, records, edges = batch_records(rng, n0 + j * PER * BATCH)
            t = time.perf_counter()
            store.write_passages(phrases, records)
            ms = 1000 * (time.perf_counter() - t)
            wal = path / "graph.sqlite-wal"
            frames = wal_pages(wal)
            out: dict[str, Any] = {"ms": round(ms, 1), "frames": len(frames), "pages": len(set(frames))}
            if len(words) > 2:
                owners = page_owners(conn)
                out["by_btree"] = dict(Counter(owners.get(p, "(free or new)") for p in set(frames)))
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            t = time.perf_counter()
            store.write_synonyms(edges)
            out["synonyms_ms"] = round(1000 * (time.perf_counter() - t), 1)
            out["synonyms_pages"] = len(set(wal_pages(wal)))
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            answer(out)
    store.close()


class Child:
    def __init__(self, package: Path, store: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(store)],
            env={**os.environ, "BENCH_PACKAGE": str(package)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=str(Path(__file__).parent),
        )

    def ask(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"child died on {command!r} (exit {self.proc.wait()})")
        data: dict[str, Any] = json.loads(line)
        return data

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait()


def old_package(work: Path, commit: str) -> Path:
    folder = work / f"package-{commit}"
    if not folder.exists():
        tmp = work / f"package-{commit}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", commit, "hipporag_neo4j"], cwd=REPO, capture_output=True)
        archive.check_returncode()
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
        tmp.rename(folder)
    return folder


def copy_store(source: Path, target: Path) -> float:
    shutil.rmtree(target, ignore_errors=True)
    t = time.perf_counter()
    target.mkdir(parents=True)
    for name in ("graph.sqlite", "graph.sqlite-wal"):
        if (source / name).exists():
            shutil.copyfile(source / name, target / name)
    return time.perf_counter() - t


def one_after_the_other(old: Path, base: Path, work: Path, batches: int) -> dict[str, Any]:
    """For stores too large to hold three copies on the disk: this code (copy, upgrade, append, delete),
    then the code before (copy, append, delete); not interleaved."""
    result: dict[str, Any] = {"old": {"batches": []}, "new": {"batches": []}, "copy_s": 0.0}
    for side, package in (("new", REPO), ("old", old)):
        path = work / f"{side}_run"
        result["copy_s"] += round(copy_store(base, path), 1)
        child = Child(package, path)
        try:
            result[side]["open"] = child.ask("open")
            print(side, "open", result[side]["open"], flush=True)
            result[side]["snapshot_s"] = []
            for j in range(batches):
                got = child.ask(f"batch {j}")
                result[side]["batches"].append(got)
                print(side, j, got, flush=True)
        finally:
            child.close()
        shutil.rmtree(path, ignore_errors=True)
    return summarise(result)


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    for side in ("old", "new"):
        rows = result[side]["batches"]
        result[side]["median_ms"] = float(np.median([r["ms"] for r in rows]))
        result[side]["median_pages"] = float(np.median([r["pages"] for r in rows]))
        result[side]["median_frames"] = float(np.median([r["frames"] for r in rows]))
        result[side]["median_synonyms_ms"] = float(np.median([r["synonyms_ms"] for r in rows]))
    result["ratio_ms"] = round(result["new"]["median_ms"] / result["old"]["median_ms"], 3)
    result["ratio_pages"] = round(result["new"]["median_pages"] / result["old"]["median_pages"], 3)
    return result


def side_by_side(
    old: Path, base: Path, work: Path, batches: int, owners: bool, snapshots: int
) -> dict[str, Any]:
    a_path, b_path = work / "old_run", work / "new_run"
    # one copy at a time, the upgrade between them: the disk holds the store about 3 times, not 4
    copy_s = copy_store(base, b_path)
    b = Child(REPO, b_path)
    result: dict[str, Any] = {"old": {"batches": []}, "new": {"batches": []}}
    result["new"]["open"] = b.ask("open")  # the upgrade to schema version 2
    print("upgraded", result["new"]["open"], flush=True)
    copy_s += copy_store(base, a_path)
    a = Child(old, a_path)
    try:
        result["copy_s"] = round(copy_s, 1)
        result["old"]["open"] = a.ask("open")
        print("open", result["old"]["open"], result["new"]["open"], flush=True)
        for side in ("old", "new"):
            result[side]["snapshot_s"] = []
        for _ in range(snapshots):
            for side, child in (("old", a), ("new", b)):
                result[side]["snapshot_s"].append(child.ask("snapshot")["snapshot_s"])
            print("snapshot", result["old"]["snapshot_s"], result["new"]["snapshot_s"], flush=True)
        for j in range(batches):
            extra = " owners" if owners else ""
            for side, child in (("old", a), ("new", b)):
                got = child.ask(f"batch {j}{extra}")
                result[side]["batches"].append(got)
                print(side, j, {k: v for k, v in got.items() if k != "by_btree"}, flush=True)
    finally:
        a.close()
        b.close()
    summarise(result)
    shutil.rmtree(a_path, ignore_errors=True)
    shutil.rmtree(b_path, ignore_errors=True)
    return result


def by_btree_rows(d: dict[str, Any]) -> list[list[Any]]:
    names: set[str] = set()
    for side in ("old", "new"):
        for r in d[side]["batches"]:
            names.update(r.get("by_btree", {}))

    def med(side: str, name: str) -> float:
        return float(np.median([r.get("by_btree", {}).get(name, 0) for r in d[side]["batches"]]))

    order = sorted(names, key=lambda n: -med("old", n))
    return [[n, int(med("old", n)), int(med("new", n))] for n in order if med("old", n) + med("new", n) >= 1]


def markdown(data: dict[str, Any]) -> str:
    lines = [md_header("write_passages before / after integer keys (schema 2), side by side", data)]
    lines += [
        "Per size: one store written by the code before (`old_commit`); a copy appended to by that code, "
        "a copy upgraded to schema 2 by this code (the *open* time) and appended to by it, batch by "
        "batch in turns (old, new, old, new...), the same records on both sides: 256 passages, 2,048 new "
        "phrases, 8,192 facts per call. *pages* = distinct pages in the commit's WAL; medians over the "
        "calls.",
        "",
    ]
    summary = []
    for size, d in data["sizes"].items():
        o, n = d["old"], d["new"]
        summary.append(
            [
                f"{int(size):,}",
                f"{o['median_ms']:,.0f}",
                f"{n['median_ms']:,.0f}",
                d["ratio_ms"],
                f"{o['median_pages']:,.0f}",
                f"{n['median_pages']:,.0f}",
                d["ratio_pages"],
                f"{o['median_synonyms_ms']:,.0f} / {n['median_synonyms_ms']:,.0f}",
                f"{n['open']['open_s']:.1f}",
            ]
        )
    lines += [
        md_table(
            [
                "phrases",
                "old ms / call",
                "new ms / call",
                "new / old",
                "old pages / commit",
                "new pages / commit",
                "new / old",
                "write_synonyms ms old / new",
                "upgrade (open) s",
            ],
            summary,
        ),
        "",
    ]
    for size, d in data["sizes"].items():
        lines += [
            f"## {int(size):,} phrases",
            "",
            f"- write_passages ms per call, old: {[r['ms'] for r in d['old']['batches']]}; "
            f"new: {[r['ms'] for r in d['new']['batches']]}",
            f"- pages per commit, old: {[r['pages'] for r in d['old']['batches']]}; "
            f"new: {[r['pages'] for r in d['new']['batches']]}",
            f"- open, old: {d['old']['open']['open_s']} s; "
            f"new (with the upgrade): {d['new']['open']['open_s']} s",
            f"- retrieval snapshot built from SQL, s, old: {d['old'].get('snapshot_s', [])}; "
            f"new: {d['new'].get('snapshot_s', [])}",
            "",
        ]
        rows = by_btree_rows(d)
        if rows:
            lines += [md_table(["B-tree", "old pages / commit", "new pages / commit"], rows), ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--source-store", type=Path, help="a store written by the code before (not modified)")
    parser.add_argument("--old-commit", default="6d8919a")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/hipporag-bench/write_keys"))
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--owners", action="store_true", help="pages per B-tree (a dbstat scan per commit)")
    parser.add_argument("--snapshots", type=int, default=0, help="snapshot builds from SQL per side, A B A B")
    parser.add_argument(
        "--one-after-the-other", action="store_true", help="one copy at a time (disk): not interleaved"
    )
    parser.add_argument("--stem", default="write_keys")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    data: dict[str, Any] = {**run_header(), "old_commit": args.old_commit, "sizes": {}}
    args.workdir.mkdir(parents=True, exist_ok=True)
    old = old_package(args.workdir, args.old_commit)
    sources: list[tuple[str, Path]] = []
    md_path = None
    if args.source_store:
        sources.append(("source", args.source_store))
    else:
        for size in (int(s) for s in args.sizes.split(",")):
            base = args.workdir / f"store_{size}_v1"
            builder = Child(old, base)
            built = builder.ask(f"build {size}")
            builder.close()
            print(size, "built", built, flush=True)
            sources.append((str(size), base))
    for _, base in sources:
        if args.one_after_the_other:
            result = one_after_the_other(old, base, args.workdir, args.batches)
        else:
            result = side_by_side(old, base, args.workdir, args.batches, args.owners, args.snapshots)
        result["interleaved"] = not args.one_after_the_other
        size = str(result["old"]["open"]["phrases"])
        data["sizes"][size] = result
        data["load_after"] = load_average()
        _, md_path = write_results(args.stem, data, markdown(data))
        print(size, "ratio ms", result["ratio_ms"], "ratio pages", result["ratio_pages"], flush=True)
    if md_path is not None:
        print(md_path.read_text())


if __name__ == "__main__":
    main()
