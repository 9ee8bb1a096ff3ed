"""HippoRAG's LLM prompts as chat messages.

Passage NER, OpenIE and query NER follow the paper's appendix I (figures 7, 8 and 9): an instruction as the
system message, the one-shot demonstration as a user/assistant pair, then the input. The QA reader follows
HippoRAG's reading-comprehension prompt (one-shot, chain of thought, ``Answer: ...`` on the last line).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from hipporag_neo4j.models import Passage

Messages = list[dict[str, str]]

# -- passage NER (figure 7) ----------------------------------------------------------------------------------

NER_INSTRUCTION = """Your task is to extract named entities from the given paragraph.
Respond with a JSON list of entities."""

ONE_SHOT_PASSAGE = """Radio City
Radio City is India's first private FM radio station and was started on 3 July 2001. It plays Hindi, English \
and regional songs. Radio City recently forayed into New Media in May 2008 with the launch of a music \
portal - PlanetRadiocity.com that offers music related news, videos, songs, and other music-related \
features."""

ONE_SHOT_NER_OUTPUT = (
    '{"named_entities": ["Radio City", "India", "3 July 2001", "Hindi", "English", "May 2008", '
    '"PlanetRadiocity.com"]}'
)

# -- OpenIE conditioned on the NER list (figure 9) -------------------------------------------------------

OPENIE_INSTRUCTION = """Your task is to construct an RDF (Resource Description Framework) graph from the \
given passages and named entity lists.
Respond with a JSON list of triples, with each triple representing a relationship in the RDF graph.

Pay attention to the following requirements:
- Each triple should contain at least one, but preferably two, of the named entities in the list for each \
passage.
- Clearly resolve pronouns to their specific names to maintain clarity."""

ONE_SHOT_OPENIE_OUTPUT = """{"triples": [
    ["Radio City", "located in", "India"],
    ["Radio City", "is", "private FM radio station"],
    ["Radio City", "started on", "3 July 2001"],
    ["Radio City", "plays songs in", "Hindi"],
    ["Radio City", "plays songs in", "English"],
    ["Radio City", "forayed into", "New Media"],
    ["Radio City", "launched", "PlanetRadiocity.com"],
    ["PlanetRadiocity.com", "launched in", "May 2008"],
    ["PlanetRadiocity.com", "is", "music portal"],
    ["PlanetRadiocity.com", "offers", "news"],
    ["PlanetRadiocity.com", "offers", "videos"],
    ["PlanetRadiocity.com", "offers", "songs"]
]}"""

# -- query NER (figure 8) --------------------------------------------------------------------------------

QUERY_NER_INSTRUCTION = """You're a very effective entity extraction system. Please extract all named \
entities that are important for solving the questions below. Place the named entities in JSON format."""

ONE_SHOT_QUERY = "Which magazine was started first Arthur's Magazine or First for Women?"

ONE_SHOT_QUERY_NER_OUTPUT = '{"named_entities": ["First for Women", "Arthur\'s Magazine"]}'

# -- QA reader -------------------------------------------------------------------------------------------

QA_INSTRUCTION = """As an advanced reading comprehension assistant, your task is to analyze text passages \
and corresponding questions meticulously. Your response starts after "Thought: ", where you will \
methodically break down the reasoning process, illustrating how you arrive at conclusions. Conclude with \
"Answer: " to present a concise, definitive response, devoid of additional elaborations."""

ONE_SHOT_QA_PASSAGES = (
    Passage(
        id="one-shot-1",
        title="Arthur's Magazine",
        text="Arthur's Magazine (1844-1846) was an American literary periodical published in Philadelphia "
        "in the 19th century.",
    ),
    Passage(
        id="one-shot-2",
        title="First for Women",
        text="First for Women is a woman's magazine published by Bauer Media Group in the USA. "
        "The magazine was started in 1989.",
    ),
)

ONE_SHOT_QA_OUTPUT = (
    "Arthur's Magazine was started in 1844. First for Women was started in 1989. 1844 is earlier than 1989, "
    "so Arthur's Magazine was started first.\nAnswer: Arthur's Magazine"
)


def _paragraph(passage_text: str) -> str:
    return f"Paragraph:\n```\n{passage_text}\n```"


def _openie_input(passage_text: str, named_entity_json: str) -> str:
    return (
        "Convert the paragraph into a JSON dict, it has a named entity list and a triple list.\n"
        f"{_paragraph(passage_text)}\n\n{named_entity_json}"
    )


def ner_messages(passage_text: str) -> Messages:
    """Passage NER; the answer is ``{"named_entities": [...]}``. ``passage_text`` is title + "\\n" + text."""
    return [
        {"role": "system", "content": NER_INSTRUCTION},
        {"role": "user", "content": _paragraph(ONE_SHOT_PASSAGE)},
        {"role": "assistant", "content": ONE_SHOT_NER_OUTPUT},
        {"role": "user", "content": _paragraph(passage_text)},
    ]


def openie_messages(passage_text: str, entities: Sequence[str]) -> Messages:
    """OpenIE conditioned on the passage's named entities; the answer is ``{"triples": [[s, p, o], ...]}``."""
    named_entity_json = json.dumps({"named_entities": list(entities)}, ensure_ascii=False)
    return [
        {"role": "system", "content": OPENIE_INSTRUCTION},
        {"role": "user", "content": _openie_input(ONE_SHOT_PASSAGE, ONE_SHOT_NER_OUTPUT)},
        {"role": "assistant", "content": ONE_SHOT_OPENIE_OUTPUT},
        {"role": "user", "content": _openie_input(passage_text, named_entity_json)},
    ]


def query_ner_messages(query: str) -> Messages:
    """Query NER; the answer is ``{"named_entities": [...]}``."""
    return [
        {"role": "system", "content": QUERY_NER_INSTRUCTION},
        {"role": "user", "content": f"Question: {ONE_SHOT_QUERY}"},
        {"role": "assistant", "content": ONE_SHOT_QUERY_NER_OUTPUT},
        {"role": "user", "content": f"Question: {query}"},
    ]


def format_passages(passages: Sequence[Passage]) -> str:
    """Passages for the QA reader, blank-line separated, each under a ``Title: ...`` line when titled."""
    blocks = [f"Title: {p.title}\n{p.text}" if p.title else p.text for p in passages]
    return "\n\n".join(blocks)


def _qa_input(query: str, passages: Sequence[Passage]) -> str:
    return f"{format_passages(passages)}\n\nQuestion: {query}\nThought: "


def qa_messages(query: str, passages: Sequence[Passage]) -> Messages:
    """QA reader over the retrieved passages; the answer ends with a line ``Answer: <short answer>``."""
    return [
        {"role": "system", "content": QA_INSTRUCTION},
        {"role": "user", "content": _qa_input(ONE_SHOT_QUERY, ONE_SHOT_QA_PASSAGES)},
        {"role": "assistant", "content": ONE_SHOT_QA_OUTPUT},
        {"role": "user", "content": _qa_input(query, passages)},
    ]
