"""The ``neo4j`` suite: the Neo4j store side by side with the embedded store on MuSiQue, live server.

Same process, same encoder, rounds interleaved A B, B A, ... under the harness's protocol (at least 3
rounds, each run's 1-minute load recorded, pairs at loads more than 1.0 apart dropped, the median of the
per-round ratios with their spread, no ratio from fewer than two pairs).

Issue 17's targets for the ``local`` PPR engine (Neo4j Community, no GDS): indexing MuSiQue from
HippoRAG's published OpenIE within 1.3x the embedded store's wall time, warm query p50 within 1.5x in
every mode (encoder included), and the same answers: every mode's per-question top 10 equal.

* indexing: ``--index-rounds`` rounds of (embedded, Neo4j; who goes first alternates), each a fresh
  store indexed with ``index_openie`` (the encoder included, as a user runs it); wall time, the
  indexer's stage timings, ingestion triples/s (OpenIE triples / wall time, and / store-write time);
* queries: on the last round's two stores, ``--query-rounds`` passes over the questions, each question
  asked of both stores per mode (who goes first alternates), after one warm-up query per store and mode;
  p50/p95 of the wall time and of each retriever stage; each pass is a round of the protocol;
* answers: per mode, how many questions have the identical top 10 (ids, in order) on both stores, and
  for the others the first rank that differs and the score gap there.

The Neo4j namespaces are deleted at the end (``--keep`` leaves the last one). Run it against a Neo4j
of your own: the timings are the server's too.

    HIPPORAG_NEO4J_PASSWORD=... python benchmarks/run.py neo4j \\
        --uri bolt://127.0.0.1:27687 --questions 40 [--index-rounds 3] [--query-rounds 3]
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from harness import (
    OPENIE_FILE,
    QUESTIONS_FILE,
    compare_or_refusal,
    interleaved,
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

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.embedding.encoder import create_embedder
from hipporag_neo4j.extraction.recorded import load_recorded_extraction
from hipporag_neo4j.settings import Settings, load_settings

MODES = ("hipporag2", "hipporag", "dense")
STORES = ("embedded", "neo4j")


def openie_subset(path: Path, passages: int | None, into: Path) -> tuple[Path, int]:
    """The OpenIE file (or its first ``passages`` documents, written to ``into``) and its triple count."""
    records = [r for r in load_recorded_extraction(path).records if r.passage is not None]
    if passages is not None and passages < len(records):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["docs"] = data["docs"][:passages]
        target = into / "openie_subset.json"
        target.write_text(json.dumps(data), encoding="utf-8")
        path, records = target, records[:passages]
    return path, sum(len(r.extraction.triples) for r in records)


def settings_for(kind: str, args: argparse.Namespace, root: Path, namespace: str) -> Settings:
    if kind == "embedded":
        return load_settings({"store": {"backend": "embedded", "path": str(root / namespace)}}, env_file=None)
    return load_settings(
        {
            "store": {"backend": "neo4j"},
            "neo4j": {
                "uri": args.uri,
                "password": args.password,
                "namespace": namespace,
                "ppr_engine": "local",
                "vector_search": args.vector_search,
            },
        },
        env_file=None,
    )


_DROP = "MATCH (n {namespace: $namespace}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS"


def drop_namespace_plain(uri: str, password: str, namespace: str) -> None:
    import neo4j

    with neo4j.GraphDatabase.driver(uri, auth=("neo4j", password)) as driver, driver.session() as session:
        session.run(_DROP, namespace=namespace).consume()


def top_ids(
    memory: HippoRAG, question: str, mode: str, k: int
) -> tuple[list[str], list[float], float, dict[str, float]]:
    start = time.perf_counter()
    result = memory.retrieve(question, mode=mode, top_k=k)  # type: ignore[arg-type]
    wall = time.perf_counter() - start
    return (
        [p.passage.id for p in result.passages],
        [p.score for p in result.passages],
        wall,
        dict(result.timings),
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--uri", default="bolt://127.0.0.1:27687")
    parser.add_argument("--password", default=None, help="default: HIPPORAG_NEO4J_PASSWORD")
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--passages", type=int, default=None, help="index only the first N (smoke runs)")
    parser.add_argument("--index-rounds", type=int, default=3)
    parser.add_argument("--query-rounds", type=int, default=3, help="passes over the questions (rounds)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--vector-search", choices=("client", "index"), default="client")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--stem", default="neo4j_vs_embedded_musique")
    args = parser.parse_args()
    require_rounds(args.index_rounds, "--index-rounds")
    require_rounds(args.query_rounds, "--query-rounds")
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)  # expected ones; see issue 17 part 3
    if args.password is None:
        import os

        args.password = os.environ.get("HIPPORAG_NEO4J_PASSWORD", "")
    require_files(OPENIE_FILE, QUESTIONS_FILE)
    modes = args.modes.split(",")
    questions = [q["question"] for q in json.loads(QUESTIONS_FILE.read_text())][: args.questions]
    header = run_header()
    root = Path(tempfile.mkdtemp(prefix="bench-neo4j-vs-embedded-"))
    openie, triples = openie_subset(OPENIE_FILE, args.passages, root)
    embedder = create_embedder(load_settings(env_file=None).embedding)
    embedder.encode(["warm up the encoder"])
    namespaces: list[str] = []
    indexing: dict[str, list[dict[str, Any]]] = {kind: [] for kind in STORES}
    memories: dict[str, HippoRAG] = {}
    try:
        for round_, order in enumerate(interleaved(STORES, args.index_rounds)):
            for kind in order:
                namespace = f"bench_{uuid.uuid4().hex[:10]}"
                if kind == "neo4j":
                    namespaces.append(namespace)
                memory = HippoRAG(settings_for(kind, args, root, namespace), embedder=embedder)
                load_start = load_average()
                start = time.perf_counter()
                report = memory.index_openie(openie)
                wall = time.perf_counter() - start
                timings = {k: round(v, 3) for k, v in report.timings.items()}
                indexing[kind].append(
                    {
                        "round": round_,
                        "wall_s": round(wall, 2),
                        "passages": len(report.indexed),
                        "synonym_edges": report.new_synonym_edges,
                        "triples_per_s": round(triples / wall, 1),
                        "timings": timings,
                        "load_start": load_start,
                        "load_end": load_average(),
                    }
                )
                print(kind, round_, round(wall, 1), timings, flush=True)
                old = memories.get(kind)
                memories[kind] = memory
                if old is not None:
                    old.close()
                    if kind == "neo4j":
                        drop_namespace_plain(args.uri, args.password, old.settings.neo4j.namespace)
                        namespaces.remove(old.settings.neo4j.namespace)

        # queries: warm-up, then per question A B per mode
        per: dict[str, dict[str, dict[str, list[float]]]] = {m: {kind: {} for kind in STORES} for m in modes}
        answers: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
        for mode in modes:
            for kind in STORES:
                for q in questions[:2]:
                    top_ids(memories[kind], q, mode, args.top_k)
        passes: list[dict[str, Any]] = []  # one round of the protocol per pass: p50 per mode and store
        for pass_no in range(args.query_rounds):
            pass_walls: dict[tuple[str, str], list[float]] = {}
            pass_load_start = load_average()
            for qi, question in enumerate(questions):
                for mode in modes:
                    order = STORES if (qi + pass_no) % 2 == 0 else STORES[::-1]
                    found: dict[str, tuple[list[str], list[float]]] = {}
                    for kind in order:
                        ids, scores, wall, timings = top_ids(memories[kind], question, mode, args.top_k)
                        pass_walls.setdefault((mode, kind), []).append(wall)
                        bucket = per[mode][kind]
                        bucket.setdefault("wall", []).append(wall)
                        for key, value in timings.items():
                            bucket.setdefault(key, []).append(value)
                        found[kind] = (ids, scores)
                    if pass_no == 0:
                        answers[mode].append(compare_answers(qi, found))
            pass_load_end = load_average()
            passes += [
                {
                    "mode": mode,
                    "system": kind,
                    "round": pass_no + 1,
                    "p50_ms": round(1000 * statistics.median(walls), 3),
                    "load_start": pass_load_start,
                    "load_end": pass_load_end,
                }
                for (mode, kind), walls in pass_walls.items()
            ]
        stats = {kind: memories[kind].stats().model_dump(exclude={"extra"}) for kind in STORES}
        for memory in memories.values():
            memory.close()
    finally:
        if not args.keep:
            for namespace in namespaces:
                try:
                    drop_namespace_plain(args.uri, args.password, namespace)
                except Exception as exc:
                    print(f"could not drop {namespace}: {exc}")
        shutil.rmtree(root, ignore_errors=True)
    header["load_after"] = load_average()
    finish(args, header, modes, triples, indexing, per, answers, passes, stats)


def compare_answers(qi: int, found: dict[str, tuple[list[str], list[float]]]) -> dict[str, Any]:
    """Whether both stores' top k are the same; if not, where they first differ and by how much."""
    (a_ids, a_scores), (b_ids, b_scores) = found["embedded"], found["neo4j"]
    row: dict[str, Any] = {
        "question": qi,
        "equal": a_ids == b_ids,
        "same_set": set(a_ids) == set(b_ids),
    }
    if a_ids != b_ids:
        first = next(
            i
            for i in range(max(len(a_ids), len(b_ids)))
            if i >= len(a_ids) or i >= len(b_ids) or a_ids[i] != b_ids[i]
        )
        row["first_difference_rank"] = first + 1
        if first < len(a_scores) and first < len(b_scores):
            row["scores_at_difference"] = [a_scores[first], b_scores[first]]
        row["max_score_difference"] = max(
            (abs(x - y) for x, y in zip(a_scores, b_scores, strict=False)), default=0.0
        )
    return row


