"""Shared test helpers."""

from __future__ import annotations

from typing import Any

import numpy as np

from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import (
    FactRecord,
    PassageRecord,
)
from hipporag_neo4j.stores.neo4j import Neo4jStore
from tests.support.neo4j_fake import FakeDriver, server


def vec(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def opened_driver(meta: dict[str, Any] | None = None, **server_kw: Any) -> FakeDriver:
    driver = server(FakeDriver(), **server_kw)
    driver.on("meta_read", [meta] if meta else [])
    driver.on(
        "meta_create",
        lambda p: [
            {
                "schema_version": p["schema_version"],
                "embedding_model": p["embedding_model"],
                "embedding_dim": p["embedding_dim"],
                "graph_version": 0,
            }
        ],
    )
    driver.on("meta_bump_version", [{"graph_version": 1}])
    return driver


def open_store(driver: FakeDriver, dim: int = 384, **kw: Any) -> Neo4jStore:
    store = Neo4jStore(settings(**kw), driver=driver)  # type: ignore[arg-type]
    store.open("all-MiniLM-L6-v2", dim)
    return store


def passage(pid: str, mentions: dict[str, int], facts: list[FactRecord] | None = None) -> PassageRecord:
    return PassageRecord(
        Passage(id=pid, text=f"text {pid}", title=f"T{pid}", metadata={"k": pid}),
        vec(1, 0, 0),
        mentions,
        facts or [],
    )


def write_driver(existing: set[str]) -> FakeDriver:
    driver = opened_driver()
    driver.on("read_existing_passages", lambda p: [{"id": i} for i in p["ids"] if i in existing])
    for name in ("write_phrases", "write_passages", "write_mentions", "write_facts", "write_states"):
        driver.on(name, written("rows"))
    return driver


def settings(**kw: Any) -> Neo4jSettings:
    return Neo4jSettings(uri="neo4j://localhost:7687", namespace="kb", **kw)


def written(param: str) -> Any:
    return lambda p: [{"written": len(p["rows"])}]
