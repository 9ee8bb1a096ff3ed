"""The GDS in-memory projections of a namespace, named by graph version.

Two kinds, each projected on first use:

* ``phrases``: the phrase graph (RELATION and SYNONYM edges), for HippoRAG's PPR;
* ``passages``: the phrase graph plus Passage nodes joined by MENTIONS edges (weight 1), for HippoRAG 2.

Names: ``hipporag.<database>.<namespace>.v<version>`` and
``hipporag.<database>.<namespace>.passages.v<version>`` (database and namespace are plain identifiers,
so the dots make each prefix unambiguous). Retrieval over the joined graph has catalogs of its own per
kind and set of relationship types (``...joined.<digest>.v<version>``, projected by
``gds_project_*_joined``). Every write bumps the version, so the first query after a
write projects anew and then drops the namespace's projections of that kind with a LOWER version;
queries in between reuse the warm one. A newer projection is never dropped: another process that has
read the newer version may be using it, and a process that read an older version finds its own
projection gone at worst, re-reads the version and moves on.

A projection lives in the server's heap until dropped or the server restarts: :meth:`ProjectionCatalog.close`
drops the current one when this process made it (``doctor`` shows what the namespace's projections use).
:meth:`ProjectionCatalog.ensure` checks the catalog rather than trusting its own memory.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.stores.base import GraphJoin
from hipporag_neo4j.stores.neo4j.cypher import safe_identifier
from hipporag_neo4j.stores.neo4j.runner import CypherRunner

ProjectionKind = Literal["phrases", "passages"]

_PROJECT_STATEMENT: dict[ProjectionKind, str] = {
    "phrases": "gds_project_phrase_graph",
    "passages": "gds_project_passage_graph",
}
_KIND_INFIX: dict[ProjectionKind, str] = {"phrases": "", "passages": "passages."}


def namespace_prefix(database: str, namespace: str) -> str:
    """What every projection name of the namespace starts with (both kinds)."""
    return f"hipporag.{safe_identifier(database, 'database')}.{safe_identifier(namespace, 'namespace')}."


def join_infix(join: GraphJoin | None) -> str:
    """``joined.<digest of the relationship types>.`` for a joined graph, else nothing."""
    if join is None:
        return ""
    digest = hashlib.sha256("\n".join(sorted(join.rel_types)).encode()).hexdigest()[:12]
    return f"joined.{digest}."


def graph_prefix(
    database: str, namespace: str, kind: ProjectionKind = "phrases", join: GraphJoin | None = None
) -> str:
    return f"{namespace_prefix(database, namespace)}{_KIND_INFIX[kind]}{join_infix(join)}v"


def graph_name(
    database: str,
    namespace: str,
    version: int,
    kind: ProjectionKind = "phrases",
    join: GraphJoin | None = None,
) -> str:
    if version < 0:
        raise ValueError("graph version must be >= 0")
    return f"{graph_prefix(database, namespace, kind, join)}{version}"


@dataclass(frozen=True)
class Projection:
    name: str
    version: int
    node_count: int
    relationship_count: int

    @property
    def empty(self) -> bool:
        """No node at all: GDS made no graph (the projection aggregation saw no row)."""
        return self.node_count == 0


class ProjectionCatalog:
    """Keeps one warm projection of one kind per namespace, re-projected when the graph version moves on."""

    def __init__(
        self,
        runner: CypherRunner,
        database: str,
        namespace: str,
        kind: ProjectionKind = "phrases",
        join: GraphJoin | None = None,
    ) -> None:
        self.runner = runner
        self.database = database
        self.namespace = namespace
        self.kind: ProjectionKind = kind
        self.join = join
        self.current: Projection | None = None
        self.projections_made = 0
        self.made_here: set[str] = set()  # names this process projected (dropped on close when current)

    def _info(self, name: str, version: int) -> Projection | None:
        rows = self.runner.read("gds_graph_info", leader=True, graph_name=name)
        if not rows:
            return None
        row = rows[0]
        return Projection(name, version, int(row["node_count"]), int(row["relationship_count"]))

    def _project(self, name: str, version: int) -> Projection:
        statement, params = _PROJECT_STATEMENT[self.kind], dict[str, Any]()
        if self.join is not None:
            statement, params = f"{statement}_joined", {"types": list(self.join.rel_types)}
        try:
            rows = self.runner.read(
                statement, leader=True, graph_name=name, namespace=self.namespace, **params
            )
        except StoreError:
            # a concurrent process, or a retry of ours whose first commit did go through, made it already
            made = self._info(name, version)
            if made is None:
                raise
            return made
        if not rows:
            raise StoreError(f"GDS projection {name} returned nothing")
        row = rows[0]
        if row["graph_name"] is None:
            # gds.graph.project over no row returns null and makes no graph: an empty namespace
            return Projection(name, version, 0, 0)
        self.projections_made += 1
        self.made_here.add(name)
        return Projection(name, version, int(row["node_count"]), int(row["relationship_count"]))

    def ensure(self, version: int) -> Projection:
        """The projection of graph ``version``, made if missing; older ones of the namespace dropped."""
        name = graph_name(self.database, self.namespace, version, self.kind, self.join)
        if self.current is not None and self.current.name == name:
            return self.current
        projection = self._info(name, version) or self._project(name, version)
        self.drop_older(version)
        self.current = projection
        return projection

    def drop_older(self, version: int) -> list[str]:
        """Drop the namespace's projections of this kind with a version lower than ``version``."""
        rows = self.runner.read(
            "gds_drop_stale_graphs",
            leader=True,
            prefix=graph_prefix(self.database, self.namespace, self.kind, self.join),
            version=version,
        )
        dropped = [str(row["dropped"]) for row in rows]
        self.made_here.difference_update(dropped)
        return dropped

    def forget(self) -> None:
        """Re-check the catalog on the next :meth:`ensure` (after a failed PageRank call)."""
        self.current = None

    def close(self) -> list[str]:
        """Drop the current projection if this process made it (frees the GDS heap); the names dropped.

        Another process using the same version finds it gone and projects it again."""
        current, self.current = self.current, None
        if current is None or current.name not in self.made_here:
            return []
        self.made_here.discard(current.name)
        rows = self.runner.read("gds_drop_graph", leader=True, graph_name=current.name)
        return [str(row["dropped"]) for row in rows]
