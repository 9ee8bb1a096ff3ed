"""Structured output: the JSON schemas of our prompts, and ``response_format`` as each server spells it.

Servers ask for constrained JSON in different ways (checked against their documentation):

* ``json_object`` -- ``{"type": "json_object"}``: OpenAI's JSON mode; also Ollama (``/v1``), vLLM and
  llama.cpp. Guarantees JSON, not its shape.
* ``json_object_schema`` -- ``{"type": "json_object", "schema": {...}}``: llama-cpp-python's server (its
  ``response_format`` accepts only ``text`` and ``json_object``, with an optional ``schema`` it compiles
  into a grammar) and llama.cpp's ``llama-server``.
* ``json_schema`` -- ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``: OpenAI's
  Structured Outputs, vLLM's OpenAI-compatible server, Ollama >= 0.5 (``/v1``) and ``llama-server``.
* ``none`` -- no ``response_format``: for servers that reject it; the lenient parser
  (:mod:`hipporag_neo4j.llm.jsonparse`) then reads JSON out of prose and code fences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hipporag_neo4j.settings import StructuredOutput

__all__ = ["JsonSchema", "StructuredOutput", "response_format"]


@dataclass(frozen=True)
class JsonSchema:
    """A named JSON schema for one prompt's answer (the name is what OpenAI's ``json_schema`` asks for)."""

    name: str
    schema: dict[str, Any]


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    # OpenAI's strict mode wants every property required and no others allowed.
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}

NAMED_ENTITIES = JsonSchema("named_entities", _object({"named_entities": _STRINGS}))
"""``{"named_entities": [str, ...]}``: passage NER and query NER."""

_TRIPLE: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3}

TRIPLES = JsonSchema("triples", _object({"triples": {"type": "array", "items": _TRIPLE}}))
"""``{"triples": [[subject, predicate, object], ...]}``: OpenIE."""

FACTS = JsonSchema("fact", _object({"fact": {"type": "array", "items": _TRIPLE}}))
"""``{"fact": [[subject, predicate, object], ...]}``: HippoRAG 2's recognition filter."""

CLUES = JsonSchema("clues", _object({"clues": _STRINGS}))
"""``{"clues": [str, ...]}``: clue-driven retrieval."""


def response_format(kind: StructuredOutput, schema: JsonSchema | None) -> dict[str, Any] | None:
    """The ``response_format`` request field asking for JSON the ``kind`` way; None means send none.

    Without a schema, the schema-carrying kinds fall back to plain ``json_object``.
    """
    if kind == "none":
        return None
    if kind == "json_object" or schema is None:
        return {"type": "json_object"}
    if kind == "json_object_schema":
        return {"type": "json_object", "schema": schema.schema}
    spec = {"name": schema.name, "schema": schema.schema, "strict": True}
    return {"type": "json_schema", "json_schema": spec}
