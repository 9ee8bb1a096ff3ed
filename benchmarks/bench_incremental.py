"""Incremental indexing benchmark: MuSiQue, index 99 % of the passages, then add the other 1 %.

All with the real embedder and HippoRAG's published OpenIE (``index_openie`` on files holding the chosen
``docs``). In one run, so the load is comparable:

1. full build: all 1,890 passages into a fresh store (the baseline);
2. base build: 99 % into a fresh store; the store is copied;
3. warm increment: the other 1 % added by the same process (phrase vectors still in memory);
4. cold increment: the 1 % added to the copy by a new ``HippoRAG`` object (phrase vectors loaded from
   SQLite first), the usual case of a later ``index`` run; the model is already loaded in both;
5. the CSR snapshot rebuilt after the increment (the first query pays it), and ``delete`` of the 1 %.

The increment should cost in proportion to the new data (aim: under 5 % of the full build); the original
implementation recomputes every synonym pair, i.e. the full build's synonym stage, on each addition.

    python benchmarks/bench_incremental.py [--fraction 0.01] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    OPENIE_FILE,
    load_average,
    machine_info,
    md_header,
    md_table,
    peak_rss_mib,
    require_files,
    run_header,
    timed,
    write_results,
)

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.embedding.encoder import Embedder, create_embedder
from hipporag_neo4j.models import IndexReport
from hipporag_neo4j.settings import load_settings


def write_docs(docs: list[dict[str, Any]], path: Path) -> Path:
    path.write_text(json.dumps({"docs": docs}, ensure_ascii=False))
    return path


def run_index(store_dir: Path, embedder: Embedder, openie: Path) -> tuple[HippoRAG, IndexReport, float]:
    memory = HippoRAG(load_settings({"store": {"path": str(store_dir)}}, env_file=None), embedder=embedder)
    _ = memory.store  # open the store before the clock starts (the model is loaded already)
    start = time.perf_counter()
    report = memory.index_openie(openie)
    return memory, report, time.perf_counter() - start


def summary(report: IndexReport, wall: float) -> dict[str, Any]:
    return {
        "wall_s": round(wall, 3),
        "stages_s": {k: round(v, 3) for k, v in report.timings.items()},
        "indexed": len(report.indexed),
        "skipped": len(report.skipped),
        "failed": len(report.failed),
        "new_phrases": report.new_phrases,
        "new_facts": report.new_facts,
        "new_synonym_edges": report.new_synonym_edges,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--openie", type=Path, default=OPENIE_FILE)
    parser.add_argument("--fraction", type=float, default=0.01, help="share of passages added at the end")
    parser.add_argument("--seed", type=int, default=0, help="which passages form the increment")
    parser.add_argument("--stem", default="incremental_musique")
    args = parser.parse_args()
    require_files(args.openie)

    header = run_header()
    work = Path(tempfile.mkdtemp(prefix="hipporag-bench-incr-"))
    docs = json.loads(args.openie.read_text())["docs"]
    chosen = set(random.Random(args.seed).sample(range(len(docs)), max(1, round(args.fraction * len(docs)))))
    base_docs = [d for i, d in enumerate(docs) if i not in chosen]
    new_docs = [d for i, d in enumerate(docs) if i in chosen]
    base_file = write_docs(base_docs, work / "base.json")
    new_file = write_docs(new_docs, work / "increment.json")

    settings = load_settings(env_file=None)
    embedder = create_embedder(settings.embedding)
    setup: dict[str, float] = {}
    with timed(setup, "model_load"):
        _ = embedder.dimension  # loads the model
    results: dict[str, Any] = {}
    loads: dict[str, list[float]] = {"start": load_average()}

    print("full build ...", flush=True)
    memory, report, wall = run_index(work / "full", embedder, args.openie)
    results["full_build"] = summary(report, wall)
    full_stats = memory.stats()
    memory.close()
    loads["after_full"] = load_average()

    print("base build ...", flush=True)
    memory, report, wall = run_index(work / "base", embedder, base_file)
    results["base_build"] = summary(report, wall)
    memory.store._graph()  # type: ignore[attr-defined]  # as after a first query
    shutil.copytree(work / "base", work / "base_copy")
    loads["after_base"] = load_average()

    print("warm increment ...", flush=True)
    start = time.perf_counter()
    report = memory.index_openie(new_file)
    results["increment_warm"] = summary(report, time.perf_counter() - start)
    after: dict[str, float] = {}
    with timed(after, "snapshot_rebuild_after_increment"):
        memory.store._graph()  # type: ignore[attr-defined]
    with timed(after, "delete_increment"):
        deleted = memory.delete([p for p in report.indexed])
    with timed(after, "snapshot_rebuild_after_delete"):
        memory.store._graph()  # type: ignore[attr-defined]
    results["after_increment_s"] = {k: round(v, 3) for k, v in after.items()}
    results["delete"] = {
        "passages": len(deleted.passages),
        "phrases_removed": deleted.phrases_removed,
        "facts_removed": deleted.facts_removed,
        "synonym_edges_removed": deleted.synonym_edges_removed,
    }
    memory.close()

    print("cold increment ...", flush=True)
    memory, report, wall = run_index(work / "base_copy", embedder, new_file)
    results["increment_cold"] = summary(report, wall)
    incremented_stats = memory.stats()
    memory.close()
    loads["end"] = load_average()
    shutil.rmtree(work, ignore_errors=True)

    full = results["full_build"]
    for key in ("increment_warm", "increment_cold"):
        results[key]["share_of_full_build_pct"] = round(100 * results[key]["wall_s"] / full["wall_s"], 2)
        results[key]["synonym_stage_share_of_full_pct"] = round(
            100
            * results[key]["stages_s"].get("synonyms", 0.0)
            / max(full["stages_s"].get("synonyms", 1e-9), 1e-9),
            2,
        )
    header["load_after"] = load_average()
    header["machine"] = machine_info()
    data = {
        **header,
        "passages_total": len(docs),
        "passages_base": len(base_docs),
        "passages_increment": len(new_docs),
        "fraction": args.fraction,
        "seed": args.seed,
        "embedding_model": embedder.model_name,
        "setup_s": {k: round(v, 3) for k, v in setup.items()},
        "load_average_by_phase": loads,
        "results": results,
        "full_store": full_stats.model_dump(mode="json"),
        "base_plus_increment_store": incremented_stats.model_dump(mode="json"),
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }
    json_path, md_path = write_results(args.stem, data, markdown(data))
    print(md_path.read_text())
    print(f"wrote {json_path} and {md_path}")


def markdown(data: dict[str, Any]) -> str:
    res = data["results"]
    stage_names = ["prepare", "extraction", "embedding", "store_writes", "synonyms"]
    rows = []
    for key, label in (
        ("full_build", "full build (100 %)"),
        ("base_build", "base build (99 %)"),
        ("increment_warm", "+1 %, same process"),
        ("increment_cold", "+1 %, new process state"),
    ):
        r = res[key]
        rows.append(
            [
                label,
                r["indexed"],
                r["new_phrases"],
                r["new_synonym_edges"],
                r["wall_s"],
                *[r["stages_s"].get(s, 0.0) for s in stage_names],
                r.get("share_of_full_build_pct", ""),
            ]
        )
    fs, bs = data["full_store"], data["base_plus_increment_store"]
    same = all(fs[k] == bs[k] for k in ("passages", "phrases", "facts", "relation_edges", "mentions"))
    return "\n".join(
        [
            md_header("Incremental indexing: MuSiQue 99 % + 1 %", data),
            f"{data['passages_increment']} of {data['passages_total']} passages added (random sample, seed "
            f"{data['seed']}) to a store holding the other {data['passages_base']}; embedder "
            f"{data['embedding_model']} (model load {data['setup_s']['model_load']} s, not counted). "
            f"Load average by phase: {data['load_average_by_phase']}.",
            "",
            md_table(
                [
                    "run",
                    "passages",
                    "new phrases",
                    "new synonym edges",
                    "wall s",
                    *stage_names,
                    "% of full build",
                ],
                rows,
            ),
            "",
            f"Synonym stage of the increment vs the full build's (what the original recomputes on every "
            f"addition): warm {res['increment_warm']['synonym_stage_share_of_full_pct']} %, cold "
            f"{res['increment_cold']['synonym_stage_share_of_full_pct']} %.",
            "",
            f"After the warm increment (s): {res['after_increment_s']}; delete of the 1 % removed "
            f"{res['delete']}.",
            "",
            "Base + increment gives the same passages, phrases, facts, relation edges and mentions as the "
            f"full build: {same} (synonym edges: full {fs['synonym_edges']:,}, "
            f"incremental {bs['synonym_edges']:,}).",
        ]
    )


if __name__ == "__main__":
    main()
