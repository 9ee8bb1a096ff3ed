"""The ``speed`` suite: index and query per stage and memory, against the torch path and a plain encode.

Three systems, each a fresh subprocess per build (``vs_hipporag2_ours.py``), rotated per round (the
harness's protocol: at least 3 rounds, each build's load recorded, ratios the median of the per-round
pairs at comparable loads, with their spread):

* ``ours-default``: today's defaults (``embedding.backend = "auto"``: ONNX Runtime, exported once into the
  user cache folder; the export is made before the run and not timed);
* ``ours-torch``: the same with ``embedding.backend = "torch"`` (the default before issue 19);
* ``plain-encode``: the issue's yardstick, sentence-transformers ``encode`` (torch, batch 64, input
  order) of every text the build embeds (passages, phrases, facts), and one encode per question.
  HippoRAG 2 encodes in input order (about 2x this) and encodes the query twice: the issue's targets
  (<= 0.3x HippoRAG 2 to index, <= 0.35x per query) are about <= 0.6x and <= 1.2x of this yardstick.

1. **Index build** of the first ``--passages`` MuSiQue passages from the published OpenIE (``index_openie``
   plus the CSR snapshot), ``--rounds`` rounds; wall and CPU seconds, the indexer's stages, peak RSS.
2. **Queries**: each system loaded once on its last build; the 70 dev questions alternated per question
   (rotating who goes first); the default mode ``hipporag2`` without an LLM; seconds of one retrieve
   call, p50 of every stage in ``RetrievalResult.timings`` (encoder, query NER, fact search, linking,
   dense search, PPR) and of the rest (``other``: ranking, reading the passages, explanations); R@2/R@5
   of both our systems (gold among the indexed passages); the cosine of default to torch vectors.
   Each pass over the questions is a round of the protocol.

    python benchmarks/run.py speed [--passages 300] [--rounds 3] [--threads 2]
        [--query-threads 1] [--query-rounds 3] [--stem speed]
    python benchmarks/bench_speed.py --render results/speed.json  # tables again
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from bench_vs_hipporag2 import (
    CORPUS_FILE,
    Server,
    load_gold,
    recall,
    run_index,
    subset_openie,
    worker_env,
)
from harness import (
    OPENIE_FILE,
    QUESTIONS_FILE,
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

#: the query phase's systems (it needs the [torch] extra: skipped without it)
SYSTEMS = ("ours-default", "ours-torch", "plain-encode")
#: the index builds: ours (float and int8) against the floor, one plain encode of the same texts with the
#: default ONNX Runtime encoder; with torch installed, ours on torch and sentence-transformers' encode too
INDEX_SYSTEMS = ("ours-default", "ours-int8", "ort-encode")
TORCH_SYSTEMS = ("ours-torch", "plain-encode")
LABELS = {
    "ours-default": "ours, default install (auto: ONNX Runtime)",
    "ours-int8": "ours, embedding.quantize=int8",
    "ort-encode": "floor: one encode of the same texts (ONNX Runtime, default encoder)",
    "ours-torch": "ours, backend=torch",
    "plain-encode": "plain encode (sentence-transformers, torch, batch 64)",
}


def torch_installed() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "sentence_transformers"))


def index_systems() -> tuple[str, ...]:
    return INDEX_SYSTEMS + (TORCH_SYSTEMS if torch_installed() else ())


STAGES = (
    "encode",
    "query_ner",
    "fact_search",
    "link",
    "dense_search",
    "ppr_and_aggregation",
    "other",
    "total",
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--passages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="encoder threads for index builds")
    parser.add_argument("--query-threads", type=int, default=1, help="encoder threads for queries")
    parser.add_argument("--query-rounds", type=int, default=3, help="passes over the questions (rounds)")
    parser.add_argument("--keep-dir", type=Path)
    parser.add_argument(
        "--query-only", action="store_true", help="the query phase alone, on the builds kept in --keep-dir"
    )
    parser.add_argument("--stem", default="speed")
    args = parser.parse_args(argv)
    args.hipporag2_python = None  # worker_command's interface; never used here
    if args.query_only and not args.keep_dir:
        parser.error("--query-only needs --keep-dir (the builds to query)")
    return args


def query_phase(args: argparse.Namespace, work: Path, log: Any) -> dict[str, Any]:
    questions, gold = load_gold(args.passages)
    servers: dict[str, Server] = {}
    seconds: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    ranked: dict[str, list[list[int]]] = {s: [] for s in SYSTEMS}
    stages: dict[str, dict[str, list[float]]] = {s: {} for s in SYSTEMS}
    try:
        for system in SYSTEMS:
            print(f"loading {system} for queries ...", file=sys.stderr, flush=True)
            servers[system] = Server(system, args, work, log)
        load_start = load_average()
        rounds: list[dict[str, Any]] = []  # one round of the protocol per pass: p50 per system, its load
        for pass_no in range(args.query_rounds):
            pass_seconds: dict[str, list[float]] = {s: [] for s in SYSTEMS}
            pass_load_start = load_average()
            for i, question in enumerate(questions):
                rotation = (i + pass_no) % len(SYSTEMS)
                for system in SYSTEMS[rotation:] + SYSTEMS[:rotation]:
                    answer = servers[system].ask({"q": question})
                    seconds[system].append(answer["s"])
                    pass_seconds[system].append(answer["s"])
                    if pass_no == 0:
                        ranked[system].append(answer["ranked"])
                    timings = answer.get("timings") or {}
                    for stage, value in timings.items():
                        stages[system].setdefault(stage, []).append(value)
                    if timings:
                        named = sum(v for k, v in timings.items() if k != "total")
                        stages[system].setdefault("other", []).append(answer["s"] - named)
            pass_load_end = load_average()
            rounds += [
                {
                    "system": system,
                    "round": pass_no + 1,
                    "p50_ms": round(1000 * float(np.percentile(values, 50)), 3),
                    "load_start": pass_load_start,
                    "load_end": pass_load_end,
                }
                for system, values in pass_seconds.items()
            ]
        load_end = load_average()
        texts = questions + [c["text"] for c in json.loads(CORPUS_FILE.read_text())[:200]]
        a = np.asarray(servers["ours-torch"].ask({"encode": texts})["vectors"])
        b = np.asarray(servers["ours-default"].ask({"encode": texts})["vectors"])
        cos = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    finally:
        for server in servers.values():
            server.close()
    per_system: dict[str, Any] = {}
    for system in SYSTEMS:
        row: dict[str, Any] = {"latency": latency_summary(seconds[system])}
        if system != "plain-encode":
            pairs = list(zip(gold, ranked[system], strict=True))
            row["recall_percent"] = {
                f"R@{k}": round(100 * statistics.fmean(recall(g, r, k) for g, r in pairs), 1) for k in (2, 5)
            }
            row["stage_p50_ms"] = {
                k: round(1000 * float(np.percentile(v, 50)), 2) for k, v in stages[system].items()
            }
        per_system[system] = row
    same_rankings = sum(a == b for a, b in zip(ranked["ours-default"], ranked["ours-torch"], strict=True))
    return {
        "questions": len(questions),
        "passes": args.query_rounds,
        "threads": args.query_threads,
        "load_start": load_start,
        "load_end": load_end,
        "rounds": rounds,
        "protocol": {
            f"{other} / {base}": compare_or_refusal(rounds, base, other, "p50_ms") for other, base in PAIRS
        },
        "systems": per_system,
        "per_query_s": seconds,
        "same_top10_default_vs_torch": same_rankings,
        "cosine_default_vs_torch": {"texts": len(texts), "min": float(cos.min()), "mean": float(cos.mean())},
    }


#: (system, baseline) pairs whose per-round ratios are reported (queries)
PAIRS = [("ours-default", "ours-torch"), ("ours-default", "plain-encode"), ("ours-torch", "plain-encode")]
#: the same for the index builds (those whose two systems ran)
INDEX_PAIRS = [
    ("ours-default", "ort-encode"),
    ("ours-int8", "ort-encode"),
    ("ours-int8", "ours-default"),
    ("ort-encode", "plain-encode"),
    ("ours-default", "ours-torch"),
    ("ours-default", "plain-encode"),
    ("ours-torch", "plain-encode"),
]


def index_pairs(builds: list[dict[str, Any]]) -> list[tuple[str, str]]:
    ran = {b["system"] for b in builds}
    return [(a, b) for a, b in INDEX_PAIRS if a in ran and b in ran]


def index_protocol(builds: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Index wall and CPU ratios of every pair under the harness's protocol; and each stage of our
    float build against the floor (the stage's seconds over the plain encode's, same round)."""
    out = {
        f"{other} / {base} {key}": compare_or_refusal(builds, base, other, key)
        for other, base in index_pairs(builds)
        for key in ("index_wall_s", "index_cpu_s")
    }
    stages = [dict(b, **{f"stage {k}": v for k, v in b.get("stages_s", {}).items()}) for b in builds]
    for system in ("ours-default", "ours-int8"):
        mine = [b for b in stages if b["system"] == system]
        if not mine or not any(b["system"] == "ort-encode" for b in builds):
            continue
        for key in sorted({k for b in mine for k in b if k.startswith("stage ")}):
            floor = [dict(b, **{key: b["index_wall_s"]}) for b in builds if b["system"] == "ort-encode"]
            out[f"{system} {key} / ort-encode wall"] = compare_or_refusal(
                [*floor, *(b for b in mine if key in b)], "ort-encode", system, key
            )
    return out


