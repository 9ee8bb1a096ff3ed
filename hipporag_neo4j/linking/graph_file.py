"""An entity graph as JSONL: one node or relationship per line.

    {"node": "c1", "labels": ["Customer"], "properties": {"name": "Acme Robotics"}}
    {"node": "c2", "labels": ["Company"], "properties": {"name": "Acme Holdings"}}
    {"source": "c1", "type": "SUBSIDIARY_OF", "target": "c2"}

Labels and relationship types must be plain identifiers; a bad line stops the import with its number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hipporag_neo4j.errors import InputError
from hipporag_neo4j.linking.model import EnterpriseEdge, EnterpriseNode
from hipporag_neo4j.models import check_identifier


@dataclass
class EntityGraph:
    nodes: list[EnterpriseNode]
    edges: list[EnterpriseEdge]


def load_entity_graph(path: str | Path) -> EntityGraph:
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read entity graph {path}: {exc}") from exc
    nodes: dict[str, EnterpriseNode] = {}
    edges: list[EnterpriseEdge] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: not JSON ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise InputError(f"{where}: expected an object with 'node' or 'source'/'type'/'target'")
        try:
            if "node" in record:
                labels = tuple(check_identifier(str(x), "label") for x in record.get("labels") or [])
                properties = record.get("properties") or {}
                if not labels or not isinstance(properties, dict):
                    raise InputError("a node needs 'labels' (a non-empty list) and 'properties' (an object)")
                nodes[str(record["node"])] = EnterpriseNode(str(record["node"]), labels, properties)
            elif {"source", "type", "target"} <= set(record):
                edge_type = check_identifier(str(record["type"]), "relationship type")
                edges.append(EnterpriseEdge(str(record["source"]), edge_type, str(record["target"])))
            else:
                raise InputError("expected 'node', or 'source', 'type' and 'target'")
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    for edge in edges:
        missing = [end for end in (edge.source, edge.target) if end not in nodes]
        if missing:
            raise InputError(f"{path}: relationship {edge.type} refers to unknown node(s) {missing}")
    return EntityGraph(list(nodes.values()), edges)
