"""Pre-extracted OpenIE, imported instead of calling an LLM.

Two formats are read (see :func:`load_recorded_extraction`):

- HippoRAG's published OpenIE JSON: ``{"docs": [{"title", "text", "passage", "extracted_entities",
  "extracted_triples"}, ...], ...}``. Entities and triples may be Python-literal strings.
- JSONL, one record a line: ``{"passage_id": str, "triples": [[s, p, o], ...], "entities": [...],
  "text": str, "title": str}``; only ``triples`` and one of ``passage_id``/``text`` are required.

A record with text gives a :class:`~hipporag_neo4j.models.Passage` (id = its ``passage_id``, else
:func:`~hipporag_neo4j.common.text.make_passage_id` of title and text) and its extraction. A record without
text only carries the extraction of a passage indexed separately under that id. A record that cannot
be used becomes a :class:`~hipporag_neo4j.models.PassageFailure` naming file and line (or doc index).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from hipporag_neo4j.common.text import make_passage_id, passage_content
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.extraction.base import clean_entities, validate_triples
from hipporag_neo4j.models import Extraction, Passage, PassageFailure

RecordedFormat = Literal["hipporag", "jsonl", "json-list"]

_JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})


@dataclass(frozen=True)
class RecordedPassage:
    """One usable record: its passage (``None`` when the record has no text) and its extraction."""

    passage: Passage | None
    extraction: Extraction


def content_key(text: str, title: str | None = None) -> str:
    """Whitespace-insensitive key of a passage's content, to match passages whose id differs."""
    return " ".join(passage_content(text, title).split())


@dataclass
class RecordedExtraction:
    """Everything read from one recorded-extraction file."""

    source: Path
    format: RecordedFormat
    records: list[RecordedPassage] = field(default_factory=list)
    failures: list[PassageFailure] = field(default_factory=list)
    by_passage_id: dict[str, Extraction] = field(default_factory=dict)
    by_content: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def passages(self) -> list[Passage]:
        """The passages that came with their text, in file order."""
        return [r.passage for r in self.records if r.passage is not None]

    @property
    def triple_count(self) -> int:
        """Valid triples over all records."""
        return sum(len(r.extraction.triples) for r in self.records)

    def __len__(self) -> int:
        return len(self.records)

    def lookup(self, passage: Passage) -> Extraction | None:
        """The recorded extraction of ``passage``: by id, else by content (title + text, or text alone).

        A content match is returned under ``passage.id``.
        """
        found = self.by_passage_id.get(passage.id)
        if found is not None:
            return found
        for key in (content_key(passage.text, passage.title), content_key(passage.text)):
            recorded_id = self.by_content.get(key)
            if recorded_id is not None:
                return self.by_passage_id[recorded_id].model_copy(update={"passage_id": passage.id})
        return None

    def _add(self, record: RecordedPassage) -> None:
        self.records.append(record)
        self.by_passage_id[record.extraction.passage_id] = record.extraction
        if record.passage is not None:
            p = record.passage
            self.by_content.setdefault(content_key(p.text, p.title), p.id)


class RecordedExtractor:
    """:class:`~hipporag_neo4j.extraction.base.Extractor` that replays a :class:`RecordedExtraction`."""

    name = "recorded"

    def __init__(self, recorded: RecordedExtraction) -> None:
        self.recorded = recorded

    def extract(self, passages: Sequence[Passage]) -> list[Extraction | PassageFailure]:
        results: list[Extraction | PassageFailure] = []
        for passage in passages:
            found = self.recorded.lookup(passage)
            if found is None:
                results.append(
                    PassageFailure(
                        passage_id=passage.id,
                        source=passage.title,
                        reason=f"no recorded extraction for this passage in {self.recorded.source.name}",
                    )
                )
            else:
                results.append(found)
        return results


