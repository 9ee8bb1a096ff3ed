"""Same rankings after the schema-2 upgrade: MuSiQue's 70 questions, every mode, top 10.

Builds the MuSiQue store (published OpenIE, no LLM) with the code of ``--old-commit`` (a ``git archive``
of its package, run in a subprocess), copies it, opens the copy with this code (which upgrades it to schema
version 2), builds the store again with this code, and compares the top-10 passage lists of every question
and mode: old code on its store, this code on the upgraded store, this code on its own store.

    python benchmarks/check_migration_rankings.py --work DIR [--old-commit 6d8919a]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MUSIQUE = ROOT.parent / "shared" / "data" / "musique"
MODES = ("dense", "hipporag2", "hipporag", "ensemble", "hybrid")


def child(store: Path, out: Path, build: bool) -> None:
    """In the package on PYTHONPATH: (build and) query the store; writes the rankings as JSON."""
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
    from hipporag_neo4j.evaluation.runner import index_corpus
    from hipporag_neo4j.extraction.spacy_extractor import SpacyQueryNER
    from hipporag_neo4j.settings import load_settings

    for k in [k for k in os.environ if k.startswith("HIPPORAG_")]:
        del os.environ[k]
    settings = load_settings({"store": {"path": str(store)}}, env_file=None)
    started = time.perf_counter()
    memory = HippoRAG(settings, query_ner=SpacyQueryNER(settings.extraction.spacy_model))
    timings: dict[str, float] = {}
    if build:
        corpus = load_corpus(MUSIQUE / "musique_corpus1890.json")
        indexed = index_corpus(memory, corpus, MUSIQUE / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json")
        assert len(indexed.report.indexed) == 1890, indexed.report
        timings["build_s"] = time.perf_counter() - started
    else:
        stats = memory.store.stats()  # opens (and upgrades) the store, if the constructor did not
        timings["open_s"] = time.perf_counter() - started  # with the model load
        timings["schema_version"] = float(stats.schema_version or 0)
    rankings: dict[str, dict[str, list[tuple[str, float]]]] = {m: {} for m in MODES}
    for question in load_questions(MUSIQUE / "musique_dev70.json"):
        for mode in MODES:
            result = memory.retrieve(question.question, mode=mode, top_k=10)  # type: ignore[arg-type]
            rankings[mode][question.id] = [(p.passage.id, p.score) for p in result.passages]
    stats_json = memory.store.stats().model_dump()
    memory.close()
    out.write_text(json.dumps({"rankings": rankings, "timings": timings, "stats": stats_json}))


def run_child(pythonpath: Path, store: Path, out: Path, build: bool) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    args = [sys.executable, __file__, "--child", "build" if build else "query", "--store", str(store)]
    subprocess.run([*args, "--out", str(out)], env=env, check=True, cwd=str(pythonpath))
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    same = differ = 0
    max_score_diff = 0.0
    for mode, questions in a["rankings"].items():
        for qid, ranked in questions.items():
            other = b["rankings"][mode][qid]
            if [p for p, _ in ranked] == [p for p, _ in other]:
                same += 1
                diffs = [abs(x - y) for (_, x), (_, y) in zip(ranked, other, strict=True)]
                max_score_diff = max([max_score_diff, *diffs])
            else:
                differ += 1
    return {"identical_top10": same, "different_top10": differ, "max_score_diff": max_score_diff}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, help="working directory (stores, old package, outputs)")
    parser.add_argument("--old-commit", default="6d8919a")
    parser.add_argument("--child", choices=("build", "query"))
    parser.add_argument("--store", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--stem", default="migration_rankings")
    parser.add_argument("--reuse-old", action="store_true", help="the old build and rankings of --work")
    args = parser.parse_args()
    if args.child:
        child(args.store, args.out, args.child == "build")
        return
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    old_src = work / "old_src"
    if not old_src.exists():
        old_src.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.old_commit, "hipporag_neo4j"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old_src)], input=archive, check=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    load_before = os.getloadavg()
    old_store, migrated, new_store = work / "old_store", work / "migrated_store", work / "new_store"
    reuse = args.reuse_old and (work / "old.json").is_file() and old_store.is_dir()
    for path in (migrated, new_store) if reuse else (old_store, migrated, new_store):
        shutil.rmtree(path, ignore_errors=True)
    if reuse:  # the old code's store and rankings of an earlier run in the same --work
        old = json.loads((work / "old.json").read_text())
    else:
        old = run_child(old_src, old_store, work / "old.json", build=True)
    shutil.copytree(old_store, migrated)
    upgraded = run_child(ROOT, migrated, work / "migrated.json", build=False)
    new = run_child(ROOT, new_store, work / "new.json", build=True)
    result = {
        "command": "python benchmarks/check_migration_rankings.py " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": commit.stdout.strip(),
        "old_commit": args.old_commit,
        "reused_old_build": reuse,
        "machine": {"nproc": os.cpu_count()},
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "questions": len(old["rankings"]["dense"]),
        "modes": list(MODES),
        "old_vs_upgraded": compare(old, upgraded),
        "old_vs_new": compare(old, new),
        "upgraded_vs_new": compare(upgraded, new),
        "upgrade_open_s": upgraded["timings"].get("open_s"),
        "upgraded_schema_version": upgraded["timings"].get("schema_version"),
        "stats": {"old": old["stats"], "upgraded": upgraded["stats"], "new": new["stats"]},
    }
    out = ROOT / "benchmarks" / "results" / f"{args.stem}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "stats"}, indent=2))


if __name__ == "__main__":
    main()
