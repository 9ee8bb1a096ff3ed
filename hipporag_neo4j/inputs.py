"""Reading passages from files: JSON, JSONL, .txt/.md, and directories of them.

A file that cannot be read (not UTF-8, malformed) is reported with the reason and the others are read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hipporag_neo4j.errors import InputError
from hipporag_neo4j.models import PassageFailure, PassageInput

SUPPORTED = {".json", ".jsonl", ".txt", ".md"}


@dataclass
class ReadResult:
    passages: list[PassageInput] = field(default_factory=list)
    failures: list[PassageFailure] = field(default_factory=list)
    files: int = 0


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 (invalid byte at offset {exc.start})") from None


def _record(item: Any, where: str) -> PassageInput:
    from hipporag_neo4j.api import to_passage_input

    if isinstance(item, str | dict):
        return to_passage_input(item)
    raise InputError(f"{where}: expected a string or an object with 'text', got {type(item).__name__}")


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


def read_file(path: Path, result: ReadResult) -> None:
    result.files += 1
    try:
        text = _read_text(path)
    except (InputError, OSError) as exc:
        result.failures.append(PassageFailure(passage_id=None, source=str(path), reason=str(exc)))
        return
    suffix = path.suffix.lower()
    if suffix in {".txt", ".md"}:
        result.passages.append(PassageInput(text=text, title=path.stem, metadata={"source": str(path)}))
        return
    if suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                result.passages.append(_record(json.loads(line), where))
            except (json.JSONDecodeError, InputError) as exc:
                result.failures.append(PassageFailure(passage_id=None, source=where, reason=str(exc)))
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
        where = f"{path}[{number}]"
        try:
            result.passages.append(_record(item, where))
        except InputError as exc:
            result.failures.append(PassageFailure(passage_id=None, source=where, reason=str(exc)))


def iter_files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        for child in sorted(path.rglob("*")):
            if child.is_file() and child.suffix.lower() in SUPPORTED and not child.name.startswith("."):
                yield child
    elif path.exists():
        yield path
    else:
        raise InputError(f"{path}: no such file or directory")


def read_passages(paths: list[Path]) -> ReadResult:
    result = ReadResult()
    for path in paths:
        for file in iter_files(path):
            if file.suffix.lower() not in SUPPORTED:
                raise InputError(f"{file}: unsupported file type (use {', '.join(sorted(SUPPORTED))})")
            read_file(file, result)
    return result
