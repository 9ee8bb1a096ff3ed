"""The ``vs_hipporag2`` suite: side by side with the original HippoRAG 2 code (PyPI ``hipporag==2.0.0a4``).

MuSiQue, interleaved on the same machine under the harness's protocol (at least 3 rounds, each run's
1-minute load recorded, pairs at loads more than 1.0 apart dropped, the median of the per-pair ratios
with their spread, no ratio from fewer than two pairs).

1. **Index build** of the 1,890 MuSiQue passages from the published GPT-3.5 OpenIE (no LLM call): embed
   passages, phrases and facts, build the graph, synonym edges. Each build is a fresh subprocess into a
   fresh directory: HippoRAG 2 in its own venv (``vs_hipporag2_theirs.py``, the offline set-up of
   ``../shared/anchor``), ours into a fresh embedded store (``vs_hipporag2_ours.py``, ``index_openie`` plus
   the CSR snapshot), with the torch backend and with ``embedding.backend=onnx``. Rounds rotate who
   goes first (theirs, ours; ours, theirs; ...), with the same thread count. Recorded per build: the index
   call's wall and CPU seconds (in the worker), the whole process's wall and CPU seconds
   (``resource.getrusage(RUSAGE_CHILDREN)``, so imports and model loading included), stage times, loads.
2. **Query latency** without an LLM: each system loaded once (a server subprocess on the last build), then
   the same questions (``musique_dev70.json``) alternated query by query; timed inside each worker around
   one retrieve call (query encoding included, model and index loading not). Each pass over the
   questions is a round of the protocol: its p50 per system and its load. Ours: the default mode
   (``hipporag2``; no LLM configured, so no recognition filter; spaCy query NER for the entity seeds).
   Theirs: ``HippoRAG.retrieve`` with the recognition filter replaced by an identity filter (the paper's
   "w/o filter"). R@2/R@5 of both from the same answers, gold passages by the anchor's rule.

    python benchmarks/run.py vs_hipporag2 [--rounds 3] [--threads 2] [--query-threads 1]
        [--hipporag2-python /work/anchor-venv/bin/python] [--systems theirs,ours-default,plain-encode]
        [--passages N] [--query-rounds 3] [--stem vs_hipporag2]

``--passages N`` indexes only the first N corpus passages (a smoke run: quality figures then mean
little). The venv is set up as ``../shared/anchor/README.md`` says (torch 2.13.0 CPU first, then
``hipporag==2.0.0a4 --no-deps``, then its runtime dependencies).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
from harness import (
    MUSIQUE,
    OPENIE_FILE,
    QUESTIONS_FILE,
    REPO,
    compare_or_refusal,
    latency_summary,
    load_average,
    md_header,
    md_table,
    ratio_cell,
    require_files,
    require_rounds,
    run_header,
    write_results,
)

HERE = Path(__file__).resolve().parent
CORPUS_FILE = MUSIQUE / "musique_corpus1890.json"
ANCHOR_SCRIPTS = REPO.parent / "shared" / "anchor"
DEFAULT_VENV_PYTHON = Path("/work/anchor-venv/bin/python")
SYSTEMS = ("theirs", "ours-default", "ours-default-fullner", "ours-torch", "ours-onnx", "plain-encode")
LABELS = {
    "theirs": "HippoRAG 2 (2.0.0a4)",
    "ours-torch": "ours, torch",
    "ours-onnx": "ours, backend=onnx",
    "ours-default": "ours, default install (auto: ONNX Runtime)",
    "ours-default-fullner": "ours, default install, query NER on the whole spaCy pipeline (before)",
    "plain-encode": "plain encode (sentence-transformers, torch, batch 64)",
}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3, help="index builds per system (interleaved)")
    parser.add_argument("--threads", type=int, default=2, help="torch / ONNX threads for index builds")
    parser.add_argument("--query-threads", type=int, default=1, help="torch / ONNX threads for queries")
    parser.add_argument("--hipporag2-python", type=Path, default=DEFAULT_VENV_PYTHON)
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help="comma-separated subset of " + ", ".join(SYSTEMS)
    )
    parser.add_argument("--passages", type=int, help="index only the first N corpus passages (smoke run)")
    parser.add_argument("--query-rounds", type=int, default=3, help="passes over the questions (rounds)")
    parser.add_argument(
        "--query-systems", help="systems in the query phase (default: --systems; their builds must exist)"
    )
    parser.add_argument(
        "--query-first",
        action="store_true",
        help="query phase before the index builds, on the builds already in --keep-dir",
    )
    parser.add_argument(
        "--first-round", type=int, default=1, help="number of the first round (a resumed run)"
    )
    parser.add_argument(
        "--prior-builds",
        type=Path,
        help="builds of an earlier invocation of this script, reported and paired with this run's: "
        "a JSON list of builds (same fields), or its result file (then its query phase too, if this "
        "run has none)",
    )
    parser.add_argument("--skip-index", action="store_true", help="query phase only (needs --keep-dir)")
    parser.add_argument("--keep-dir", type=Path, help="working directory kept after the run (default: temp)")
    parser.add_argument("--stem", default="vs_hipporag2", help="results file name stem")
    args = parser.parse_args(argv)
    args.systems = [s for s in args.systems.split(",") if s]
    args.query_systems = (
        [s for s in args.query_systems.split(",") if s] if args.query_systems else args.systems
    )
    unknown = sorted((set(args.systems) | set(args.query_systems)) - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown systems: {', '.join(unknown)}")
    if args.rounds < 1 or args.query_rounds < 0:
        parser.error("--rounds must be >= 1 and --query-rounds >= 0")
    if (args.skip_index or args.query_first) and not args.keep_dir:
        parser.error("--skip-index and --query-first need --keep-dir (the builds to query)")
    return args


# --- data ------------------------------------------------------------------------------------------
def load_gold(passages: int | None) -> tuple[list[str], list[list[int]]]:
    """Questions and their gold corpus positions (supporting paragraphs, the anchor's rule)."""
    corpus = json.loads(CORPUS_FILE.read_text())
    if passages:
        corpus = corpus[:passages]
    position = {f"{c['title']}\n{c['text']}": i for i, c in enumerate(corpus)}
    questions, gold = [], []
    for sample in json.loads(QUESTIONS_FILE.read_text()):
        paragraphs = [p for p in sample["paragraphs"] if p.get("is_supporting", True)]
        texts = {p["title"] + "\n" + (p["text"] if "text" in p else p["paragraph_text"]) for p in paragraphs}
        found = sorted(position[t] for t in texts if t in position)
        if found:
            questions.append(sample["question"])
            gold.append(found)
    return questions, gold


def subset_openie(passages: int, target: Path) -> Path:
    """The published OpenIE restricted to the first ``passages`` corpus passages (smoke runs)."""
    corpus = json.loads(CORPUS_FILE.read_text())[:passages]
    keep = {f"{c['title']}\n{c['text']}" for c in corpus}
    data = json.loads(OPENIE_FILE.read_text())
    data["docs"] = [d for d in data["docs"] if f"{d['title']}\n{d['text']}" in keep]
    target.write_text(json.dumps(data))
    return target


def recall(gold: Sequence[int], ranked: Sequence[int], k: int) -> float:
    return len(set(gold) & set(ranked[:k])) / len(gold)


# --- subprocesses -----------------------------------------------------------------------------------
def worker_command(
    system: str, args: argparse.Namespace, work: Path, command: str, threads: int
) -> list[str]:
    if system == "theirs":
        return [
            str(args.hipporag2_python),
            str(HERE / "vs_hipporag2_theirs.py"),
            command,
            "--threads",
            str(threads),
            *(["--passages", str(args.passages)] if args.passages and command == "index" else []),
        ]
    openie = work / "openie_subset.json" if args.passages else OPENIE_FILE
    if system in ("plain-encode", "ort-encode"):  # the reference encodes of the speed suite (bench_speed.py)
        return [
            sys.executable,
            str(HERE / "vs_hipporag2_ours.py"),
            f"{'ort-' if system == 'ort-encode' else ''}encode-{command}",
            "--threads",
            str(threads),
            "--openie",
            str(openie),
        ]
    # bench_query_blas.py: same store, one BLAS thread; -fullner: same store, the query NER as before
    store = system.removesuffix("-blas1").removesuffix("-fullner")
    backend = {"default": "auto"}.get(store.split("-", 1)[1], store.split("-", 1)[1])
    return [
        sys.executable,
        str(HERE / "vs_hipporag2_ours.py"),
        command,
        "--store",
        str(work / store),
        "--backend",
        backend,
        "--threads",
        str(threads),
        "--openie",
        str(openie),
    ]


def worker_env(system: str, work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    if system.endswith("-blas1"):
        env["HIPPORAG_RETRIEVAL__QUERY_BLAS_THREADS"] = "1"
    if system.endswith("-fullner"):
        env["HIPPORAG_EXTRACTION__QUERY_NER_PIPELINE"] = "full"
    if system == "theirs":
        env["ANCHOR_DIR"] = str(work / "theirs")
        env["ANCHOR_DATA"] = str(MUSIQUE)
        env["ANCHOR_SCRIPTS"] = str(ANCHOR_SCRIPTS)
        env.pop("PYTHONPATH")  # their venv must not see our package
    return env


def prepare_encoder(env: dict[str, str], log: IO[str], threads: Iterable[int], int8: bool = False) -> None:
    """Before the timed runs: the one-time ONNX build (float, and int8 if asked) into the user cache folder
    and, with torch installed, ``embedding.backend=auto``'s timing of ONNX Runtime against torch for each
    of ``threads`` (kept there too), so that no timed build or query server pays for either."""
    settings = [f"EmbeddingSettings(threads={t})" for t in sorted(set(threads))]
    settings += ["EmbeddingSettings(quantize='int8')"] if int8 else []
    code = "from hipporag_neo4j.embedding.encoder import create_embedder\n"
    code += "from hipporag_neo4j.settings import EmbeddingSettings\n"
    code += "".join(f"create_embedder({s}).dimension\n" for s in settings)
    subprocess.run([sys.executable, "-c", code], env=env, stderr=log, check=True)


def last_json_line(text: str) -> dict[str, Any]:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                parsed: dict[str, Any] = json.loads(line)
                return parsed
            except json.JSONDecodeError:
                continue
    raise RuntimeError("no JSON result line in the worker's output")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_index(system: str, args: argparse.Namespace, work: Path, log: IO[str]) -> dict[str, Any]:
    target = work / ("theirs" if system == "theirs" else system)
    shutil.rmtree(target, ignore_errors=True)
    if system == "theirs":
        target.mkdir(parents=True)
    command = worker_command(system, args, work, "index", args.threads)
    load_start = load_average()
    cpu0, wall0 = children_cpu(), time.perf_counter()
    done = subprocess.run(
        command, env=worker_env(system, work), stdout=subprocess.PIPE, stderr=log, text=True, check=False
    )
    wall, cpu = time.perf_counter() - wall0, children_cpu() - cpu0
    if done.returncode != 0:
        raise RuntimeError(f"{system} index worker failed ({done.returncode}); see {log.name}")
    result = last_json_line(done.stdout)
    result.update(
        {
            "system": system,
            "process_wall_s": wall,
            "process_cpu_s": cpu,
            "load_start": load_start,
            "load_end": load_average(),
        }
    )
    return result


class Server:
    """A worker in serve mode: one JSON request line in, one JSON line out."""

    def __init__(self, system: str, args: argparse.Namespace, work: Path, log: IO[str]) -> None:
        self.system = system
        command = worker_command(system, args, work, "serve", args.query_threads)
        self.process = subprocess.Popen(
            command,
            env=worker_env(system, work),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            bufsize=1,
        )
        self.ready = json.loads(self._read_line(prefix="READY ")[len("READY ") :])

    def _read_line(self, prefix: str = "{") -> str:
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.system} server exited (code {self.process.poll()})")
            if line.startswith(prefix):
                return line

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer: dict[str, Any] = json.loads(self._read_line())
        return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()


# --- phases -----------------------------------------------------------------------------------------
def index_phase(
    args: argparse.Namespace, work: Path, log: IO[str], builds: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Appends to ``builds`` as it goes, so a stopped run still reports the builds it finished."""
    for round_no in range(args.first_round, args.first_round + args.rounds):
        rotation = (round_no - 1) % len(args.systems)  # who goes first rotates: A B, B A, ...
        for system in args.systems[rotation:] + args.systems[:rotation]:
            print(f"round {round_no}: indexing with {system} ...", file=sys.stderr, flush=True)
            result = run_index(system, args, work, log)
            result["round"] = round_no
            builds.append(result)
            print(
                f"  {system}: index {result['index_wall_s']:.1f} s wall, {result['index_cpu_s']:.1f} CPU-s; "
                f"process {result['process_wall_s']:.1f} s, {result['process_cpu_s']:.1f} CPU-s; "
                f"load {result['load_start']} -> {result['load_end']}",
                file=sys.stderr,
                flush=True,
            )
    return builds


def query_phase(args: argparse.Namespace, work: Path, log: IO[str]) -> dict[str, Any]:
    questions, gold = load_gold(args.passages)
    servers = {}
    try:
        for system in args.query_systems:
            print(f"loading {system} for queries ...", file=sys.stderr, flush=True)
            servers[system] = Server(system, args, work, log)
        seconds: dict[str, list[float]] = {s: [] for s in args.query_systems}
        ranked: dict[str, list[list[int]]] = {s: [] for s in args.query_systems}
        stages: dict[str, dict[str, list[float]]] = {s: {} for s in args.query_systems}
        order = list(args.query_systems)
        load_start = load_average()
        passes: list[dict[str, Any]] = []  # one round of the protocol per pass: its p50 per system, its load
        for pass_no in range(args.query_rounds):
            pass_seconds: dict[str, list[float]] = {s: [] for s in order}
            pass_load_start = load_average()
            for i, question in enumerate(questions):
                rotation = (i + pass_no) % len(order)  # who goes first changes from question to question
                for system in order[rotation:] + order[:rotation]:
                    answer = servers[system].ask({"q": question})
                    seconds[system].append(answer["s"])
                    pass_seconds[system].append(answer["s"])
                    if pass_no == 0:
                        ranked[system].append(answer["ranked"])
                    for stage, value in (answer.get("timings") or {}).items():
                        stages[system].setdefault(stage, []).append(value)
            pass_load_end = load_average()
            for system, values in pass_seconds.items():  # both systems ran interleaved: the same loads
                passes.append(
                    {
                        "system": system,
                        "round": pass_no + 1,
                        "p50_ms": round(1000 * float(np.percentile(values, 50)), 3),
                        "load_start": pass_load_start,
                        "load_end": pass_load_end,
                    }
                )
        load_end = load_average()
        cosine = None
        cosines: dict[str, dict[str, Any]] = {}
        texts = questions + [c["text"] for c in json.loads(CORPUS_FILE.read_text())[:200]]
        pairs = [("ours-onnx", "ours-torch"), ("ours-default", "ours-torch"), ("ours-default", "theirs")]
        pairs += [("ours-onnx", "theirs")]
        vectors: dict[str, np.ndarray] = {}
        for a_name, b_name in pairs:
            if a_name not in servers or b_name not in servers:
                continue
            for name in (a_name, b_name):
                if name not in vectors:
                    vectors[name] = np.asarray(servers[name].ask({"encode": texts})["vectors"])
            a, b = vectors[a_name], vectors[b_name]
            cos = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
            cosines[f"{a_name} vs {b_name}"] = {
                "texts": len(texts),
                "min": float(cos.min()),
                "mean": float(cos.mean()),
            }
        cosine = cosines.get("ours-onnx vs ours-torch")
        same_top10 = {
            f"{a} vs {b}": sum(x == y for x, y in zip(ranked[a], ranked[b], strict=True))
            for a, b in (("ours-default", "ours-default-fullner"), ("ours-onnx", "ours-torch"))
            if a in ranked and b in ranked
        }
    finally:
        for server in servers.values():
            server.close()
    per_system = {}
    for system in args.query_systems:
        quality: dict[str, float | None] = {
            f"R@{k}": round(
                100 * statistics.fmean(recall(g, r, k) for g, r in zip(gold, ranked[system], strict=True)), 1
            )
            if system != "plain-encode"  # the yardstick retrieves nothing
            else None
            for k in (2, 5)
        }
        per_system[system] = {
            "latency": latency_summary(seconds[system]),
            "recall_percent": quality,
            "load_s": servers[system].ready.get("load_s"),
            "stage_p50_ms": {
                k: round(1000 * float(np.percentile(v, 50)), 2) for k, v in stages[system].items()
            },
        }
    return {
        "questions": len(questions),
        "passes": args.query_rounds,
        "torch_threads": args.query_threads,
        "load_start": load_start,
        "load_end": load_end,
        "rounds": passes,
        "systems": per_system,
        "per_query_s": seconds,
        "cosine_onnx_vs_torch": cosine,
        "cosines": cosines,
        "same_top10": same_top10,
    }


# --- summary ----------------------------------------------------------------------------------------
def pair_ratios(builds: list[dict[str, Any]], system: str, key: str) -> list[float]:
    """Ours / theirs of ``key`` for each round (the builds of one round ran back to back)."""
    theirs = {b["round"]: b[key] for b in builds if b["system"] == "theirs"}
    return [b[key] / theirs[b["round"]] for b in builds if b["system"] == system and b["round"] in theirs]


def summarise(data: dict[str, Any]) -> dict[str, Any]:
    builds = data.get("builds", [])
    summary: dict[str, Any] = {"index": {}, "query": {}}
    for system in data["systems"]:
        mine = [b for b in builds if b["system"] == system]
        if not mine:
            continue
        row: dict[str, Any] = {
            k: round(statistics.median(b[k] for b in mine), 1)
            for k in ("index_wall_s", "index_cpu_s", "process_wall_s", "process_cpu_s")
        }
        if system != "theirs":
            for key in ("index_wall_s", "index_cpu_s", "process_wall_s", "process_cpu_s"):
                ratios = pair_ratios(builds, system, key)
                if ratios:
                    row[f"ratio_{key}"] = [round(r, 3) for r in ratios]
            if any(b["system"] == "theirs" for b in builds):
                row["protocol"] = {
                    key: compare_or_refusal(builds, "theirs", system, key)
                    for key in ("index_wall_s", "index_cpu_s")
                }
        summary["index"][system] = row
    query = data.get("query")
    if query and "theirs" in query["systems"]:
        theirs = query["systems"]["theirs"]["latency"]["p50_ms"]
        for system, q in query["systems"].items():
            if system != "theirs":
                summary["query"][system] = {"ratio_p50": round(q["latency"]["p50_ms"] / theirs, 3)}
                if query.get("rounds"):
                    summary["query"][system]["protocol"] = compare_or_refusal(
                        query["rounds"], "theirs", system, "p50_ms"
                    )
    return summary


def markdown(data: dict[str, Any]) -> str:
    lines = [md_header("Side by side with the original HippoRAG 2 (MuSiQue)", data)]
    if data.get("invocations"):
        lines += ["Invocations whose results this file gathers (in order):", ""]
        lines += [
            f"- {i['date']}, commit `{i['commit'][:12]}`: `{i['command']}`" for i in data["invocations"]
        ]
        lines += [""]
    builds = data.get("builds", [])
    summary = data["summary"]
    if builds:
        lines += [
            f"## Index build ({data['passages'] or 1890} passages, published OpenIE, "
            f"{data['threads']} threads)",
            "",
            "Each row is one fresh subprocess, in the order run. *index* = the indexing call inside the "
            "worker (ours: `index_openie` + CSR snapshot; HippoRAG 2: `HippoRAG.index`); *process* = the "
            "whole subprocess (imports, model load) from `getrusage(RUSAGE_CHILDREN)`.",
            "",
            *(
                [
                    "Rows marked * ran in an earlier invocation of this script and are read from "
                    f"`{data['prior_builds_from']}` (its command, date and commit are in the JSON: "
                    "`prior_run`, and per build `commit` where given).",
                    "",
                ]
                if data.get("prior_builds_from")
                else []
            ),
            md_table(
                [
                    "round",
                    "system",
                    "index wall s",
                    "index CPU-s",
                    "process wall s",
                    "process CPU-s",
                    "load 1-min start → end",
                ],
                [
                    [
                        b["round"],
                        LABELS.get(b["system"], b["system"]) + (" *" if b.get("earlier_invocation") else ""),
                        round(b["index_wall_s"], 1),
                        round(b["index_cpu_s"], 1),
                        round(b["process_wall_s"], 1),
                        round(b["process_cpu_s"], 1),
                        f"{b['load_start'][0]} → {b['load_end'][0]}",
                    ]
                    for b in builds
                ],
            ),
            "",
            "Ratios ours / HippoRAG 2, per round (the builds of a round ran back to back):",
            "",
            md_table(
                ["system", "index wall", "index CPU", "process wall", "process CPU"],
                [
                    [LABELS.get(s, s)]
                    + [
                        ", ".join(f"{r:.2f}" for r in row.get(f"ratio_{k}", []))
                        for k in ("index_wall_s", "index_cpu_s", "process_wall_s", "process_cpu_s")
                    ]
                    for s, row in summary["index"].items()
                    if s != "theirs"
                ],
            ),
            "",
            "Under the protocol (median of the per-round ratios ours / HippoRAG 2, min-max, pairs kept; "
            "a round whose two builds' 1-minute loads differ by more than 1.0 is dropped):",
            "",
            md_table(
                ["system", "index wall", "index CPU"],
                [
                    [LABELS.get(s, s)]
                    + [ratio_cell(row["protocol"][k]) for k in ("index_wall_s", "index_cpu_s")]
                    for s, row in summary["index"].items()
                    if "protocol" in row
                ],
            ),
            "",
            "Stages (s, median over rounds):",
            "",
        ]
        stage_rows = []
        for system in data["systems"]:
            mine = [b for b in builds if b["system"] == system and b.get("stages_s")]
            if not mine:
                continue
            keys = sorted({k for b in mine for k in b.get("stages_s", {})})
            cells = [f"{k} {statistics.median(b['stages_s'].get(k, 0.0) for b in mine):.1f}" for k in keys]
            stage_rows.append(
                [LABELS.get(system, system), ", ".join(cells), json.dumps(mine[-1].get("counts", {}))]
            )
        lines += [md_table(["system", "stages", "counts (last build)"], stage_rows), ""]
    query = data.get("query")
    if query:
        lines += [
            f"## Query latency and quality ({query['questions']} questions × {query['passes']} pass(es), "
            f"{query['torch_threads']} thread(s), alternated per question; load {query['load_start']} → "
            f"{query['load_end']})",
            "",
            "Seconds of one retrieve call inside each worker (query encoding included; no LLM). Ours: the "
            "default mode `hipporag2`, no recognition filter (no LLM); HippoRAG 2: `retrieve` with its "
            "filter replaced by identity. Recall from the same answers (first pass), top 10 retrieved."
            + (
                f" The queries ran first, on the builds of round {data['first_round'] - 1} (kept on disk)."
                if data.get("query_first")
                else ""
            ),
            "",
            md_table(
                ["system", "p50 ms", "p95 ms", "mean ms", "ratio p50 to HippoRAG 2", "R@2", "R@5"],
                [
                    [
                        LABELS.get(s, s),
                        q["latency"].get("p50_ms"),
                        q["latency"].get("p95_ms"),
                        q["latency"].get("mean_ms"),
                        summary["query"].get(s, {}).get("ratio_p50", "-" if s == "theirs" else None),
                        q["recall_percent"]["R@2"],
                        q["recall_percent"]["R@5"],
                    ]
                    for s, q in query["systems"].items()
                ],
            ),
            "",
        ]
        protocol_rows = [
            [LABELS.get(s, s), ratio_cell(row["protocol"])]
            for s, row in summary["query"].items()
            if "protocol" in row
        ]
        if protocol_rows:
            lines += [
                "p50 ratio to HippoRAG 2 under the protocol (each pass over the questions a round; median of "
                "the per-pass ratios, min-max):",
                "",
                md_table(["system", "p50 ratio"], protocol_rows),
                "",
            ]
        stage_lines = [
            f"- {LABELS.get(s, s)}: " + ", ".join(f"{k} {v}" for k, v in q["stage_p50_ms"].items())
            for s, q in query["systems"].items()
            if q["stage_p50_ms"]
        ]
        if stage_lines:
            lines += ["Our stage timings, p50 (ms, from `RetrievalResult.timings`):", "", *stage_lines, ""]
        cosines = query.get("cosines") or (
            {"ours-onnx vs ours-torch": query["cosine_onnx_vs_torch"]}
            if query.get("cosine_onnx_vs_torch")
            else {}
        )
        for pair, same in (query.get("same_top10") or {}).items():
            a_name, b_name = pair.split(" vs ")
            lines += [
                f"Same top 10 (corpus ids and order), {LABELS.get(a_name, a_name)} and "
                f"{LABELS.get(b_name, b_name)}: {same} of {query['questions']} questions.",
                "",
            ]
        for pair, c in cosines.items():
            a_name, b_name = pair.split(" vs ")
            lines += [
                f"Cosine of {LABELS.get(a_name, a_name)} to {LABELS.get(b_name, b_name)} vectors on "
                f"{c['texts']} texts (questions and passages): "
                f"min {c['min']:.9f} (1 − min = {1 - c['min']:.1e}), mean {c['mean']:.9f}.",
                "",
            ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    require_files(CORPUS_FILE, OPENIE_FILE, QUESTIONS_FILE)
    if "theirs" in args.systems + args.query_systems:
        if not args.hipporag2_python.is_file():
            sys.exit(
                f"{args.hipporag2_python}: no such interpreter. Set up HippoRAG 2's venv as "
                f"{ANCHOR_SCRIPTS / 'README.md'} says, or pass --hipporag2-python."
            )
        if not (ANCHOR_SCRIPTS / "anchor_common.py").is_file():
            sys.exit(f"{ANCHOR_SCRIPTS}/anchor_common.py not found (HippoRAG 2's offline set-up)")
    if not args.skip_index and not args.prior_builds:
        require_rounds(args.rounds)
    if args.query_rounds:
        require_rounds(args.query_rounds, "--query-rounds")
    header = run_header()
    work = args.keep_dir or Path(tempfile.mkdtemp(prefix="bench-vs-hipporag2-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.passages:
        subset_openie(args.passages, work / "openie_subset.json")
    data: dict[str, Any] = {
        **header,
        "systems": [s for s in SYSTEMS if s in args.systems + args.query_systems],
        "threads": args.threads,
        "first_round": args.first_round,
        "query_first": args.query_first,
        "passages": args.passages,
        "hipporag2_python": str(args.hipporag2_python),
    }
    log_path = work / "workers.log"
    with log_path.open("a") as log:
        try:
            exporting = [s for s in ("ours-onnx", "ours-default") if s in args.systems]
            if exporting and not args.skip_index:
                prepare_encoder(worker_env(exporting[0], work), log, (args.threads, args.query_threads))
            if args.prior_builds:
                data["prior_builds_from"] = str(args.prior_builds)
                prior = json.loads(args.prior_builds.read_text())
                if isinstance(prior, dict):  # an earlier result file: its builds, and its queries
                    data["prior_run"] = {
                        k: prior.get(k) for k in ("command", "date", "commit", "load_before")
                    }
                    if prior.get("query") and not args.query_rounds:
                        data["query"] = prior["query"]
                    prior = prior.get("builds", [])
                for build in prior:
                    build["earlier_invocation"] = True
                data["builds"] = prior
                data["systems"] = [
                    s for s in SYSTEMS if s in data["systems"] or any(b["system"] == s for b in prior)
                ]
            if args.query_rounds and args.query_first:
                data["query"] = query_phase(args, work, log)
            if not args.skip_index:
                index_phase(args, work, log, data.setdefault("builds", []))
            if args.query_rounds and not args.query_first:
                data["query"] = query_phase(args, work, log)
        finally:
            data["load_after"] = load_average()
            data["summary"] = summarise(data)
            json_path, md_path = write_results(args.stem, data, markdown(data))
            if not args.keep_dir:
                shutil.rmtree(work, ignore_errors=True)
    print(md_path.read_text())
    print(f"wrote {json_path} and {md_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
