"""The enterprise side: nodes, relationships, links, and the small protocol linking needs of it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from hipporag_neo4j.models import LinkedEntity

LinkMethod = Literal["exact", "embedding"]


@dataclass(frozen=True)
class EnterpriseNode:
    id: str
    labels: tuple[str, ...]
    properties: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class EnterpriseEdge:
    source: str
    type: str
    target: str


@dataclass(frozen=True)
class SameAs:
    """``(:Phrase)-[:SAME_AS {score, method}]->(node)``."""

    phrase_id: str
    node_id: str
    score: float
    method: LinkMethod


@dataclass(frozen=True)
class NodeLink:
    """A SAME_AS link seen from the node: the phrase, its name and how many passages mention it."""

    phrase_id: str
    phrase: str
    passage_count: int
    node_id: str
    score: float
    method: LinkMethod


class EnterpriseGraph(Protocol):
    """What linking and seeded retrieval need of the graph the links point into."""

    def node_values(self, label: str, prop: str, batch_size: int) -> Iterator[list[tuple[str, str]]]:
        """(node id, property value as text) of the nodes with ``label`` that have ``prop``, in batches."""
        ...

    def write_links(self, links: Sequence[SameAs], label: str) -> int:
        """MERGE links (one per phrase and node; score and method updated); returns how many were new."""
        ...

    def delete_links(self, label: str | None = None) -> int:
        """Remove the links (to nodes with ``label``, or all); the nodes themselves are never touched."""
        ...

    def links_to_nodes(self, node_ids: Sequence[str]) -> dict[str, list[NodeLink]]:
        """Node id -> the stored phrases linked to it, best link first."""
        ...

    def links_of_passages(self, passage_ids: Sequence[str]) -> dict[str, list[LinkedEntity]]:
        """Passage id -> the nodes linked to the phrases it mentions, best link first."""
        ...
