"""The GDS in-memory projection of a namespace's phrase graph, named by graph version.

Name: ``hipporag.<database>.<namespace>.v<version>`` (database and namespace are plain identifiers, so
the dots make the prefix unambiguous). Every write bumps the version, so the first query after a write
projects anew and then drops the namespace's older projections; queries in between reuse the warm one.
A projection lives until dropped or the server restarts; :meth:`ProjectionCatalog.ensure` checks the
catalog rather than trusting its own memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.stores.neo4j.cypher import safe_identifier
from hipporag_neo4j.stores.neo4j.writer import CypherRunner


def graph_prefix(database: str, namespace: str) -> str:
    return f"hipporag.{safe_identifier(database, 'database')}.{safe_identifier(namespace, 'namespace')}.v"


def graph_name(database: str, namespace: str, version: int) -> str:
    if version < 0:
        raise ValueError("graph version must be >= 0")
    return f"{graph_prefix(database, namespace)}{version}"


@dataclass(frozen=True)
class Projection:
    name: str
    version: int
    node_count: int
    relationship_count: int


class ProjectionCatalog:
    """Keeps one warm projection per namespace, re-projected when the graph version moves on."""

    def __init__(self, runner: CypherRunner, database: str, namespace: str) -> None:
        self.runner = runner
        self.database = database
        self.namespace = namespace
        self.current: Projection | None = None
        self.projections_made = 0

    def _info(self, name: str, version: int) -> Projection | None:
        rows = self.runner.read("gds_graph_info", leader=True, graph_name=name)
        if not rows:
            return None
        row = rows[0]
        return Projection(name, version, int(row["node_count"]), int(row["relationship_count"]))

    def _project(self, name: str, version: int) -> Projection:
        try:
            rows = self.runner.read(
                "gds_project_phrase_graph", leader=True, graph_name=name, namespace=self.namespace
            )
        except StoreError:
            # a concurrent process, or a retry of ours whose first commit did go through, made it already
            made = self._info(name, version)
            if made is None:
                raise
            return made
        self.projections_made += 1
        if not rows:
            raise StoreError(f"GDS projection {name} returned nothing")
        row = rows[0]
        return Projection(name, version, int(row["node_count"]), int(row["relationship_count"]))

    def ensure(self, version: int) -> Projection:
        """The projection of graph ``version``, made if missing; older ones of the namespace dropped."""
        name = graph_name(self.database, self.namespace, version)
        if self.current is not None and self.current.name == name:
            return self.current
        projection = self._info(name, version) or self._project(name, version)
        self.drop_stale(keep=name)
        self.current = projection
        return projection

    def drop_stale(self, keep: str | None = None) -> list[str]:
        """Drop the namespace's projections other than ``keep``; the names dropped."""
        rows = self.runner.read(
            "gds_drop_stale_graphs",
            leader=True,
            prefix=graph_prefix(self.database, self.namespace),
            graph_name=keep or "",
        )
        return [str(row["dropped"]) for row in rows]

    def forget(self) -> None:
        """Re-check the catalog on the next :meth:`ensure` (after a failed PageRank call)."""
        self.current = None
