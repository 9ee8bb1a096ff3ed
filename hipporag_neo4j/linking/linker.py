"""``link``: SAME_AS links from phrases to the nodes of one label, by name; ``unlink`` removes them.

Each node's property value is normalised like a phrase; a phrase with exactly that name is linked with
score 1 (method ``exact``). The other nodes' values are embedded in batches and linked to their nearest
phrase when the cosine reaches ``min_similarity`` (method ``embedding``), through the store's own vector
search. Re-running updates scores and adds nothing twice; the user's nodes are only read.
"""

from __future__ import annotations

from pydantic import BaseModel

from hipporag_neo4j.common.text import normalize_phrase
from hipporag_neo4j.embedding.encoder import Embedder
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.linking.model import EnterpriseGraph, SameAs
from hipporag_neo4j.models import check_identifier
from hipporag_neo4j.stores.base import GraphStore
from hipporag_neo4j.stores.neo4j.graph_model import LABELS as OWN_LABELS


def is_own_label(label: str) -> bool:
    """A label of hipporag-neo4j's own nodes, the per-dimension ones included (``PhraseEmbedding384``
    carries every namespace's phrases: linking to it would join this namespace to the others)."""
    for own in OWN_LABELS:
        stem = own.removesuffix("DIM")
        if label == own or (stem != own and label.startswith(stem) and label[len(stem) :].isdigit()):
            return True
    return False


class LinkReport(BaseModel):
    label: str
    property: str
    nodes: int = 0
    exact: int = 0
    embedding: int = 0
    unmatched: int = 0
    new_links: int = 0


def link_nodes(
    store: GraphStore,
    embedder: Embedder,
    graph: EnterpriseGraph,
    label: str,
    prop: str,
    *,
    min_similarity: float = 0.9,
    batch_size: int = 256,
) -> LinkReport:
    check_identifier(label, "label")
    check_identifier(prop, "property")
    if is_own_label(label):
        raise InputError(f"{label} is one of hipporag-neo4j's own labels; link to the nodes of your graph")
    report = LinkReport(label=label, property=prop)
    for batch in graph.node_values(label, prop, batch_size):
        report.nodes += len(batch)
        names = {node_id: normalize_phrase(value) for node_id, value in batch}
        exact = store.phrases_by_name({n for n in names.values() if n})
        links = [SameAs(exact[n].id, node_id, 1.0, "exact") for node_id, n in names.items() if n in exact]
        rest = [(node_id, n) for node_id, n in names.items() if n and n not in exact]
        if rest:
            vectors = embedder.encode([n for _, n in rest])
            for (node_id, _), hits in zip(
                rest, store.nearest_phrases(vectors, 1, min_similarity), strict=True
            ):
                if hits:
                    links.append(SameAs(hits[0].id, node_id, float(hits[0].similarity), "embedding"))
        report.exact += sum(1 for x in links if x.method == "exact")
        report.embedding += sum(1 for x in links if x.method == "embedding")
        report.unmatched += len(batch) - len(links)
        if links:
            report.new_links += graph.write_links(links, label)
    return report


def unlink_nodes(graph: EnterpriseGraph, label: str | None = None) -> int:
    """Remove the SAME_AS links (to ``label`` nodes, or all); returns how many were removed."""
    return graph.delete_links(check_identifier(label, "label") if label else None)
