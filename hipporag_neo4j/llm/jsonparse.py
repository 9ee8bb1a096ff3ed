"""Lenient parsing of the JSON objects LLMs write: code fences, prose around them, several objects in a row,
trailing commas and, as a last resort, Python literals (single quotes)."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from hipporag_neo4j.errors import LLMOutputError

_FENCED = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_OPEN_FENCE = re.compile(r"^\s*```[ \t]*[A-Za-z0-9_-]*[ \t]*\r?\n?")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_DECODER = json.JSONDecoder()


def excerpt(text: str, limit: int = 80) -> str:
    """The start of ``text`` with whitespace collapsed, quoted, for error messages."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object(s) in ``text``, merged into one dict.

    Several objects (HippoRAG's OpenIE demonstration shows ``{"named_entities": ...}`` then
    ``{"triples": ...}``) are merged: the first value of a key wins, except that lists under the same key
    are concatenated. Raises :class:`LLMOutputError` ("malformed JSON: <excerpt>") when none is found.
    """
    if not text.strip():
        raise LLMOutputError("malformed JSON: empty output")
    sources = _FENCED.findall(text)
    if not sources:
        # No closed fence; an opening one alone is a truncated answer: parse what follows it.
        sources = [_OPEN_FENCE.sub("", text, count=1)]
    objects = [obj for source in sources for obj in _objects_in(source)]
    if not objects:
        raise LLMOutputError(f"malformed JSON: {excerpt(text)}")
    merged: dict[str, Any] = {}
    for obj in objects:
        for key, value in obj.items():
            if key not in merged:
                merged[key] = value
            elif isinstance(merged[key], list) and isinstance(value, list):
                merged[key] = merged[key] + value
    return merged


def _objects_in(source: str) -> list[dict[str, Any]]:
    """Every top-level ``{...}`` in ``source`` that parses (leniently) to a dict, left to right."""
    found: list[dict[str, Any]] = []
    position = 0
    while (start := source.find("{", position)) != -1:
        try:
            value, end = _DECODER.raw_decode(source, start)
        except json.JSONDecodeError:
            balanced_end = _balanced_end(source, start)
            if balanced_end is None:
                break  # unterminated object: whatever follows is inside it, not a new object
            end = balanced_end
            value = _lenient_load(source[start:end])
        if isinstance(value, dict):
            found.append(value)
        position = max(end, start + 1)
    return found


def _balanced_end(source: str, start: int) -> int | None:
    """Index just past the brace closing the one at ``start``, skipping quoted strings ('...' or "...").

    A closing bracket of the wrong kind ends the (broken) object there; None means it is never closed.
    """
    closers: list[str] = []
    quote: str | None = None
    escaped = False
    for index in range(start, len(source)):
        char = source[index]
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
        elif char in "}]" and (closers.pop() != char or not closers):
            return index + 1
    return None


def _lenient_load(chunk: str) -> Any:
    without_trailing_commas = _TRAILING_COMMA.sub(r"\1", chunk)
    try:
        return json.loads(without_trailing_commas)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(chunk)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
