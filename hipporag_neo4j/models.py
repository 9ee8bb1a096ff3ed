"""Plain pydantic data models shared by the pipeline, the stores, the API and the CLI."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RetrievalMode = Literal["hipporag", "dense", "ensemble", "hybrid"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PassageInput(_Model):
    """A passage to index. ``id`` defaults to a hash of the text; ``title`` is optional."""

    text: str
    id: str | None = None
    title: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Passage(_Model):
    """A passage as stored."""

    id: str
    text: str
    title: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Triple(_Model):
    subject: str
    predicate: str
    object: str

    def as_tuple(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)

    def text(self) -> str:
        return f"{self.subject} {self.predicate} {self.object}"


class Extraction(_Model):
    """What extraction found in one passage: named entities and (normalised) OpenIE triples."""

    passage_id: str
    entities: list[str] = Field(default_factory=list)
    triples: list[Triple] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list, description="Why invalid raw triples were dropped.")


class PassageFailure(_Model):
    passage_id: str | None
    source: str | None = Field(None, description="File and record, or passage title.")
    reason: str


class Usage(_Model):
    """LLM token usage over a run."""

    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class IndexReport(_Model):
    """Outcome of one ``index`` call: nothing is lost silently."""

    indexed: list[str] = Field(default_factory=list, description="Passage ids newly indexed.")
    skipped: list[str] = Field(default_factory=list, description="Already in the store (resume/duplicates).")
    failed: list[PassageFailure] = Field(default_factory=list)
    chunked: dict[str, list[str]] = Field(
        default_factory=dict, description="Long passages split: source id -> chunk ids."
    )
    new_phrases: int = 0
    new_facts: int = 0
    new_synonym_edges: int = 0
    usage: Usage = Field(default_factory=Usage)
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds per stage.")


class LinkedPhrase(_Model):
    """A query entity linked to a graph phrase."""

    query_entity: str
    phrase_id: str
    phrase: str
    similarity: float
    weight: float = Field(description="Reset probability before normalisation (specificity or 1).")


class PhraseScore(_Model):
    phrase: str
    score: float = Field(description="PPR score x occurrences in this passage.")


class Explanation(_Model):
    query_entities: list[str] = Field(default_factory=list)
    linked: list[LinkedPhrase] = Field(default_factory=list)
    top_phrases: list[PhraseScore] = Field(default_factory=list)
    graph_score: float | None = None
    dense_score: float | None = None
    note: str | None = None


class RetrievedPassage(_Model):
    rank: int
    passage: Passage
    score: float
    explanation: Explanation


class RetrievalResult(_Model):
    query: str
    mode: RetrievalMode
    passages: list[RetrievedPassage]
    query_entities: list[str] = Field(default_factory=list)
    linked: list[LinkedPhrase] = Field(default_factory=list)
    used_dense_fallback: bool = Field(False, description="Ensemble mixed dense in (uncertain links).")
    timings: dict[str, float] = Field(default_factory=dict)


class Answer(_Model):
    query: str
    answer: str
    retrieval: RetrievalResult
    usage: Usage = Field(default_factory=Usage)


class StoreStats(_Model):
    backend: str
    location: str
    passages: int
    phrases: int
    facts: int
    relation_edges: int
    synonym_edges: int
    mentions: int
    embedding_model: str | None
    embedding_dim: int | None
    schema_version: int | None
    extra: dict[str, Any] = Field(default_factory=dict)
