"""What the LLM loops around a retrieval mode (IRCoT, clues) share: the callable they wrap, and how they
hand back the first retrieval's result with their own passages, notes and timing."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hipporag_neo4j.models import RetrievalResult, RetrievalStrategy, RetrievedPassage

#: One retrieval with the wrapped mode: query text -> result.
RetrieveFn = Callable[[str], RetrievalResult]


def loop_result(
    first: RetrievalResult,
    strategy: RetrievalStrategy,
    passages: list[RetrievedPassage],
    started: float,
    note: str | None,
    **fields: Any,
) -> RetrievalResult:
    """``first`` (the question's own retrieval) with the loop's passages and fields, its note appended and
    the total time of the whole loop."""
    timings = dict(first.timings)
    timings["total"] = time.perf_counter() - started
    notes = [n for n in (first.note, note) if n]
    update = {
        "passages": passages,
        "strategy": strategy,
        "note": "; ".join(notes) or None,
        "timings": timings,
    }
    return first.model_copy(update={**update, **fields})
