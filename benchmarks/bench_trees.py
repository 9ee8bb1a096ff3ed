"""The ``trees`` suite: two checkouts of this project (BASE, before a refactor; HEAD, after it) on the same
stores, every retrieval mode: the same answers bit for bit, and the query time of each.

* stores: each built ONCE with the BASE tree (``trees_worker.py build`` under BASE's ``PYTHONPATH``,
  default ONNX encoder): MuSiQue from the published OpenIE (``index_openie``, all 1,890 passages),
  HotpotQA extracted offline with spaCy (994 passages, no LLM). The embedded store is copied so each tree
  opens its own copy; on Neo4j (``--pair lts|latest``: a server started with ``scripts/neo4j_server.py``
  in a temporary home and stopped at the end) both trees query the same namespace, dropped at the end;
* workers: one long-lived ``trees_worker.py serve`` per (tree, store, engine), under that tree's
  ``PYTHONPATH`` with ``HF_HUB_OFFLINE=1``, opening the store through ``hipporag_neo4j.api.HippoRAG``
  (Neo4j: ``neo4j.ppr_engine=local`` or ``gds``, ``vector_search=client``); each reply carries the
  passage ids, ``repr()`` of every score, of the explanation's graph and dense score and its note, and
  the seconds of the ``retrieve`` call measured inside the worker;
* passes: one untimed warm-up pass, then ``--query-rounds`` passes; in a pass, per question, per store
  and engine, per mode, both trees answer, who goes first alternating (A B, B A, ...: the rotation of
  ``harness.interleaved``), the 1-minute load recorded at the start and end of each pass;
* time: per store/engine and mode, the p50 of each tree in each pass, the per-pass ratio HEAD / BASE and
  the harness's protocol on the passes (median of the per-pair ratios, pairs at loads more than 1.0
  apart dropped, no ratio from fewer than two pairs);
* answers: per (question, mode), in every pass including the warm-up, whether BASE and HEAD gave the same
  ids and the same score reprs (and the same explanation reprs and notes); mismatches counted, the first
  few listed with where they differ; and whether each tree gave the same answers in every pass.

    python benchmarks/run.py trees --base /work/wt-base --head . --dataset musique \
        --stores embedded,neo4j --pair lts --engines local,gds --questions 50 --query-rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, TextIO

from harness import (
    REPO,
    compare_or_refusal,
    drop_namespace_plain,
    interleaved,
    load_average,
    md_header,
    md_table,
    ratio_cell,
    require_rounds,
    run_header,
    start_server,
    stop_server,
    write_results,
)

DATA = REPO.parent / "shared" / "data"
QUESTION_FILES = {
    "musique": DATA / "musique" / "musique_dev70.json",
    "hotpotqa": DATA / "hotpotqa" / "hotpotqa_dev50.json",
}
WORKER = Path(__file__).resolve().parent / "trees_worker.py"
MODES = ("hipporag2", "hipporag", "dense", "hybrid", "ensemble")
TREES = ("base", "head")
SHOWN_DIFFERENCES = 5


# --- the trees ----------------------------------------------------------------------------------------
def tree_info(tree: Path) -> dict[str, Any]:
    """The commit of a checkout and its uncommitted files (package files apart)."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, check=False)
        return done.stdout.strip()

    changed = [line[3:] for line in git("status", "--porcelain").splitlines() if line.strip()]
    return {
        "path": str(tree),
        "commit": git("rev-parse", "HEAD"),
        "subject": git("log", "-1", "--format=%s")[:120],
        "dirty": bool(changed),
        "package_files_changed": [f for f in changed if "hipporag_neo4j/" in f],
        "other_files_changed": [f for f in changed if "hipporag_neo4j/" not in f],
    }


