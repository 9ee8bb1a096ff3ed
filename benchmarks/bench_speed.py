"""The ``speed`` suite: index and query per stage and memory, against the torch path and a plain encode.

Three systems, each a fresh subprocess per build (``vs_hipporag2_ours.py``), rotated per round (the
harness's protocol: at least 3 rounds, each build's load recorded, ratios the median of the per-round
pairs at comparable loads, with their spread):

* ``ours-default``: today's defaults (``embedding.backend = "auto"``: ONNX Runtime, exported once into the
  user cache folder, or with torch installed the backend timed faster here; the export and that timing
  are made before the run and not timed; each build records the backend it ran on);
* ``ours-torch``: the same with ``embedding.backend = "torch"`` (the default before issue 19);
* ``plain-encode``: the issue's yardstick, sentence-transformers ``encode`` (torch, batch 64, input
  order) of every text the build embeds (passages, phrases, facts), and one encode per question.
  HippoRAG 2 encodes in input order (about 2x this) and encodes the query twice: the issue's targets
  (<= 0.3x HippoRAG 2 to index, <= 0.35x per query) are about <= 0.6x and <= 1.2x of this yardstick.

1. **Index build** of the first ``--passages`` MuSiQue passages from the published OpenIE (``index_openie``
   plus the CSR snapshot), ``--rounds`` rounds; wall and CPU seconds, the indexer's stages, peak RSS.
2. **Queries**: each system loaded once on its last build (with ``--query-only``, on the builds kept in
   ``--keep-dir``, indexed untimed first where missing); the dev questions alternated per question
   (rotating who goes first); no LLM. ``ours-default`` answers each question in every mode of
   ``--query-modes`` (default: all five), ``ours-torch`` in ``hipporag2``; two yardsticks encode the
   question once each: ``plain-encode`` (sentence-transformers, torch) and ``ort-encode`` (the default
   install's ONNX Runtime encoder, the stricter one where ONNX Runtime is the faster). Seconds of one
   retrieve call, p50 of every stage in ``RetrievalResult.timings`` and of the rest (``other``); R@2/R@5
   (gold among the indexed passages); the cosine of default to torch vectors. Each pass over the
   questions is a round of the protocol: p50 ratios per pass, and per mode the median over the
   questions of (retrieve call / encode of the same question, same pass) against each yardstick (issue
   29, item 4: hipporag2 within 1.5x, every other mode within 1.2x).

    python benchmarks/run.py speed [--passages 300] [--rounds 3] [--threads 2]
        [--query-threads 1] [--query-rounds 3] [--query-modes hipporag2,...] [--stem speed]
    python benchmarks/run.py speed --passages 1890 --query-only --keep-dir DIR  # queries at MuSiQue size
    python benchmarks/bench_speed.py --render results/speed.json  # tables again
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
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
    prepare_encoder,
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

#: the query phase's systems (it needs the [torch] extra: skipped without it); ``ort-encode`` is one
#: encode of the question with the default install's encoder (ONNX Runtime), the stricter yardstick here
SYSTEMS = ("ours-default", "ours-torch", "plain-encode", "ort-encode")
#: the yardsticks: one encode of the question, no retrieval
ENCODES = ("plain-encode", "ort-encode")
#: the retrieval modes the default install answers each question in (the default ``hipporag2`` first)
MODES = ("hipporag2", "hipporag", "dense", "ensemble", "hybrid")
#: the index builds: ours (float and int8) against the floor, one plain encode of the same texts with the
#: default ONNX Runtime encoder; with torch installed, ours on torch and sentence-transformers' encode too
INDEX_SYSTEMS = ("ours-default", "ours-int8", "ort-encode")
TORCH_SYSTEMS = ("ours-torch", "plain-encode")
LABELS = {
    "ours-default": "ours, default settings (auto: ONNX Runtime, or the faster backend here)",
    "ours-int8": "ours, embedding.quantize=int8",
    "ort-encode": "floor: one encode of the same texts (the default encoder, auto)",
    "ours-torch": "ours, backend=torch",
    "plain-encode": "plain encode (sentence-transformers, torch, batch 64)",
}
QUERY_LABELS = {
    **LABELS,
    "ort-encode": "one encode of the question, default install (ONNX Runtime)",
    "plain-encode": "one encode of the question, sentence-transformers (torch)",
}


def torch_installed() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "sentence_transformers"))


def index_systems() -> tuple[str, ...]:
    return INDEX_SYSTEMS + (TORCH_SYSTEMS if torch_installed() else ())


STAGES = (
    "encode",
    "encode_entities",
    "overlap",
    "query_ner",
    "mix",
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
    parser.add_argument(
        "--query-modes",
        default=",".join(MODES),
        help="modes the default install answers each question in, comma-separated (hipporag2 always)",
    )
    parser.add_argument("--keep-dir", type=Path)
    parser.add_argument(
        "--query-only",
        action="store_true",
        help="the query phase alone, on the builds kept in --keep-dir (built first, untimed, where missing)",
    )
    parser.add_argument("--stem", default="speed")
    args = parser.parse_args(argv)
    args.hipporag2_python = None  # worker_command's interface; never used here
    if args.query_only and not args.keep_dir:
        parser.error("--query-only needs --keep-dir (the builds to query)")
    modes = [m.strip() for m in args.query_modes.split(",") if m.strip()]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        parser.error(f"--query-modes: unknown mode(s) {', '.join(unknown)}; choose from {', '.join(MODES)}")
    args.query_modes = ["hipporag2", *(m for m in dict.fromkeys(modes) if m != "hipporag2")]
    return args


def mode_key(mode: str) -> str:
    """The query phase's name for the default install answering in ``mode`` (hipporag2: ours-default)."""
    return "ours-default" if mode == "hipporag2" else f"ours-default {mode}"


