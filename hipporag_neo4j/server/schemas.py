"""Request and response bodies of the REST API (the results themselves are the library's models)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from hipporag_neo4j.models import PassageInput, RetrievalMode, RetrievalStrategy


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IndexRequest(_Body):
    passages: list[PassageInput] = Field(
        min_length=1, description="Passages to index; `id` defaults to a hash of the text."
    )


class QueryRequest(_Body):
    query: str = Field("", description="The question (may be empty when seed_nodes are given).")
    mode: RetrievalMode | None = Field(None, description="Retrieval mode (default: the server's setting).")
    top_k: int | None = Field(None, ge=1, le=1000, description="Passages to return.")
    strategy: RetrievalStrategy | None = Field(
        None, description="single, or ircot / clues: LLM loops around the mode (need an LLM)."
    )
    explain: bool = Field(True, description="Include each passage's explanation (linked and top phrases).")
    seed_nodes: list[str] = Field(
        default_factory=list, max_length=1000, description="Nodes of your linked graph to start from."
    )
    joined: bool | None = Field(
        None, description="PPR over the graph joined with your linked graph (default: the server's setting)."
    )
    via: list[str] | None = Field(
        None, description="Relationship types of your graph the joined walk follows (implies joined)."
    )


class AnswerRequest(_Body):
    query: str = Field(min_length=1)
    mode: RetrievalMode | None = None
    top_k: int | None = Field(None, ge=1, le=1000)
    strategy: RetrievalStrategy | None = None


class DeleteRequest(_Body):
    ids: list[str] = Field(min_length=1, description="Passage ids to delete.")


class DeleteResult(_Body):
    passages: list[str] = Field(description="Deleted passage ids.")
    missing: list[str] = Field(description="Ids not in the store.")
    phrases_removed: int
    facts_removed: int
    synonym_edges_removed: int


class Health(_Body):
    status: str = "ok"


class Readiness(_Body):
    ready: bool
    backend: str
    embedding_model: str | None = None
    store_schema_version: int | None = None
    detail: str | None = Field(None, description="Why the service is not ready.")
