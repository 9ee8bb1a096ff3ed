"""The enterprise graph beside a HippoRAG's store: the database itself on Neo4j, ``enterprise.sqlite``
in the store directory on the embedded store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hipporag_neo4j.linking.model import EnterpriseGraph
from hipporag_neo4j.settings import Settings
from hipporag_neo4j.stores.base import GraphStore


@contextmanager
def open_enterprise_graph(settings: Settings, store: GraphStore) -> Iterator[EnterpriseGraph]:
    """The enterprise graph beside ``store`` (configured by ``settings``)."""
    if settings.backend == "neo4j":
        from hipporag_neo4j.linking.neo4j import Neo4jEnterpriseGraph
        from hipporag_neo4j.stores.neo4j.store import Neo4jStore

        inner = getattr(store, "inner", store)  # the service wraps the store
        assert isinstance(inner, Neo4jStore)
        yield Neo4jEnterpriseGraph(inner)
    else:
        from hipporag_neo4j.linking.embedded import EmbeddedEnterpriseGraph

        with EmbeddedEnterpriseGraph(settings.embedded_store_path) as graph:
            yield graph
