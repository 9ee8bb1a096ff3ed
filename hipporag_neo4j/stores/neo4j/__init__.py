"""The Neo4j store: graph in Neo4j, vector indexes, PPR with GDS (or in process), Cypher in ``cypher/``."""

from hipporag_neo4j.stores.neo4j.capabilities import Neo4jCapabilities
from hipporag_neo4j.stores.neo4j.store import Neo4jStore

__all__ = ["Neo4jCapabilities", "Neo4jStore"]