def finish(
    args: argparse.Namespace,
    header: dict[str, Any],
    modes: list[str],
    triples: int,
    indexing: dict[str, list[dict[str, Any]]],
    per: dict[str, dict[str, dict[str, list[float]]]],
    answers: dict[str, list[dict[str, Any]]],
    passes: list[dict[str, Any]],
    stats: dict[str, Any],
) -> None:
    query: dict[str, Any] = {}
    for mode in modes:
        query[mode] = {}
        for kind in STORES:
            query[mode][kind] = {key: latency_summary(values) for key, values in per[mode][kind].items()}
        e, n = query[mode]["embedded"]["wall"]["p50_ms"], query[mode]["neo4j"]["wall"]["p50_ms"]
        query[mode]["ratio_p50"] = round(n / e, 2) if e else None
        query[mode]["protocol"] = compare_or_refusal(
            [p for p in passes if p["mode"] == mode], "embedded", "neo4j", "p50_ms"
        )
    index_ratio = [
        round(b["wall_s"] / a["wall_s"], 2)
        for a, b in zip(indexing["embedded"], indexing["neo4j"], strict=True)
    ]
    equal = {
        mode: {
            "identical_top": sum(r["equal"] for r in answers[mode]),
            "same_set": sum(r["same_set"] for r in answers[mode]),
            "questions": len(answers[mode]),
        }
        for mode in modes
    }
    data = {
        **header,
        "settings": {"top_k": args.top_k, "vector_search": args.vector_search, "ppr_engine": "local"},
        "triples": triples,
        "passages": args.passages or "all",
        "indexing": indexing,
        "indexing_ratio_per_round": index_ratio,
        "indexing_protocol": compare_or_refusal(
            [{**run, "system": kind} for kind in STORES for run in indexing[kind]],
            "embedded",
            "neo4j",
            "wall_s",
        ),
        "query_rounds": passes,
        "query": query,
        "answers": equal,
        "answer_rows": answers,
        "stats": stats,
    }
    json_path, md_path = write_results(args.stem, data, markdown(data, modes))
    print(md_path.read_text())
    print(f"written to {json_path} and {md_path}")


