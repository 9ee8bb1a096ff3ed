"""HippoRAG's LLM extraction: passage NER, then OpenIE conditioned on the entities; and LLM query NER."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hipporag_neo4j.common.text import passage_content
from hipporag_neo4j.errors import LLMError, LLMOutputError
from hipporag_neo4j.extraction.base import clean_entities, validate_triples
from hipporag_neo4j.extraction.prompts import ner_messages, openie_messages, query_ner_messages
from hipporag_neo4j.llm.client import ChatResult, LLMClient
from hipporag_neo4j.llm.jsonparse import TRUNCATED, parse_json_report
from hipporag_neo4j.llm.structured import NAMED_ENTITIES, TRIPLES
from hipporag_neo4j.models import Extraction, Passage, PassageFailure

CUT_SHORT = (
    "answer cut short (llm.max_tokens reached, often a model repeating itself): kept the items before the cut"
)


def _parsed(result: ChatResult | LLMError, key: str) -> tuple[Any, bool]:
    """The answer's ``key`` value and whether the answer was cut short; raises LLMError when the call
    failed or the answer is unusable."""
    if isinstance(result, LLMError):
        raise result
    parsed = parse_json_report(result.text)
    if key not in parsed.value:
        raise LLMOutputError(f"no {key!r} key (keys: {sorted(parsed.value)[:5]})")
    return parsed.value[key], result.truncated or TRUNCATED in parsed.repairs


def _entities_from(result: ChatResult | LLMError) -> list[str]:
    """Named entities of an NER answer; raises LLMError when the call failed or the answer is unusable."""
    return clean_entities(_parsed(result, "named_entities")[0])


def _raw_triples(result: ChatResult | LLMError) -> tuple[list[Any], bool]:
    raw, cut = _parsed(result, "triples")
    if not isinstance(raw, list):
        raise LLMOutputError(f"'triples' is not a list but {type(raw).__name__}")
    return raw, cut


class LLMExtractor:
    """Extractor over an :class:`LLMClient`: one NER and one OpenIE call per passage, run concurrently.

    A passage fails (:class:`PassageFailure`, reason prefixed ``ner:`` or ``openie:``) when a call fails, its
    answer is not the JSON asked for, or every triple it gives is invalid; otherwise invalid triples are
    dropped and listed in ``Extraction.dropped``. ``progress(n)`` is told of each finished LLM call.
    """

    name = "llm"

    def __init__(
        self, client: LLMClient, *, json_mode: bool = True, progress: Callable[[int], None] | None = None
    ) -> None:
        self.client = client
        self.json_mode = json_mode
        self.progress = progress

    def extract(self, passages: Sequence[Passage]) -> list[Extraction | PassageFailure]:
        contents = [passage_content(p.text, p.title) for p in passages]
        ner_results = self.client.chat_many(
            [ner_messages(c) for c in contents],
            json_mode=self.json_mode,
            schema=NAMED_ENTITIES,
            progress=self.progress,
        )
        outcomes: list[Extraction | PassageFailure] = []
        entities: dict[int, list[str]] = {}
        for i, (passage, result) in enumerate(zip(passages, ner_results, strict=True)):
            try:
                entities[i] = _entities_from(result)
            except LLMError as exc:
                outcomes.append(_failure(passage, f"ner: {exc}"))
                continue
            outcomes.append(Extraction(passage_id=passage.id, entities=entities[i]))

        pending = sorted(entities)
        openie_results = self.client.chat_many(
            [openie_messages(contents[i], entities[i]) for i in pending],
            json_mode=self.json_mode,
            schema=TRIPLES,
            progress=self.progress,
        )
        for i, result in zip(pending, openie_results, strict=True):
            outcomes[i] = self._with_triples(passages[i], entities[i], result)
        return outcomes

    @staticmethod
    def _with_triples(
        passage: Passage, entities: list[str], result: ChatResult | LLMError
    ) -> Extraction | PassageFailure:
        try:
            raw, cut = _raw_triples(result)
        except LLMError as exc:
            return _failure(passage, f"openie: {exc}")
        triples, dropped = validate_triples(raw)
        if raw and not triples and dropped:
            return _failure(passage, f"openie: all {len(raw)} triples invalid, e.g. {dropped[0]}")
        if cut:
            dropped.append(f"openie: {CUT_SHORT}")
        return Extraction(passage_id=passage.id, entities=entities, triples=triples, dropped=dropped)


def _failure(passage: Passage, reason: str) -> PassageFailure:
    return PassageFailure(passage_id=passage.id, source=passage.title, reason=reason)


class LLMQueryNER:
    """Query entities from the LLM (HippoRAG's query NER). Raises :class:`LLMError` when the call fails or
    the answer has no ``named_entities``; the caller decides whether to fall back to another extractor."""

    name = "llm"

    def __init__(self, client: LLMClient, *, json_mode: bool = True) -> None:
        self.client = client
        self.json_mode = json_mode

    def query_entities(self, query: str) -> list[str]:
        result = self.client.chat(query_ner_messages(query), json_mode=self.json_mode, schema=NAMED_ENTITIES)
        return _entities_from(result)
