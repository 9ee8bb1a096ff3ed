"""hipporag-neo4j: HippoRAG long-term memory for LLMs, with its knowledge graph in Neo4j."""

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.models import Answer, IndexReport, PassageInput, RetrievalResult, StoreStats
from hipporag_neo4j.settings import Settings, load_settings

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "HippoRAG",
    "IndexReport",
    "PassageInput",
    "RetrievalResult",
    "Settings",
    "StoreStats",
    "__version__",
    "load_settings",
]
