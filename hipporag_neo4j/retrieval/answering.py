"""QA reader: answer a question from retrieved passages with one LLM call."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hipporag_neo4j.extraction.prompts import qa_messages
from hipporag_neo4j.llm.client import LLMClient
from hipporag_neo4j.models import Passage, Usage

_ANSWER = re.compile(r"answer\s*:", re.IGNORECASE)


def parse_answer(text: str) -> str:
    """The short answer after the last ``Answer:``; the whole (stripped) text when the marker is missing."""
    markers = list(_ANSWER.finditer(text))
    if not markers:
        return text.strip()
    tail = text[markers[-1].end() :].strip()
    first_line = tail.splitlines()[0].strip() if tail else ""
    return first_line.strip("*").strip()


def answer_question(client: LLMClient, query: str, passages: Sequence[Passage]) -> tuple[str, Usage]:
    """The LLM's short answer to ``query`` given ``passages``, and the usage of this call only.

    Raises :class:`~hipporag_neo4j.errors.LLMError` when the call fails.
    """
    result = client.chat(qa_messages(query, passages))
    return parse_answer(result.text), result.usage
