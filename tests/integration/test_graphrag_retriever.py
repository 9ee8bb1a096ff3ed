"""HippoRAGRetriever inside neo4j-graphrag's own GraphRAG class, with LLMs through their LLM interfaces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.llm import LLMInterface, LLMInterfaceV2, LLMResponse
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.types import LLMMessage

from hipporag_neo4j.common.text import make_passage_id
from hipporag_neo4j.integrations.neo4j_graphrag import HippoRAGRetriever
from tests.support.pipeline_support import make_memory

pytestmark = pytest.mark.integration  # an embedded store on disk (hash embedder, table extraction)

TABLE = {
    "Thomas is a professor at Stanford.": [["thomas", "is professor at", "stanford"]],
    "Thomas researches Alzheimer's disease.": [["thomas", "researches", "alzheimer disease"]],
    "Maria plays the violin in Vienna.": [["maria", "plays", "violin"], ["maria", "lives in", "vienna"]],
}
QUESTION = "Which Stanford professor works on Alzheimer's?"
ALZHEIMER_ID = make_passage_id("Thomas researches Alzheimer's disease.", None)


class ReaderV2(LLMInterfaceV2):
    """A reader through neo4j-graphrag's v2 (message list) interface: answers with the first name it
    finds in the context of the prompt it was given, and keeps the prompts."""

    def __init__(self) -> None:
        super().__init__(model_name="fake-reader")
        self.prompts: list[str] = []

    def invoke(self, input: list[LLMMessage], **kwargs: Any) -> LLMResponse:
        prompt = input[-1]["content"]
        self.prompts.append(prompt)
        return LLMResponse(content="Thomas" if "Thomas is a professor" in prompt else "I don't know")

    async def ainvoke(self, input: list[LLMMessage], **kwargs: Any) -> LLMResponse:
        return self.invoke(input)


class ReaderV1(LLMInterface):
    """The same through the v1 (prompt string) interface."""

    def __init__(self) -> None:
        super().__init__(model_name="fake-reader-v1")
        self.prompts: list[str] = []

    def invoke(
        self, input: str, message_history: Any = None, system_instruction: str | None = None
    ) -> LLMResponse:
        self.prompts.append(input)
        return LLMResponse(content="Thomas" if "Thomas is a professor" in input else "I don't know")

    async def ainvoke(
        self, input: str, message_history: Any = None, system_instruction: str | None = None
    ) -> LLMResponse:
        return self.invoke(input)


@pytest.fixture
def retriever(tmp_path: Path) -> Any:
    memory = make_memory(
        tmp_path / "kb", TABLE, {QUESTION: ["stanford", "alzheimer disease"]}, mode="hipporag"
    )
    memory.index([{"id": "prof", "title": "Thomas", "text": t} if "professor" in t else t for t in TABLE])
    yield HippoRAGRetriever(memory)
    memory.close()


def test_it_is_a_neo4j_graphrag_retriever_with_explained_items(retriever: HippoRAGRetriever) -> None:
    assert isinstance(retriever, Retriever)
    result = retriever.search(query_text=QUESTION, top_k=2)
    assert result.metadata is not None and result.metadata["__retriever"] == "HippoRAGRetriever"
    assert [link["phrase"] for link in result.metadata["linked"]] == ["stanford", "alzheimer disease"]
    by_id = {item.metadata["passage_id"]: item for item in result.items if item.metadata}
    assert set(by_id) == {"prof", ALZHEIMER_ID}  # the two passages the question needs; not the violin
    assert by_id["prof"].content == "Thomas\nThomas is a professor at Stanford."  # title, then text
    assert by_id[ALZHEIMER_ID].content == "Thomas researches Alzheimer's disease."
    ranks = sorted(
        (item.metadata["rank"], item.metadata["score"]) for item in by_id.values() if item.metadata
    )
    assert [r for r, _ in ranks] == [1, 2] and ranks[0][1] >= ranks[1][1] > 0
    assert "thomas" in [p["phrase"] for p in by_id["prof"].metadata["explanation"]["top_phrases"]]
    dense = retriever.search(query_text=QUESTION, top_k=1, mode="dense")
    assert dense.metadata is not None and dense.metadata["mode"] == "dense" and len(dense.items) == 1


@pytest.mark.parametrize("reader_class", [ReaderV2, ReaderV1])
def test_graphrag_answers_from_hipporag_passages(retriever: HippoRAGRetriever, reader_class: type) -> None:
    reader = reader_class()
    rag = GraphRAG(retriever=retriever, llm=reader)
    result = rag.search(query_text=QUESTION, retriever_config={"top_k": 2}, return_context=True)
    assert result.answer == "Thomas"
    (prompt,) = reader.prompts
    assert (
        "Thomas is a professor at Stanford." in prompt and "Thomas researches Alzheimer's disease." in prompt
    )
    assert "violin" not in prompt  # top_k=2 from retriever_config reached the retriever
    assert result.retriever_result is not None
    assert (
        result.retriever_result.items[0].metadata == retriever.search(query_text=QUESTION).items[0].metadata
    )


def test_it_converts_to_a_neo4j_graphrag_tool(retriever: HippoRAGRetriever) -> None:
    tool = retriever.convert_to_tool("memory", "Search long-term memory")
    params = tool.get_parameters()
    assert {"query_text", "top_k", "mode"} <= set(params["properties"])
    assert params["required"] == ["query_text"]
    assert tool.execute(query_text=QUESTION, top_k=1).items[0].metadata["passage_id"] in {
        "prof",
        ALZHEIMER_ID,
    }


def test_retriever_config_walks_your_graph_and_starts_from_your_nodes(tmp_path: Path) -> None:
    """On the link demo's store (accounts linked by name): `via` in retriever_config brings the parent
    company into GraphRAG's context; `seed_nodes` retrieve from an account with no question; items carry
    the linked accounts."""
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.demo.link import QUESTION as PARENT_QUESTION
    from hipporag_neo4j.demo.link import run_link_demo
    from hipporag_neo4j.settings import load_settings

    store = tmp_path / "kb"
    settings = load_settings(env_file=None)
    run_link_demo(settings, keep=store, echo=None)
    # the walk's own reach, as the demo shows it: no passages filled from dense
    walk_only = settings.retrieval.model_copy(update={"fill_from_dense": False})
    update = {"store": settings.store.model_copy(update={"path": store}), "retrieval": walk_only}
    settings = settings.model_copy(update=update)
    with HippoRAG(settings) as memory:
        retriever = HippoRAGRetriever(memory, mode="hipporag")
        reader = ReaderV2()
        rag = GraphRAG(retriever=retriever, llm=reader)
        plain = rag.search(query_text=PARENT_QUESTION, return_context=True)
        joined = rag.search(
            query_text=PARENT_QUESTION, retriever_config={"via": ["SUBSIDIARY_OF"]}, return_context=True
        )
        seeded = retriever.search(query_text="", seed_nodes=["acct-1001"], via=["SUBSIDIARY_OF"], top_k=3)

    def titles(items: list[Any]) -> list[str]:
        return [item.metadata["title"] for item in items]

    assert plain.retriever_result is not None and joined.retriever_result is not None
    assert "Lumora Biotics" in titles(joined.retriever_result.items)
    assert "Lumora Biotics" not in titles(plain.retriever_result.items)
    assert "Lumora Biotics" in reader.prompts[1] and "Lumora Biotics" not in reader.prompts[0]
    first = seeded.items[0].metadata
    assert first["title"] == "Lumora Biotics"
    assert [n["node_id"] for n in first["linked_entities"]] == ["acct-1001"]
