"""Extraction with a small local model against spaCy, on gold passages of HotpotQA dev50.

Runs Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) behind llama.cpp's OpenAI-compatible server (set up by
``scripts/setup_local_llm.sh``; 2 threads) through the project's own ``LLMExtractor``, once with the
answer constrained by a JSON schema (``llm.structured_output=json_object_schema``) and once without any
``response_format`` (``none``), and spaCy's offline extractor on the same passages. Per passage: entities
and triples found, seconds, failures, answers cut at ``max_tokens``, and which JSON repairs each raw answer
needed (read back from the LLM response cache).

    python benchmarks/run.py quality-local-llm [--passages 10] [--modes json_object_schema none]

Writes ``results/local_llm_hotpotqa.{json,md}``. A precision judgement made by reading the triples can be
put in ``results/local_llm_hotpotqa_judgement.json`` (``{extractor: {title: {"correct", "total"}}}``); the
Markdown report then includes it. Needs ../shared/data/hotpotqa/hotpotqa_dev50.json.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import REPO, RESULTS, git_commit, load_average, md_header, md_table, run_header, write_results

from hipporag_neo4j.common.text import passage_content
from hipporag_neo4j.errors import LLMOutputError
from hipporag_neo4j.extraction.base import clean_entities
from hipporag_neo4j.extraction.llm_extractor import LLMExtractor
from hipporag_neo4j.extraction.prompts import ner_messages, openie_messages
from hipporag_neo4j.extraction.spacy_extractor import SpacyExtractor
from hipporag_neo4j.llm.cache import ResponseCache, request_key
from hipporag_neo4j.llm.client import LLMClient
from hipporag_neo4j.llm.jsonparse import parse_json_report
from hipporag_neo4j.llm.local_server import MODEL_ALIAS, LocalLLMServer
from hipporag_neo4j.llm.structured import NAMED_ENTITIES, TRIPLES
from hipporag_neo4j.models import Extraction, Passage
from hipporag_neo4j.settings import LLMSettings

DEV50 = REPO.parent / "shared" / "data" / "hotpotqa" / "hotpotqa_dev50.json"
JUDGEMENT = RESULTS / "local_llm_hotpotqa_judgement.json"
STEM = "local_llm_hotpotqa"


def _listish(value: Any) -> Any:
    return ast.literal_eval(value) if isinstance(value, str) else value


def gold_passages(limit: int) -> list[Passage]:
    """The gold passages of the first questions, in question order, without repeats."""
    questions = json.loads(DEV50.read_text(encoding="utf-8"))
    passages: list[Passage] = []
    seen: set[str] = set()
    for question in questions:
        context = {title: sentences for title, sentences in _listish(question["context"])}
        for title, _ in _listish(question["supporting_facts"]):
            if title in seen or title not in context:
                continue
            seen.add(title)
            passages.append(Passage(id=title, title=title, text="".join(context[title])))
            if len(passages) == limit:
                return passages
    return passages


def _summary(result: Any, seconds: float) -> dict[str, Any]:
    if isinstance(result, Extraction):
        return {
            "ok": True,
            "seconds": round(seconds, 2),
            "entities": result.entities,
            "triples": [[t.subject, t.predicate, t.object] for t in result.triples],
            "dropped": result.dropped,
        }
    return {"ok": False, "seconds": round(seconds, 2), "reason": result.reason, "entities": [], "triples": []}


def run_spacy(passages: list[Passage]) -> list[dict[str, Any]]:
    extractor = SpacyExtractor()
    extractor.extract(passages[:1])  # load the pipeline outside the timings
    out = []
    for passage in passages:
        started = time.perf_counter()
        (result,) = extractor.extract([passage])
        out.append({"title": passage.title, **_summary(result, time.perf_counter() - started)})
    return out


def _raw_answers(client: LLMClient, cache: ResponseCache, passage: Passage) -> list[tuple[str, str]]:
    """(prompt, raw answer) of this passage's NER and OpenIE calls, read back from the cache."""
    content = passage_content(passage.text, passage.title)
    ner_body = client.request_body(ner_messages(content), json_mode=True, schema=NAMED_ENTITIES)
    ner_text = cache.get(request_key(ner_body))
    found: list[tuple[str, str]] = []
    if ner_text is None:
        return found
    found.append(("ner", ner_text))
    try:
        entities = clean_entities(parse_json_report(ner_text).value.get("named_entities"))
    except LLMOutputError:
        return found
    openie_body = client.request_body(openie_messages(content, entities), json_mode=True, schema=TRIPLES)
    openie_text = cache.get(request_key(openie_body))
    if openie_text is not None:
        found.append(("openie", openie_text))
    return found