def worker_env(tree: Path, password: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPORAG_")}
    env["PYTHONPATH"] = str(tree)
    env["HF_HUB_OFFLINE"] = "1"
    if password is not None:
        env["TREES_NEO4J_PASSWORD"] = password
    return env


class Worker:
    """One ``trees_worker.py serve`` process: a JSON line in, a JSON line out."""

    def __init__(self, name: str, tree: Path, argv: list[str], password: str | None, log: Path) -> None:
        self.name, self.log = name, log
        self._log: TextIO = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER), "serve", *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            bufsize=1,
            env=worker_env(tree, password),
            cwd=tree,
        )
        self.ready = self._read()
        module = Path(self.ready["module"])
        if not module.is_relative_to(tree.resolve()):
            raise RuntimeError(f"{name}: hipporag_neo4j imported from {module}, not from {tree}")

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self._log.flush()
            tail = self.log.read_text()[-3000:]
            raise RuntimeError(f"worker {self.name} ended:\n{tail}")
        return json.loads(line)

    def ask(self, query: str, mode: str, top_k: int) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"query": query, "mode": mode, "top_k": top_k}) + "\n")
        self.process.stdin.flush()
        reply = self._read()
        if "error" in reply:
            raise RuntimeError(f"worker {self.name}, {mode}, {query!r}:\n{reply['error']}")
        return reply

    def close(self) -> None:
        try:
            if self.process.poll() is None and self.process.stdin is not None:
                self.process.stdin.write(json.dumps({"quit": True}) + "\n")
                self.process.stdin.close()
            self.process.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        self._log.close()


