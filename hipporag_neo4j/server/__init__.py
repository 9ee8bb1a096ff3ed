"""The REST API (``hipporag-neo4j serve``): FastAPI over :class:`~hipporag_neo4j.service.KnowledgeService`.

Needs the ``[server]`` extra (fastapi, uvicorn). :func:`~hipporag_neo4j.server.app.create_app` builds the app.
"""