def _settings(base_url: str, model: str, mode: str, max_tokens: int, cache_path: Path) -> LLMSettings:
    return LLMSettings(
        base_url=base_url,
        model=model,
        structured_output=mode,  # type: ignore[arg-type]
        max_tokens=max_tokens,
        concurrency=1,
        timeout=900.0,
        max_retries=0,
        cache_path=cache_path,
    )


def _repair_counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Which repairs each raw answer needs with the current parser (written into the rows too)."""
    repairs: dict[str, int] = {}
    needed_repair = answers = unparsable = 0
    for row in rows:
        for raw in row["raw"]:
            answers += 1
            try:
                found = list(parse_json_report(raw["answer"]).repairs)
            except LLMOutputError:
                found = ["unparsable"]
                unparsable += 1
            raw["repairs"] = found
            needed_repair += bool(found)
            for name in found:
                repairs[name] = repairs.get(name, 0) + 1
    return {
        "answers": answers,
        "answers_needing_repair": needed_repair,
        "answers_unparsable": unparsable,
        "repairs": repairs,
    }


def run_llm(
    server: LocalLLMServer, passages: list[Passage], mode: str, max_tokens: int, folder: Path
) -> dict[str, Any]:
    cache_path = folder / f"cache_{mode}.sqlite"
    settings = _settings(server.base_url, server.model_name, mode, max_tokens, cache_path)
    rows: list[dict[str, Any]] = []
    with LLMClient(settings) as client:
        extractor = LLMExtractor(client)
        for passage in passages:
            before = client.usage
            started = time.perf_counter()
            (result,) = extractor.extract([passage])
            seconds = time.perf_counter() - started
            after = client.usage
            row = {
                "title": passage.title,
                **_summary(result, seconds),
                "completion_tokens": after.completion_tokens - before.completion_tokens,
            }
            cache = ResponseCache(cache_path)
            row["raw"] = [{"prompt": k, "answer": t} for k, t in _raw_answers(client, cache, passage)]
            cache.close()
            rows.append(row)
            print(f"  [{mode}] {passage.title}: {seconds:.1f}s ok={row['ok']}", file=sys.stderr, flush=True)
        usage = client.usage
    return {
        "mode": mode,
        "max_tokens": max_tokens,
        "model": server.model_name,
        "passages": rows,
        **_repair_counts(rows),
        "failed_malformed": sum(1 for r in rows if "malformed" in r.get("reason", "")),
        "usage": usage.model_dump(),
    }


def reextract(run: dict[str, Any], passages: list[Passage], folder: Path) -> None:
    """Redo a run's extraction with the current code from its recorded raw answers (served from a cache
    filled with them: no request is sent); the measured seconds and token counts stay the run's."""
    cache_path = folder / f"replay_{run['mode']}.sqlite"
    model = run.setdefault("model", MODEL_ALIAS)
    settings = _settings("http://127.0.0.1:9/v1", model, run["mode"], run["max_tokens"], cache_path)
    by_title = {p.title: p for p in passages}
    with LLMClient(settings) as client:
        cache = ResponseCache(cache_path)
        for row in run["passages"]:
            content = passage_content(by_title[row["title"]].text, row["title"])
            entities: list[str] = []
            for raw in row["raw"]:
                if raw["prompt"] == "ner":
                    body = client.request_body(ner_messages(content), json_mode=True, schema=NAMED_ENTITIES)
                    entities = clean_entities(parse_json_report(raw["answer"]).value.get("named_entities"))
                else:
                    messages = openie_messages(content, entities)
                    body = client.request_body(messages, json_mode=True, schema=TRIPLES)
                cache.put(request_key(body), model, raw["answer"])
        cache.close()
        extractor = LLMExtractor(client)
        for row in run["passages"]:
            (result,) = extractor.extract([by_title[row["title"]]])
            row.update({k: v for k, v in _summary(result, row["seconds"]).items() if k != "seconds"})
            if isinstance(result, Extraction):
                row.pop("reason", None)
        assert client.usage.requests == 0, "a raw answer was missing: the replay sent a request"
    run.update(_repair_counts(run["passages"]))
    run["failed_malformed"] = sum(1 for r in run["passages"] if "malformed" in r.get("reason", ""))


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    return {
        "passages": n,
        "failed": sum(1 for r in rows if not r["ok"]),
        "entities": sum(len(r["entities"]) for r in rows),
        "triples": sum(len(r["triples"]) for r in rows),
        "seconds_per_passage": round(sum(r["seconds"] for r in rows) / max(n, 1), 2),
    }


