"""The enterprise graph on Neo4j: the user's own nodes in the same database, linked with
``(:Phrase)-[:SAME_AS {score, method}]->(node)``. Statements are the ``link_*.cypher`` files; the label,
property and relationship types are parameters (dynamic labels, Neo4j 5.26+) and are also checked as
plain identifiers. Nodes are addressed by ``elementId`` and only read. Linking and unlinking bump the
namespace's graph version, so joined graphs (cached per version) see the new links."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from hipporag_neo4j.linking.model import NodeLink, SameAs
from hipporag_neo4j.models import LinkedEntity, check_identifier
from hipporag_neo4j.stores.neo4j.runner import CypherTransaction, Record
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

        def work(tx: CypherTransaction) -> list[Record]:
            tx.run("meta_bump_version", namespace=namespace)  # joined graphs are cached per version
            return tx.run_batched("link_write_same_as", "rows", rows, namespace=namespace)

        return sum(int(r["created"] or 0) for r in self.store.runner.write(work))

    def delete_links(self, label: str | None = None) -> int:
        label = check_identifier(label, "label") if label else None
        namespace = self.store.namespace

        def work(tx: CypherTransaction) -> list[Record]:
            tx.run("meta_bump_version", namespace=namespace)
            return tx.run("link_delete_same_as", namespace=namespace, label=label)

        records = self.store.runner.write(work)
        return int(records[0]["removed"]) if records else 0

    def links_to_nodes(self, node_ids: Sequence[str]) -> dict[str, list[NodeLink]]:
        rows = self.store.runner.read(
            "link_to_nodes", namespace=self.store.namespace, node_ids=list(node_ids)
        )
        found: dict[str, list[NodeLink]] = {}
        for r in rows:
            found.setdefault(r["node_id"], []).append(
                NodeLink(
                    r["phrase_id"],
                    r["phrase"],
                    int(r["passage_count"]),
                    r["node_id"],
                    float(r["score"]),
                    r["method"],
                )
            )
        return found

    def links_of_passages(self, passage_ids: Sequence[str]) -> dict[str, list[LinkedEntity]]:
        rows = self.store.runner.read_batched(
            "link_of_passages", "ids", list(passage_ids), namespace=self.store.namespace
        )
        found: dict[str, list[LinkedEntity]] = {}
        for r in rows:
            found.setdefault(r["passage_id"], []).append(
                LinkedEntity(
                    node_id=r["node_id"],
                    labels=sorted(r["labels"]),
                    name=None if r["name"] is None else str(r["name"]),
                    via_phrase=r["phrase"],
                    score=float(r["score"]),
                    method=r["method"],
                )
            )
        return found
