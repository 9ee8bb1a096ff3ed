"""Captions of passages and facts written before they were stored (``caption``, the name Neo4j Browser
shows: common/captions.py): filled in on open, in bounded batches, idempotently (only nodes without one
are read, so a second open, or two at once, finds nothing or writes the same values)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from hipporag_neo4j.common.captions import fact_caption, passage_caption
from hipporag_neo4j.stores.neo4j.runner import CypherRunner, CypherTransaction

log = logging.getLogger(__name__)

BATCH = 5_000

_CAPTIONS: dict[str, Callable[[Any], str]] = {
    "passage": lambda r: passage_caption(str(r["id"]), r["title"]),
    "fact": lambda r: fact_caption(str(r["text"] or ""), str(r["predicate"] or "")),
}


def backfill_captions(runner: CypherRunner, namespace: str, batch: int = BATCH) -> dict[str, int]:
    """Give every passage and fact of ``namespace`` without a caption its caption; how many of each."""
    done: dict[str, int] = {}
    for kind, caption in _CAPTIONS.items():
        done[kind] = 0
        while True:
            found = runner.read(f"read_missing_captions_{kind}", namespace=namespace, limit=batch)
            rows = [{"id": r["id"], "caption": caption(r)} for r in found]
            if not rows:
                break

            def step(tx: CypherTransaction, kind: str = kind, rows: list[dict[str, Any]] = rows) -> int:
                return sum(
                    int(r["written"])
                    for r in tx.run_batched(f"write_captions_{kind}", "rows", rows, namespace=namespace)
                )

            written = runner.write(step)
            done[kind] += written
            if written == 0 or len(rows) < batch:  # the rest deleted meanwhile, or the last batch
                break
    if any(done.values()):
        log.info(
            "namespace %r: captions added to %d passages and %d facts",
            namespace,
            done["passage"],
            done["fact"],
        )
    return done
