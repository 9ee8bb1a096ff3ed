"""HippoRAG 2's recognition memory: an LLM keeps the retrieved facts that matter for the query."""

from __future__ import annotations

import logging

from hipporag_neo4j.common.text import normalize_phrase
from hipporag_neo4j.errors import LLMOutputError
from hipporag_neo4j.llm.client import LLMClient
from hipporag_neo4j.llm.jsonparse import parse_json_object
from hipporag_neo4j.llm.structured import FACTS
from hipporag_neo4j.retrieval.prompts import filter_messages
from hipporag_neo4j.stores.base import FactHit

log = logging.getLogger(__name__)

MAX_KEPT = 4  # HippoRAG 2's filter keeps at most 4 facts


def _key(subject: object, predicate: object, obj: object) -> tuple[str, str, str]:
    return (normalize_phrase(str(subject)), normalize_phrase(str(predicate)), normalize_phrase(str(obj)))


class LLMFactFilter:
    """A :data:`~hipporag_neo4j.retrieval.hipporag2_walk.FactFilter` backed by one chat call per query.

    The answer's facts are matched to the candidates after normalisation; facts the model invented are
    dropped (and logged). Raises :class:`LLMError` when the call fails and :class:`LLMOutputError` when the
    answer is not ``{"fact": [...]}``: the caller reports it and keeps the unfiltered facts.
    """

    def __init__(self, client: LLMClient, *, json_mode: bool = True) -> None:
        self.client = client
        self.json_mode = json_mode

    def __call__(self, query: str, candidates: list[FactHit]) -> list[FactHit]:
        triples = [[f.subject, f.predicate, f.object] for f in candidates]
        result = self.client.chat(filter_messages(query, triples), json_mode=self.json_mode, schema=FACTS)
        parsed = parse_json_object(result.text)
        chosen = parsed.get("fact", parsed.get("facts"))
        if not isinstance(chosen, list):
            raise LLMOutputError(f"no 'fact' list in the filter's answer (keys: {sorted(parsed)[:5]})")
        by_key = {_key(f.subject, f.predicate, f.object): f for f in candidates}
        kept: list[FactHit] = []
        for item in chosen:
            if not (isinstance(item, list) and len(item) == 3):
                log.warning("recognition filter: ignored a malformed fact %r", item)
                continue
            fact = by_key.get(_key(*item))
            if fact is None:
                log.warning("recognition filter: ignored a fact not among the candidates %r", item)
            elif fact not in kept:
                kept.append(fact)
        return kept[:MAX_KEPT]
