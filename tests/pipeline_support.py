"""Helpers for pipeline tests: a HippoRAG over an embedded store with fake components."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fakes import FixedQueryNER, HashEmbedder, TableExtractor

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.settings import load_settings


def make_memory(
    path: Path,
    table: dict[str, list[list[str]]],
    queries: dict[str, list[str]] | None = None,
    **retrieval: object,
) -> HippoRAG:
    settings = load_settings({"store": {"path": str(path)}, "retrieval": retrieval or {}})
    return HippoRAG(
        settings,
        embedder=HashEmbedder(),
        extractor=TableExtractor(table),
        query_ner=FixedQueryNER(queries or {}),
    )


def dump_embedded(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the embedded store's graph tables (sorted), for exact comparisons."""
    conn = sqlite3.connect(path / "graph.sqlite")
    try:
        return {
            table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall())
            for table in ("passages", "phrases", "mentions", "facts", "states", "synonyms")
        }
    finally:
        conn.close()
