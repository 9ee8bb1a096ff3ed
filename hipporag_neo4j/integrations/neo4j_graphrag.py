"""``HippoRAGRetriever``: HippoRAG retrieval behind neo4j-graphrag's ``Retriever`` interface.

    from neo4j_graphrag.generation import GraphRAG
    from hipporag_neo4j import HippoRAG
    from hipporag_neo4j.integrations.neo4j_graphrag import HippoRAGRetriever

    rag = GraphRAG(retriever=HippoRAGRetriever(HippoRAG()), llm=OpenAILLM("gpt-4o-mini"))
    rag.search("Which Stanford professor works on Alzheimer's?", retriever_config={"top_k": 5})

Each result item's ``content`` is the passage (with its title) and its ``metadata`` holds the passage
id, rank, score, title and the explanation (query entities, linked phrases, top phrases). Works on
either store: HippoRAG queries its own store, so no driver is needed (pass one to keep it on the
retriever for other neo4j-graphrag components). Needs the ``[graphrag]`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import neo4j
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.types import RawSearchResult, RetrieverResultItem

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.models import RetrievalMode, RetrievedPassage


class HippoRAGRetriever(Retriever):
    """A neo4j-graphrag retriever over :meth:`HippoRAG.retrieve` (PPR over the knowledge graph)."""

    # The base class checks a Neo4j server's version through a driver; HippoRAG checks its own store
    # (``hipporag-neo4j doctor``) and may run on the embedded store, where there is no server.
    VERIFY_NEO4J_VERSION = False

    def __init__(
        self,
        memory: HippoRAG,
        *,
        mode: RetrievalMode | None = None,
        top_k: int | None = None,
        driver: neo4j.Driver | None = None,
        neo4j_database: str | None = None,
    ) -> None:
        # Not super().__init__: it requires a driver and rewrites its user agent. The base annotates
        # ``driver`` as always set; none is needed here.
        self.driver = driver  # type: ignore[assignment]
        self.neo4j_database = neo4j_database
        self.memory = memory
        self.mode = mode
        self.top_k = top_k

    def get_search_results(
        self,
        query_text: str,
        top_k: int | None = None,
        mode: RetrievalMode | None = None,
        seed_nodes: Sequence[str] = (),
        via: Sequence[str] | None = None,
    ) -> RawSearchResult:
        """Retrieve the passages that answer ``query_text`` by HippoRAG (Personalized PageRank over the
        knowledge graph from the entities in the query), each with its explanation.

        Args:
            query_text (str): The question.
            top_k (int, optional): Passages to return (default: the retriever's, else the settings').
            mode (str, optional): hipporag2, hipporag, dense, ensemble or hybrid (default: the
                retriever's, else the settings').
            seed_nodes (list[str], optional): ids of your own graph's nodes (linked with
                ``hipporag-neo4j link``) to start from; ``query_text`` may then be empty.
            via (list[str], optional): relationship types of your graph the walk may follow.

        Returns:
            RawSearchResult: one record per passage; metadata has the query entities and their links.
        """
        result = self.memory.retrieve(
            query_text, mode=mode or self.mode, top_k=top_k or self.top_k, seed_nodes=seed_nodes, via=via
        )
        return RawSearchResult(
            records=[neo4j.Record(_record(item)) for item in result.passages],  # type: ignore[no-untyped-call]
            metadata={
                "mode": result.mode,
                "query_entities": result.query_entities,
                "linked": [link.model_dump() for link in result.linked],
            },
        )

    def default_record_formatter(self, record: neo4j.Record) -> RetrieverResultItem:
        return RetrieverResultItem(content=record["content"], metadata=record["metadata"])


def _record(item: RetrievedPassage) -> dict[str, Any]:
    passage = item.passage
    return {
        "content": f"{passage.title}\n{passage.text}" if passage.title else passage.text,
        "metadata": {
            "passage_id": passage.id,
            "title": passage.title,
            "rank": item.rank,
            "score": item.score,
            "explanation": item.explanation.model_dump(),
            **({"passage_metadata": passage.metadata} if passage.metadata else {}),
            **(
                {"linked_entities": [n.model_dump() for n in item.linked_entities]}
                if item.linked_entities
                else {}
            ),
        },
    }
