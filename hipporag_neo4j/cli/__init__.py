"""The command line, the top floor: ``hipporag-neo4j`` (and ``python -m hipporag_neo4j``).

* :mod:`.main`: the click group and the store commands (index, query, list, delete, drop, doctor, demo);
* :mod:`.support`: what the commands share (context, output, errors);
* :mod:`.link`, :mod:`.evaluate`, :mod:`.serve`, :mod:`.mcp`, :mod:`.aura`: a feature's commands each.

Every command is a thin layer over the Python API; nothing below this floor imports it.
"""

from hipporag_neo4j.cli.main import main

__all__ = ["main"]
