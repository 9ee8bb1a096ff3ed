"""hipporag-neo4j: HippoRAG long-term memory for LLMs, with its knowledge graph in Neo4j."""

__version__ = "0.1.0"
