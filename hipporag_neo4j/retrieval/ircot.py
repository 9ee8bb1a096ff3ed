"""IRCoT + retrieval (HippoRAG paper §3, Table 3): interleave one chain-of-thought sentence with one
retrieval step, up to ``max_steps`` retrievals, over any retrieval mode. A passage keeps its best score
over the steps; the explanation lists the steps that found it."""

from __future__ import annotations

import logging
import re
import time

from hipporag_neo4j.errors import HippoRAGError
from hipporag_neo4j.llm.client import LLMClient
from hipporag_neo4j.models import RetrievalResult, RetrievedPassage
from hipporag_neo4j.retrieval.loops import RetrieveFn, loop_result
from hipporag_neo4j.retrieval.prompts import ANSWER_MARKER, ircot_messages

log = logging.getLogger(__name__)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def first_sentence(text: str) -> str:
    """The first sentence of the model's answer, or the whole first line when it holds the answer marker
    (a model that answers at once often writes "X. So the answer is: Y." on one line)."""
    line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")
    if ANSWER_MARKER in line.lower():
        return line
    parts = _SENTENCE_END.split(line, maxsplit=1)
    return parts[0].strip() if parts else ""


def retrieve_ircot(
    retrieve: RetrieveFn, client: LLMClient, query: str, top_k: int, max_steps: int
) -> RetrievalResult:
    """Retrieve for ``query``, then per step ask for the next thought and retrieve with it as the query,
    until the model answers, a thought repeats, or ``max_steps`` retrievals ran. An LLM failure ends the
    loop with what was retrieved so far (noted in the result)."""
    started = time.perf_counter()
    first = retrieve(query)
    best: dict[str, RetrievedPassage] = {}
    steps: dict[str, list[int]] = {}

    def merge(result: RetrievalResult, step: int) -> None:
        for item in result.passages:
            pid = item.passage.id
            steps.setdefault(pid, []).append(step)
            if pid not in best or item.score > best[pid].score:
                best[pid] = item

    def ranked() -> list[RetrievedPassage]:
        return sorted(best.values(), key=lambda p: (-p.score, p.passage.id))[:top_k]

    merge(first, 0)
    thoughts: list[str] = []
    note: str | None = None
    for step in range(1, max_steps):
        try:
            answer = client.chat(ircot_messages(query, [p.passage for p in ranked()], thoughts))
        except HippoRAGError as exc:
            note = f"IRCoT step {step}: the LLM call failed ({exc}); kept the passages of {step} steps"
            log.warning(note)
            break
        thought = first_sentence(answer.text)
        if not thought:
            note = f"IRCoT step {step}: the LLM gave no reasoning sentence; stopped"
            break
        if thought in thoughts:
            note = f"IRCoT step {step}: the thought repeated; stopped"
            break
        thoughts.append(thought)
        if ANSWER_MARKER in thought.lower():
            break
        merge(retrieve(thought), step)

    passages = [
        item.model_copy(
            update={
                "rank": rank,
                "explanation": item.explanation.model_copy(update={"steps": steps[item.passage.id]}),
            }
        )
        for rank, item in enumerate(ranked(), start=1)
    ]
    return loop_result(first, "ircot", passages, started, note, thoughts=thoughts)
