"""Benchmark corpora and questions in HippoRAG's data formats, and gold-passage matching.

Corpus files (:func:`load_corpus`):

* a JSON list of ``{"title", "text"}`` records (MuSiQue / 2Wiki / HippoRAG 2 style; ``title`` and ``id``
  optional);
* a JSON object ``{title: [sentences]}`` (HippoRAG 1 HotpotQA corpus, sentences joined with ``""``) or
  ``{title: text}``;
* JSONL, one ``{"title", "text"}`` or ``{"id", "text"}`` record a line.

Question files (:func:`load_questions`), a JSON list or JSONL; each record's format is detected from its keys:

* MuSiQue: ``"paragraphs": [{"title", "paragraph_text" | "text", "is_supporting"}]``;
* HippoRAG 2 NQ-like: ``"contexts": [{"title", "text", "is_supporting"}]``;
* HotpotQA / 2WikiMultiHopQA: ``"context": [[title, [sentences]]]`` and ``"supporting_facts": [[title, i]]``;
* plain: ``{"question", "answer", "answer_aliases", "gold_titles"}`` (all but ``question`` optional).

Gold passages are built exactly as HippoRAG 2's ``main.get_gold_docs`` builds them: ``title + "\\n" + text``;
for HotpotQA/2Wiki ``text`` is the context sentences joined with ``""`` for HotpotQA (its sentences carry
their leading spaces) and ``" "`` otherwise (2Wiki); a paragraph without ``is_supporting`` counts as gold.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from hipporag_neo4j.common.text import passage_content
from hipporag_neo4j.errors import InputError

HOTPOTQA_SEPARATOR = ""
TWOWIKI_SEPARATOR = " "


class CorpusPassage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    title: str | None = None
    id: str | None = None

    @property
    def content(self) -> str:
        """The string HippoRAG indexes: ``title + "\\n" + text`` (just ``text`` without a title)."""
        return passage_content(self.text, self.title)


class EvalQuestion(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    question: str
    answers: list[str]
    """The answer then its aliases, de-duplicated in order; empty when the file gives none."""
    gold_contents: list[str]
    """Gold passages as ``title + "\\n" + text``, de-duplicated in order; empty for the plain format."""
    gold_titles: list[str]


class UnmatchedGold(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    gold: str
    """The gold content, or the gold title for questions that have titles only."""
    reason: Literal["not_found", "ambiguous_title"]


class GoldMatch(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    gold_ids: dict[str, list[int]]
    """Question id -> corpus indices of its matched gold passages (in gold order, no repeats)."""
    unmatched: list[UnmatchedGold]
    whitespace_matches: int
    """How many gold passages matched only after whitespace normalisation."""


# --------------------------------------------------------------------------- files


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError(f"{path}: file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the file ({exc})") from exc


def _parse_jsonl(path: Path, text: str) -> list[Any]:
    records = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: line {line_no} is not valid JSON ({exc.msg})") from exc
    return records


def _parse_json_or_jsonl(path: Path) -> Any:
    """A JSON document, or the list of records of a JSONL file (``.jsonl`` or several JSON values)."""
    text = _read_text(path)
    if not text.strip():
        raise InputError(f"{path}: the file is empty")
    if path.suffix.lower() == ".jsonl":
        return _parse_jsonl(path, text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # several JSON values, one a line: JSONL without the extension
            return _parse_jsonl(path, text)
        raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc


def _optional_str(value: Any, path: Path, where: str, key: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and key == "id":
        return str(value)
    raise InputError(f"{path}: {where}: {key!r} must be a string, got {type(value).__name__}")


def _required_str(record: Mapping[str, Any], key: str, path: Path, where: str) -> str:
    if key not in record:
        raise InputError(f"{path}: {where}: missing {key!r}")
    value = _optional_str(record[key], path, where, key)
    if value is None:
        raise InputError(f"{path}: {where}: {key!r} is null")
    return value


# --------------------------------------------------------------------------- corpus


def _passage(text: str, title: str | None, id_: str | None, path: Path, where: str) -> CorpusPassage:
    if not text.strip():
        raise InputError(f"{path}: {where}: empty passage text")
    return CorpusPassage(text=text, title=title, id=id_)


def _corpus_from_records(records: Sequence[Any], path: Path) -> list[CorpusPassage]:
    passages = []
    for i, record in enumerate(records):
        where = f"record {i}"
        if not isinstance(record, dict):
            raise InputError(f"{path}: {where}: expected an object with 'text', got {type(record).__name__}")
        text = _required_str(record, "text", path, where)
        title = _optional_str(record.get("title"), path, where, "title")
        id_ = _optional_str(record.get("id"), path, where, "id")
        passages.append(_passage(text, title, id_, path, where))
    return passages


def _corpus_from_mapping(mapping: Mapping[str, Any], path: Path) -> list[CorpusPassage]:
    passages = []
    for title, body in mapping.items():
        where = f"title {title!r}"
        if isinstance(body, str):
            text = body
        elif isinstance(body, list) and all(isinstance(s, str) for s in body):
            text = HOTPOTQA_SEPARATOR.join(body)
        else:
            raise InputError(f"{path}: {where}: expected a text or a list of sentences")
        passages.append(_passage(text, title, None, path, where))
    return passages


def load_corpus(path: str | Path) -> list[CorpusPassage]:
    """Read a corpus file (formats in the module docstring); raises :class:`InputError` naming the problem."""
    path = Path(path)
    data = _parse_json_or_jsonl(path)
    if isinstance(data, list):
        passages = _corpus_from_records(data, path)
    elif isinstance(data, dict):
        passages = _corpus_from_mapping(data, path)
    else:
        raise InputError(f"{path}: unknown corpus format: expected a list of records or an object by title")
    if not passages:
        raise InputError(f"{path}: the corpus has no passages")
    return passages


# --------------------------------------------------------------------------- questions


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _answers(record: Mapping[str, Any], path: Path, where: str) -> list[str]:
    answer = record.get("answer")
    answers: list[Any] = [] if answer is None else (answer if isinstance(answer, list) else [answer])
    aliases = record.get("answer_aliases") or []
    if not isinstance(aliases, list):
        raise InputError(f"{path}: {where}: 'answer_aliases' must be a list")
    values = answers + aliases
    if not all(isinstance(a, str) for a in values):
        raise InputError(f"{path}: {where}: answers and aliases must be strings")
    return _unique(values)


def _gold_from_paragraphs(
    paragraphs: Any, text_keys: tuple[str, ...], path: Path, where: str
) -> tuple[list[str], list[str]]:
    if not isinstance(paragraphs, list):
        raise InputError(f"{path}: {where}: paragraphs must be a list")
    contents, titles = [], []
    for j, paragraph in enumerate(paragraphs):
        pwhere = f"{where}, paragraph {j}"
        if not isinstance(paragraph, dict):
            raise InputError(f"{path}: {pwhere}: expected an object")
        if not paragraph.get("is_supporting", True):
            continue
        title = _required_str(paragraph, "title", path, pwhere)
        key = next((k for k in text_keys if k in paragraph), None)
        if key is None:
            raise InputError(f"{path}: {pwhere}: missing {' or '.join(repr(k) for k in text_keys)}")
        contents.append(passage_content(_required_str(paragraph, key, path, pwhere), title))
        titles.append(title)
    return _unique(contents), _unique(titles)


def _sentence_separator(record: Mapping[str, Any], context: list[Any]) -> str:
    """HotpotQA joins with ``""``, 2Wiki with ``" "`` (HippoRAG 2 ``get_gold_docs``).

    HotpotQA records carry ``level``, 2Wiki records ``evidences``; otherwise HotpotQA is recognised by its
    sentences after the first starting with whitespace.
    """
    if "level" in record:
        return HOTPOTQA_SEPARATOR
    if "evidences" in record:
        return TWOWIKI_SEPARATOR
    later = [s for _, sentences in context for s in sentences[1:]]
    if later and any(s[:1].isspace() for s in later):
        return HOTPOTQA_SEPARATOR
    return TWOWIKI_SEPARATOR


def _gold_from_supporting_facts(
    record: Mapping[str, Any], path: Path, where: str
) -> tuple[list[str], list[str]]:
    context, facts = record["context"], record["supporting_facts"]
    context_ok = isinstance(context, list) and all(
        isinstance(item, list)
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], list)
        and all(isinstance(s, str) for s in item[1])
        for item in context
    )
    if not context_ok:
        raise InputError(f"{path}: {where}: 'context' must be a list of [title, [sentences]]")
    if not isinstance(facts, list) or not all(
        isinstance(f, list) and f and isinstance(f[0], str) for f in facts
    ):
        raise InputError(f"{path}: {where}: 'supporting_facts' must be a list of [title, sentence index]")
    gold_titles = _unique(f[0] for f in facts)
    wanted = set(gold_titles)
    separator = _sentence_separator(record, context)
    contents = [passage_content(separator.join(sents), title) for title, sents in context if title in wanted]
    return _unique(contents), gold_titles


def _question(record: Any, index: int, path: Path) -> EvalQuestion:
    where = f"question {index}"
    if not isinstance(record, dict):
        raise InputError(f"{path}: {where}: expected an object, got {type(record).__name__}")
    raw_id = record.get("id", record.get("_id"))
    qid = _optional_str(raw_id, path, where, "id") or str(index)
    where = f"question {index} ({qid})"
    question = _required_str(record, "question", path, where)
    if "paragraphs" in record:
        contents, titles = _gold_from_paragraphs(
            record["paragraphs"], ("paragraph_text", "text"), path, where
        )
    elif "contexts" in record:
        contents, titles = _gold_from_paragraphs(record["contexts"], ("text",), path, where)
    elif "context" in record and "supporting_facts" in record:
        contents, titles = _gold_from_supporting_facts(record, path, where)
    elif "context" in record or "supporting_facts" in record:
        raise InputError(
            f"{path}: {where}: HotpotQA/2Wiki records need both 'context' and 'supporting_facts'"
        )
    else:
        raw_titles = record.get("gold_titles") or []
        if not isinstance(raw_titles, list) or not all(isinstance(t, str) for t in raw_titles):
            raise InputError(f"{path}: {where}: 'gold_titles' must be a list of strings")
        contents, titles = [], _unique(raw_titles)
    return EvalQuestion(
        id=qid,
        question=question,
        answers=_answers(record, path, where),
        gold_contents=contents,
        gold_titles=titles,
    )


def load_questions(path: str | Path) -> list[EvalQuestion]:
    """Read a question file (formats in the module docstring); question ids must be unique.

    A record without ``id``/``_id`` gets its position in the file as id.
    """
    path = Path(path)
    data = _parse_json_or_jsonl(path)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise InputError(f"{path}: unknown question format: expected a list of question records")
    questions = [_question(record, i, path) for i, record in enumerate(data)]
    if not questions:
        raise InputError(f"{path}: the file has no questions")
    counts = Counter(q.id for q in questions)
    duplicates = [qid for qid, n in counts.items() if n > 1]
    if duplicates:
        raise InputError(f"{path}: duplicate question ids: {', '.join(duplicates[:5])}")
    return questions


# --------------------------------------------------------------------------- gold matching


def _squash(text: str) -> str:
    return " ".join(text.split())


def locate_gold(questions: Sequence[EvalQuestion], corpus: Sequence[CorpusPassage]) -> GoldMatch:
    """Map each question's gold passages to corpus indices, and list what cannot be mapped.

    A gold content matches the first corpus passage whose ``content`` is identical, else the first whose
    content is equal after collapsing every run of whitespace (newline included) to one space. A question
    with titles only (plain format) matches the corpus passage with that title; a title held by several
    passages is reported as ``ambiguous_title`` rather than guessed.
    """
    exact: dict[str, int] = {}
    squashed: dict[str, int] = {}
    by_title: dict[str, list[int]] = {}
    for i, passage in enumerate(corpus):
        exact.setdefault(passage.content, i)
        squashed.setdefault(_squash(passage.content), i)
        if passage.title is not None:
            by_title.setdefault(passage.title, []).append(i)

    gold_ids: dict[str, list[int]] = {}
    unmatched: list[UnmatchedGold] = []
    whitespace_matches = 0
    for question in questions:
        found: list[int] = []
        if question.gold_contents:
            for content in question.gold_contents:
                index = exact.get(content)
                if index is None:
                    index = squashed.get(_squash(content))
                    whitespace_matches += index is not None
                if index is None:
                    unmatched.append(UnmatchedGold(question_id=question.id, gold=content, reason="not_found"))
                elif index not in found:
                    found.append(index)
        else:
            for title in question.gold_titles:
                indices = by_title.get(title, [])
                if len(indices) == 1:
                    if indices[0] not in found:
                        found.append(indices[0])
                else:
                    reason: Literal["not_found", "ambiguous_title"] = (
                        "ambiguous_title" if indices else "not_found"
                    )
                    unmatched.append(UnmatchedGold(question_id=question.id, gold=title, reason=reason))
        gold_ids[question.id] = found
    return GoldMatch(gold_ids=gold_ids, unmatched=unmatched, whitespace_matches=whitespace_matches)


def match_gold(questions: Sequence[EvalQuestion], corpus: Sequence[CorpusPassage]) -> dict[str, list[int]]:
    """Question id -> corpus indices of its gold passages (matching rules in :func:`locate_gold`).

    Raises :class:`InputError` with counts when any gold passage is missing from the corpus: an unmatched
    gold passage could never be retrieved and would silently distort recall. Use :func:`locate_gold` to
    inspect the failures instead.
    """
    result = locate_gold(questions, corpus)
    if result.unmatched:
        n_questions = len({u.question_id for u in result.unmatched})
        n_gold = sum(len(q.gold_contents) or len(q.gold_titles) for q in questions)
        ambiguous = sum(u.reason == "ambiguous_title" for u in result.unmatched)
        first = result.unmatched[0]
        raise InputError(
            f"{len(result.unmatched)} of {n_gold} gold passages of {n_questions} questions are not in"
            f" the corpus ({ambiguous} ambiguous titles);"
            f" first: question {first.question_id}: {first.gold[:80]!r}"
        )
    return result.gold_ids
