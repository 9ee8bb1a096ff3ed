"""The whole LLM path as a user runs it: HippoRAG configured with an OpenAI-compatible endpoint (a local
replay server), LLM extraction while indexing, LLM query NER, the reader's answer, resume after a failure,
and the response cache making a re-index free."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipporag_neo4j import HippoRAG, load_settings
from hipporag_neo4j.models import PassageInput
from tests.support import llm_replay
from tests.support.llm_replay import ReplayServer, Reply

pytestmark = pytest.mark.integration


NER = "extract named entities from the given paragraph"
OPENIE = "RDF (Resource Description Framework) graph"
QUERY_NER = "entity extraction system"

DANUBE = PassageInput(
    id="danube",
    title="Danube",
    text="The Danube is the second-longest river in Europe. It flows through Vienna, Budapest and Belgrade "
    "before reaching the Black Sea.",
)
VIENNA = PassageInput(id="vienna", title="Vienna", text="Vienna is the capital of Austria.")
DANUBE_OPENIE = (
    '{"triples": [["Danube", "is", "second-longest river in Europe"], ["Danube", "flows through", "Vienna"], '
    '["Danube", "flows through", "Budapest"], ["Danube", "flows through", "Belgrade"], '
    '["Danube", "reaches", "Black Sea"]]}'
)


def _memory(server: ReplayServer, tmp_path: Path, **llm: object) -> HippoRAG:
    settings = load_settings(
        {
            "store": {"path": str(tmp_path / "store")},
            "llm": {
                "base_url": server.base_url,
                "api_key": "sk-test-replay-0000",
                "model": llm_replay.MODEL,
                "max_retries": 2,
                "backoff_base": 0.001,
                "backoff_max": 0.01,
                "cache_path": str(tmp_path / "llm_cache.sqlite"),
                **llm,
            },
        },
        env_file=None,
    )
    return HippoRAG(settings)


def test_index_with_llm_resume_after_failure_and_answer(llm_server: ReplayServer, tmp_path: Path) -> None:
    llm_server.script("ner_danube", system=NER, match="The Danube")
    llm_server.script(
        Reply.completion(DANUBE_OPENIE, prompt_tokens=300, completion_tokens=60),
        system=OPENIE,
        match="The Danube",
    )
    # Vienna's NER fails for good on the first run (500 on every try)
    failing = llm_server.script("server_error_500", system=NER, match="Vienna is the capital", repeat=True)

    with _memory(llm_server, tmp_path) as memory:
        report = memory.index([DANUBE, VIENNA])
        assert report.indexed == ["danube"]
        assert [f.passage_id for f in report.failed] == ["vienna"]
        assert report.failed[0].reason.startswith("ner: LLM error 500 after 2 retries")
        assert report.usage.requests == 3 and report.usage.retries == 2
        assert report.usage.prompt_tokens >= 300
        assert memory.stats().passages == 1

    # The server recovers; a re-run extracts only what failed and never duplicates.
    failing.repeat = False
    llm_server.script(
        Reply.completion('{"named_entities": ["Vienna", "Austria"]}'), system=NER, match="Vienna is"
    )
    llm_server.script(
        Reply.completion('{"triples": [["Vienna", "is capital of", "Austria"]]}'),
        system=OPENIE,
        match="Vienna is",
    )
    before = len(llm_server.requests)
    with _memory(llm_server, tmp_path) as memory:
        report = memory.index([DANUBE, VIENNA])
        assert report.indexed == ["vienna"] and report.skipped == ["danube"]
        assert len(llm_server.requests) - before == 2  # NER + OpenIE for Vienna only
        assert memory.stats().passages == 2

        llm_server.script("query_ner_vienna_budapest", system=QUERY_NER)
        llm_server.script("qa_danube", match="Question:")
        answer = memory.answer(
            "Which river flows through both Vienna and Budapest?", mode="hipporag", top_k=2
        )
        assert answer.answer == "Danube"
        assert answer.retrieval.query_entities == ["Vienna", "Budapest"]
        assert answer.retrieval.passages[0].passage.id == "danube"
        assert {link.phrase for link in answer.retrieval.linked} >= {"vienna", "budapest"}
    assert llm_server.unmatched == []


def test_reindexing_a_corpus_into_a_new_store_is_served_by_the_cache(
    llm_server: ReplayServer, tmp_path: Path
) -> None:
    llm_server.script("ner_danube", system=NER, match="The Danube")
    llm_server.script(Reply.completion(DANUBE_OPENIE), system=OPENIE, match="The Danube")
    with _memory(llm_server, tmp_path) as memory:
        assert memory.index([DANUBE]).indexed == ["danube"]
    calls = len(llm_server.requests)
    (tmp_path / "store" / "graph.sqlite").unlink()  # a fresh store, same LLM cache
    with _memory(llm_server, tmp_path) as memory:
        report = memory.index([DANUBE])
    assert report.indexed == ["danube"]
    assert len(llm_server.requests) == calls  # no new request
    assert report.usage.cached == 2 and report.usage.requests == 0


def test_query_ner_falls_back_to_spacy_when_the_llm_fails(llm_server: ReplayServer, tmp_path: Path) -> None:
    llm_server.script("ner_danube", system=NER, match="The Danube")
    llm_server.script(Reply.completion(DANUBE_OPENIE), system=OPENIE, match="The Danube")
    llm_server.script("rate_limit_429", system=QUERY_NER, repeat=True)
    with _memory(llm_server, tmp_path) as memory:
        memory.index([DANUBE])
        result = memory.retrieve("Which river flows through Vienna?", mode="hipporag", top_k=1)
    assert result.passages[0].passage.id == "danube"
    assert result.passages[0].explanation.note is not None
    assert "query NER with llm failed" in result.passages[0].explanation.note
