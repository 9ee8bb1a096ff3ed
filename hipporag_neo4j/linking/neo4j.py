"""The enterprise graph on Neo4j: the user's own nodes in the same database, linked with
``(:Phrase)-[:SAME_AS {score, method}]->(node)``. Statements are the ``link_*.cypher`` files; the label,
property and relationship types are parameters (dynamic labels, Neo4j 5.26+) and are also checked as
plain identifiers. Nodes are addressed by ``elementId`` and only read."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from hipporag_neo4j.linking.model import EnterpriseEdge, LinkedNode, SameAs, check_identifier
from hipporag_neo4j.stores.neo4j.store import Neo4jStore


class Neo4jEnterpriseGraph:
    def __init__(self, store: Neo4jStore) -> None:
        self.store = store

    def node_values(self, label: str, prop: str, batch_size: int) -> Iterator[list[tuple[str, str]]]:
        label, prop = check_identifier(label, "label"), check_identifier(prop, "property")
        skip = 0
        while True:
            rows = self.store.runner.read(
                "link_node_values", label=label, property=prop, skip=skip, limit=batch_size
            )
            batch = [(str(r["id"]), str(r["value"])) for r in rows if str(r["value"]).strip()]
            if batch:
                yield batch
            if len(rows) < batch_size:
                return
            skip += batch_size

    def write_links(self, links: Sequence[SameAs], label: str) -> int:
        rows = [
            {"phrase_id": x.phrase_id, "node_id": x.node_id, "score": x.score, "method": x.method}
            for x in links
        ]
        namespace = self.store.namespace
        records = self.store.runner.write(
            lambda tx: tx.run_batched("link_write_same_as", "rows", rows, namespace=namespace)
        )
        return sum(int(r["created"] or 0) for r in records)

    def delete_links(self, label: str | None = None) -> int:
        label = check_identifier(label, "label") if label else None
        namespace = self.store.namespace
        records = self.store.runner.write(
            lambda tx: tx.run("link_delete_same_as", namespace=namespace, label=label)
        )
        return int(records[0]["removed"]) if records else 0

    def links_from_phrases(self, phrase_ids: Sequence[str]) -> dict[str, list[LinkedNode]]:
        rows = self.store.runner.read_batched(
            "link_from_phrases", "ids", list(phrase_ids), namespace=self.store.namespace
        )
        found: dict[str, list[LinkedNode]] = {}
        for r in rows:
            node = LinkedNode(
                r["node_id"], tuple(sorted(r["labels"])), r["name"], float(r["score"]), r["method"]
            )
            found.setdefault(r["phrase_id"], []).append(node)
        return found

    def links_to_nodes(self, node_ids: Sequence[str]) -> dict[str, list[SameAs]]:
        rows = self.store.runner.read(
            "link_to_nodes", namespace=self.store.namespace, node_ids=list(node_ids)
        )
        found: dict[str, list[SameAs]] = {}
        for r in rows:
            found.setdefault(r["node_id"], []).append(
                SameAs(r["phrase_id"], r["node_id"], float(r["score"]), r["method"])
            )
        return found

    def neighbours(self, node_ids: Sequence[str], rel_types: Sequence[str]) -> list[EnterpriseEdge]:
        types = [check_identifier(t, "relationship type") for t in rel_types]
        if not types or not node_ids:
            return []
        rows = self.store.runner.read("link_neighbours", node_ids=list(node_ids), types=types)
        edges = {EnterpriseEdge(r["source"], r["type"], r["target"]) for r in rows}
        return sorted(edges, key=lambda e: (e.source, e.type, e.target))
