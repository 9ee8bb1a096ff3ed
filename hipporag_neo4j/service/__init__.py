"""The knowledge service: one :class:`~hipporag_neo4j.api.HippoRAG` per process shared by many callers.

The REST server (:mod:`hipporag_neo4j.server`) and the MCP server (:mod:`hipporag_neo4j.mcp_server`) are
thin layers over :class:`KnowledgeService`: it loads the model once, lets many readers query at once,
and runs every write (index, delete) on one writer thread, in order, as jobs when they are large.
"""

from hipporag_neo4j.service.core import KnowledgeService, NotReadyError, ServiceStoppedError
from hipporag_neo4j.service.jobs import Job, JobStatus

__all__ = ["Job", "JobStatus", "KnowledgeService", "NotReadyError", "ServiceStoppedError"]
