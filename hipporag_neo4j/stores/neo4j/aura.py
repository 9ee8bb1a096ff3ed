"""Aura Graph Analytics (serverless GDS sessions) behind a small interface of ours.

:class:`SessionManager` and :class:`GdsSession` are all the ``aura`` PPR engine uses; :class:`AuraSessions`
implements them with the ``graphdatascience`` 2.x client (the optional ``[aura]`` extra, imported only
here and only when the engine is chosen), and the tests implement them with a fake.

Why the client, and which of its calls. GDS sessions are reached two ways: the Cypher API inside AuraDB
(a remote projection, ``gds.graph.project.remote``, then algorithm calls routed to the session) and the
Python client. A remote projection identifies nodes by the database's internal ids, which Cypher maps
back to nodes only through the deprecated ``id()`` function (or by parsing ``elementId``), and the GDS
manual's "Aura Graph Analytics" page says the Cypher API serves only sessions attached to AuraDB
(Professional, Business Critical, Virtual Dedicated Cloud), while the client also serves self-managed
Neo4j >= 5.24 (with a cloud location, ``neo4j.aura.cloud_provider``/``cloud_region``). The client's
``gds.graph.construct``
takes node and relationship tables over Arrow instead: the engine builds them from the graph it reads
anyway (the store's in-process copy, version-checked, causally consistent), numbers
the nodes itself and so maps scores back without ``id()``; PageRank then runs in the session with
weighted source nodes (``gds.page_rank.stream(G, source_nodes=[(id, weight), ...])``). Memory comes from
``GdsSessions.estimate(node_count, relationship_count, algorithms=["pageRank"])`` unless set.

Sessions cost money while they run: the store never starts one unless ``neo4j.ppr_engine=aura``; it
reuses one session per database and namespace (:func:`session_name`), projects once per graph version,
drops older graphs in the session, and leaves the session to expire after its TTL unless deleted
(:meth:`SessionManager.delete`, ``hipporag-neo4j aura sessions delete``).

Not used on a self-managed GDS plugin. There the client's memory estimate before projecting is the
``gds.graph.project.estimate`` procedure called over Cypher (graphdatascience 2.2,
``procedure_surface/cypher/catalog/projection_cypher_endpoints.py``), which the store could call without
the client, and its Arrow projection needs GDS Enterprise with the Arrow server enabled. Nothing of either
has been run or measured here (no server).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from hipporag_neo4j.errors import ConfigError, StoreError
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.neo4j.cypher import safe_identifier

#: The algorithm the session is sized for.
ALGORITHMS = ["pageRank"]
EXTRA_HINT = "pip install 'hipporag-neo4j[aura]'"


class SessionError(StoreError):
    """A GDS session failed, expired, or could not be created."""


def session_name(database: str, namespace: str) -> str:
    """One session per database and namespace (both plain identifiers)."""
    return f"hipporag-{safe_identifier(database, 'database')}-{safe_identifier(namespace, 'namespace')}"


def session_graph_name(kind: str, version: int) -> str:
    return f"hipporag-{kind}-v{version}"


@dataclass(frozen=True)
class SessionSummary:
    """One session as ``aura sessions list`` shows it."""

    name: str
    memory: str
    status: str
    expiry: str | None  #: the session's hard end (Aura's maximum lifetime), whatever its TTL
    ttl: str | None = None  #: idle time before Aura deletes it (renewed by every use)


class GdsSession(Protocol):
    """One running session: graphs constructed in it, PageRank on them."""

    def construct(
        self,
        graph_name: str,
        node_count: int,
        sources: Sequence[int],
        targets: Sequence[int],
        weights: Sequence[float],
    ) -> None:
        """Graph ``graph_name`` with nodes 0..node_count-1 and weighted directed relationships."""
        ...

    def page_rank(
        self,
        graph_name: str,
        source_nodes: list[tuple[int, float]],
        damping: float,
        max_iterations: int,
        tolerance: float,
    ) -> dict[int, float]:
        """Unnormalised scores by node id (GDS PageRank, weighted sources, ``weight`` property)."""
        ...

    def drop(self, graph_name: str) -> None: ...

    def close(self) -> None: ...


class SessionManager(Protocol):
    def estimate(self, node_count: int, relationship_count: int) -> str: ...

    def get_or_create(self, name: str, memory: str, ttl: timedelta) -> GdsSession: ...

    def list(self) -> list[SessionSummary]: ...

    def delete(self, name: str) -> bool: ...


def aura_problem(settings: Neo4jSettings) -> str | None:
    """Why Aura Graph Analytics sessions (``neo4j.ppr_engine=aura``, ``aura sessions``) cannot be
    reached from here, or None."""
    try:
        import graphdatascience  # noqa: F401
    except ImportError:
        return f"Aura Graph Analytics (neo4j.ppr_engine=aura) needs the graphdatascience client: {EXTRA_HINT}"
    if not settings.aura.client_id or settings.aura.client_secret is None:
        return (
            "Aura Graph Analytics (neo4j.ppr_engine=aura) needs Aura API credentials: neo4j.aura.client_id "
            "and neo4j.aura.client_secret (HIPPORAG_NEO4J__AURA__CLIENT_ID, "
            "HIPPORAG_NEO4J__AURA__CLIENT_SECRET; made in the Aura console under API credentials)"
        )
    return None


class _ClientSession:
    """:class:`GdsSession` over an ``AuraGraphDataScience`` object."""

    def __init__(self, gds: Any) -> None:
        self.gds = gds

    def construct(
        self,
        graph_name: str,
        node_count: int,
        sources: Sequence[int],
        targets: Sequence[int],
        weights: Sequence[float],
    ) -> None:
        import pandas as pd  # comes with the [aura] extra

        nodes = pd.DataFrame({"nodeId": range(node_count)})
        relationships = pd.DataFrame(
            {"sourceNodeId": list(sources), "targetNodeId": list(targets), "weight": list(weights)}
        )
        try:
            self.gds.graph.construct(graph_name, nodes, relationships, overwrite=True)
        except Exception as exc:  # the client raises many kinds (Arrow, HTTP, its own)
            raise SessionError(f"GDS session: constructing {graph_name} failed: {exc}") from exc

    def page_rank(
        self,
        graph_name: str,
        source_nodes: list[tuple[int, float]],
        damping: float,
        max_iterations: int,
        tolerance: float,
    ) -> dict[int, float]:
        try:
            graph = self.gds.graph.get(graph_name)
            frame = self.gds.page_rank.stream(
                graph,
                damping_factor=damping,
                tolerance=tolerance,
                max_iterations=max_iterations,
                relationship_weight_property="weight",
                source_nodes=source_nodes,
            )
        except Exception as exc:
            raise SessionError(f"GDS session: PageRank on {graph_name} failed: {exc}") from exc
        return {int(n): float(s) for n, s in zip(frame["nodeId"], frame["score"], strict=True)}

    def drop(self, graph_name: str) -> None:
        try:
            self.gds.graph.drop(graph_name, fail_if_missing=False)
        except Exception as exc:
            raise SessionError(f"GDS session: dropping {graph_name} failed: {exc}") from exc

    def close(self) -> None:
        self.gds.close()


class AuraSessions:
    """:class:`SessionManager` with ``graphdatascience.session.GdsSessions`` (2.x)."""

    def __init__(self, settings: Neo4jSettings) -> None:
        problem = aura_problem(settings)
        if problem:
            raise ConfigError(problem)
        from graphdatascience.session import AuraAPICredentials, GdsSessions

        aura = settings.aura
        assert aura.client_id is not None and aura.client_secret is not None
        self.settings = settings
        self.sessions = GdsSessions(
            api_credentials=AuraAPICredentials(
                client_id=aura.client_id,
                client_secret=aura.client_secret.get_secret_value(),
                project_id=aura.project_id,
            )
        )

    def estimate(self, node_count: int, relationship_count: int) -> str:
        try:
            memory = self.sessions.estimate(
                node_count=node_count,
                relationship_count=relationship_count,
                relationship_property_count=1,  # the weight PageRank reads
                algorithms=ALGORITHMS,
            )
        except Exception as exc:  # HTTP and authentication errors of the Aura API
            raise SessionError(f"Aura API: estimating session memory failed: {exc}") from exc
        return str(memory.value)

    def get_or_create(self, name: str, memory: str, ttl: timedelta) -> GdsSession:
        """An attached session for AuraDB; for a self-managed Neo4j the client needs a cloud location
        (``neo4j.aura.cloud_provider``/``cloud_region``) and refuses one for AuraDB."""
        from graphdatascience.session import CloudLocation, DbmsConnectionInfo

        s, aura = self.settings, self.settings.aura
        location = None
        if aura.cloud_provider is not None and aura.cloud_region is not None:
            location = CloudLocation(provider=aura.cloud_provider, region=aura.cloud_region)
        try:
            gds = self.sessions.get_or_create(
                session_name=name,
                memory=memory,
                db_connection=DbmsConnectionInfo(
                    uri=s.uri,
                    username=s.user,
                    password=s.password.get_secret_value(),
                    database=s.database,
                    aura_instance_id=aura.instance_id,
                ),
                ttl=ttl,
                cloud_location=location,
                timeout=aura.session_start_timeout_seconds,  # the client waits forever without one
                show_progress=False,
            )
        except Exception as exc:
            raise SessionError(f"GDS session {name}: could not get or create it: {exc}") from exc
        return _ClientSession(gds)

    def list(self) -> list[SessionSummary]:
        try:
            infos = self.sessions.list()
        except Exception as exc:  # HTTP and authentication errors of the Aura API
            raise SessionError(f"Aura API: listing GDS sessions failed: {exc}") from exc
        return [
            SessionSummary(
                str(info.name),
                str(info.memory),
                str(info.status),
                str(info.expiry_date) if info.expiry_date else None,
                str(info.ttl) if getattr(info, "ttl", None) else None,
            )
            for info in infos
        ]

    def delete(self, name: str) -> bool:
        try:
            return bool(self.sessions.delete(session_name=name))
        except Exception as exc:
            raise SessionError(f"Aura API: deleting GDS session {name} failed: {exc}") from exc
