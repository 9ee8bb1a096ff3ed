"""Retrieval from enterprise nodes, and the enterprise nodes behind each retrieved passage.

:func:`retrieve_from_nodes` seeds PPR with the phrases linked to the given nodes ("what do our documents
say about this customer"); with ``rel_types`` it also seeds, at ``hop_weight``, the phrases linked to
the nodes one such relationship away (a question about a parent company reaches passages about its
subsidiaries). This is seed expansion through the enterprise graph, not PPR over the joined graph.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.linking.model import EnterpriseGraph, LinkedNode
from hipporag_neo4j.models import PhraseScore, RetrievalResult
from hipporag_neo4j.text import make_phrase_id


class NodeRef(BaseModel):
    node_id: str
    labels: list[str]
    name: str | None
    via_phrase: str = Field(description="The phrase linked to the node.")
    score: float = Field(description="The link's score (1 for an exact name match).")


class SeedPhrase(BaseModel):
    phrase_id: str
    weight: float
    from_node: str
    hop: int = Field(description="0: linked to a seed node; 1: to a node one relationship away.")


class NodePassage(BaseModel):
    rank: int
    passage_id: str
    title: str | None
    text: str
    score: float
    top_phrases: list[PhraseScore]
    linked_nodes: list[NodeRef] = Field(description="Enterprise nodes linked to the passage's top phrases.")


class NodeRetrieval(BaseModel):
    seed_nodes: list[str]
    seeds: list[SeedPhrase]
    passages: list[NodePassage]
    note: str | None = None


def _refs(graph: EnterpriseGraph, phrases: Sequence[str]) -> list[NodeRef]:
    ids = {make_phrase_id(name): name for name in phrases}
    found = graph.links_from_phrases(list(ids))
    refs: list[NodeRef] = []
    for phrase_id, nodes in found.items():
        refs.extend(_ref(node, ids[phrase_id]) for node in nodes)
    return refs


def _ref(node: LinkedNode, phrase: str) -> NodeRef:
    return NodeRef(
        node_id=node.node_id, labels=list(node.labels), name=node.name, via_phrase=phrase, score=node.score
    )


def linked_nodes_of(result: RetrievalResult, graph: EnterpriseGraph) -> dict[str, list[NodeRef]]:
    """Passage id -> the enterprise nodes linked to the phrases that brought it up."""
    return {
        item.passage.id: _refs(graph, [p.phrase for p in item.explanation.top_phrases])
        for item in result.passages
    }


def retrieve_from_nodes(
    memory: HippoRAG,
    graph: EnterpriseGraph,
    seed_nodes: Sequence[str],
    *,
    rel_types: Sequence[str] = (),
    hop_weight: float = 0.5,
    top_k: int | None = None,
) -> NodeRetrieval:
    if not seed_nodes:
        raise InputError("give at least one seed node id")
    seeds: dict[str, SeedPhrase] = {}

    def add(node_id: str, hop: int, factor: float, origin: str) -> None:
        for link in graph.links_to_nodes([node_id]).get(node_id, []):
            weight = link.score * factor
            current = seeds.get(link.phrase_id)
            if current is None or current.weight < weight:
                seeds[link.phrase_id] = SeedPhrase(
                    phrase_id=link.phrase_id, weight=weight, from_node=origin, hop=hop
                )

    for node_id in seed_nodes:
        add(node_id, 0, 1.0, node_id)
    for edge in graph.neighbours(list(seed_nodes), rel_types):
        for near in (edge.source, edge.target):
            if near not in seed_nodes:
                add(near, 1, hop_weight, near)
    if not seeds:
        return NodeRetrieval(
            seed_nodes=list(seed_nodes), seeds=[], passages=[], note="no phrase is linked to these nodes"
        )
    s = memory.settings.retrieval
    scores = memory.store.graph_passage_scores(
        {k: v.weight for k, v in seeds.items()},
        s.damping,
        s.ppr_max_iterations,
        s.ppr_tolerance,
        top_k or s.top_k,
        s.explain_phrases,
    )
    passages = memory.store.get_passages([p.passage_id for p in scores])
    out = []
    for rank, item in enumerate(scores, start=1):
        passage = passages[item.passage_id]
        top = [PhraseScore(phrase=name, score=score) for name, score in item.top_phrases]
        out.append(
            NodePassage(
                rank=rank,
                passage_id=passage.id,
                title=passage.title,
                text=passage.text,
                score=item.score,
                top_phrases=top,
                linked_nodes=_refs(graph, [p.phrase for p in top]),
            )
        )
    return NodeRetrieval(seed_nodes=list(seed_nodes), seeds=list(seeds.values()), passages=out)


__all__ = ["NodeRetrieval", "linked_nodes_of", "retrieve_from_nodes"]