def markdown(data: dict[str, Any]) -> str:
    lines = [md_header("Local LLM extraction (Qwen2.5-Coder-1.5B-Instruct Q4_K_M) against spaCy", data)]
    lines.append(
        f"{data['n_passages']} gold passages of HotpotQA dev50 (the first questions' supporting titles); "
        f"llama-cpp-python {data['llama_cpp_python']} server, 2 threads, n_ctx 4096, temperature 0, "
        "one request at a time; extraction through the project's LLMExtractor (NER, then OpenIE "
        "conditioned on the entities).\n"
    )
    judgement = data.get("judgement") or {}
    rows = []
    for name, totals in data["totals"].items():
        judged = judgement.get(name) or {}
        correct = sum(v["correct"] for v in judged.values())
        total = sum(v["total"] for v in judged.values())
        precision = f"{correct}/{total} ({correct / total:.0%})" if total else "-"
        rows.append(
            [
                name,
                totals["failed"],
                totals["entities"],
                totals["triples"],
                precision,
                totals["seconds_per_passage"],
            ]
        )
    lines.append(
        md_table(
            ["extractor", "failed passages", "entities", "triples", "triples judged correct", "s / passage"],
            rows,
        )
    )
    lines.append("\n## JSON answers of the model\n")
    rep_rows = []
    for run in data["llm_runs"]:
        repairs = ", ".join(f"{k} {v}" for k, v in sorted(run["repairs"].items())) or "-"
        rep_rows.append(
            [
                run["mode"],
                run["answers"],
                run["answers_needing_repair"],
                run["answers_unparsable"],
                repairs,
                run["usage"]["completion_tokens"],
            ]
        )
    lines.append(
        md_table(
            ["structured_output", "answers", "needed repair", "unparsable", "repairs", "completion tokens"],
            rep_rows,
        )
    )
    if data.get("reextracted"):
        r = data["reextracted"]
        lines.append(
            f"\nThe LLM extractions above were redone on {r['date']} at commit `{r['commit'][:12]}` from the "
            "raw answers recorded by this run (no new request; times are this run's): "
            f"`{r['command']}`.\n"
        )
    if judgement.get("notes"):
        lines.append(f"\nJudgement (by reading the triples): {judgement['notes']}\n")
    lines.append("\nEvery entity, triple and raw answer is in the JSON file beside this one.")
    return "\n".join(lines)


#: The looping-output probe: the server's defaults (llama-cpp-python: repeat_penalty 1.1), then each guard.
LOOP_SETTINGS: list[tuple[str, dict[str, Any]]] = [
    ("server defaults", {}),
    ("frequency_penalty 0.5", {"frequency_penalty": 0.5}),
    ("repeat_penalty 1.3 (extra_body)", {"extra_body": {"repeat_penalty": 1.3}}),
]


