"""Retrieval from enterprise nodes, and the enterprise nodes behind each retrieved passage.

``HippoRAG.retrieve(..., seed_nodes=[...])`` seeds PPR with the phrases linked (SAME_AS) to the given
nodes, weighted like the query's own entities (the link's score x the phrase's specificity); with the
joined graph the walk then also flows through your relationships. The passages of such a result (and of
any joined one) list the nodes linked to the phrases they mention.
"""

from __future__ import annotations

from collections.abc import Sequence

from hipporag_neo4j.linking.model import EnterpriseGraph
from hipporag_neo4j.models import LinkedPhrase, RetrievalResult


def seed_links(
    graph: EnterpriseGraph, node_ids: Sequence[str], use_specificity: bool
) -> tuple[list[LinkedPhrase], list[str]]:
    """The phrases linked to ``node_ids`` as seeds (query_entity = node id, similarity = link score), and
    the node ids no phrase is linked to."""
    found = graph.links_to_nodes(list(dict.fromkeys(node_ids)))
    links = [
        LinkedPhrase(
            query_entity=link.node_id,
            phrase_id=link.phrase_id,
            phrase=link.phrase,
            similarity=link.score,
            weight=link.score / link.passage_count
            if use_specificity and link.passage_count > 0
            else link.score,
        )
        for node_id in dict.fromkeys(node_ids)
        for link in found.get(node_id, [])
    ]
    return links, [n for n in dict.fromkeys(node_ids) if n not in found]


def add_linked_entities(result: RetrievalResult, graph: EnterpriseGraph) -> None:
    """Fill each returned passage's ``linked_entities`` (one read for all of them)."""
    found = graph.links_of_passages([item.passage.id for item in result.passages])
    for item in result.passages:
        item.linked_entities = found.get(item.passage.id, [])


__all__ = ["add_linked_entities", "seed_links"]
