"""The LLM steps of retrieval through the real `openai` client against the local replay server:
HippoRAG 2's recognition filter, IRCoT and clue-driven retrieval, each also with a failed or malformed
answer (reported in the result, retrieval falls back, nothing crashes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hipporag_neo4j import HippoRAG, load_settings
from hipporag_neo4j.models import PassageInput
from tests.support import llm_replay
from tests.support.llm_replay import ReplayServer, Reply

pytestmark = pytest.mark.integration


NER = "extract named entities from the given paragraph"
OPENIE = "RDF (Resource Description Framework) graph"
FILTER = "You filter candidate facts"
IRCOT = "You answer multi-hop questions step by step"
CLUES = "You help a retrieval system find the passages"
QUERY_NER = "entity extraction system"

PASSAGES = {
    "danube": (
        PassageInput(
            id="danube",
            title="Danube",
            text="The Danube flows through Vienna and Budapest before reaching the Black Sea.",
        ),
        '{"named_entities": ["Danube", "Vienna", "Budapest", "Black Sea"]}',
        '{"triples": [["Danube", "flows through", "Vienna"], ["Danube", "flows through", "Budapest"], '
        '["Danube", "reaches", "Black Sea"]]}',
    ),
    "vienna": (
        PassageInput(id="vienna", title="Vienna", text="Vienna is the capital of Austria."),
        '{"named_entities": ["Vienna", "Austria"]}',
        '{"triples": [["Vienna", "is capital of", "Austria"]]}',
    ),
    "austria": (
        PassageInput(id="austria", title="Austria", text="Austria joined the European Union in 1995."),
        '{"named_entities": ["Austria", "European Union", "1995"]}',
        '{"triples": [["Austria", "joined", "European Union"], ["Austria", "joined EU in", "1995"]]}',
    ),
}
QUESTION = "When did the country whose capital is on the Danube join the European Union?"


@pytest.fixture
def memory(llm_server: ReplayServer, tmp_path: Path) -> Iterator[HippoRAG]:
    for passage, ner, openie in PASSAGES.values():
        first_words = passage.text[:20]
        llm_server.script(Reply.completion(ner), system=NER, match=first_words)
        llm_server.script(Reply.completion(openie), system=OPENIE, match=first_words)
    # hipporag2 also seeds the query's own entities: the LLM's query NER names them
    llm_server.script(
        Reply.completion('{"named_entities": ["Danube", "European Union"]}'), system=QUERY_NER, repeat=True
    )
    settings = load_settings(
        {
            "store": {"path": str(tmp_path / "store")},
            "llm": {
                "base_url": llm_server.base_url,
                "api_key": "sk-test-replay-0000",
                "model": llm_replay.MODEL,
                "max_retries": 1,
                "backoff_base": 0.001,
                "backoff_max": 0.01,
                "cache_path": None,
            },
        },
        env_file=None,
    )
    with HippoRAG(settings) as memory:
        report = memory.index([p for p, _, _ in PASSAGES.values()])
        assert sorted(report.indexed) == sorted(PASSAGES)
        yield memory


def test_recognition_filter_keeps_the_facts_the_llm_chose(memory: HippoRAG, llm_server: ReplayServer) -> None:
    llm_server.script(
        Reply.completion(
            '{"fact": [["vienna", "is capital of", "austria"], ["austria", "joined", "european union"], '
            '["atlantis", "sank in", "the sea"]]}'  # the last one is not a candidate: dropped
        ),
        system=FILTER,
    )
    memory.settings.retrieval.fact_top_k = 6  # every fact is a candidate
    result = memory.retrieve(QUESTION, top_k=3)
    assert result.mode == "hipporag2"
    [request] = llm_server.requests_to(FILTER)
    assert "Candidate facts" in request.last_user and QUESTION in request.last_user
    kept = {(f.subject, f.predicate, f.object) for f in result.facts if f.kept}
    assert kept == {("vienna", "is capital of", "austria"), ("austria", "joined", "european union")}
    assert len(result.facts) == 6  # every candidate, kept or not
    assert {s.phrase for s in result.seeds} == {"vienna", "austria", "european union"}
    assert {link.phrase for link in result.linked} == {"danube", "european union"}  # the query's entities
    # the page the question names first (title seeds), then the passage the kept facts lead to
    assert [p.passage.id for p in result.passages[:2]] == ["danube", "austria"]
    assert result.passages[0].explanation.facts  # the kept facts travel with every passage
    assert not result.used_dense_fallback
    assert llm_server.unmatched == []


def test_query_phrase_seeds_skip_the_query_ner(memory: HippoRAG, llm_server: ReplayServer) -> None:
    llm_server.script(
        Reply.completion('{"fact": [["austria", "joined", "european union"]]}'), system=FILTER, repeat=True
    )
    memory.settings.retrieval.entity_seed_source = "query_phrases"
    result = memory.retrieve(QUESTION, top_k=3)
    assert llm_server.requests_to(QUERY_NER) == []  # no NER on the query path
    assert "query_ner" not in result.timings and "link" in result.timings
    assert {link.phrase for link in result.linked} == {"danube", "european union"}  # verbatim in the query
    assert all(link.similarity == 1.0 for link in result.linked)
    assert sorted(result.query_entities) == ["danube", "european union"]
    assert [p.passage.id for p in result.passages[:2]] == ["danube", "austria"]  # named page, then the fact's
    memory.settings.retrieval.entity_seed_source = "ner"
    again = memory.retrieve(QUESTION, top_k=3)
    assert len(llm_server.requests_to(QUERY_NER)) == 1 and "query_ner" in again.timings


@pytest.mark.parametrize(
    "reply",
    [
        Reply.completion("I think the facts about Austria matter."),
        Reply.error(500, "boom", error_type="server_error"),
    ],
    ids=["malformed", "server-error"],
)
def test_a_failed_filter_keeps_the_retrieved_facts(
    memory: HippoRAG, llm_server: ReplayServer, reply: Reply
) -> None:
    llm_server.script(reply, system=FILTER, repeat=True)
    result = memory.retrieve(QUESTION, top_k=3)
    assert result.note is not None and "recognition filter failed" in result.note
    assert all(f.kept for f in result.facts)
    assert result.seeds and not result.used_dense_fallback
    assert len(result.passages) == 3


def test_a_filter_that_keeps_nothing_falls_back_to_dense(memory: HippoRAG, llm_server: ReplayServer) -> None:
    llm_server.script(Reply.completion('{"fact": []}'), system=FILTER)
    memory.settings.retrieval.entity_seeds = False  # HippoRAG 2 as published: facts are the only seeds
    result = memory.retrieve(QUESTION, top_k=2)
    assert result.used_dense_fallback
    assert result.note is not None and "no fact kept" in result.note
    dense = memory.retrieve(QUESTION, mode="dense", top_k=2)
    assert [p.passage.id for p in result.passages] == [p.passage.id for p in dense.passages]


def test_ircot_interleaves_thoughts_and_retrieval(memory: HippoRAG, llm_server: ReplayServer) -> None:
    llm_server.script(
        Reply.completion("The Danube flows through Vienna, the capital of Austria. More text."),
        Reply.completion("Austria joined the European Union in 1995. So the answer is: 1995."),
        system=IRCOT,
    )
    result = memory.retrieve(QUESTION, mode="dense", top_k=2, strategy="ircot")
    assert result.strategy == "ircot"
    assert result.thoughts == [
        "The Danube flows through Vienna, the capital of Austria.",
        "Austria joined the European Union in 1995. So the answer is: 1995.",
    ]
    requests = llm_server.requests_to(IRCOT)
    assert len(requests) == 2
    assert "Thoughts so far: The Danube flows through Vienna" in requests[1].last_user
    assert [p.rank for p in result.passages] == [1, 2]
    steps = {p.passage.id: p.explanation.steps for p in result.passages}
    assert all(steps.values()) and any(1 in s for s in steps.values())  # step 1 retrieved with the thought


def test_ircot_stops_on_an_llm_failure_with_what_it_has(memory: HippoRAG, llm_server: ReplayServer) -> None:
    llm_server.script(Reply.error(500, "boom", error_type="server_error"), system=IRCOT, repeat=True)
    result = memory.retrieve(QUESTION, mode="dense", top_k=2, strategy="ircot")
    assert result.thoughts == []
    assert result.note is not None and "IRCoT step 1: the LLM call failed" in result.note
    dense = memory.retrieve(QUESTION, mode="dense", top_k=2)
    assert [p.passage.id for p in result.passages] == [p.passage.id for p in dense.passages]


def test_clues_find_passages_and_say_which(memory: HippoRAG, llm_server: ReplayServer) -> None:
    llm_server.script(
        Reply.completion('{"clues": ["capital of Austria", "Austria joined the European Union", ""]}'),
        system=CLUES,
    )
    result = memory.retrieve(QUESTION, mode="dense", top_k=3, strategy="clues")
    assert result.strategy == "clues"
    assert result.clues == ["capital of Austria", "Austria joined the European Union"]
    [request] = llm_server.requests_to(CLUES)
    assert "some of their facts" in request.last_user  # the knowledge-base memory is in the prompt
    by_id = {p.passage.id: p for p in result.passages}
    assert {c.clue for c in by_id["austria"].explanation.clues} >= {"Austria joined the European Union"}
    assert [p.score for p in result.passages] == sorted((p.score for p in result.passages), reverse=True)


def test_malformed_clues_fall_back_to_the_question(memory: HippoRAG, llm_server: ReplayServer) -> None:
    llm_server.script(Reply.completion('{"hints": "none"}'), system=CLUES)
    result = memory.retrieve(QUESTION, mode="dense", top_k=2, strategy="clues")
    assert result.clues == []
    assert result.note is not None and "clues: the LLM call failed" in result.note
    assert len(result.passages) == 2


def test_llm_loops_need_an_llm(tmp_path: Path) -> None:
    from hipporag_neo4j.errors import ConfigError

    settings = load_settings({"store": {"path": str(tmp_path / "store")}}, env_file=None)
    with HippoRAG(settings) as memory:
        memory.index(["The Danube flows through Vienna."])
        with pytest.raises(ConfigError, match="no LLM configured"):
            memory.retrieve("Which river?", strategy="ircot")


def test_the_evaluation_harness_runs_a_strategy(memory: HippoRAG, llm_server: ReplayServer) -> None:
    """`eval --strategy clues`: every mode of the harness goes through the LLM loop (replayed here)."""
    from hipporag_neo4j.evaluation.loaders import CorpusPassage, EvalQuestion
    from hipporag_neo4j.evaluation.runner import run_evaluation

    llm_server.script(
        Reply.completion('{"clues": ["Austria joined the European Union"]}'), system=CLUES, repeat=True
    )
    corpus = [CorpusPassage(id=pid, title=p.title, text=p.text) for pid, (p, _, _) in PASSAGES.items()]
    question = EvalQuestion(
        id="q1",
        question=QUESTION,
        answers=["1995"],
        gold_contents=[f"{PASSAGES['austria'][0].title}\n{PASSAGES['austria'][0].text}"],
        gold_titles=["Austria"],
    )
    memory.settings.retrieval.strategy = "clues"
    report = run_evaluation(memory, [question], corpus, ["dense"], top_k=2, n_resamples=100)
    assert report.questions[0].modes["dense"].gold_ranks == {"austria": 1}
    assert len(llm_server.requests_to(CLUES)) == 1