def loop_probe(title: str, max_tokens: int) -> None:
    """One passage whose OpenIE answer looped, extracted once per setting of LOOP_SETTINGS."""
    passage = next((p for p in gold_passages(50) if p.title == title), None)
    if passage is None:
        sys.exit(f"no gold passage titled {title!r} in {DEV50}")
    data: dict[str, Any] = {**run_header(), "title": title, "max_tokens": max_tokens, "runs": []}
    with LocalLLMServer() as server:
        for name, extra in LOOP_SETTINGS:
            settings = _settings(server.base_url, server.model_name, "json_object_schema", max_tokens, Path())
            settings = settings.model_copy(update={"cache_path": None, **extra})
            with LLMClient(settings) as client:
                started = time.perf_counter()
                (result,) = LLMExtractor(client).extract([passage])
                row = {"setting": name, **_summary(result, time.perf_counter() - started)}
                row["completion_tokens"] = client.usage.completion_tokens
            data["runs"].append(row)
            done = f"  {name}: {row['seconds']}s, {row['completion_tokens']} tokens"
            print(done, file=sys.stderr, flush=True)
    data["load_after"] = load_average()
    rows = [
        [
            r["setting"],
            r["completion_tokens"],
            "yes" if any("cut short" in d for d in r.get("dropped", [])) else "no",
            len(r["triples"]),
            len([d for d in r.get("dropped", []) if "cut short" not in d]),
            r["seconds"],
        ]
        for r in data["runs"]
    ]
    md = [
        md_header(f"Looping output: one passage ({title}), structured_output=json_object_schema", data),
        f"max_tokens {max_tokens}; NER then OpenIE through LLMExtractor, one run per setting.\n",
        md_table(
            ["setting", "completion tokens", "cut at max_tokens", "triples kept", "dropped", "seconds"],
            rows,
        ),
        "\nEvery triple and drop reason is in the JSON file beside this one.",
    ]
    json_path, md_path = write_results(f"{STEM}_loop", data, "\n".join(md))
    print(f"wrote {json_path} and {md_path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--passages", type=int, default=10)
    parser.add_argument("--modes", nargs="+", default=["json_object_schema", "none"])
    parser.add_argument("--max-tokens", type=int, default=768)
    parser.add_argument(
        "--reextract",
        action="store_true",
        help="no model: redo the LLM extraction of the last results file from its recorded raw answers with "
        "the current code (after a parser change), keeping its measured times",
    )
    parser.add_argument(
        "--loop-probe",
        metavar="TITLE",
        help="instead: extract this one gold passage once per looping guard "
        "(results/local_llm_hotpotqa_loop.*)",
    )
    args = parser.parse_args()
    if not DEV50.is_file():
        sys.exit(f"benchmark data not found: {DEV50} (../shared/data/hotpotqa from the repository root)")
    if args.loop_probe:
        loop_probe(args.loop_probe, args.max_tokens)
        return
    if args.reextract:
        data = json.loads((RESULTS / f"{STEM}.json").read_text(encoding="utf-8"))
        passages = gold_passages(data["n_passages"])
        with tempfile.TemporaryDirectory() as folder:
            for run in data["llm_runs"]:
                reextract(run, passages, Path(folder))
        now = run_header()
        data["reextracted"] = {"command": now["command"], "date": now["date"], **git_commit()}
        finish(data)
        return
    header = run_header()
    passages = gold_passages(args.passages)
    data: dict[str, Any] = {**header, "n_passages": len(passages), "titles": [p.title for p in passages]}
    from importlib.metadata import version

    data["llama_cpp_python"] = version("llama-cpp-python")
    spacy_rows = run_spacy(passages)
    data["spacy"] = spacy_rows
    data["llm_runs"] = []
    with tempfile.TemporaryDirectory() as folder, LocalLLMServer() as server:
        for mode in args.modes:
            data["llm_runs"].append(run_llm(server, passages, mode, args.max_tokens, Path(folder)))
    data["load_after"] = load_average()
    finish(data)


def finish(data: dict[str, Any]) -> None:
    data["totals"] = {"spacy": _totals(data["spacy"])}
    for run in data["llm_runs"]:
        data["totals"][f"llm ({run['mode']})"] = _totals(run["passages"])
    if JUDGEMENT.is_file():
        data["judgement"] = json.loads(JUDGEMENT.read_text(encoding="utf-8"))
    json_path, md_path = write_results(STEM, data, markdown(data))
    print(f"wrote {json_path} and {md_path}")


if __name__ == "__main__":
    main()
