"""Lenient parsing of the JSON objects LLMs write: code fences, prose around them, several objects in a row,
trailing commas, Python literals (single quotes) and, for an answer cut short (``max_tokens``, often a model
repeating itself), the complete items before the cut -- as HippoRAG 2 does for OpenIE answers.

:func:`parse_json_report` also says which of these repairs an answer needed, so that how often a model
needs them can be measured (``benchmarks/bench_local_llm.py``).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from hipporag_neo4j.errors import LLMOutputError

_FENCED = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_OPEN_FENCE = re.compile(r"^\s*```[ \t]*[A-Za-z0-9_-]*[ \t]*\r?\n?")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_DECODER = json.JSONDecoder()

# Names of the repairs :func:`parse_json_report` reports.
FENCE = "code fence"
UNCLOSED_FENCE = "unclosed code fence"
SURROUNDING_TEXT = "text around the JSON"
MERGED = "several objects merged"
TRAILING_COMMAS = "trailing commas"
PYTHON_LITERAL = "Python literal"
SKIPPED_BROKEN = "broken object skipped"
TRUNCATED = "cut-off answer closed"
_CUT_DEPTH = 2  # brackets open at a cut: the top-level object and one list (or object) in it


@dataclass(frozen=True)
class ParsedJSON:
    """The merged object and the repairs it needed (empty: the answer was one clean JSON object)."""

    value: dict[str, Any]
    repairs: tuple[str, ...]


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
    return parse_json_report(text).value


def parse_json_report(text: str) -> ParsedJSON:
    """:func:`parse_json_object`'s result with the repairs that were needed to get it."""
    if not text.strip():
        raise LLMOutputError("malformed JSON: empty output")
    repairs: list[str] = []
    sources = _FENCED.findall(text)
    if sources:
        repairs.append(FENCE)
        if _FENCED.sub("", text).strip():
            repairs.append(SURROUNDING_TEXT)
    else:
        # No closed fence; an opening one alone is a truncated answer: parse what follows it.
        unfenced = _OPEN_FENCE.sub("", text, count=1)
        if unfenced != text:
            repairs.append(UNCLOSED_FENCE)
        sources = [unfenced]
    objects: list[dict[str, Any]] = []
    for source in sources:
        found, outside = _objects_in(source, repairs)
        objects.extend(found)
        if outside.strip() and SURROUNDING_TEXT not in repairs:
            repairs.append(SURROUNDING_TEXT)
    if not objects:
        raise LLMOutputError(f"malformed JSON: {excerpt(text)}")
    if len(objects) > 1:
        repairs.append(MERGED)
    return ParsedJSON(_merge(objects), tuple(dict.fromkeys(repairs)))


def _merge(objects: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for obj in objects:
        for key, value in obj.items():
            if key not in merged:
                merged[key] = value
            elif isinstance(merged[key], list) and isinstance(value, list):
                merged[key] = merged[key] + value
    return merged


def _objects_in(source: str, repairs: list[str]) -> tuple[list[dict[str, Any]], str]:
    """Every top-level ``{...}`` in ``source`` that parses (leniently) to a dict, left to right, and the
    text outside them. Repairs used are appended to ``repairs``."""
    found: list[dict[str, Any]] = []
    outside: list[str] = []
    position = 0
    while (start := source.find("{", position)) != -1:
        try:
            value, end = _DECODER.raw_decode(source, start)
        except json.JSONDecodeError:
            balanced_end = _balanced_end(source, start)
            if balanced_end is None:
                # Unterminated (cut short): whatever follows is inside it, not a new object.
                outside.append(source[position:start])
                closed = _close_truncated(source[start:])
                if closed is not None:
                    found.append(closed)
                    repairs.append(TRUNCATED)
                return found, "".join(outside)
            end = balanced_end
            value = _lenient_load(source[start:end], repairs)
        outside.append(source[position:start])
        if isinstance(value, dict):
            found.append(value)
        else:
            repairs.append(SKIPPED_BROKEN)
        position = max(end, start + 1)
    outside.append(source[position:])
    return found, "".join(outside)


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


def _close_truncated(chunk: str) -> dict[str, Any] | None:
    """The object an answer cut short was writing, up to its last complete item, or None.

    Tries the cut just after the last closed ``]``/``}``, then just before the last comma, closing every
    bracket still open at that point. A cut is taken only between the items of a list (or the fields of
    an object) directly under the top-level object, so no half-written item is kept.
    """
    closers: list[str] = []
    in_string = escaped = False
    after_bracket: tuple[int, list[str]] | None = None
    before_comma: tuple[int, list[str]] | None = None
    for index, char in enumerate(chunk):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
        elif char in "}]":
            if not closers or closers.pop() != char:
                return None
            if len(closers) <= _CUT_DEPTH:
                after_bracket = (index + 1, list(closers))
        elif char == "," and len(closers) <= _CUT_DEPTH:
            before_comma = (index, list(closers))
    for cut in (after_bracket, before_comma):
        if cut is None or not cut[1]:
            continue
        end, still_open = cut
        try:
            value = json.loads(chunk[:end] + "".join(reversed(still_open)))
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _lenient_load(chunk: str, repairs: list[str]) -> Any:
    without_trailing_commas = _TRAILING_COMMA.sub(r"\1", chunk)
    try:
        value = json.loads(without_trailing_commas)
    except json.JSONDecodeError:
        pass
    else:
        repairs.append(TRAILING_COMMAS)
        return value
    try:
        value = ast.literal_eval(chunk)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    repairs.append(PYTHON_LITERAL)
    return value
