from hipporag_neo4j.stores.embedded.store import EmbeddedStore

__all__ = ["EmbeddedStore"]
