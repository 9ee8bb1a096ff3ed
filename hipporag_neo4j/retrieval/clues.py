"""Clue-driven retrieval (MemoRAG, seed 003): the LLM drafts clues for the question (draft answers,
intermediate entities, sub-questions), optionally from a compact memory of the knowledge base; the question
and every clue are retrieved with any mode and fused by reciprocal rank. The explanation shows which clue
found which passage."""

from __future__ import annotations

import logging
import time

from hipporag_neo4j.errors import HippoRAGError, LLMOutputError
from hipporag_neo4j.llm.client import LLMClient
from hipporag_neo4j.llm.jsonparse import parse_json_object
from hipporag_neo4j.llm.structured import CLUES
from hipporag_neo4j.models import ClueHit, RetrievalResult, RetrievedPassage
from hipporag_neo4j.retrieval.fusion import RRF_K
from hipporag_neo4j.retrieval.loops import RetrieveFn, loop_result
from hipporag_neo4j.retrieval.prompts import clue_messages
from hipporag_neo4j.stores.base import GraphStore

log = logging.getLogger(__name__)


def draft_clues(
    client: LLMClient, query: str, max_clues: int, memory: str | None, json_mode: bool
) -> list[str]:
    """Up to ``max_clues`` distinct, non-empty clues other than the question itself."""
    result = client.chat(clue_messages(query, max_clues, memory), json_mode=json_mode, schema=CLUES)
    parsed = parse_json_object(result.text)
    raw = parsed.get("clues")
    if not isinstance(raw, list):
        raise LLMOutputError(f"no 'clues' list in the answer (keys: {sorted(parsed)[:5]})")
    clues = [c.strip() for c in raw if isinstance(c, str) and c.strip() and c.strip() != query]
    return list(dict.fromkeys(clues))[:max_clues]


class KnowledgeMemory:
    """A compact view of the knowledge base for the clue prompt: a sample of its facts (ids are hashes, so
    the first ones by id are a spread-out sample). Rebuilt when the number of passages changes."""

    def __init__(self, store: GraphStore, max_facts: int = 40) -> None:
        self.store = store
        self.max_facts = max_facts
        self._cached: tuple[int, str] | None = None

    def summary(self) -> str:
        n_passages = self.store.passage_count()
        if self._cached is None or self._cached[0] != n_passages:
            facts = next(iter(self.store.iter_texts("fact", self.max_facts)), [])
            text = "\n".join(f"- {t}" for _, t in facts)
            self._cached = (n_passages, f"{n_passages} passages; some of their facts:\n{text}")
        return self._cached[1]


def retrieve_with_clues(
    retrieve: RetrieveFn,
    client: LLMClient,
    query: str,
    top_k: int,
    max_clues: int,
    memory: KnowledgeMemory | None,
    json_mode: bool = True,
) -> RetrievalResult:
    started = time.perf_counter()
    first = retrieve(query)
    note: str | None = None
    try:
        clues = draft_clues(client, query, max_clues, memory.summary() if memory else None, json_mode)
    except HippoRAGError as exc:
        note = f"clues: the LLM call failed ({exc}); retrieved with the question alone"
        log.warning(note)
        clues = []
    runs = [(None, first)] + [(clue, retrieve(clue)) for clue in clues]
    fused: dict[str, float] = {}
    items: dict[str, RetrievedPassage] = {}
    found_by: dict[str, list[ClueHit]] = {}
    for clue, result in runs:
        for item in result.passages:
            pid = item.passage.id
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (RRF_K + item.rank)
            items.setdefault(pid, item)  # the question's own explanation first, else the first clue's
            if clue is not None:
                found_by.setdefault(pid, []).append(ClueHit(clue=clue, rank=item.rank))
    ranked = sorted(fused, key=lambda pid: (-fused[pid], pid))[:top_k]
    passages = [
        items[pid].model_copy(
            update={
                "rank": rank,
                "score": fused[pid],
                "explanation": items[pid].explanation.model_copy(update={"clues": found_by.get(pid, [])}),
            }
        )
        for rank, pid in enumerate(ranked, start=1)
    ]
    return loop_result(first, "clues", passages, started, note, clues=clues)