def question_ratios(
    rounds: list[dict[str, Any]], per_question: dict[str, list[list[float]]], keys: list[str]
) -> dict[str, dict[str, Any]]:
    """Each of ``keys`` against each one-encode yardstick under the protocol, per question: in each pass
    (a round) the median over questions of (seconds of the retrieve call / seconds of the yardstick's
    encode of the same question in the same pass); the pass's two systems ran interleaved, at one load."""
    rows: list[dict[str, Any]] = []
    out: dict[str, dict[str, Any]] = {}
    for encode in ENCODES:
        for r in rounds:
            if r["system"] == encode:
                rows.append({**r, "system": encode, "question_ratio": 1.0})
        for key in keys:
            for pass_no, (mine, base) in enumerate(
                zip(per_question[key], per_question[encode], strict=True), start=1
            ):
                load = next(r for r in rounds if r["round"] == pass_no and r["system"] == encode)
                ratios = [a / b for a, b in zip(mine, base, strict=True) if b > 0]
                rows.append({**load, "system": key, "question_ratio": round(statistics.median(ratios), 4)})
            out[f"{key} / {encode}"] = compare_or_refusal(
                [r for r in rows if r["system"] in (key, encode)], encode, key, "question_ratio"
            )
    return out


def ensure_builds(args: argparse.Namespace, work: Path, log: Any) -> None:
    """The stores the query phase opens, indexed (untimed) where ``work`` has none yet."""
    for system in ("ours-default", "ours-torch"):
        if not (work / system).is_dir():
            print(f"indexing {args.passages} passages with {system} for queries ...", file=sys.stderr)
            run_index(system, args, work, log)