def build_stores(
    args: argparse.Namespace, root: Path, uri: str | None, password: str | None, namespace: str | None
) -> dict[str, Any]:
    """Index the data set once with the BASE tree into an embedded directory and/or a Neo4j namespace."""
    argv = [sys.executable, str(WORKER), "build", "--dataset", args.dataset, "--data", str(DATA)]
    if "embedded" in args.store_list:
        argv += ["--embedded", str(root / "built")]
    if uri is not None:
        argv += ["--uri", uri, "--namespace", str(namespace)]
    start = time.perf_counter()
    load_start = load_average()
    done = subprocess.run(
        argv,
        stdout=subprocess.PIPE,
        text=True,
        env=worker_env(args.base, password),
        cwd=args.base,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    found.update(wall_s=round(time.perf_counter() - start, 1), load_start=load_start, load_end=load_average())
    return found


# --- the answers --------------------------------------------------------------------------------------
def same(a: dict[str, Any], b: dict[str, Any]) -> dict[str, bool]:
    return {
        "ids": a["ids"] == b["ids"],
        "scores": a["scores"] == b["scores"],
        "explanations": (a["graph"], a["dense"], a["notes"], a["note"], a["dense_fallback"])
        == (b["graph"], b["dense"], b["notes"], b["note"], b["dense_fallback"]),
    }


def difference(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Where BASE's (``a``) and HEAD's (``b``) answers first differ."""
    n = max(len(a["ids"]), len(b["ids"]))
    rank = next(
        (
            i
            for i in range(n)
            if i >= len(a["ids"])
            or i >= len(b["ids"])
            or (a["ids"][i], a["scores"][i]) != (b["ids"][i], b["scores"][i])
        ),
        None,
    )
    row: dict[str, Any] = {"lengths": [len(a["ids"]), len(b["ids"])]}
    if rank is not None:
        row["first_rank"] = rank + 1
        row["base"] = [a["ids"][rank], a["scores"][rank]] if rank < len(a["ids"]) else None
        row["head"] = [b["ids"][rank], b["scores"][rank]] if rank < len(b["ids"]) else None
    diffs = [abs(float(x) - float(y)) for x, y in zip(a["scores"], b["scores"], strict=False)]
    row["max_score_difference"] = max(diffs, default=0.0)
    if rank is None:
        for key in ("graph", "dense", "notes", "note", "dense_fallback"):
            if a[key] != b[key]:
                row["explanation_field"] = key
                row["explanation_base"], row["explanation_head"] = a[key], b[key]
                break
    return row


# --- the run ------------------------------------------------------------------------------------------
def run(args: argparse.Namespace, root: Path, data: dict[str, Any], namespaces: list[str]) -> None:
    questions = [q["question"] for q in json.loads(QUESTION_FILES[args.dataset].read_text())]
    questions = questions[: args.questions] if args.questions else questions
    data["questions"] = len(questions)
    namespace = None
    if "neo4j" in args.store_list:
        namespace = f"trees_{uuid.uuid4().hex[:10]}"
        namespaces.append(namespace)
    print(f"building the stores with BASE ({args.base}) ...", flush=True)
    data["build"] = build_stores(args, root, args.uri, args.password, namespace)
    print(json.dumps({k: v for k, v in data["build"].items() if k not in ("embedded", "neo4j")}), flush=True)
    systems: list[tuple[str, list[str]]] = []
    if "embedded" in args.store_list:
        for tree in TREES:
            shutil.copytree(root / "built", root / f"embedded_{tree}")
        systems.append(("embedded", ["--store", "embedded"]))
    if "neo4j" in args.store_list:
        for engine in args.engine_list:
            argv = ["--store", "neo4j", "--uri", args.uri, "--namespace", str(namespace), "--engine", engine]
            systems.append((f"neo4j/{engine}", argv))
    names = [name for name, _ in systems]
    workers: dict[tuple[str, str], Worker] = {}
    try:
        for name, argv in systems:
            for tree in TREES:
                path = ["--path", str(root / f"embedded_{tree}")] if name == "embedded" else []
                tree_path = args.base if tree == "base" else args.head
                log = root / f"worker_{tree}_{name.replace('/', '_')}.log"
                workers[(tree, name)] = Worker(f"{tree} {name}", tree_path, argv + path, args.password, log)
        data["workers"] = {f"{t} {n}": w.ready for (t, n), w in workers.items()}
        for key, w in workers.items():
            print(key, w.ready, flush=True)
        passes(args, questions, names, workers, data)
    finally:
        for w in workers.values():
            w.close()


def passes(
    args: argparse.Namespace,
    questions: list[str],
    names: list[str],
    workers: dict[tuple[str, str], Worker],
    data: dict[str, Any],
) -> None:
    orders = interleaved(TREES, 2)
    # answers[name][mode][qi][pass] = {tree: reply without the time}
    answers: dict[str, dict[str, list[list[dict[str, Any]]]]] = {
        n: {m: [[] for _ in questions] for m in MODES} for n in names
    }
    walls: dict[tuple[int, str, str, str], list[float]] = {}
    loads: list[dict[str, Any]] = []
    for pass_no in range(args.query_rounds + 1):  # pass 0: the untimed warm-up
        load_start, start = load_average(), time.perf_counter()
        for qi, question in enumerate(questions):
            order = orders[(qi + pass_no) % 2]
            for name in names:
                for mode in MODES:
                    found = {}
                    for tree in order:
                        reply = workers[(tree, name)].ask(question, mode, args.top_k)
                        if pass_no:
                            walls.setdefault((pass_no, name, mode, tree), []).append(reply.pop("seconds"))
                        found[tree] = reply
                    answers[name][mode][qi].append(found)
        loads.append(
            {
                "pass": pass_no,
                "warm_up": pass_no == 0,
                "load_start": load_start,
                "load_end": load_average(),
                "wall_s": round(time.perf_counter() - start, 1),
            }
        )
        print(f"pass {pass_no} done: {loads[-1]}", flush=True)
    data["passes"] = loads
    data["query"] = timing_summary(names, walls, loads)
    data["answers"] = answers_summary(names, questions, answers)


def timing_summary(
    names: list[str], walls: dict[tuple[int, str, str, str], list[float]], loads: list[dict[str, Any]]
) -> dict[str, Any]:
    by_pass = {entry["pass"]: entry for entry in loads}
    query: dict[str, Any] = {}
    for name in names:
        query[name] = {}
        for mode in (*MODES, "all modes"):
            runs = []
            for (pass_no, n, m, tree), seconds in sorted(walls.items()):
                if n == name and m == mode:
                    runs.append(
                        {
                            "system": tree,
                            "round": pass_no,
                            "p50_ms": round(1000 * statistics.median(seconds), 3),
                            "n": len(seconds),
                            "load_start": by_pass[pass_no]["load_start"],
                            "load_end": by_pass[pass_no]["load_end"],
                        }
                    )
            if mode == "all modes":
                for pass_no in sorted({p for p, *_ in walls}):
                    for tree in TREES:
                        seconds = [
                            s
                            for (p, n, _, t), v in walls.items()
                            if (p, n, t) == (pass_no, name, tree)
                            for s in v
                        ]
                        runs.append(
                            {
                                "system": tree,
                                "round": pass_no,
                                "p50_ms": round(1000 * statistics.median(seconds), 3),
                                "n": len(seconds),
                                "load_start": by_pass[pass_no]["load_start"],
                                "load_end": by_pass[pass_no]["load_end"],
                            }
                        )
            per_pass = {
                run["round"]: {
                    t: next(r["p50_ms"] for r in runs if r["round"] == run["round"] and r["system"] == t)
                    for t in TREES
                }
                for run in runs
            }
            query[name][mode] = {
                "runs": runs,
                "per_pass": [
                    {"pass": p, **v, "ratio": round(v["head"] / v["base"], 4)}
                    for p, v in sorted(per_pass.items())
                ],
                "protocol": compare_or_refusal(runs, "base", "head", "p50_ms"),
            }
    return query


def answers_summary(
    names: list[str], questions: list[str], answers: dict[str, dict[str, list[list[dict[str, Any]]]]]
) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for name in names:
        summary[name] = {}
        for mode in MODES:
            counts = {"questions": len(questions), "identical": 0, "ids_differ": 0, "scores_differ": 0}
            counts |= {"explanations_differ": 0, "base_unstable": 0, "head_unstable": 0}
            shown: list[dict[str, Any]] = []
            unstable: list[dict[str, Any]] = []
            for qi, per_pass in enumerate(answers[name][mode]):
                checks = [same(p["base"], p["head"]) for p in per_pass]
                ids_ok = all(c["ids"] for c in checks)
                scores_ok = all(c["scores"] for c in checks)
                explained_ok = all(c["explanations"] for c in checks)
                counts["identical"] += ids_ok and scores_ok
                counts["ids_differ"] += not ids_ok
                counts["scores_differ"] += ids_ok and not scores_ok
                counts["explanations_differ"] += not explained_ok
                for tree in TREES:
                    first = per_pass[0][tree]
                    moved = [
                        i
                        for i, p in enumerate(per_pass)
                        if (p[tree]["ids"], p[tree]["scores"]) != (first["ids"], first["scores"])
                    ]
                    counts[f"{tree}_unstable"] += bool(moved)
                    if moved and len(unstable) < SHOWN_DIFFERENCES:
                        unstable.append(
                            {"tree": tree, "question": qi, "passes": [0, moved[0]]}
                            | difference(first, per_pass[moved[0]][tree])
                        )
                if not (ids_ok and scores_ok and explained_ok) and len(shown) < SHOWN_DIFFERENCES:
                    at = next(i for i, c in enumerate(checks) if not all(c.values()))
                    shown.append(
                        {
                            "question": qi,
                            "text": questions[qi],
                            "pass": at,
                            "passes_differing": sum(not all(c.values()) for c in checks),
                            **difference(per_pass[at]["base"], per_pass[at]["head"]),
                        }
                    )
            summary[name][mode] = {**counts, "differences": shown, "unstable_examples": unstable}
    return summary


# --- the report ---------------------------------------------------------------------------------------
def markdown(data: dict[str, Any]) -> str:
    out = [md_header(f"BASE against HEAD: same answers and query time, {data['dataset']}", data)]
    for tree in TREES:
        t = data["trees"][tree]
        changed = (
            f"; uncommitted package files: {', '.join(t['package_files_changed'])}"
            if t["package_files_changed"]
            else "; no uncommitted package file"
        )
        other = (
            f"; {len(t['other_files_changed'])} other uncommitted file(s)" if t["other_files_changed"] else ""
        )
        out.append(
            f"- {tree.upper()}: `{t['path']}` at `{t['commit'][:12]}` ({t['subject']}){changed}{other}"
        )
    b = data["build"]
    built = "; ".join(
        f"{kind}: {b[kind]['indexed']} passages in {b[kind]['wall_s']} s "
        f"({b[kind]['stats'].get('phrases')} phrases, "
        f"{b[kind]['stats'].get('relation_edges')} relation edges, "
        f"{b[kind]['stats'].get('synonym_edges')} synonym edges)"
        for kind in ("embedded", "neo4j")
        if kind in b
    )
    how = (
        "the published OpenIE (index_openie)" if data["dataset"] == "musique" else "spaCy offline extraction"
    )
    server = f"; Neo4j server: pair {data['pair']}" if data.get("pair") else ""
    out += [
        f"- stores built once by BASE from {how} with {b.get('embedder')} ({b.get('model')}): "
        f"{built}{server}",
        f"- {data['questions']} questions, modes {', '.join(MODES)}, top {data['top_k']}; one untimed "
        f"warm-up pass then {data['query_rounds']} timed passes, BASE and HEAD alternating who goes "
        "first per question",
        "",
        "## Same answers (every pass, warm-up included)\n",
        "A question is identical when in every pass BASE and HEAD gave the same passage ids in the same "
        "order and the same `repr()` of every score. Explanations: the graph and dense score reprs and "
        "notes. Unstable: the tree's own answers changed between passes.\n",
    ]
    rows = []
    for name, per_mode in data["answers"].items():
        for mode, c in per_mode.items():
            rows.append(
                [
                    name,
                    mode,
                    f"{c['identical']}/{c['questions']}",
                    c["ids_differ"],
                    c["scores_differ"],
                    c["explanations_differ"],
                    f"{c['base_unstable']} / {c['head_unstable']}",
                ]
            )
    out.append(
        md_table(
            [
                "store / engine",
                "mode",
                "identical",
                "ids differ",
                "same ids, scores differ",
                "explanations differ",
                "unstable (base / head)",
            ],
            rows,
        )
    )
    shown = [(n, m, d) for n, pm in data["answers"].items() for m, c in pm.items() for d in c["differences"]]
    if shown:
        out.append("\nFirst differences:\n")
        for name, mode, d in shown:
            out.append(
                f"- {name} {mode}, question {d['question']} (pass {d['pass']}, "
                f"{d['passes_differing']} pass(es) differ): first rank {d.get('first_rank')}, "
                f"BASE {d.get('base')} / HEAD {d.get('head')}, "
                f"largest score difference {d['max_score_difference']:.3g}"
                + (
                    f"; {d['explanation_field']}: {d['explanation_base']} / {d['explanation_head']}"
                    if "explanation_field" in d
                    else ""
                )
            )
    moved = [
        (n, m, d) for n, pm in data["answers"].items() for m, c in pm.items() for d in c["unstable_examples"]
    ]
    if moved:
        out.append("\nA tree against itself (its answer in the warm-up pass against a later pass):\n")
        for name, mode, d in moved:
            out.append(
                f"- {d['tree'].upper()} {name} {mode}, question {d['question']}, passes {d['passes']}: "
                f"first rank {d.get('first_rank')}, {d.get('base')} / {d.get('head')}, "
                f"largest score difference {d['max_score_difference']:.3g}"
            )
    out.append("\n## Query time (retrieve, measured inside each worker)\n")
    out.append(
        "p50 ms per pass: BASE / HEAD (ratio HEAD / BASE). The protocol's figure: the median of the per-pass "
        "ratios with their spread; both trees run within the same pass, at the same load.\n"
    )
    rows = []
    for name, per_mode in data["query"].items():
        for mode, q in per_mode.items():
            rows.append(
                [
                    name,
                    mode,
                    "; ".join(f"{p['base']:.2f} / {p['head']:.2f} ({p['ratio']:.3f})" for p in q["per_pass"]),
                    ratio_cell(q["protocol"]),
                ]
            )
    out.append(
        md_table(["store / engine", "mode", "p50 ms per pass: BASE / HEAD (ratio)", "HEAD / BASE"], rows)
    )
    out.append("\n## Loads\n")
    out.append(
        md_table(
            ["pass", "1-min load at start", "at end", "wall s"],
            [
                ["warm-up" if p["warm_up"] else p["pass"], p["load_start"][0], p["load_end"][0], p["wall_s"]]
                for p in data["passes"]
            ],
        )
    )
    out.append(
        f"\nBuild (BASE): {data['build']['wall_s']} s, 1-min load {data['build']['load_start'][0]} -> "
        f"{data['build']['load_end'][0]}.\n"
    )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", type=Path, required=True, help="the tree before the refactor")
    parser.add_argument("--head", type=Path, required=True, help="the tree after it")
    parser.add_argument("--dataset", choices=sorted(QUESTION_FILES), default="musique")
    parser.add_argument("--questions", type=int, default=None, help="the first N questions (default all)")
    parser.add_argument("--query-rounds", type=int, default=3, help="timed passes (rounds), after a warm-up")
    parser.add_argument("--stores", default="embedded,neo4j")
    parser.add_argument("--pair", choices=("latest", "lts"), help="start this Neo4j pair (else --uri)")
    parser.add_argument("--uri", default=None, help="your own Neo4j (password: HIPPORAG_NEO4J_PASSWORD)")
    parser.add_argument("--heap", default="3g", help="JVM heap of the server started with --pair")
    parser.add_argument("--transaction-memory", default="1800m")
    parser.add_argument("--engines", default="local,gds", help="Neo4j PPR engines: local, gds (the server's)")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--stem", default=None, help="default: trees_<dataset>[_<pair>]")
    args = parser.parse_args()
    require_rounds(args.query_rounds, "--query-rounds")
    args.base, args.head = args.base.resolve(), args.head.resolve()
    args.store_list = [s for s in args.stores.split(",") if s]
    args.engine_list = [e for e in args.engines.split(",") if e]
    if not set(args.store_list) <= {"embedded", "neo4j"} or not set(args.engine_list) <= {"local", "gds"}:
        sys.exit("--stores: embedded,neo4j; --engines: local,gds")
    if "neo4j" in args.store_list and not (args.pair or args.uri):
        sys.exit("the neo4j store needs --pair or --uri")
    stem = args.stem or f"trees_{args.dataset}" + (f"_{args.pair}" if args.pair else "")
    header = run_header()
    data: dict[str, Any] = {
        **header,
        "trees": {"base": tree_info(args.base), "head": tree_info(args.head)},
        "dataset": args.dataset,
        "pair": args.pair,
        "stores": args.store_list,
        "engines": args.engine_list,
        "modes": list(MODES),
        "top_k": args.top_k,
        "query_rounds": args.query_rounds,
    }
    root = Path(tempfile.mkdtemp(prefix="bench-trees-"))
    home = root / "server"
    args.password = None
    namespaces: list[str] = []
    try:
        if "neo4j" in args.store_list:
            if args.pair:
                args.uri, args.password = start_server(args.pair, home, args.heap, args.transaction_memory)
            else:
                args.password = os.environ.get("HIPPORAG_NEO4J_PASSWORD", "")
            data["uri"] = args.uri
        run(args, root, data, namespaces)
    finally:
        for namespace in namespaces:
            try:
                drop_namespace_plain(str(args.uri), str(args.password), namespace)
                print(f"dropped namespace {namespace}", flush=True)
            except Exception as exc:
                print(f"could not drop {namespace}: {exc}", flush=True)
        if args.pair and "neo4j" in args.store_list:
            stop_server(args.pair, home)
        shutil.rmtree(root, ignore_errors=True)
    data["load_after"] = load_average()
    json_path, md_path = write_results(stem, data, markdown(data))
    print(md_path.read_text())
    print(f"written to {json_path} and {md_path}")


if __name__ == "__main__":
    main()
