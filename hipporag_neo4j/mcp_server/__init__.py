"""The MCP server (``hipporag-neo4j mcp``): remember, recall, forget and stats as MCP tools.

Built with the official ``mcp`` SDK (its FastMCP API, named ``MCPServer`` since mcp 2); needs the
``[mcp]`` extra. :func:`~hipporag_neo4j.mcp_server.tools.build_mcp_server` builds it over a
:class:`~hipporag_neo4j.service.KnowledgeService`.
"""
