"""Prompts of the retrieval-time LLM steps, as chat messages.

* Recognition memory (HippoRAG 2): keep the candidate facts that help answer the question, at most 4,
  as JSON ``{"fact": [[subject, predicate, object], ...]}``.
* IRCoT (HippoRAG paper §3, Table 3): one reasoning sentence per step, given the passages so far;
  ``So the answer is:`` ends the loop.
* Clues (MemoRAG, seed 003): short draft answers and surrogate queries that guide retrieval, as JSON
  ``{"clues": [...]}``, optionally with a compact summary of what the knowledge base holds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from hipporag_neo4j.extraction.prompts import Messages, format_passages
from hipporag_neo4j.models import Passage

# -- recognition memory ------------------------------------------------------------------------------------

FILTER_INSTRUCTION = """You filter candidate facts for a multi-hop question-answering system.
Given a question and candidate facts (subject, predicate, object), select the facts that help answer the \
question, possibly through several reasoning steps. Select at most 4 facts, copied exactly from the \
candidates; never write a new fact. Respond with JSON: {"fact": [["s", "p", "o"], ...]}, or \
{"fact": []} when no candidate is relevant."""

FILTER_DEMO_QUESTION = "When was the director of the film The Quiet Harbour born?"
FILTER_DEMO_CANDIDATES = [
    ["the quiet harbour", "directed by", "mara ellison"],
    ["mara ellison", "born on", "4 may 1931"],
    ["the loud harbour", "directed by", "tom reyes"],
    ["tom reyes", "born on", "2 june 1950"],
    ["the quiet harbour", "released in", "1962"],
]
FILTER_DEMO_KEPT = [
    ["the quiet harbour", "directed by", "mara ellison"],
    ["mara ellison", "born on", "4 may 1931"],
]


def _filter_input(question: str, candidates: Sequence[Sequence[str]]) -> str:
    facts = json.dumps({"fact": [list(c) for c in candidates]}, ensure_ascii=False)
    return f"Question: {question}\nCandidate facts: {facts}"


def filter_messages(question: str, candidates: Sequence[Sequence[str]]) -> Messages:
    return [
        {"role": "system", "content": FILTER_INSTRUCTION},
        {"role": "user", "content": _filter_input(FILTER_DEMO_QUESTION, FILTER_DEMO_CANDIDATES)},
        {"role": "assistant", "content": json.dumps({"fact": FILTER_DEMO_KEPT})},
        {"role": "user", "content": _filter_input(question, candidates)},
    ]


# -- IRCoT ----------------------------------------------------------------------------------------------

ANSWER_MARKER = "so the answer is:"

IRCOT_INSTRUCTION = """You answer multi-hop questions step by step from the given passages.
Write only the NEXT single sentence of reasoning: one new fact taken from the passages, or what is still \
missing. When you can answer, write a sentence that starts with "So the answer is:" and ends with the \
short answer."""

IRCOT_DEMO = """Wikipedia Title: Harbour Films
Harbour Films is a studio founded by Mara Ellison in 1958.

Wikipedia Title: Mara Ellison
Mara Ellison (born 4 May 1931) is a film director.

Question: When was the founder of Harbour Films born?
Thoughts so far: Harbour Films was founded by Mara Ellison.
Next sentence:"""

IRCOT_DEMO_ANSWER = "Mara Ellison was born on 4 May 1931. So the answer is: 4 May 1931."


def ircot_messages(question: str, passages: Sequence[Passage], thoughts: Sequence[str]) -> Messages:
    so_far = " ".join(thoughts) if thoughts else "(none yet)"
    user = f"{format_passages(passages)}\n\nQuestion: {question}\nThoughts so far: {so_far}\nNext sentence:"
    return [
        {"role": "system", "content": IRCOT_INSTRUCTION},
        {"role": "user", "content": IRCOT_DEMO},
        {"role": "assistant", "content": IRCOT_DEMO_ANSWER},
        {"role": "user", "content": user},
    ]


# -- clues -----------------------------------------------------------------------------------------------

CLUE_INSTRUCTION = """You help a retrieval system find the passages that answer a question.
Write up to {n} short clues: draft answers you expect (names, dates, places), the intermediate entities a \
multi-hop answer needs, or sub-questions that a single passage could answer. Each clue is a short phrase \
or sentence. Respond with JSON: {{"clues": ["...", "..."]}}."""

CLUE_DEMO_QUESTION = "Which river flows through the birthplace of the author of The Quiet Harbour?"
CLUE_DEMO = {
    "clues": [
        "author of The Quiet Harbour",
        "birthplace of the author of The Quiet Harbour",
        "river that flows through that town",
    ]
}


def clue_messages(question: str, max_clues: int, memory: str | None = None) -> Messages:
    user = f"Question: {question}"
    if memory:
        user = f"What the knowledge base holds (a summary):\n{memory}\n\n{user}"
    return [
        {"role": "system", "content": CLUE_INSTRUCTION.format(n=max_clues)},
        {"role": "user", "content": f"Question: {CLUE_DEMO_QUESTION}"},
        {"role": "assistant", "content": json.dumps(CLUE_DEMO)},
        {"role": "user", "content": user},
    ]
