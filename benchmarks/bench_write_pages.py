"""Which B-trees a ``write_passages`` commit writes, as the embedded store grows (issue 19, a profile).

On the synthetic stores of ``bench_open.py`` (``bench_scale.build``: N phrases, N/8 passages, 4N facts,
random unit vectors of dim 384; built into ``--workdir`` when missing), ``--batches`` calls of
``write_passages`` (256 passages, 2,048 new phrases, 8,192 facts each, as in ``bench_open.py``) are
appended with ``wal_autocheckpoint`` off. After each commit the WAL file is read frame by frame (the
page number of each frame) and every page is attributed to its table or index with SQLite's ``dbstat``;
then the WAL is checkpointed (outside the timing). Reported per size: the pages each commit wrote per
B-tree (median over the batches), their share, and the pages the same rows would fill if appended in
key order (payload bytes / page size), i.e. the write amplification of random keys.

    python benchmarks/bench_write_pages.py --sizes 10000,100000 [--workdir DIR] [--batches 3]
"""

from __future__ import annotations

import argparse
import struct
import time
from collections import Counter
from pathlib import Path
from typing import Any

import harness  # noqa: F401  (puts the repository on sys.path)
import numpy as np
from bench_open import BATCH, PER, batch_records, ensure_store
from bench_scale import MODEL
from harness import load_average, md_header, md_table, run_header, write_results

DIM = 384


def wal_pages(wal: Path) -> list[int]:
    """Page number of every frame in the WAL file (header 32 bytes, frames of 24 + page size bytes)."""
    data = wal.read_bytes()
    if len(data) < 32:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    pages, offset = [], 32
    while offset + 24 + page_size <= len(data):
        pages.append(struct.unpack(">I", data[offset : offset + 4])[0])
        offset += 24 + page_size
    return pages


def page_owners(conn: Any) -> dict[int, str]:
    return {int(p): str(n) for n, p in conn.execute("SELECT name, pageno FROM dbstat")}


def payload_bytes(conn: Any) -> dict[str, int]:
    return {str(n): int(b) for n, b in conn.execute("SELECT name, SUM(payload) FROM dbstat GROUP BY name")}


def measure(path: Path, batches: int) -> dict[str, Any]:
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    store = EmbeddedStore(path)
    store.open(MODEL, DIM)
    conn = store._connect()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    n0 = int(conn.execute("SELECT COUNT(*) FROM phrases").fetchone()[0])
    rng = np.random.default_rng(n0 + 1)
    wal = path / "graph.sqlite-wal"
    per_batch: list[dict[str, int]] = []
    grown: list[dict[str, int]] = []
    ms: list[float] = []
    for j in range(batches):
        phrases, records, edges = batch_records(rng, n0 + j * PER * BATCH)
        before = payload_bytes(conn)
        t = time.perf_counter()
        store.write_passages(phrases, records)
        ms.append(1000 * (time.perf_counter() - t))
        owners = page_owners(conn)
        per_batch.append(dict(Counter(owners.get(p, "(free or new)") for p in set(wal_pages(wal)))))
        after = payload_bytes(conn)
        grown.append({k: after.get(k, 0) - before.get(k, 0) for k in after})
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.write_synonyms(edges)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    names = sorted(
        {k for b in per_batch for k in b}, key=lambda k: -float(np.median([b.get(k, 0) for b in per_batch]))
    )
    rows = []
    for name in names:
        pages = float(np.median([b.get(name, 0) for b in per_batch]))
        added = float(np.median([g.get(name, 0) for g in grown]))
        rows.append(
            {
                "btree": name,
                "pages_per_commit": pages,
                "new_payload_pages": round(added / page_size, 1),
                "amplification": round(pages / max(added / page_size, 1.0), 1),
            }
        )
    return {
        "phrases_before": n0,
        "batches": batches,
        "write_ms": [round(v, 1) for v in ms],
        "pages_per_commit": int(np.median([sum(b.values()) for b in per_batch])),
        "by_btree": rows,
        "page_size": page_size,
    }


def markdown(data: dict[str, Any]) -> str:
    lines = [md_header("Pages written per write_passages commit, by B-tree (embedded store)", data)]
    lines += [
        "Synthetic stores of `bench_scale.build`; each commit: 256 passages, 2,048 new phrases, 8,192 "
        "facts (as `bench_open.py`). *pages* = distinct pages of the commit's WAL frames owned by the "
        "B-tree (median over the batches); *new payload pages* = the bytes the B-tree grew by / page "
        "size (what appending in key order would write, roughly); *amplification* = their ratio.",
        "",
    ]
    for size, d in data["sizes"].items():
        lines += [
            f"## {int(size):,} phrases ({d['batches']} commits, write_passages ms {d['write_ms']}, "
            f"{d['pages_per_commit']:,} pages per commit)",
            "",
            md_table(
                ["B-tree", "pages per commit", "share", "new payload pages", "amplification"],
                [
                    [
                        r["btree"],
                        int(r["pages_per_commit"]),
                        f"{100 * r['pages_per_commit'] / max(d['pages_per_commit'], 1):.0f}%",
                        r["new_payload_pages"],
                        r["amplification"],
                    ]
                    for r in d["by_btree"]
                    if r["pages_per_commit"] >= 1
                ],
            ),
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/hipporag-bench/write_pages"))
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("--stem", default="write_pages")
    args = parser.parse_args()
    header = run_header()
    data: dict[str, Any] = {**header, "sizes": {}}
    for size in (int(s) for s in args.sizes.split(",")):
        path = args.workdir / f"store_{size}"
        built = ensure_store(path, size)
        print(size, "store", built, flush=True)
        data["sizes"][str(size)] = {**measure(path, args.batches), "build": built}
        print(size, data["sizes"][str(size)]["by_btree"][:6], flush=True)
        data["load_after"] = load_average()
        json_path, md_path = write_results(args.stem, data, markdown(data))  # after each size
    print(md_path.read_text())
    print(f"wrote {json_path} and {md_path}")


if __name__ == "__main__":
    main()
