"""What a real small model says, replayed: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, llama.cpp server) answering
the project's prompts about four demo passages, recorded by ``scripts/record_llm_replies.py`` into
``tests/data/llm/qwen_*.json`` -- once constrained by a JSON schema (``*_schema``), once free (``*_free``).

The assertions are about these recorded answers, mistakes included: the free OpenIE answer drops the
founder link as a two-item "triple", the schema keeps it (with an odd predicate); query NER takes
"Founder" for an entity; the reader writes a sentence without the ``Answer:`` line it was shown.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from hipporag_neo4j import HippoRAG, load_settings
from hipporag_neo4j.extraction.llm_extractor import LLMExtractor
from hipporag_neo4j.llm.client import LLMClient
from hipporag_neo4j.llm.jsonparse import parse_json_report
from hipporag_neo4j.models import Extraction, Passage, PassageInput, Triple
from tests.support.llm_replay import DATA_DIR, ReplayServer, llm_settings

pytestmark = pytest.mark.integration


NER = "extract named entities from the given paragraph"
OPENIE = "RDF (Resource Description Framework) graph"
QUERY_NER = "entity extraction system"
READER = "reading comprehension assistant"
QUESTION = "In which city was the founder of Lumora Biotics born?"
PASSAGES = {  # title -> slug of its recordings
    "Lumora Biotics": "lumora_biotics",
    "Tomasz Wierzbicki": "tomasz_wierzbicki",
    "Aldermoor Bell Tower": "aldermoor_bell_tower",
    "Kesswick": "kesswick",
}


def _demo_passages() -> list[PassageInput]:
    corpus = json.loads(resources.files("hipporag_neo4j.demo").joinpath("corpus.json").read_text("utf-8"))
    by_title = {p["title"]: p for p in corpus}
    return [PassageInput(id=t, title=t, text=by_title[t]["text"]) for t in PASSAGES]


def _script(server: ReplayServer, kind: str) -> None:
    """The recorded answers of one kind (``schema`` or ``free``), each matched to its own request."""
    for passage in _demo_passages():
        opening = passage.text[:40]
        slug = PASSAGES[passage.title or ""]
        server.script(f"qwen_ner_{slug}_{kind}", system=NER, match=opening)
        server.script(f"qwen_openie_{slug}_{kind}", system=OPENIE, match=opening)
    server.script(f"qwen_query_ner_lumora_founder_{kind}", system=QUERY_NER, match=QUESTION)
    server.script("qwen_qa_lumora_founder_free", system=READER, match=QUESTION)


def _recorded_usage(names: list[str]) -> tuple[int, int]:
    bodies = [json.loads((DATA_DIR / f"{n}.json").read_text(encoding="utf-8"))["body"] for n in names]
    prompt = sum(b["usage"]["prompt_tokens"] for b in bodies)
    return prompt, sum(b["usage"]["completion_tokens"] for b in bodies)


def _extract(server: ReplayServer, kind: str) -> dict[str, Extraction]:
    _script(server, kind)
    passages = [Passage(id=p.id or "", title=p.title, text=p.text) for p in _demo_passages()]
    results = LLMExtractor(LLMClient(llm_settings(server))).extract(passages)
    assert all(isinstance(r, Extraction) for r in results)
    return {r.passage_id: r for r in results if isinstance(r, Extraction)}


FOUNDER_LINK = Triple(
    subject="tomasz wierzbicki", predicate="founded Lumora Biotics with", object="lumora biotics"
)


def test_free_answer_loses_the_founder_link_as_a_two_item_triple(llm_server: ReplayServer) -> None:
    lumora = _extract(llm_server, "free")["Lumora Biotics"]
    assert lumora.dropped == ["not a 3-item list: ['Tomasz Wierzbicki', 'founded Lumora Biotics']"]
    assert not any(t.subject == "tomasz wierzbicki" for t in lumora.triples)
    assert len(lumora.triples) == 4


def test_schema_answer_keeps_the_founder_link(llm_server: ReplayServer) -> None:
    extracted = _extract(llm_server, "schema")
    lumora = extracted["Lumora Biotics"]
    assert lumora.dropped == [] and FOUNDER_LINK in lumora.triples
    # ... and its other mistake: the object repeated inside the predicate
    assert (
        Triple(
            subject="lumora biotics",
            predicate="makes enzymes for cold-water laundry detergents",
            object="cold water laundry detergents",
        )
        in lumora.triples
    )
    assert Triple(subject="tomasz wierzbicki", predicate="was born in", object="gdańsk") in (
        extracted["Tomasz Wierzbicki"].triples
    )
    # the entities the model names, dates and the title included
    assert extracted["Tomasz Wierzbicki"].entities[:5] == [
        "Tomasz Wierzbicki",
        "Polish",
        "chemist",
        "entrepreneur",
        "Gdańsk",
    ]


def test_every_recorded_json_answer_parses_without_repair() -> None:
    # With the paper's one-shot prompts this model wrote clean JSON every time, constrained or not
    # (the free OpenIE answers are pretty-printed over several lines).
    files = sorted(DATA_DIR.glob("qwen_*.json"))
    answers = [
        json.loads(f.read_text(encoding="utf-8"))["body"]["choices"][0]["message"]["content"]
        for f in files
        if "_qa_" not in f.name
    ]
    assert len(answers) == 18
    assert [parse_json_report(a).repairs for a in answers] == [()] * 18


def test_whole_path_replays_the_real_model(llm_server: ReplayServer, tmp_path: Path) -> None:
    _script(llm_server, "schema")
    settings = load_settings(
        {
            "store": {"path": str(tmp_path / "store")},
            "llm": {**llm_settings(llm_server).model_dump(), "cache_path": str(tmp_path / "cache.sqlite")},
        },
        env_file=None,
    )
    with HippoRAG(settings) as memory:
        report = memory.index(_demo_passages())
        assert sorted(report.indexed) == sorted(PASSAGES) and report.failed == []
        names = [f"qwen_{p}_{s}_schema" for s in PASSAGES.values() for p in ("ner", "openie")]
        assert (report.usage.prompt_tokens, report.usage.completion_tokens) == _recorded_usage(names)
        assert report.usage.requests == 8

        answer = memory.answer(QUESTION, mode="hipporag", top_k=2)
        # "Founder" is not a named entity, but it is what the model said
        assert answer.retrieval.query_entities == ["Lumora Biotics", "Founder"]
        assert answer.retrieval.passages[0].passage.id == "Lumora Biotics"
        # no "Answer:" line: the reader's answer is its whole sentence
        assert answer.answer == "The founder of Lumora Biotics, Tomasz Wierzbicki, was born in Gdańsk."
        assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (342, 21)
    assert llm_server.unmatched == []
