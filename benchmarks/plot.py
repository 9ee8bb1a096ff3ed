"""Plots (PNG, matplotlib Agg) from the benchmark results in ``benchmarks/results``.

* ``scale_latency.png``: per-query latency (p50, p95 as the bar's top) and load times against graph size;
* ``scale_memory.png``: peak RSS, snapshot arrays and store size on disk against graph size;
* ``query_stages.png``: MuSiQue query latency per mode, split into stages (p50);
* ``indexing_stages.png``: MuSiQue indexing wall time split into stages.

Each plot is drawn only when its results file exists.

    python benchmarks/plot.py [--scale scale] [--query query_musique] [--indexing indexing_musique]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from harness import RESULTS

SCALE_QUERY_OPS = {
    "ppr_kernel": "PPR kernel (scipy)",
    "store_personalized_pagerank": "store.personalized_pagerank",
    "graph_passage_scores_top5": "graph_passage_scores (top 5)",
    "graph_passage_scores_pool": "graph_passage_scores (pool)",
    "nearest_phrases_link_2": "nearest_phrases (2 entities)",
    "dense_passage_scores": "dense_passage_scores",
    "retrieve_hipporag": "retrieve, hipporag mode (no model)",
}


def read(stem: str) -> dict[str, Any] | None:
    path = RESULTS / f"{stem}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def subtitle(data: dict[str, Any]) -> str:
    m = data["machine"]
    return (
        f"{m['cpu_model']}, {m['logical_cores']} cores; {data['date'][:10]}; commit {data['commit'][:8]}; "
        f"load {data['load_before'][0]:.1f} -> {data['load_after'][0]:.1f}"
    )


def plot_scale_latency(data: dict[str, Any], out: Path) -> None:
    runs = [r for r in data["sizes"] if "error" not in r]
    sizes = [r["phrases"] for r in runs]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    for key, label in SCALE_QUERY_OPS.items():
        p50 = [r["latency"][key]["p50_ms"] for r in runs]
        p95 = [r["latency"][key]["p95_ms"] for r in runs]
        line = left.plot(sizes, p50, marker="o", label=label)[0]
        left.vlines(sizes, p50, p95, color=line.get_color(), alpha=0.5)
    left.axhline(300, color="grey", linestyle=":", linewidth=1)
    left.text(sizes[-1], 330, "300 ms (PPR aim at 1M)", color="grey", fontsize=8, ha="right")
    left.set(
        xscale="log",
        yscale="log",
        xlabel="phrases",
        ylabel="ms per query (p50, line to p95)",
        title="Query-time operations",
    )
    left.legend(fontsize=8, loc="upper left")
    for key, label in (
        ("write_passages", "write_passages (all batches)"),
        ("write_synonyms", "write_synonyms"),
    ):
        right.plot(sizes, [r["build_s"][key] for r in runs], marker="o", label=label)
    for key, label in (("phrase_index", "load phrase index"), ("graph_snapshot", "load CSR graph snapshot")):
        right.plot(sizes, [r["snapshot_load_s"][key] for r in runs], marker="s", label=label)
    right.set(xscale="log", yscale="log", xlabel="phrases", ylabel="seconds", title="Build and cold load")
    right.legend(fontsize=8)
    fig.suptitle("Embedded store on synthetic graphs\n" + subtitle(data), fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_scale_memory(data: dict[str, Any], out: Path) -> None:
    runs = [r for r in data["sizes"] if "error" not in r]
    sizes = [r["phrases"] for r in runs]
    fig, ax = plt.subplots(figsize=(7, 5))
    for key, label in (
        ("peak_rss_mib", "peak RSS incl. a 512-phrase synonym search"),
        ("peak_rss_before_synonym_search_mib", "peak RSS, build + queries"),
        ("rss_after_snapshot_mib", "RSS after snapshot load"),
        ("snapshot_arrays_mib", "snapshot arrays (vectors + CSR)"),
        ("store_on_disk_mib", "store on disk"),
    ):
        ax.plot(sizes, [r[key] for r in runs], marker="o", label=label)
    last = runs[-1]
    peak = last["peak_rss_before_synonym_search_mib"]
    ax.plot(
        sizes,
        [peak * s / last["phrases"] for s in sizes],
        color="grey",
        linestyle=":",
        label="linear through the largest peak",
    )
    ax.set(xscale="log", yscale="log", xlabel="phrases", ylabel="MiB", title="Memory against graph size")
    ax.legend(fontsize=8)
    fig.suptitle(subtitle(data), fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_query_stages(data: dict[str, Any], out: Path) -> None:
    modes = list(data["modes"])
    skip = {"total", "total_without_ner", "wall"}
    stages = list(dict.fromkeys(k for m in modes for k in data["modes"][m] if k not in skip))
    fig, ax = plt.subplots(figsize=(8, 5))
    bottoms = [0.0] * len(modes)
    for stage in stages:
        values = [data["modes"][m].get(stage, {}).get("p50_ms", 0.0) for m in modes]
        ax.bar(modes, values, bottom=bottoms, label=stage)
        bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
    totals = [data["modes"][m]["total"]["p50_ms"] for m in modes]
    ax.scatter(modes, totals, color="black", marker="_", s=400, label="total p50", zorder=3)
    ax.set(ylabel="ms (p50 per stage)", title="MuSiQue query latency by mode (70 questions)")
    ax.legend(fontsize=8)
    fig.suptitle(subtitle(data), fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_indexing(data: dict[str, Any], out: Path) -> None:
    s = data["stages_s"]
    parts = [
        ("embedding: model encode", s.get("embedding_model_only", 0.0)),
        ("embedding: graph building + lookups", s.get("graph_building_in_indexer", 0.0)),
        ("store writes", s.get("store_writes", 0.0)),
        ("synonym edges", s.get("synonyms", 0.0)),
        ("prepare + extraction", s.get("prepare", 0.0) + s.get("extraction", 0.0)),
    ]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.barh([p[0] for p in parts], [p[1] for p in parts])
    ax.axvline(
        data["reference_original"]["total_s"] / 2,
        color="grey",
        linestyle=":",
        label="half the original's total (aim for the whole run)",
    )
    ax.set(xlabel="seconds", title=f"MuSiQue indexing: {data['timings_s']['index_wall']:.1f} s wall")
    ax.legend(fontsize=8)
    fig.suptitle(subtitle(data), fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", default="scale")
    parser.add_argument("--query", default="query_musique")
    parser.add_argument("--indexing", default="indexing_musique")
    args = parser.parse_args()
    drawn = []
    if scale := read(args.scale):
        plot_scale_latency(scale, RESULTS / "scale_latency.png")
        plot_scale_memory(scale, RESULTS / "scale_memory.png")
        drawn += ["scale_latency.png", "scale_memory.png"]
    if query := read(args.query):
        plot_query_stages(query, RESULTS / "query_stages.png")
        drawn.append("query_stages.png")
    if indexing := read(args.indexing):
        plot_indexing(indexing, RESULTS / "indexing_stages.png")
        drawn.append("indexing_stages.png")
    print("wrote " + (", ".join(str(RESULTS / d) for d in drawn) if drawn else "nothing (no results yet)"))


if __name__ == "__main__":
    main()