def per_round_ratios(builds: list[dict[str, Any]], system: str, baseline: str, key: str) -> list[float]:
    base = {b["round"]: b[key] for b in builds if b["system"] == baseline}
    return [b[key] / base[b["round"]] for b in builds if b["system"] == system and b["round"] in base]


def markdown(data: dict[str, Any]) -> str:
    builds = data.get("builds", [])
    lines = [
        md_header(
            "Speed: index and query per stage, against the torch path and a plain encode (MuSiQue)", data
        )
    ]
    if builds:
        lines += [
            f"## Index build ({data['passages']} passages, published OpenIE, {data['threads']} threads)",
            "",
            "One fresh subprocess per build, in the order run; *index* = `index_openie` + CSR snapshot "
            "(ours) or the encode of the same texts (plain encode); *process* = the whole subprocess "
            "(imports, model load).",
            "",
            md_table(
                [
                    "round",
                    "system",
                    "runs on",
                    "index wall s",
                    "index CPU-s",
                    "process wall s",
                    "peak RSS MiB",
                    "load 1-min",
                ],
                [
                    [
                        b["round"],
                        LABELS[b["system"]],
                        b.get("runs_on", "torch"),
                        round(b["index_wall_s"], 2),
                        round(b["index_cpu_s"], 2),
                        round(b["process_wall_s"], 1),
                        b.get("peak_rss_mib"),
                        f"{b['load_start'][0]} → {b['load_end'][0]}",
                    ]
                    for b in builds
                ],
            ),
            "",
            "Ratios per round (builds of a round ran back to back), of index wall time and of index CPU "
            "seconds (the steadier figure when the load swings within a round):",
            "",
            md_table(
                ["ratio", "wall, per round", "wall, median", "CPU, per round", "CPU, median"],
                [
                    [
                        f"{LABELS[s]} / {LABELS[base]}",
                        ", ".join(f"{r:.2f}" for r in wall),
                        f"{statistics.median(wall):.2f}" if wall else "-",
                        ", ".join(f"{r:.2f}" for r in cpu),
                        f"{statistics.median(cpu):.2f}" if cpu else "-",
                    ]
                    for s, base in index_pairs(builds)
                    for wall, cpu in [
                        (
                            per_round_ratios(builds, s, base, "index_wall_s"),
                            per_round_ratios(builds, s, base, "index_cpu_s"),
                        )
                    ]
                ],
            ),
            "",
            "Under the protocol (median of the per-round ratios, min-max, pairs kept; a round whose two "
            "builds' 1-minute loads differ by more than 1.0 is dropped; fewer than two pairs: refused):",
            "",
            md_table(
                ["ratio", "index wall", "index CPU"],
                [
                    [
                        f"{LABELS[other]} / {LABELS[base]}",
                        ratio_cell(data["index_protocol"][f"{other} / {base} index_wall_s"]),
                        ratio_cell(data["index_protocol"][f"{other} / {base} index_cpu_s"]),
                    ]
                    for other, base in index_pairs(builds)
                ]
                if data.get("index_protocol")
                else [],
            ),
            "",
            "Each stage of our builds against the floor (the stage's seconds / the plain encode's, same "
            "round, under the protocol):",
            "",
            md_table(
                ["stage ratio", "wall"],
                [
                    [key.removesuffix(" / ort-encode wall"), ratio_cell(cell)]
                    for key, cell in (data.get("index_protocol") or {}).items()
                    if key.endswith("/ ort-encode wall")
                ],
            ),
            "",
            "Index stages (s, median over rounds):",
            "",
        ]
        for system in ("ours-default", "ours-int8", "ours-torch"):
            mine = [b for b in builds if b["system"] == system and b.get("stages_s")]
            if mine:
                keys = sorted({k for b in mine for k in b["stages_s"]})
                cells = [
                    f"{k} {statistics.median(b['stages_s'].get(k, 0.0) for b in mine):.2f}" for k in keys
                ]
                lines.append(f"- {LABELS[system]}: " + ", ".join(cells) + f"; counts {mine[-1]['counts']}")
        lines.append("")
    query = data.get("query")
    if query:
        systems = query["systems"]
        plain = systems["plain-encode"]["latency"]["p50_ms"]
        torch_p50 = systems["ours-torch"]["latency"]["p50_ms"]
        lines += [
            f"## Queries ({query['questions']} questions × {query['passes']} pass(es), "
            f"{query['threads']} encoder thread(s), alternated per question; load {query['load_start']} → "
            f"{query['load_end']})",
            "",
            "Seconds of one `retrieve` call in the default mode `hipporag2` (no LLM: no recognition "
            "filter), top 10; the plain encode is one `encode` of the question.",
            "",
            md_table(
                ["system", "p50 ms", "p95 ms", "p50 / plain encode", "p50 / torch", "R@2", "R@5"],
                [
                    [
                        LABELS[s],
                        q["latency"]["p50_ms"],
                        q["latency"]["p95_ms"],
                        round(q["latency"]["p50_ms"] / plain, 2),
                        round(q["latency"]["p50_ms"] / torch_p50, 2) if s != "plain-encode" else "-",
                        q.get("recall_percent", {}).get("R@2", "-"),
                        q.get("recall_percent", {}).get("R@5", "-"),
                    ]
                    for s, q in systems.items()
                ],
            ),
            "",
            "p50 ratios under the protocol (each pass over the questions a round):",
            "",
            md_table(
                ["ratio", "p50"],
                [[pair, ratio_cell(c)] for pair, c in (query.get("protocol") or {}).items()],
            ),
            "",
            "Stage p50 (ms; *other* = total minus the named stages: ranking, reading passages, "
            "explanations):",
            "",
            md_table(
                ["system", *STAGES],
                [
                    [LABELS[s], *(systems[s]["stage_p50_ms"].get(k, "-") for k in STAGES)]
                    for s in ("ours-default", "ours-torch")
                ],
            ),
            "",
            f"Same top-10 list for {query['same_top10_default_vs_torch']} of {query['questions']} questions; "
            f"cosine of default to torch vectors on {query['cosine_default_vs_torch']['texts']} texts: min "
            f"{query['cosine_default_vs_torch']['min']:.7f}.",
            "",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    if argv is None and len(sys.argv) == 3 and sys.argv[1] == "--render":  # tables again from a JSON
        data = json.loads(Path(sys.argv[2]).read_text())
        Path(sys.argv[2]).with_suffix(".md").write_text(markdown(data) + "\n")
        return
    args = parse_args(argv)
    require_files(CORPUS_FILE, OPENIE_FILE, QUESTIONS_FILE)
    if not args.query_only:
        require_rounds(args.rounds)
    if args.query_rounds:
        require_rounds(args.query_rounds, "--query-rounds")
    header = run_header()
    work = args.keep_dir or Path(tempfile.mkdtemp(prefix="bench-default-install-"))
    work.mkdir(parents=True, exist_ok=True)
    subset_openie(args.passages, work / "openie_subset.json")
    data: dict[str, Any] = {**header, "passages": args.passages, "threads": args.threads, "builds": []}
    with (work / "workers.log").open("a") as log:
        try:
            if args.query_only:
                data["query"] = query_phase(args, work, log)
                return
            subprocess.run(  # the one-time ONNX build (float, int8) into the user cache folder, not timed
                [
                    sys.executable,
                    "-c",
                    "from hipporag_neo4j.embedding.encoder import create_embedder;"
                    "from hipporag_neo4j.settings import EmbeddingSettings;"
                    "create_embedder(EmbeddingSettings()).dimension;"
                    "create_embedder(EmbeddingSettings(quantize='int8')).dimension",
                ],
                env=worker_env("ours-default", work),
                stderr=log,
                check=True,
            )
            systems = index_systems()
            for round_no in range(1, args.rounds + 1):
                rotation = (round_no - 1) % len(systems)
                for system in systems[rotation:] + systems[:rotation]:
                    result = run_index(system, args, work, log)
                    result["round"] = round_no
                    data["builds"].append(result)
                    print(
                        f"round {round_no} {system}: {result['index_wall_s']:.2f} s "
                        f"(runs on {result.get('runs_on', 'torch')}), load {result['load_end']}",
                        file=sys.stderr,
                        flush=True,
                    )
            if args.query_rounds and torch_installed():
                data["query"] = query_phase(args, work, log)
            elif args.query_rounds:
                print("query phase skipped: it compares with torch (the [torch] extra)", file=sys.stderr)
        finally:
            data["load_after"] = load_average()
            if data["builds"]:
                data["index_protocol"] = index_protocol(data["builds"])
            json_path, md_path = write_results(args.stem, data, markdown(data))
            if not args.keep_dir:
                shutil.rmtree(work, ignore_errors=True)
    print(md_path.read_text())
    print(f"wrote {json_path} and {md_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
