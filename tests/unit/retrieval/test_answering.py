"""QA reader: prompt, answer parsing, and one call through the replay server."""

from __future__ import annotations

import pytest

from hipporag_neo4j.errors import LLMError
from hipporag_neo4j.extraction.prompts import qa_messages
from hipporag_neo4j.llm.client import LLMClient
from hipporag_neo4j.models import Passage, Usage
from hipporag_neo4j.retrieval.answering import answer_question, parse_answer
from tests.support.llm_replay import ReplayServer, llm_settings

pytestmark = pytest.mark.unit


QA = "reading comprehension assistant"
PASSAGES = [
    Passage(
        id="p-danube",
        title="Danube",
        text="The Danube is the second-longest river in Europe. "
        "It flows through Vienna, Budapest and Belgrade before reaching the Black Sea.",
    ),
    Passage(id="p-untitled", text="Vienna is the capital of Austria."),
]
QUESTION = "Which river flows through Vienna and Budapest?"


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("Thought: it is the Danube.\nAnswer: Danube", "Danube"),
        ("Answer: Danube\n\nThe Danube flows through both cities.", "Danube"),
        ("Answer: no\nThinking again...\nAnswer: yes", "yes"),
        ("**Answer:** Arthur's Magazine", "Arthur's Magazine"),
        ("ANSWER:   1889  ", "1889"),
        ("Danube", "Danube"),
        ("  The Danube.  \n", "The Danube."),
        ("Answer:", ""),
    ],
)
def test_parse_answer(text: str, answer: str) -> None:
    assert parse_answer(text) == answer


def test_qa_prompt_is_one_shot_over_the_passages() -> None:
    messages = qa_messages(QUESTION, PASSAGES)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert 'Conclude with "Answer: "' in messages[0]["content"]
    assert messages[2]["content"].endswith("\nAnswer: Arthur's Magazine")
    assert messages[3]["content"] == (
        f"Title: Danube\n{PASSAGES[0].text}\n\n"
        f"Vienna is the capital of Austria.\n\nQuestion: {QUESTION}\nThought: "
    )


def test_answer_question_returns_the_answer_and_this_calls_usage(llm_server: ReplayServer) -> None:
    llm_server.script("ner_danube", match="warm-up")
    llm_server.script("qa_danube", system=QA, match=QUESTION)
    client = LLMClient(llm_settings(llm_server))
    client.chat([{"role": "user", "content": "warm-up"}])

    answer, usage = answer_question(client, QUESTION, PASSAGES)

    assert answer == "Danube"
    assert usage == Usage(requests=1, prompt_tokens=402, completion_tokens=38)
    assert client.usage.requests == 2
    assert "Title: Danube" in llm_server.requests[-1].last_user
    assert "response_format" not in llm_server.requests[-1].body


def test_answer_question_raises_llm_errors(llm_server: ReplayServer) -> None:
    llm_server.script("model_not_found_404")
    with pytest.raises(LLMError, match="404"):
        answer_question(LLMClient(llm_settings(llm_server)), QUESTION, PASSAGES)
