"""LLM extraction end to end through the replay server, plus the JSON parser and the prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hipporag_neo4j.errors import LLMError, LLMOutputError
from hipporag_neo4j.extraction import prompts
from hipporag_neo4j.extraction.base import Extractor, QueryEntityExtractor
from hipporag_neo4j.extraction.llm_extractor import CUT_SHORT, LLMExtractor, LLMQueryNER
from hipporag_neo4j.llm.client import LLMClient
from hipporag_neo4j.llm.jsonparse import parse_json_object
from hipporag_neo4j.models import Extraction, Passage, PassageFailure, Triple
from tests.support.llm_replay import ReplayServer, Reply, llm_settings

pytestmark = pytest.mark.unit


NER = "extract named entities from the given paragraph"
OPENIE = "RDF (Resource Description Framework) graph"
QUERY_NER = "entity extraction system"

CURIE = Passage(
    id="p-curie",
    title="Marie Curie",
    text="Marie Curie was a Polish and naturalised-French physicist and chemist. "
    "She was born in Warsaw in 1867. "
    "In 1903 she shared the Nobel Prize in Physics with Pierre Curie and Henri Becquerel.",
)
DANUBE = Passage(
    id="p-danube",
    title="Danube",
    text="The Danube is the second-longest river in Europe. It flows through Vienna, Budapest and Belgrade "
    "before reaching the Black Sea.",
)
EIFFEL = Passage(
    id="p-eiffel",
    title="Eiffel Tower",
    text="The Eiffel Tower is a wrought-iron lattice tower in Paris. "
    "It was designed by the engineering company of Gustave Eiffel and completed in 1889.",
)
KILIMANJARO = Passage(id="p-kili", text="Mount Kilimanjaro is a dormant volcano in Tanzania.")


# -- JSON parsing ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"named_entities": ["A", "B"]}', {"named_entities": ["A", "B"]}),
        ('```json\n{"triples": [["a", "b", "c"]]}\n```', {"triples": [["a", "b", "c"]]}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('Sure! Here it is:\n{"a": [1, 2]}\nHope this helps.', {"a": [1, 2]}),
        (
            '{"named_entities": ["A"]}\n{"triples": [["A", "is", "B"]]}',
            {"named_entities": ["A"], "triples": [["A", "is", "B"]]},
        ),
        (
            '{"triples": [["a", "b", "c"]]} {"triples": [["d", "e", "f"]]}',
            {"triples": [["a", "b", "c"], ["d", "e", "f"]]},
        ),
        ('{"a": 1} {"a": 2}', {"a": 1}),
        ('{"triples": [["a", "b", "c"],],}', {"triples": [["a", "b", "c"]]}),
        (
            "{'named_entities': ['India\\'s FM', \"Radio City\"]}",
            {"named_entities": ["India's FM", "Radio City"]},
        ),
        ("{'ok': True, 'none': None}", {"ok": True, "none": None}),
        ('{"text": "braces } and { inside strings"}', {"text": "braces } and { inside strings"}),
        ('```json\n{"named_entities": ["A"]}', {"named_entities": ["A"]}),  # unclosed fence
        ('{"broken": [} then {"good": 1}', {"good": 1}),
        # cut short: the complete items before the cut
        (
            '{"triples": [["a", "b", "c"], ["d", "e", "f"], ["g", "h',
            {"triples": [["a", "b", "c"], ["d", "e", "f"]]},
        ),
        ('{"named_entities": ["A", "B", "C', {"named_entities": ["A", "B"]}),
    ],
)
def test_parse_json_object_accepts(text: str, expected: dict[str, object]) -> None:
    assert parse_json_object(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty output"),
        ("   \n ", "empty output"),
        ("I cannot help with that.", "malformed JSON: 'I cannot help with that.'"),
        ('{"triples": [["Danube", "flows thr', "malformed JSON: "),  # no complete item before the cut
        ('["just", "a", "list"]', "malformed JSON"),
    ],
)
def test_parse_json_object_rejects(text: str, message: str) -> None:
    with pytest.raises(LLMOutputError, match="malformed JSON") as raised:
        parse_json_object(text)
    assert message in str(raised.value)


def test_parse_error_excerpt_is_short() -> None:
    with pytest.raises(LLMOutputError) as raised:
        parse_json_object("no json here " * 100)
    assert len(str(raised.value)) < 120


# -- prompts -----------------------------------------------------------------------------------------------


def test_ner_prompt_is_instruction_one_shot_then_passage() -> None:
    messages = prompts.ner_messages("Danube\nThe Danube is a river.")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[0]["content"].startswith(
        "Your task is to extract named entities from the given paragraph."
    )
    assert json.loads(messages[2]["content"])["named_entities"][0] == "Radio City"
    assert messages[3]["content"] == "Paragraph:\n```\nDanube\nThe Danube is a river.\n```"


def test_openie_prompt_is_conditioned_on_the_entities() -> None:
    messages = prompts.openie_messages("Danube\nThe Danube is a river.", ["Danube", "Ünterwald"])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert "RDF (Resource Description Framework) graph" in messages[0]["content"]
    demo = json.loads(messages[2]["content"])
    assert ["Radio City", "forayed into", "New Media"] in demo["triples"]
    last = messages[3]["content"]
    assert last.startswith("Convert the paragraph into a JSON dict")
    assert last.endswith('{"named_entities": ["Danube", "Ünterwald"]}')
    assert "```\nDanube\nThe Danube is a river.\n```" in last


def test_prompts_have_normal_spacing() -> None:
    text = " ".join(
        m["content"]
        for m in prompts.ner_messages("x")
        + prompts.openie_messages("x", [])
        + prompts.query_ner_messages("x")
        + prompts.qa_messages("x", [])
    )
    for run_together in (
        "NewMedia",
        ".comthat",
        "2001.It",
        "thatoffers",
        "-PlanetRadiocity",
        '"Hindi","English"',
    ):
        assert run_together not in text
    assert "New Media in May 2008" in text
    assert "portal - PlanetRadiocity.com that offers" in text


def test_query_ner_prompt() -> None:
    messages = prompts.query_ner_messages("Who founded Radio City?")
    assert messages[0]["content"].startswith("You're a very effective entity extraction system.")
    assert json.loads(messages[2]["content"]) == {"named_entities": ["First for Women", "Arthur's Magazine"]}
    assert messages[3] == {"role": "user", "content": "Question: Who founded Radio City?"}


# -- extraction end to end ---------------------------------------------------------------------------------


def _script_corpus(server: ReplayServer) -> None:
    server.script("ner_marie_curie", system=NER, match="Marie Curie")
    server.script("openie_marie_curie_fenced", system=OPENIE, match="Marie Curie")
    server.script("ner_danube", system=NER, match="The Danube")
    server.script("openie_danube_truncated", system=OPENIE, match="The Danube")
    server.script("ner_eiffel_tower", system=NER, match="Eiffel Tower")
    server.script("openie_eiffel_tower_partial", system=OPENIE, match="Eiffel Tower")
    server.script("server_error_500", system=NER, match="Kilimanjaro", repeat=True)


def test_extraction_end_to_end(llm_server: ReplayServer) -> None:
    _script_corpus(llm_server)
    client = LLMClient(llm_settings(llm_server, max_retries=3))
    extractor = LLMExtractor(client)
    assert isinstance(extractor, Extractor) and extractor.name == "llm"

    curie, danube, eiffel, kili = extractor.extract([CURIE, DANUBE, EIFFEL, KILIMANJARO])

    assert isinstance(curie, Extraction)
    assert curie.passage_id == "p-curie"
    assert curie.entities[:4] == ["Marie Curie", "Polish", "French", "Warsaw"]
    assert len(curie.triples) == 7 and curie.dropped == []
    assert Triple(subject="marie curie", predicate="born in", object="warsaw") in curie.triples
    assert Triple(subject="marie curie", predicate="shared", object="nobel prize in physics") in curie.triples

    # cut at max_tokens: the complete triples before the cut are kept, and the cut is said
    assert isinstance(danube, Extraction) and danube.passage_id == "p-danube"
    assert [t.as_tuple() for t in danube.triples] == [
        ("danube", "is", "second longest river in europe"),
        ("danube", "flows through", "vienna"),
    ]
    assert danube.dropped == [f"openie: {CUT_SHORT}"]

    assert isinstance(eiffel, Extraction)
    assert eiffel.entities == ["Eiffel Tower", "Paris", "Gustave Eiffel", "1889"]
    assert [t.as_tuple() for t in eiffel.triples] == [
        ("eiffel tower", "located in", "paris"),
        ("gustave eiffel", "designed", "eiffel tower"),
    ]
    assert len(eiffel.dropped) == 3
    assert any("not a 3-item list" in d for d in eiffel.dropped)
    assert any("non-string" in d for d in eiffel.dropped)
    assert any("empty after normalisation" in d for d in eiffel.dropped)

    assert isinstance(kili, PassageFailure)
    assert kili.reason.startswith("ner: LLM error 500 after 3 retries")

    # 4 NER calls (+3 retries of the failing one); OpenIE only for the 3 passages whose NER worked.
    assert len(llm_server.requests_to(NER)) == 4 + 3
    openie_requests = llm_server.requests_to(OPENIE)
    assert len(openie_requests) == 3
    assert not any("Kilimanjaro" in r.last_user for r in openie_requests)
    assert llm_server.unmatched == []

    curie_openie = next(r for r in openie_requests if "Marie Curie" in r.last_user)
    assert "```\nMarie Curie\nMarie Curie was a Polish" in curie_openie.last_user  # title + "\n" + text
    assert '{"named_entities": ["Marie Curie", "Polish", "French", "Warsaw", "1867"' in curie_openie.last_user
    assert all(r.body.get("response_format") == {"type": "json_object"} for r in llm_server.requests)


def test_passage_without_title_is_sent_as_its_text(llm_server: ReplayServer) -> None:
    llm_server.script(Reply.completion('{"named_entities": []}'), system=NER)
    llm_server.script(Reply.completion('{"triples": []}'), system=OPENIE)
    (result,) = LLMExtractor(LLMClient(llm_settings(llm_server))).extract([KILIMANJARO])
    assert result == Extraction(passage_id="p-kili")
    assert llm_server.requests[0].last_user == f"Paragraph:\n```\n{KILIMANJARO.text}\n```"


@pytest.mark.parametrize(
    ("ner", "openie", "reason"),
    [
        ('{"entities": ["Tanzania"]}', None, "ner: no 'named_entities' key"),
        ("Mount Kilimanjaro, Tanzania", None, "ner: malformed JSON: 'Mount Kilimanjaro, Tanzania'"),
        ('{"named_entities": ["Tanzania"]}', '{"named_entities": ["Tanzania"]}', "openie: no 'triples' key"),
        ('{"named_entities": ["Tanzania"]}', '{"triples": "none"}', "openie: 'triples' is not a list"),
        (
            '{"named_entities": ["Tanzania"]}',
            '{"triples": [["x"], [1, 2, 3]]}',
            "openie: all 2 triples invalid",
        ),
    ],
)
def test_unusable_output_fails_the_passage(
    llm_server: ReplayServer, ner: str, openie: str | None, reason: str
) -> None:
    llm_server.script(Reply.completion(ner), system=NER)
    if openie is not None:
        llm_server.script(Reply.completion(openie), system=OPENIE)
    (result,) = LLMExtractor(LLMClient(llm_settings(llm_server))).extract([KILIMANJARO])
    assert isinstance(result, PassageFailure)
    assert result.reason.startswith(reason)
    assert len(llm_server.requests_to(OPENIE)) == (0 if openie is None else 1)


def test_reextracting_with_the_cache_makes_no_call(llm_server: ReplayServer, tmp_path: Path) -> None:
    _script_corpus(llm_server)
    settings = llm_settings(llm_server, cache_path=tmp_path / "llm.sqlite")
    first = LLMExtractor(LLMClient(settings)).extract([CURIE, EIFFEL])
    assert len(llm_server.requests) == 4

    client = LLMClient(settings)
    second = LLMExtractor(client).extract([CURIE, EIFFEL])
    assert second == first
    assert len(llm_server.requests) == 4
    assert client.usage.requests == 0 and client.usage.cached == 4


def test_progress_counts_every_call(llm_server: ReplayServer) -> None:
    _script_corpus(llm_server)
    done: list[int] = []
    LLMExtractor(LLMClient(llm_settings(llm_server)), progress=done.append).extract([CURIE, EIFFEL])
    assert sum(done) == 4


# -- query NER ---------------------------------------------------------------------------------------------


def test_query_ner(llm_server: ReplayServer) -> None:
    llm_server.script("query_ner_vienna_budapest", system=QUERY_NER, match="Vienna")
    ner = LLMQueryNER(LLMClient(llm_settings(llm_server)))
    assert isinstance(ner, QueryEntityExtractor) and ner.name == "llm"
    assert ner.query_entities("Which river flows through Vienna and Budapest?") == ["Vienna", "Budapest"]
    assert llm_server.requests[0].last_user == "Question: Which river flows through Vienna and Budapest?"


def test_query_ner_failures_raise(llm_server: ReplayServer) -> None:
    llm_server.script("bad_request_400", match="first")
    llm_server.script(Reply.completion('{"answer": "Danube"}'), match="second")
    ner = LLMQueryNER(LLMClient(llm_settings(llm_server)))
    with pytest.raises(LLMError, match="400"):
        ner.query_entities("first question")
    with pytest.raises(LLMOutputError, match="named_entities"):
        ner.query_entities("second question")