def load_recorded_extraction(path: str | Path) -> RecordedExtraction:
    """Read HippoRAG OpenIE JSON, a JSON list of records, or JSONL; the format is detected.

    ``.jsonl``/``.ndjson`` files are read line by line. Anything else is parsed as one JSON document
    (an object with ``docs`` -> HippoRAG format; a list -> one record per element), falling back to
    JSONL when it is not a single JSON document but its first line is a JSON object.

    Raises :class:`InputError` for an unreadable, non-UTF-8, empty or unrecognised file; bad records
    do not raise but land in ``failures``.
    """
    path = Path(path)
    try:
        if path.suffix.lower() in _JSONL_SUFFIXES:
            with path.open("rb") as stream:
                return _nonempty(_from_jsonl(_decoded_lines(stream, path), path))
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read recorded extraction {path}: {exc.strerror or exc}") from exc
    text = _decode(data, path)
    if not text.strip():
        raise InputError(f"recorded extraction {path} is empty")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        first_line = text.lstrip().split("\n", 1)[0]
        if _is_json_object(first_line):
            return _from_jsonl(_numbered_lines(text), path)
        raise InputError(
            f"{path} is neither JSON nor JSONL: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    if isinstance(document, dict) and isinstance(document.get("docs"), list):
        return _from_items(document["docs"], path, "hipporag", "docs[{}]")
    if isinstance(document, list):
        return _from_items(document, path, "json-list", "[{}]")
    if isinstance(document, dict):  # a one-line JSONL file with a .json name
        return _from_jsonl(_numbered_lines(text), path)
    raise InputError(
        f"{path}: expected HippoRAG OpenIE JSON (an object with a 'docs' list), a JSON list of records "
        f"or JSONL, got a JSON {type(document).__name__}"
    )


def _decode(data: bytes, path: Path, offset: int = 0) -> str:
    """``data`` (which starts at byte ``offset`` of ``path``) as text; InputError naming the bad byte."""
    try:
        return data.decode("utf-8-sig" if offset == 0 else "utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path} is not UTF-8: invalid byte 0x{data[exc.start]:02x} at byte offset {offset + exc.start}"
        ) from None


def _decoded_lines(stream: BinaryIO, path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines of a binary stream, decoded one at a time (a JSONL file is never held whole)."""
    offset = 0
    for lineno, raw in enumerate(stream, start=1):
        line = _decode(raw, path, offset)
        offset += len(raw)
        if line.strip():
            yield lineno, line


def _nonempty(recorded: RecordedExtraction) -> RecordedExtraction:
    if not recorded.records and not recorded.failures:
        raise InputError(f"recorded extraction {recorded.source} is empty")
    return recorded


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False


def _from_items(items: list[Any], path: Path, fmt: RecordedFormat, where: str) -> RecordedExtraction:
    recorded = RecordedExtraction(source=path, format=fmt)
    for i, item in enumerate(items):
        _add_record(recorded, item, f"{path.name} {where.format(i)}")
    return recorded


def _from_jsonl(lines: Iterable[tuple[int, str]], path: Path) -> RecordedExtraction:
    recorded = RecordedExtraction(source=path, format="jsonl")
    for lineno, line in lines:
        source = f"{path.name}:{lineno}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            reason = f"line {lineno}: malformed JSON: {exc.msg} at column {exc.colno}"
            recorded.failures.append(PassageFailure(passage_id=None, source=source, reason=reason))
            continue
        _add_record(recorded, item, source, prefix=f"line {lineno}: ")
    return recorded


def _numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield lineno, line


def _add_record(recorded: RecordedExtraction, item: Any, source: str, prefix: str = "") -> None:
    try:
        record = _parse_record(item)
    except _BadRecord as exc:
        failure = PassageFailure(passage_id=exc.passage_id, source=source, reason=prefix + str(exc))
        recorded.failures.append(failure)
        return
    passage_id = record.extraction.passage_id
    if passage_id in recorded.by_passage_id:
        reason = f"{prefix}duplicate passage id {passage_id}: the first record is kept"
        recorded.failures.append(PassageFailure(passage_id=passage_id, source=source, reason=reason))
        return
    recorded._add(record)


class _BadRecord(Exception):
    def __init__(self, reason: str, passage_id: str | None = None) -> None:
        super().__init__(reason)
        self.passage_id = passage_id


def _literal(value: Any, name: str, passage_id: str | None) -> Any:
    """``value``, or the list a string holds as JSON or a Python literal (HippoRAG stores some so)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        reason = f"{name} is a string that is not a JSON or Python literal: {value[:80]!r}"
        raise _BadRecord(reason, passage_id) from None


def _optional_str(item: dict[str, Any], key: str, passage_id: str | None) -> str | None:
    value = item.get(key)
    if value is None or isinstance(value, str):
        return value
    raise _BadRecord(f"{key} is not a string: {type(value).__name__}", passage_id)


def _parse_record(item: Any) -> RecordedPassage:
    if not isinstance(item, dict):
        raise _BadRecord(f"record is not a JSON object: {type(item).__name__}")
    given_id = _optional_str(item, "passage_id", None)
    if given_id is not None and not given_id.strip():
        given_id = None
    title = _optional_str(item, "title", given_id)
    text = _optional_str(item, "text", given_id)
    if text is None and "passage" in item:
        # records with only "passage" (HippoRAG 2): the indexed string, title included
        text, title = _optional_str(item, "passage", given_id), None
    if not text or not text.strip():
        text = None
    if text is None and given_id is None:
        raise _BadRecord("record has neither text nor passage_id")
    passage_id = given_id or make_passage_id(text or "", title)

    if "triples" in item:
        raw_triples = item["triples"]
        triples_key = "triples"
    elif "extracted_triples" in item:
        raw_triples = item["extracted_triples"]
        triples_key = "extracted_triples"
    else:
        raise _BadRecord("record has no triples (expected 'triples' or 'extracted_triples')", passage_id)
    raw_triples = _literal(raw_triples, triples_key, passage_id)
    if not isinstance(raw_triples, list | tuple):
        raise _BadRecord(f"{triples_key} is not a list: {type(raw_triples).__name__}", passage_id)
    triples, dropped = validate_triples(raw_triples)

    entities_key = "entities" if "entities" in item else "extracted_entities"
    raw_entities = _literal(item.get(entities_key, []), entities_key, passage_id)
    if raw_entities is None:
        raw_entities = []
    if not isinstance(raw_entities, list | tuple):
        dropped.append(f"{entities_key} ignored: not a list but {type(raw_entities).__name__}")
        raw_entities = []
    extraction = Extraction(
        passage_id=passage_id, entities=clean_entities(raw_entities), triples=triples, dropped=dropped
    )
    passage = Passage(id=passage_id, text=text, title=title) if text is not None else None
    return RecordedPassage(passage=passage, extraction=extraction)
