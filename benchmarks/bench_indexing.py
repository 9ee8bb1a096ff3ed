"""Indexing benchmark: MuSiQue (1,890 passages) from HippoRAG's published OpenIE, real embedder.

Times ``HippoRAG.index_openie`` into a fresh embedded store and splits the wall time into the indexer's
stages (``IndexReport.timings``: prepare, extraction, embedding, store_writes, synonyms). The embedder is
wrapped to time every ``encode`` call, so the "embedding" stage is split into model time per kind
(passages, phrases, facts) and the rest (building the batch graph, looking up which phrases/facts are new).
Then the in-memory CSR graph is built (the snapshot retrieval uses) and a second ``index_openie`` of the
same file measures the resume / nothing-new path. Peak memory: ``ru_maxrss`` and a sampled RSS.

Padding: token counts of every text give the tokens the model processes with length-sorted batches (what
sentence-transformers does) versus fixed 64-item batches in input order (the original implementation).

Reference (given in the issue, not measured here): the original needs ~200 s on a quiet machine, ~190 s of
it embedding, ~10 s synonym kNN; the aim is under half.

A padding check then encodes a sample (``--padding-check``, default 5 %) of each kind both ways in the
same process, to put a same-load ratio on the batching difference.

    python benchmarks/bench_indexing.py [--store DIR] [--padding-check 0.05] [--embed-sweep 32,64,128,256]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    OPENIE_FILE,
    RssSampler,
    dir_size_mib,
    latency_summary,
    load_average,
    machine_info,
    md_header,
    md_table,
    peak_rss_mib,
    require_files,
    rss_mib,
    run_header,
    timed,
    write_results,
)

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.common.text import fact_text, normalize_phrase, passage_content
from hipporag_neo4j.embedding.encoder import Embedder, create_embedder
from hipporag_neo4j.extraction.recorded import RecordedExtraction, load_recorded_extraction
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.base import Matrix

REFERENCE = {
    "total_s": 200.0,
    "embedding_s": 190.0,
    "synonyms_s": 10.0,
    "source": "issue text, not measured here",
}
KINDS = ("passage", "phrase", "fact")


class TimedEmbedder:
    """Wraps an embedder; records (kind, texts, seconds) of every ``encode`` call."""

    def __init__(self, inner: Embedder, kind_of: dict[str, str]) -> None:
        self.inner = inner
        self.kind_of = kind_of
        self.model_name = inner.model_name
        self.calls: list[tuple[str, int, float]] = []

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def max_tokens(self) -> int | None:
        return self.inner.max_tokens

    def token_count(self, text: str) -> int:
        return self.inner.token_count(text)

    def encode(self, texts: Sequence[str]) -> Matrix:
        start = time.perf_counter()
        out = self.inner.encode(texts)
        kind = self.kind_of.get(texts[0], "other") if texts else "empty"
        self.calls.append((kind, len(texts), time.perf_counter() - start))
        return out


def texts_by_kind(recorded: RecordedExtraction) -> dict[str, list[str]]:
    """The distinct texts the indexer embeds, per kind (as it builds them)."""
    passages, phrases, facts = {}, {}, {}
    for item in recorded.passages:
        passages[passage_content(item.text, item.title)] = None
        found = recorded.lookup(item)
        if found is None:
            continue
        for t in found.triples:
            phrases[t.subject] = phrases[t.object] = None
            facts[fact_text(t.subject, t.predicate, t.object)] = None
        for entity in found.entities:
            if name := normalize_phrase(entity):
                phrases[name] = None
    return {"passage": list(passages), "phrase": list(phrases), "fact": list(facts)}


def padding_stats(lengths: list[int], batch_size: int) -> dict[str, Any]:
    """Tokens processed: real, length-sorted batches, fixed batches in input order."""
    arr = np.asarray(lengths)

    def padded(values: np.ndarray) -> int:
        return int(
            sum(len(b) * b.max() for b in np.array_split(values, range(batch_size, len(values), batch_size)))
        )

    real = int(arr.sum())
    sorted_tokens = padded(np.sort(arr)[::-1])
    input_order = padded(arr)
    return {
        "texts": len(lengths),
        "mean_tokens": round(float(arr.mean()), 1),
        "max_tokens": int(arr.max()),
        "real_tokens": real,
        "tokens_length_sorted_batches": sorted_tokens,
        "tokens_fixed_batches_input_order": input_order,
        "waste_input_order_pct": round(100 * (input_order - real) / input_order, 1),
        "waste_sorted_pct": round(100 * (sorted_tokens - real) / sorted_tokens, 1),
    }


def embed_sweep(embedder: Embedder, texts: dict[str, list[str]], sizes: list[int]) -> list[dict[str, Any]]:
    """Pure encode time of every text of each kind at several batch sizes (same process, same load)."""
    rows = []
    for size in sizes:
        embedder.batch_size = size  # SentenceTransformerEmbedder attribute
        for kind in KINDS:
            start = time.perf_counter()
            embedder.encode(texts[kind])
            seconds = time.perf_counter() - start
            rows.append(
                {"batch_size": size, "kind": kind, "texts": len(texts[kind]), "seconds": round(seconds, 2)}
            )
            print(f"  sweep batch {size} {kind}: {seconds:.1f} s", flush=True)
    return rows


def padding_check(embedder: Embedder, texts: dict[str, list[str]], fraction: float) -> list[dict[str, Any]]:
    """Same texts, same process: one ``encode`` call (length-sorted batches) against calls of 64 texts in
    corpus order (the original's fixed batches), run A-B-B-A so both see the same load."""
    rows = []
    for kind in KINDS:
        sample = texts[kind][:: max(1, round(1 / fraction))]  # every k-th text, corpus order kept
        seconds = {"sorted": 0.0, "fixed_64_input_order": 0.0}
        for variant in ("sorted", "fixed_64_input_order", "fixed_64_input_order", "sorted"):
            start = time.perf_counter()
            if variant == "sorted":
                embedder.encode(sample)
            else:
                for first in range(0, len(sample), 64):
                    embedder.encode(sample[first : first + 64])
            seconds[variant] += (time.perf_counter() - start) / 2
        ratio = seconds["fixed_64_input_order"] / seconds["sorted"]
        rows.append(
            {
                "kind": kind,
                "texts": len(sample),
                **{k: round(v, 2) for k, v in seconds.items()},
                "ratio_fixed_to_sorted": round(ratio, 2),
            }
        )
        print(f"  padding check {kind}: {rows[-1]}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--openie", type=Path, default=OPENIE_FILE)
    parser.add_argument("--store", type=Path, help="store directory to create and keep (default: a temp dir)")
    parser.add_argument(
        "--padding-check",
        type=float,
        default=0.05,
        help="share of texts for the batching comparison (0: skip)",
    )
    parser.add_argument("--embed-sweep", default="", help="comma-separated batch sizes to time pure encoding")
    parser.add_argument("--stem", default="indexing_musique", help="results file name stem")
    args = parser.parse_args()
    require_files(args.openie)
    if args.store and args.store.exists() and any(args.store.iterdir()):
        raise SystemExit(f"{args.store} is not empty: the benchmark needs a fresh store")

    header = run_header()
    store_dir = args.store or Path(tempfile.mkdtemp(prefix="hipporag-bench-index-"))
    settings = load_settings({"store": {"path": str(store_dir)}}, env_file=None)
    timings: dict[str, float] = {}
    recorded = load_recorded_extraction(args.openie)
    texts = texts_by_kind(recorded)
    kind_of = {t: kind for kind in reversed(KINDS) for t in texts[kind]}
    inner = create_embedder(settings.embedding)
    with timed(timings, "model_load"):
        dim = inner.dimension
    embedder = TimedEmbedder(inner, kind_of)
    rss_before = rss_mib()

    memory = HippoRAG(settings, embedder=embedder)
    with RssSampler() as sampler:
        start = time.perf_counter()
        report = memory.index_openie(args.openie)
        timings["index_wall"] = time.perf_counter() - start
    store = memory.store
    with timed(timings, "snapshot_build"):
        snapshot = store._graph()  # type: ignore[attr-defined]  # the CSR graph retrieval builds lazily
    rss_after_snapshot = rss_mib()
    with timed(timings, "rerun_nothing_new"):
        rerun = memory.index_openie(args.openie)
    stats = memory.stats()
    memory.close()

    encode = {k: {"calls": 0, "texts": 0, "seconds": 0.0} for k in (*KINDS, "other")}
    for kind, n, seconds in embedder.calls:
        if kind in encode:
            encode[kind]["calls"] += 1
            encode[kind]["texts"] += n
            encode[kind]["seconds"] += seconds
    encode_total = sum(v["seconds"] for v in encode.values())
    stages = {k: round(v, 3) for k, v in report.timings.items()}
    stages["embedding_model_only"] = round(encode_total, 3)
    stages["graph_building_in_indexer"] = round(report.timings.get("embedding", 0.0) - encode_total, 3)

    lengths = {k: [min(inner.token_count(t), inner.max_tokens or 10**9) for t in texts[k]] for k in KINDS}
    padding = {k: padding_stats(lengths[k], settings.embedding.batch_size) for k in KINDS}
    header["load_after"] = load_average()  # after the indexing measurements (extras come later)
    header["machine"] = machine_info()
    data = {
        **header,
        "corpus": str(args.openie.name),
        "embedding_model": inner.model_name,
        "embedding_dim": dim,
        "embedding_batch_size": settings.embedding.batch_size,
        "indexing_batch_size": 256,
        "report": {
            "indexed": len(report.indexed),
            "failed": len(report.failed),
            "new_phrases": report.new_phrases,
            "new_facts": report.new_facts,
            "new_synonym_edges": report.new_synonym_edges,
        },
        "store": stats.model_dump(mode="json"),
        "timings_s": {k: round(v, 3) for k, v in timings.items()},
        "stages_s": stages,
        "encode_by_kind": {
            k: {**v, "seconds": round(v["seconds"], 3), "texts_per_s": round(v["texts"] / v["seconds"], 1)}
            for k, v in encode.items()
            if v["calls"]
        },
        "encode_call_latency": latency_summary([s for _, _, s in embedder.calls]),
        "padding": padding,
        "padding_check": [],
        "embed_sweep": [],
        "rerun_skipped": len(rerun.skipped),
        "memory_mib": {
            "rss_before_index": round(rss_before, 1),
            "sampled_peak_during_index": round(sampler.peak_mib, 1),
            "rss_after_snapshot": round(rss_after_snapshot, 1),
            "process_peak_ru_maxrss": round(peak_rss_mib(), 1),
            "store_on_disk": round(dir_size_mib(store_dir), 1),
        },
        "snapshot": {"phrases": len(snapshot.phrases.ids), "transition_nnz": int(snapshot.transition.nnz)},
        "reference_original": REFERENCE,
        "ratio_to_reference_total": round(timings["index_wall"] / REFERENCE["total_s"], 3),
    }
    if not args.store:
        shutil.rmtree(store_dir, ignore_errors=True)
    json_path, md_path = write_results(args.stem, data, markdown(data))  # kept if the extras are stopped
    if args.padding_check > 0:
        data["padding_check"] = padding_check(inner, texts, args.padding_check)
    if args.embed_sweep:
        data["embed_sweep"] = embed_sweep(inner, texts, [int(s) for s in args.embed_sweep.split(",")])
    data["load_after_extras"] = load_average()
    json_path, md_path = write_results(args.stem, data, markdown(data))
    print(md_path.read_text())
    print(f"wrote {json_path} and {md_path}")


def markdown(data: dict[str, Any]) -> str:
    stages = data["stages_s"]
    padding, padding_runs, sweep = data["padding"], data.get("padding_check", []), data.get("embed_sweep", [])
    batch = data["embedding_batch_size"]
    t = data["timings_s"]
    stage_rows = [
        ["model load (before indexing)", t["model_load"]],
        ["index_openie wall time", t["index_wall"]],
        ["- prepare", stages.get("prepare", 0.0)],
        ["- extraction (recorded lookup)", stages.get("extraction", 0.0)],
        ["- embedding stage", stages.get("embedding", 0.0)],
        ["  - model encode (all kinds)", stages["embedding_model_only"]],
        ["  - graph building + new-id lookups", stages["graph_building_in_indexer"]],
        ["- store writes", stages.get("store_writes", 0.0)],
        ["- synonym edges (kNN + writes)", stages.get("synonyms", 0.0)],
        ["snapshot (CSR graph) build", t["snapshot_build"]],
        ["re-run, nothing new", t["rerun_nothing_new"]],
    ]
    enc_rows = [
        [k, v["calls"], v["texts"], v["seconds"], v["texts_per_s"]] for k, v in data["encode_by_kind"].items()
    ]
    pad_rows = [
        [
            k,
            p["texts"],
            p["mean_tokens"],
            p["real_tokens"],
            p["tokens_length_sorted_batches"],
            p["tokens_fixed_batches_input_order"],
            p["waste_sorted_pct"],
            p["waste_input_order_pct"],
        ]
        for k, p in padding.items()
    ]
    mem = data["memory_mib"]
    r = data["report"]
    md = [
        md_header("Indexing benchmark: MuSiQue 1,890 passages from the published OpenIE", data),
        f"Indexed {r['indexed']} passages ({r['failed']} failed), {r['new_phrases']:,} phrases, "
        f"{r['new_facts']:,} facts, {r['new_synonym_edges']:,} synonym edges; {data['embedding_model']} "
        f"({data['embedding_dim']}-d), embedding batch {batch}.",
        "",
        md_table(["stage", "seconds"], stage_rows),
        "",
        f"Reference (issue text, not measured here): ~{REFERENCE['total_s']:.0f} s on a quiet machine "
        f"(~{REFERENCE['embedding_s']:.0f} s embedding, ~{REFERENCE['synonyms_s']:.0f} s synonyms); "
        f"this run / reference = {data['ratio_to_reference_total']:.2f} (load differs: see above).",
        "",
        "## Model time per kind",
        "",
        md_table(["kind", "calls", "texts", "seconds", "texts/s"], enc_rows),
        "",
        f"## Padding (tokens the model processes, batch of {batch})",
        "",
        md_table(
            [
                "kind",
                "texts",
                "mean tokens",
                "real",
                "length-sorted",
                "input order",
                "waste sorted %",
                "waste input order %",
            ],
            pad_rows,
        ),
        "",
        "## Memory (MiB)",
        "",
        md_table(["what", "MiB"], [[k.replace("_", " "), v] for k, v in mem.items()]),
    ]
    if padding_runs:
        md += [
            "",
            "## Same texts, same process: length-sorted batches vs fixed 64-text batches in corpus order (s)",
            "",
            md_table(
                ["kind", "texts", "sorted", "fixed 64, corpus order", "fixed / sorted"],
                [
                    [
                        p["kind"],
                        p["texts"],
                        p["sorted"],
                        p["fixed_64_input_order"],
                        p["ratio_fixed_to_sorted"],
                    ]
                    for p in padding_runs
                ],
            ),
        ]
    if sweep:
        md += [
            "",
            "## Pure encode time by batch size (s)",
            "",
            md_table(
                ["batch", "kind", "texts", "seconds"],
                [[s["batch_size"], s["kind"], s["texts"], s["seconds"]] for s in sweep],
            ),
        ]
    return "\n".join(md)


if __name__ == "__main__":
    main()