def query_phase(args: argparse.Namespace, work: Path, log: Any) -> dict[str, Any]:
    questions, gold = load_gold(args.passages)
    servers: dict[str, Server] = {}
    modes: list[str] = args.query_modes
    # (name, server, mode): every mode of the default install, hipporag2 on torch, the two yardsticks
    askers = [(mode_key(m), "ours-default", m) for m in modes] + [
        ("ours-torch", "ours-torch", "hipporag2"),
        ("plain-encode", "plain-encode", None),
        ("ort-encode", "ort-encode", None),
    ]
    names = [name for name, _, _ in askers]
    seconds: dict[str, list[float]] = {n: [] for n in names}
    per_question: dict[str, list[list[float]]] = {n: [] for n in names}  # per pass, per question
    ranked: dict[str, list[list[int]]] = {n: [] for n in names}
    stages: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    try:
        for system in SYSTEMS:
            print(f"loading {system} for queries ...", file=sys.stderr, flush=True)
            servers[system] = Server(system, args, work, log)
        load_start = load_average()
        rounds: list[dict[str, Any]] = []  # one round of the protocol per pass: p50 per system, its load
        for pass_no in range(args.query_rounds):
            pass_seconds: dict[str, list[float]] = {n: [] for n in names}
            pass_load_start = load_average()
            for i, question in enumerate(questions):
                rotation = (i + pass_no) % len(askers)
                for name, system, mode in askers[rotation:] + askers[:rotation]:
                    request: dict[str, Any] = {"q": question}
                    if mode is not None:
                        request["mode"] = mode
                    answer = servers[system].ask(request)
                    seconds[name].append(answer["s"])
                    pass_seconds[name].append(answer["s"])
                    if pass_no == 0:
                        ranked[name].append(answer["ranked"])
                    timings = answer.get("timings") or {}
                    for stage, value in timings.items():
                        stages[name].setdefault(stage, []).append(value)
                    if timings:
                        named = sum(v for k, v in timings.items() if k not in ("total", "overlap"))
                        named -= timings.get("overlap", 0.0)  # ran beside another stage
                        stages[name].setdefault("other", []).append(answer["s"] - named)
            pass_load_end = load_average()
            for name, values in pass_seconds.items():
                per_question[name].append(values)
            rounds += [
                {
                    "system": name,
                    "round": pass_no + 1,
                    "p50_ms": round(1000 * float(np.percentile(values, 50)), 3),
                    "load_start": pass_load_start,
                    "load_end": pass_load_end,
                }
                for name, values in pass_seconds.items()
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
    for name in names:
        row: dict[str, Any] = {"latency": latency_summary(seconds[name])}
        if name not in ENCODES:
            pairs = list(zip(gold, ranked[name], strict=True))
            row["recall_percent"] = {
                f"R@{k}": round(100 * statistics.fmean(recall(g, r, k) for g, r in pairs), 1) for k in (2, 5)
            }
            row["stage_p50_ms"] = {
                k: round(1000 * float(np.percentile(v, 50)), 2) for k, v in stages[name].items()
            }
        per_system[name] = row
    same_rankings = sum(a == b for a, b in zip(ranked["ours-default"], ranked["ours-torch"], strict=True))
    return {
        "questions": len(questions),
        "passes": args.query_rounds,
        "threads": args.query_threads,
        "modes": modes,
        "load_start": load_start,
        "load_end": load_end,
        "rounds": rounds,
        "protocol": {
            f"{other} / {base}": compare_or_refusal(rounds, base, other, "p50_ms") for other, base in PAIRS
        },
        "question_ratios": question_ratios(rounds, per_question, [mode_key(m) for m in modes]),
        "systems": per_system,
        "per_query_s": seconds,
        "same_top10_default_vs_torch": same_rankings,
        "cosine_default_vs_torch": {"texts": len(texts), "min": float(cos.min()), "mean": float(cos.mean())},
    }


#: (system, baseline) pairs whose per-round ratios are reported (queries)
PAIRS = [
    ("ours-default", "ours-torch"),
    ("ours-default", "plain-encode"),
    ("ours-torch", "plain-encode"),
    ("ours-default", "ort-encode"),
    ("ort-encode", "plain-encode"),
]
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

        def label(name: str) -> str:
            if name in QUERY_LABELS:
                return QUERY_LABELS[name] + (", hipporag2" if name.startswith("ours") else "")
            return f"{LABELS['ours-default']}, {name.removeprefix('ours-default ')}"

        retrievers = [n for n in systems if n not in ENCODES]
        lines += [
            f"## Queries ({query['questions']} questions × {query['passes']} pass(es), "
            f"{query['threads']} encoder thread(s), alternated per question; load {query['load_start']} → "
            f"{query['load_end']})",
            "",
            "Seconds of one `retrieve` call (no LLM: no recognition filter), top 10, in the default mode "
            "`hipporag2` and, for the default install, in each mode asked; the yardsticks are one `encode` "
            "of the question.",
            "",
            md_table(
                ["system", "p50 ms", "p95 ms", "p50 / plain encode", "p50 / torch", "R@2", "R@5"],
                [
                    [
                        label(s),
                        q["latency"]["p50_ms"],
                        q["latency"]["p95_ms"],
                        round(q["latency"]["p50_ms"] / plain, 2),
                        round(q["latency"]["p50_ms"] / torch_p50, 2) if s not in ENCODES else "-",
                        q.get("recall_percent", {}).get("R@2", "-"),
                        q.get("recall_percent", {}).get("R@5", "-"),
                    ]
                    for s, q in systems.items()
                ],
            ),
            "",
            "Per question, under the protocol: in each pass (a round) the median over the questions of "
            "(one retrieve call / one encode of the same question, same pass); the median of the passes, "
            "min-max:",
            "",
            md_table(
                ["mode (default install)", "/ encode, ONNX Runtime (default)", "/ encode, torch"],
                [
                    [
                        name.removeprefix("ours-default ") if name != "ours-default" else "hipporag2",
                        ratio_cell(query["question_ratios"][f"{name} / ort-encode"]),
                        ratio_cell(query["question_ratios"][f"{name} / plain-encode"]),
                    ]
                    for name in retrievers
                    if f"{name} / ort-encode" in query.get("question_ratios", {})
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
            "Stage p50 (ms; *encode* = the question's, *encode_entities* = the query entities', *overlap* = "
            "the part of the question's encode that ran beside the query NER and the entities' encode, on a "
            "worker thread; *other* = the call minus the named stages (overlap counted once): ranking, "
            "reading passages, explanations):",
            "",
            md_table(
                ["system", *STAGES],
                [[label(s), *(systems[s]["stage_p50_ms"].get(k, "-") for k in STAGES)] for s in retrievers],
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
            prepare_encoder(
                worker_env("ours-default", work), log, (args.threads, args.query_threads), int8=True
            )
            if args.query_only:
                ensure_builds(args, work, log)
                data["query"] = query_phase(args, work, log)
                return
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
