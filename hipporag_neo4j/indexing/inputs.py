"""Reading passages from files: JSON, JSONL, .txt/.md, PDF, DOCX, HTML, and directories of them.

Every problem is reported with its file (and record) and the rest is read: a file that is binary, text in
no encoding, damaged or malformed, a record with a field of the wrong type, a path that does not exist.
An empty file (no bytes, or only white space) is not a problem: it has nothing to index and is listed as
such (``empty``), like a file of an unsupported type.
Text in another encoding than UTF-8 is decoded (:mod:`hipporag_neo4j.indexing.documents`) and the
encoding kept in the passage's metadata. Files of other types found in a directory are listed as
unsupported; hidden files and directories are left alone. Ids come from the source (see
:mod:`hipporag_neo4j.indexing.passage_ids`); a title only from the document itself (a ``.md`` heading, a
PDF's or DOCX's title, an HTML ``<title>``, a record's field), never from the file's name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hipporag_neo4j.errors import InputError
from hipporag_neo4j.indexing.documents import READERS, decode_text
from hipporag_neo4j.indexing.passage_ids import source_key
from hipporag_neo4j.models import PassageFailure, PassageInput

SUPPORTED = {".json", ".jsonl", ".txt", ".md", *READERS}
#: A Markdown file's first line as a level-1 heading (``# Title`` or ``# Title #``).
_MD_TITLE = re.compile(r"\A\s*#[ \t]+(?P<title>[^\n]*?)[ \t]*#*[ \t]*(?:\n|\Z)")


@dataclass
class ReadResult:
    passages: list[PassageInput] = field(default_factory=list)
    failures: list[PassageFailure] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    files: int = 0


def markdown_title(text: str) -> tuple[str | None, str]:
    """A Markdown text's title and body: a first line ``# Title`` becomes the title and leaves the body
    (so the heading is not read twice, as in "orbis shipyards orbis shipyards"); else ``(None, text)``."""
    match = _MD_TITLE.match(text)
    if match is None or not match["title"].strip():
        return None, text
    title, body = match["title"].strip(), text[match.end() :].strip()
    return title, body or title  # a file that is only a heading: the heading is its text too


def passage_from_record(item: Any, where: str = "record") -> PassageInput:
    """A passage from a string or a dict with ``text`` (or ``paragraph_text``) and optional ``id``
    (or ``passage_id``), ``title`` and ``metadata``; a field of the wrong type is an InputError naming it."""
    if isinstance(item, PassageInput):
        return item
    if isinstance(item, str):
        return PassageInput(text=item)
    if not isinstance(item, Mapping):
        raise InputError(f"{where}: expected a string or an object with 'text', got {type(item).__name__}")
    text = item.get("text", item.get("paragraph_text"))
    if not isinstance(text, str):
        what = "missing" if text is None else f"a {type(text).__name__}, not a string"
        raise InputError(f"{where}: 'text' is {what} (keys: {', '.join(sorted(map(str, item)))})")
    ident = item.get("id", item.get("passage_id"))
    if ident is not None and (isinstance(ident, bool) or not isinstance(ident, str | int)):
        raise InputError(f"{where}: 'id' must be a string or an integer, not {type(ident).__name__}")
    title = item.get("title")
    if title is not None and not isinstance(title, str):
        raise InputError(f"{where}: 'title' must be a string, not {type(title).__name__}")
    metadata = item.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InputError(f"{where}: 'metadata' must be an object, not {type(metadata).__name__}")
    return PassageInput(
        text=text,
        id=str(ident) if ident is not None and str(ident).strip() else None,
        title=title or None,
        metadata=dict(metadata or {}),
    )


def _records_from_json(value: Any, path: Path) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in ("passages", "docs", "corpus", "data"):
            if isinstance(value.get(key), list):
                return list(value[key])
        if "text" in value:
            return [value]
        if all(isinstance(v, str | list) for v in value.values()):  # {title: text or [sentences]}
            return [{"title": k, "text": v if isinstance(v, str) else "".join(v)} for k, v in value.items()]
    raise InputError(f"{path}: JSON must be a list of passages or an object with a 'passages' list")


def _add_record(item: Any, where: str, default_id: str, origin: dict[str, Any], result: ReadResult) -> None:
    try:
        passage = passage_from_record(item, where)
    except InputError as exc:
        reason = str(exc).removeprefix(f"{where}: ")
        result.failures.append(PassageFailure(passage_id=None, source=where, reason=reason))
        return
    metadata = {**origin, **passage.metadata}
    result.passages.append(
        passage.model_copy(update={"id": passage.id or default_id, "metadata": metadata, "source": where})
    )


def _origin(
    key: str, encoding: str | None, kind: str | None = None, notes: Sequence[str] = ()
) -> dict[str, Any]:
    """What a passage's metadata says of its file: the source, the format when it is not a text file
    read as such, the encoding when it is not UTF-8 (UTF-8 files keep the metadata they always had,
    so a store indexed before re-indexes nothing), and what reading changed (``notes``: NUL bytes
    dropped), when anything was."""
    origin: dict[str, Any] = {"source": key}
    if kind is not None:
        origin["format"] = kind
    if encoding is not None and (kind is not None or encoding != "utf-8"):
        origin["encoding"] = encoding
    if notes:
        origin["notes"] = list(notes)
    return origin


def _fail(result: ReadResult, path: Path, exc: Exception) -> None:
    reason = str(exc).removeprefix(f"{path}: ")
    result.failures.append(PassageFailure(passage_id=None, source=str(path), reason=reason))


def _too_big(path: Path, max_bytes: int | None) -> str | None:
    """Why ``path`` is refused for its size (None: it is not)."""
    if max_bytes is None:
        return None
    size = path.stat().st_size
    if size <= max_bytes:
        return None
    return (
        f"file of {size / 1e6:,.1f} MB ({size:,} bytes), larger than extraction.max_file_mb = "
        f"{max_bytes / 1e6:g} (HIPPORAG_EXTRACTION__MAX_FILE_MB): split it, or raise or unset the limit"
    )


def read_file(path: Path, result: ReadResult, max_bytes: int | None = None) -> None:
    """Read one file's passages into ``result``; a file over ``max_bytes`` is reported failed, unread."""
    result.files += 1
    key = source_key(path)
    suffix = path.suffix.lower()
    try:
        refused = _too_big(path, max_bytes)
    except OSError as exc:
        _fail(result, path, exc)
        return
    if refused is not None:
        result.failures.append(PassageFailure(passage_id=None, source=str(path), reason=refused))
        return
    if suffix in READERS:
        try:
            if path.stat().st_size == 0:
                result.empty.append(str(path))
                return
            document = READERS[suffix](path)
        except (InputError, OSError) as exc:
            _fail(result, path, exc)
            return
        kind = "html" if suffix == ".htm" else suffix.removeprefix(".")
        result.passages.append(
            PassageInput(
                id=key,
                text=document.text,
                title=document.title,
                metadata=_origin(key, document.encoding, kind, document.notes),
                source=str(path),
            )
        )
        return
    notes: list[str] = []
    try:
        text, encoding = decode_text(path.read_bytes(), path, notes=notes)
    except (InputError, OSError) as exc:
        _fail(result, path, exc)
        return
    if not text.strip():
        result.empty.append(str(path))
        return
    origin = _origin(key, encoding, notes=notes)
    if suffix in {".txt", ".md"}:
        # a title only where the text has one: a .md file's first heading; a file name is an id, not a title
        title, body = markdown_title(text) if suffix == ".md" else (None, text)
        result.passages.append(
            PassageInput(id=key, text=body, title=title, metadata=origin, source=str(path))
        )
        return
    if suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                reason = f"malformed JSON: {exc}"
                result.failures.append(PassageFailure(passage_id=None, source=where, reason=reason))
                continue
            _add_record(value, where, f"{key}:{number}", origin, result)
        return
    try:
        records = _records_from_json(json.loads(text), path)
    except json.JSONDecodeError as exc:
        result.failures.append(
            PassageFailure(passage_id=None, source=str(path), reason=f"malformed JSON: {exc}")
        )
        return
    except InputError as exc:
        result.failures.append(PassageFailure(passage_id=None, source=str(path), reason=str(exc)))
        return
    for number, item in enumerate(records):
        _add_record(item, f"{path}[{number}]", f"{key}[{number}]", origin, result)


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def iter_files(path: Path, result: ReadResult) -> Iterator[Path]:
    """The files to read under ``path``; other files go to ``result`` (unsupported, or failed)."""
    if path.is_dir():
        for child in sorted(path.rglob("*")):
            if not child.is_file() or _hidden(child, path):
                continue
            if child.suffix.lower() in SUPPORTED:
                yield child
            else:
                result.unsupported.append(str(child))
    elif path.is_file():
        if path.suffix.lower() in SUPPORTED:
            yield path
        else:
            reason = f"unsupported file type {path.suffix or '(none)'!r} (use {', '.join(sorted(SUPPORTED))})"
            result.failures.append(PassageFailure(passage_id=None, source=str(path), reason=reason))
    else:
        raise InputError(f"{path}: no such file or directory")


def read_passages(
    paths: list[Path],
    progress: Callable[[str, int, int], None] | None = None,
    max_bytes: int | None = None,
) -> ReadResult:
    """Passages of every file under ``paths``; a path that does not exist stops it before anything is
    read (a typo, not bad data); a file larger than ``max_bytes`` is reported failed and not read.
    ``progress("read", files read, files)`` after each file."""
    for path in paths:
        if not path.exists():
            raise InputError(f"{path}: no such file or directory")
    result = ReadResult()
    files = [file for path in paths for file in iter_files(path, result)]
    for number, file in enumerate(files, start=1):
        read_file(file, result, max_bytes)
        if progress is not None:
            progress("read", number, len(files))
    return result
