"""The offline demo: index the bundled corpus from its recorded extraction, then compare HippoRAG with
dense retrieval on the same questions. No LLM and no server needed (Neo4j is used when configured)."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.models import RetrievalResult
from hipporag_neo4j.settings import Settings

DEMO_PACKAGE = "hipporag_neo4j.demo"


def demo_file(name: str) -> Path:
    return Path(str(resources.files(DEMO_PACKAGE).joinpath(name)))


def load_questions() -> list[dict[str, Any]]:
    questions: list[dict[str, Any]] = json.loads(demo_file("questions.json").read_text(encoding="utf-8"))
    return questions


def _gold_ranks(result: RetrievalResult, gold_titles: list[str]) -> list[int | None]:
    titles = [item.passage.title for item in result.passages]
    return [titles.index(t) + 1 if t in titles else None for t in gold_titles]


def _column(result: RetrievalResult, gold: set[str], width: int) -> list[str]:
    lines = []
    for item in result.passages:
        mark = "*" if item.passage.title in gold else " "
        lines.append(f"{mark}{item.rank}. {item.passage.title}"[:width])
    return lines


def run_demo(
    settings: Settings,
    *,
    keep: Path | None = None,
    echo: Callable[[str], None] | None = print,
    top_k: int = 5,
) -> dict[str, Any]:
    say = echo or (lambda _line: None)
    temporary = None
    if settings.backend == "embedded":
        if keep is None:
            temporary = tempfile.TemporaryDirectory(prefix="hipporag-demo-")
            keep = Path(temporary.name)
        settings = settings.model_copy(update={"store": settings.store.model_copy(update={"path": keep})})
    elif settings.neo4j.namespace == "default":
        settings = settings.model_copy(
            update={"neo4j": settings.neo4j.model_copy(update={"namespace": "demo"})}
        )
    # The demo shows the offline path: recorded extraction and spaCy query entities.
    settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"model": None})})
    questions = load_questions()
    outcome: dict[str, Any] = {"questions": []}
    try:
        with HippoRAG(settings) as memory:
            started = time.perf_counter()
            report = memory.index_openie(demo_file("openie_demo.json"))
            stats = memory.stats()
            outcome["index"] = {
                "seconds": round(time.perf_counter() - started, 2),
                "passages": stats.passages,
                "phrases": stats.phrases,
                "relation_edges": stats.relation_edges,
                "synonym_edges": stats.synonym_edges,
                "failed": [f.reason for f in report.failed],
            }
            say(
                f"Indexed {stats.passages} passages into the {stats.backend} store ({stats.location}): "
                f"{stats.phrases} phrases, {stats.relation_edges} relation and "
                f"{stats.synonym_edges} synonym edges."
            )
            for question in questions:
                graph = memory.retrieve(question["question"], mode="hipporag", top_k=top_k)
                dense = memory.retrieve(question["question"], mode="dense", top_k=top_k)
                gold = question["gold_titles"]
                entry = {
                    "question": question["question"],
                    "gold_titles": gold,
                    "hipporag_gold_ranks": _gold_ranks(graph, gold),
                    "dense_gold_ranks": _gold_ranks(dense, gold),
                    "showcase": bool(question.get("showcase")),
                }
                outcome["questions"].append(entry)
                if question.get("showcase"):
                    _show(say, question, graph, dense)
            _summary(say, outcome["questions"])
    finally:
        if temporary is not None:
            temporary.cleanup()
    return outcome


def _show(
    say: Callable[[str], None], question: dict[str, Any], graph: RetrievalResult, dense: RetrievalResult
) -> None:
    gold = set(question["gold_titles"])
    say("")
    say(f"Q: {question['question']}   (answer: {question['answer']})")
    say(f"   needs: {' + '.join(question['gold_titles'])}   (* = a passage it needs)")
    width = 44
    say(f"   {'HippoRAG (graph, PPR)':<{width}}  {'Dense retrieval (same embedder)':<{width}}")
    for left, right in zip(_column(graph, gold, width), _column(dense, gold, width), strict=False):
        say(f"   {left:<{width}}  {right:<{width}}")
    say("   Why HippoRAG found them:")
    say("     query entities: " + ", ".join(graph.query_entities or ["(none)"]))
    for link in graph.linked:
        say(f"     linked {link.query_entity!r} -> phrase {link.phrase!r} (cosine {link.similarity:.2f})")
    for item in graph.passages[:3]:
        via = ", ".join(f"{p.phrase}" for p in item.explanation.top_phrases[:4])
        say(f"     {item.rank}. {item.passage.title}: via {via}")


def _summary(say: Callable[[str], None], rows: list[dict[str, Any]]) -> None:
    def hits(ranks: list[int | None], k: int) -> int:
        return sum(1 for r in ranks if r is not None and r <= k)

    total = sum(len(r["gold_titles"]) for r in rows)
    say("")
    say(f"All {len(rows)} demo questions, gold passages found (of {total}):")
    for k in (2, 5):
        graph = sum(hits(r["hipporag_gold_ranks"], k) for r in rows)
        dense = sum(hits(r["dense_gold_ranks"], k) for r in rows)
        say(f"   in the top {k}: HippoRAG {graph}, dense {dense}")
