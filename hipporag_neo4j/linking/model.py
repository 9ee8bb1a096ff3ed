"""The enterprise side: nodes, relationships, links, and the small protocol linking needs of it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from hipporag_neo4j.errors import InputError

#: Labels, property names and relationship types are spliced into queries on Neo4j: only these pass.
SAFE_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")

LinkMethod = Literal["exact", "embedding"]


def check_identifier(value: str, what: str) -> str:
    if not SAFE_IDENTIFIER.match(value):
        raise InputError(
            f"{what} {value!r} is not a plain identifier "
            "(letters, digits and underscores, not starting with a digit)"
        )
    return value


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
class LinkedNode:
    node_id: str
    labels: tuple[str, ...]
    name: str | None
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

    def links_from_phrases(self, phrase_ids: Sequence[str]) -> dict[str, list[LinkedNode]]: ...

    def links_to_nodes(self, node_ids: Sequence[str]) -> dict[str, list[SameAs]]: ...

    def neighbours(self, node_ids: Sequence[str], rel_types: Sequence[str]) -> list[EnterpriseEdge]:
        """Relationships of these types touching these nodes, either direction."""
        ...
