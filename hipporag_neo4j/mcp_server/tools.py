"""The MCP tools, each a few lines over :class:`~hipporag_neo4j.service.KnowledgeService`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult
from mcp.types import Tool as ToolInfo
from pydantic import BaseModel, Field

from hipporag_neo4j import __version__
from hipporag_neo4j.errors import HippoRAGError
from hipporag_neo4j.models import (
    RETRIEVAL_MODES,
    IndexReport,
    PassageInput,
    RetrievalMode,
    RetrievalResult,
    StoreStats,
)
from hipporag_neo4j.service import KnowledgeService

T = TypeVar("T")

INSTRUCTIONS = """Long-term memory backed by a knowledge graph (HippoRAG). `remember` stores a text;
`recall` finds the stored texts that answer a question, also when the answer needs several texts
linked through the entities they share, and says why each was found; `forget` deletes texts by id."""


class Memory(BaseModel):
    rank: int
    passage_id: str
    title: str | None
    text: str
    score: float
    why: list[str] = Field(description="The graph phrases that brought this text up, strongest first.")
    linked_nodes: list[str] = Field(
        default_factory=list,
        description="With seed_nodes or via: nodes of your own graph linked to the text, as 'id (name)'.",
    )


class Recall(BaseModel):
    query: str
    mode: str
    query_entities: list[str] = Field(description="Entities found in the query.")
    linked: list[str] = Field(description="Query entities linked to graph phrases (hipporag and mixes).")
    facts: list[str] = Field(description="Stored facts matched to the query, the walk's start (hipporag2).")
    memories: list[Memory]
    note: str | None = None


class Remembered(BaseModel):
    passage_ids: list[str] = Field(description="Ids of the stored texts (chunks when the text was long).")
    already_stored: list[str]
    failed: list[str] = Field(description="Why a text could not be stored.")
    new_phrases: int
    new_facts: int


class Forgotten(BaseModel):
    deleted: list[str]
    not_found: list[str]
    phrases_removed: int
    facts_removed: int


def recall_of(result: RetrievalResult) -> Recall:
    return Recall(
        query=result.query,
        mode=result.mode,
        query_entities=result.query_entities,
        linked=[f"{x.query_entity} -> {x.phrase} (cosine {x.similarity:.2f})" for x in result.linked],
        facts=[f"({f.subject}, {f.predicate}, {f.object})" for f in result.facts if f.kept],
        note=result.note,
        memories=[
            Memory(
                rank=item.rank,
                passage_id=item.passage.id,
                title=item.passage.title,
                text=item.passage.text,
                score=item.score,
                why=[p.phrase for p in item.explanation.top_phrases],
                linked_nodes=[f"{n.node_id} ({n.name or '-'})" for n in item.linked_entities],
            )
            for item in result.passages
        ],
    )


def remembered_of(report: IndexReport) -> Remembered:
    return Remembered(
        passage_ids=report.indexed,
        already_stored=report.skipped,
        failed=[f"{f.passage_id or f.source or '-'}: {f.reason}" for f in report.failed],
        new_phrases=report.new_phrases,
        new_facts=report.new_facts,
    )


@contextmanager
def _as_tool_error() -> Iterator[None]:
    """Expected errors reach the client as a tool error carrying their message."""
    try:
        yield
    except HippoRAGError as exc:
        raise ToolError(str(exc)) from exc


def _call(fn: Callable[[], T]) -> T:
    with _as_tool_error():
        return fn()


class StrictMCPServer(MCPServer[Any]):
    """An MCP server whose tools refuse arguments they do not take, naming the valid ones (the SDK's
    argument models would drop them silently: ``remember(id=...)`` stored the text under another id).
    The schemas say so too (``additionalProperties: false``)."""

    async def list_tools(self) -> list[ToolInfo]:
        tools = await super().list_tools()
        for tool in tools:
            tool.input_schema = {**tool.input_schema, "additionalProperties": False}
        return tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        for tool in await super().list_tools():
            valid = list(tool.input_schema.get("properties", {}))
            unknown = [key for key in arguments if key not in valid]
            if tool.name == name and unknown:
                raise ToolError(
                    f"{name}: unknown argument{'s' if len(unknown) > 1 else ''} "
                    f"{', '.join(map(repr, unknown))}; {name} takes {', '.join(valid) or 'no arguments'}"
                )
        return await super().call_tool(name, arguments, context)


def build_mcp_server(service: KnowledgeService) -> MCPServer[Any]:
    server: MCPServer[Any] = StrictMCPServer(
        "hipporag-neo4j", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    @server.tool()
    def remember(
        text: Annotated[str, Field(description="The text to remember.")],
        title: Annotated[str | None, Field(description="A title (e.g. the document's name).")] = None,
        passage_id: Annotated[str | None, Field(description="An id to forget it by later.")] = None,
    ) -> Remembered:
        """Store a text in long-term memory (entities and facts are extracted into the graph)."""
        passage = PassageInput(text=text, title=title, id=passage_id)
        return remembered_of(_call(lambda: service.index([passage])))

    @server.tool()
    def recall(
        query: Annotated[str, Field(description="A question or topic (may be empty with seed_nodes).")],
        top_k: Annotated[int, Field(ge=1, le=100, description="How many texts to return.")] = 5,
        mode: Annotated[
            RetrievalMode | None,
            Field(
                description="The retrieval mode (default: the server's): "
                + "; ".join(f"{name}: {what}" for name, what in RETRIEVAL_MODES.items())
            ),
        ] = None,
        seed_nodes: Annotated[
            list[str] | None,
            Field(
                description="Ids of nodes of your own graph (linked with `hipporag-neo4j link`) to start "
                "from: what do the texts say about them and what is connected to them."
            ),
        ] = None,
        via: Annotated[
            list[str] | None,
            Field(description="Relationship types of your own graph the walk may follow (the joined graph)."),
        ] = None,
    ) -> Recall:
        """Find the stored texts that answer the query, each with the graph phrases that led to it."""
        nodes = seed_nodes or []
        return recall_of(
            _call(lambda: service.retrieve(query, mode=mode, top_k=top_k, seed_nodes=nodes, via=via))
        )

    @server.tool()
    def forget(
        passage_ids: Annotated[list[str], Field(min_length=1, description="Ids of the texts to delete.")],
    ) -> Forgotten:
        """Delete texts, and the entities and facts only they supported."""
        report = asdict(_call(lambda: service.delete(passage_ids)))
        return Forgotten(
            deleted=report["passages"],
            not_found=report["missing"],
            phrases_removed=report["phrases_removed"],
            facts_removed=report["facts_removed"],
        )

    @server.tool()
    def stats() -> StoreStats:
        """How much is stored: texts (passages), phrases, facts and edges."""
        return _call(service.stats)

    return server