def markdown(data: dict[str, Any], modes: list[str]) -> str:
    out = [md_header("Neo4j store vs embedded store on MuSiQue (side by side, one process)", data)]
    out.append(
        f"Neo4j: `local` PPR engine, vector_search = {data['settings']['vector_search']}; "
        f"top {data['settings']['top_k']}; {data['triples']} OpenIE triples.\n"
    )
    out.append("## Indexing from the published OpenIE (A B, B A ... per round, encoder included)\n")
    rows = []
    for a, b, ratio in zip(
        data["indexing"]["embedded"], data["indexing"]["neo4j"], data["indexing_ratio_per_round"], strict=True
    ):
        rows.append(
            [
                a["round"],
                a["wall_s"],
                b["wall_s"],
                ratio,
                a["triples_per_s"],
                b["triples_per_s"],
                ", ".join(f"{k} {v:.1f}" for k, v in a["timings"].items()),
                ", ".join(f"{k} {v:.1f}" for k, v in b["timings"].items()),
            ]
        )
    out.append(
        md_table(
            [
                "round",
                "embedded s",
                "neo4j s",
                "ratio",
                "emb triples/s",
                "neo4j triples/s",
                "embedded stages s",
                "neo4j stages s",
            ],
            rows,
        )
    )
    out.append(
        f"\nIndexing ratio Neo4j / embedded under the protocol (median of the per-round ratios, min-max; a "
        f"round at loads more than 1.0 apart dropped): **{ratio_cell(data['indexing_protocol'])}**.\n"
    )
    out.append("## Warm queries (per question both stores, who goes first alternating)\n")
    rows = []
    for mode in modes:
        q = data["query"][mode]
        e, n = q["embedded"], q["neo4j"]
        stages = sorted((set(e) | set(n)) - {"wall"})
        rows.append(
            [
                mode,
                e["wall"]["p50_ms"],
                n["wall"]["p50_ms"],
                q["ratio_p50"],
                ratio_cell(q["protocol"]),
                e["wall"]["p95_ms"],
                n["wall"]["p95_ms"],
                "; ".join(
                    f"{s} {e.get(s, {}).get('p50_ms', '-')} / {n.get(s, {}).get('p50_ms', '-')}"
                    for s in stages
                ),
            ]
        )
    out.append(
        md_table(
            [
                "mode",
                "embedded p50 ms",
                "neo4j p50 ms",
                "ratio",
                "ratio under the protocol (per pass)",
                "embedded p95",
                "neo4j p95",
                "stage p50 ms (embedded / neo4j)",
            ],
            rows,
        )
    )
    out.append("\n## Same answers\n")
    rows = [
        [mode, f"{v['identical_top']}/{v['questions']}", f"{v['same_set']}/{v['questions']}"]
        for mode, v in data["answers"].items()
    ]
    out.append(md_table(["mode", "identical top-k (ids in order)", "same top-k set"], rows))
    diffs = [(m, r) for m in modes for r in data["answer_rows"][m] if not r["equal"]]
    if diffs:
        out.append("\nDifferences:\n")
        for mode, r in diffs:
            out.append(
                f"- {mode}, question {r['question']}: first differing rank {r.get('first_difference_rank')}, "
                f"scores there {r.get('scores_at_difference')}, "
                f"largest score difference {r.get('max_score_difference'):.3g}"
            )
    return "\n".join(out)


if __name__ == "__main__":
    main()
