"""The graph explorer: a web page served by ``serve`` at ``/explorer`` (Ask, Explore, Manage).

:func:`~hipporag_neo4j.server.explorer.routes.explorer_router` holds its routes; the page itself is in
``static/``. The graph drawing library (vis-network) is read from the installed ``pyvis`` package (the
``[server]`` extra), never from a CDN.
"""
