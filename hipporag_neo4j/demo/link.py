"""The linking demo: the offline demo's corpus, a small CRM-like graph of accounts beside it
(``enterprise_graph.jsonl``: Kestrel Enzymes SUBSIDIARY_OF Lumora Biotics), and one question whose
answer needs that relationship, retrieved without and with the joined graph, side by side. Always on
the embedded store (a temporary directory unless ``keep``): no LLM, no server."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.demo.run import demo_file
from hipporag_neo4j.models import RetrievalMode, RetrievalResult
from hipporag_neo4j.settings import Settings

#: The question, and what the corpus alone cannot tell: Kestrel Enzymes' parent is in the CRM graph.
QUESTION = "Who founded the parent company of Kestrel Enzymes?"
VIA = ["SUBSIDIARY_OF"]
LABEL = "Account"
MODE: RetrievalMode = "hipporag"  # as the offline demo (README: on these 42 passages it does best)


def _titles(result: RetrievalResult) -> list[str]:
    return [item.passage.title or item.passage.id for item in result.passages]


def _column(result: RetrievalResult, new: set[str], width: int) -> list[str]:
    lines = []
    for item in result.passages:
        title = item.passage.title or item.passage.id
        mark = "+" if title in new else " "
        nodes = ", ".join(n.node_id for n in item.linked_entities)
        lines.append(f"{mark}{item.rank}. {title}" + (f" [{nodes}]" if nodes else ""))
    return [line[:width] for line in lines]


def run_link_demo(
    settings: Settings,
    *,
    keep: Path | None = None,
    echo: Callable[[str], None] | None = print,
    top_k: int = 5,
) -> dict[str, Any]:
    say = echo or (lambda _line: None)
    temporary = None
    if keep is None:
        temporary = tempfile.TemporaryDirectory(prefix="hipporag-link-demo-")
        keep = Path(temporary.name)
    settings = settings.model_copy(
        update={
            "store": settings.store.model_copy(update={"path": keep, "backend": "embedded"}),
            "neo4j": settings.neo4j.model_copy(update={"namespace": "default"}),
            "llm": settings.llm.model_copy(update={"model": None}),  # recorded extraction, spaCy NER
            # what the walk itself reaches, with and without your graph: no passages filled from dense
            "retrieval": settings.retrieval.model_copy(update={"fill_from_dense": False}),
        }
    )
    try:
        with HippoRAG(settings) as memory:
            memory.index_openie(demo_file("openie_demo.json"))
            imported = memory.import_graph(demo_file("enterprise_graph.jsonl"))
            report = memory.link(LABEL, "name")
            plain = memory.retrieve(QUESTION, mode=MODE, top_k=top_k)
            joined = memory.retrieve(QUESTION, mode=MODE, top_k=top_k, via=VIA)
            seeded = memory.retrieve(seed_nodes=["acct-1001"], mode=MODE, top_k=3, via=VIA)
    finally:
        if temporary is not None:
            temporary.cleanup()
    new = [t for t in _titles(joined) if t not in _titles(plain)]
    say(
        f"Indexed the demo corpus; imported {imported['nodes']} {LABEL} nodes and "
        f"{imported['relationships_added']} relationships; linked {report.exact + report.embedding} "
        f"of them to phrases ({report.exact} by name, {report.embedding} by embedding)."
    )
    say("")
    say(f"Q: {QUESTION}   (the corpus never says who owns Kestrel Enzymes; your graph does)")
    width = 46
    say(f"   {'without your graph':<{width}}  {'joined, via ' + ', '.join(VIA):<{width}}")
    left, right = _column(plain, set(), width), _column(joined, set(new), width)
    for row in range(max(len(left), len(right))):
        a = left[row] if row < len(left) else ""
        b = right[row] if row < len(right) else ""
        say(f"   {a:<{width}}  {b:<{width}}")
    say("   (+ = brought in by your graph; [..] = your nodes linked to the passage)")
    say("")
    say("Seeded from your node acct-1001 (Lumora Biotics), no question: " + ", ".join(_titles(seeded)))
    return {
        "question": QUESTION,
        "via": VIA,
        "mode": MODE,
        "imported": imported,
        "link": report.model_dump(),
        "plain": _titles(plain),
        "joined": _titles(joined),
        "new_with_joined_graph": new,
        "linked_entities": {
            item.passage.title or item.passage.id: [n.node_id for n in item.linked_entities]
            for item in joined.passages
        },
        "seeded_from_acct_1001": _titles(seeded),
    }
