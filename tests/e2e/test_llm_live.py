"""The whole LLM path against a real model: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) behind llama.cpp's
OpenAI-compatible server, on a few passages of the demo corpus.

Opt-in (``make test-llm-live``, or ``scripts/setup_local_llm.sh`` then ``pytest -m llm_live``): minutes on
two cores. It checks what must hold for any model, never exact texts: every passage is either indexed
with valid records or reported with a reason, a re-run resumes, a second index over the same LLM cache
sends no request, token counts are reported, and each LLM retrieval path (query NER, HippoRAG 2's
recognition filter, IRCoT, clues, the reader) returns a result or says why it fell back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j import HippoRAG, load_settings
from hipporag_neo4j.llm.local_server import LocalLLMServer
from hipporag_neo4j.models import IndexReport, PassageInput

pytestmark = [pytest.mark.llm_live, pytest.mark.timeout(3600)]

# Two bridge questions of the demo, each with its two gold passages.
TITLES = ("Lumora Biotics", "Tomasz Wierzbicki", "Aldermoor Bell Tower", "Kesswick")
QUESTION = "In which city was the founder of Lumora Biotics born?"


def _passages() -> list[PassageInput]:
    corpus = json.loads(resources.files("hipporag_neo4j.demo").joinpath("corpus.json").read_text("utf-8"))
    by_title = {p["title"]: p for p in corpus}
    return [PassageInput(id=t, title=t, text=by_title[t]["text"]) for t in TITLES]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalLLMServer]:
    # Fails (does not skip) when asked for but not set up: the message says to run the set-up script.
    log = tmp_path_factory.mktemp("llm_server") / "server.log"
    with LocalLLMServer(log_path=log) as running:
        yield running


def _memory(server: LocalLLMServer, folder: Path, cache: Path, **llm: Any) -> HippoRAG:
    settings = load_settings(
        {
            "store": {"path": str(folder / "store")},
            "retrieval": {"ircot_max_steps": 2, "max_clues": 2},
            "llm": {
                "base_url": server.base_url,
                "model": server.model_name,
                "structured_output": "json_object_schema",
                "max_tokens": 768,
                "concurrency": 1,  # the server answers one request at a time
                "timeout": 900.0,
                "max_retries": 0,
                "cache_path": str(cache),
                **llm,
            },
        },
        env_file=None,
    )
    return HippoRAG(settings)


def _accounted(report: IndexReport, ids: list[str]) -> None:
    """Every passage asked for is indexed, skipped or failed with a reason, exactly once."""
    failed = [f.passage_id for f in report.failed]
    assert sorted(report.indexed + report.skipped + failed) == sorted(ids)
    assert all(f.reason.strip() for f in report.failed)


def test_whole_llm_path(server: LocalLLMServer, tmp_path: Path) -> None:
    passages = _passages()
    ids = [p.id for p in passages if p.id]
    cache = tmp_path / "llm_cache.sqlite"

    # 1. Answers cut at 3 tokens hold no complete item: every passage fails, each with its reason, and
    #    nothing half-extracted reaches the store.
    with _memory(server, tmp_path, cache, max_tokens=3) as memory:
        report = memory.index(passages)
        _accounted(report, ids)
        assert report.indexed == [] and len(report.failed) == len(ids)
        assert all(f.reason.startswith(("ner: ", "openie: ")) for f in report.failed)
        assert report.usage.requests >= len(ids) and report.usage.completion_tokens > 0
        assert memory.stats().passages == 0

    # 2. With room to answer, two passages, then all four: the re-run resumes (the two are skipped and
    #    cost no request) and every passage ends indexed or reported.
    with _memory(server, tmp_path, cache) as memory:
        first = memory.index(passages[:2])
        _accounted(first, ids[:2])
        assert first.usage.prompt_tokens > 0 and first.usage.completion_tokens > 0
        assert first.usage.requests >= 2 and first.usage.cached == 0
        second = memory.index(passages)
        _accounted(second, ids)
        assert set(first.indexed) <= set(second.skipped)
        new = [p for p in ids if p not in first.indexed]
        assert second.usage.requests - first.usage.requests <= 2 * len(new)  # NER + OpenIE each, no more
        indexed = first.indexed + second.indexed
        assert len(indexed) >= 3, f"the model failed on most passages: {second.failed}"
        stats = memory.stats()
        assert stats.passages == len(indexed) and stats.phrases > 0 and stats.facts > 0

        # 3. Every LLM retrieval path: query NER (hipporag), the recognition filter (hipporag2), IRCoT and
        #    clues wrapping hipporag2, then the reader. A model's bad answer may only be reported in the
        #    result's note, never raise.
        before = memory.llm.usage
        result = memory.retrieve(QUESTION, mode="hipporag", top_k=2)
        assert result.query_entities, "LLM query NER found no entity"
        assert memory.llm.usage.requests == before.requests + 1
        assert len(result.passages) == 2

        filtered = memory.retrieve(QUESTION, mode="hipporag2", top_k=2)
        assert filtered.facts, "hipporag2 retrieved no fact"
        assert filtered.note is None or "recognition filter" in filtered.note or "dense" in filtered.note
        assert len([f for f in filtered.facts if f.kept]) <= 4  # HippoRAG 2's filter keeps 4 at most
        assert len(filtered.passages) == 2

        ircot = memory.retrieve(QUESTION, mode="hipporag2", top_k=2, strategy="ircot")
        assert ircot.strategy == "ircot" and ircot.passages
        assert ircot.thoughts or ircot.note, "IRCoT neither reasoned nor said why not"
        assert len(ircot.thoughts) <= 1  # ircot_max_steps=2: one LLM step after the first retrieval

        clues = memory.retrieve(QUESTION, mode="hipporag2", top_k=2, strategy="clues")
        assert clues.strategy == "clues" and clues.passages
        assert clues.clues or clues.note, "clue retrieval neither drafted clues nor said why not"
        assert len(clues.clues) <= 2 and QUESTION not in clues.clues

        answer = memory.answer(QUESTION, top_k=2)
        assert answer.answer.strip()
        assert answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0
        print(  # shown with pytest -s: what this model did
            f"\nindexed {sorted(indexed)}, failed {[(f.passage_id, f.reason) for f in second.failed]}"
            f"\nquery entities {result.query_entities}; kept facts "
            f"{[(f.subject, f.predicate, f.object) for f in filtered.facts if f.kept]}; note {filtered.note}"
            f"\nIRCoT thoughts {ircot.thoughts} (note {ircot.note}); clues {clues.clues} (note {clues.note})"
            f"\nanswer {answer.answer!r}; LLM usage {memory.llm.usage}"
        )

    # 4. Indexing the same passages into a fresh store over the same LLM cache sends no request at all.
    with _memory(server, tmp_path / "again", cache) as memory:
        again = memory.index(passages)
        assert again.usage.requests == 0
        assert again.usage.cached >= len(indexed) * 2
        assert sorted(again.indexed) == sorted(indexed)
        assert memory.answer(QUESTION, top_k=2).usage.cached == 1
