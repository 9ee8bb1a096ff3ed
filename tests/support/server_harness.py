"""Run the real REST app on uvicorn with test components, as its own process (``python server_harness.py``).

The app is :func:`hipporag_neo4j.server.app.create_app` unchanged; only the components differ: the
hash embedder, an extractor that looks triples up in a table, fixed query entities, and two gates the
test opens from outside (files in ``--gate-dir``):

* ``--hold-extract N``: the N-th extraction call (one per writer step) touches ``extract-entered`` and
  waits for ``extract-release``: the writer is busy but holds no lock.
* ``--hold-synonyms N``: the N-th ``write_synonyms`` that writes edges touches ``write-entered`` and
  waits for ``write-release``: the writer is inside a step's store writes (exclusive lock held).

Each request to ``/stats`` touches ``arrived-<n>`` first, so a test knows its requests reached the app.
Settings come from HIPPORAG_* variables (API key, limits) like the real ``serve``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]  # the checkout: tests.support is importable
sys.path.insert(0, str(HERE))

import uvicorn  # noqa: E402
from starlette.types import ASGIApp, Receive, Scope, Send  # noqa: E402

from hipporag_neo4j.errors import ExtractionError  # noqa: E402
from hipporag_neo4j.models import Extraction, Passage, PassageFailure  # noqa: E402
from hipporag_neo4j.server.app import create_app  # noqa: E402
from hipporag_neo4j.service import KnowledgeService  # noqa: E402
from hipporag_neo4j.settings import load_settings  # noqa: E402
from hipporag_neo4j.stores.embedded import EmbeddedStore  # noqa: E402
from tests.support.fakes import FixedQueryNER, HashEmbedder, TableExtractor  # noqa: E402

GATE_TIMEOUT = 120.0


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + GATE_TIMEOUT
    while not path.exists():
        if time.monotonic() > deadline:
            raise ExtractionError(f"test gate {path} never opened")
        time.sleep(0.01)


class GatedExtractor(TableExtractor):
    def __init__(self, table: dict[str, list[list[str]]], gate_dir: Path, hold: int | None) -> None:
        super().__init__(table)
        self.gate_dir, self.hold, self.count = gate_dir, hold, 0

    def extract(self, passages: Sequence[Passage]) -> list[Extraction | PassageFailure]:
        self.count += 1
        if self.count == self.hold:
            (self.gate_dir / "extract-entered").touch()
            wait_for(self.gate_dir / "extract-release")
        return super().extract(passages)


class GatedStore:
    """The store (embedded, or Neo4j when the settings name a server), with the N-th write_synonyms that
    writes edges held at a gate."""

    def __init__(self, store: Any, gate_dir: Path, hold: int | None) -> None:
        self._store = store
        self.gate_dir, self.hold, self.count = gate_dir, hold, 0

    def write_synonyms(self, edges: Any, *args: Any, **kwargs: Any) -> int:
        if edges:  # count only the calls that write edges
            self.count += 1
            if self.count == self.hold:
                (self.gate_dir / "write-entered").touch()
                wait_for(self.gate_dir / "write-release")
        return self._store.write_synonyms(edges, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class MarkArrivals:
    def __init__(self, app: ASGIApp, gate_dir: Path) -> None:
        self.app, self.gate_dir, self.counter = app, gate_dir, itertools.count(1)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/stats":
            (self.gate_dir / f"arrived-{next(self.counter)}").touch()
        await self.app(scope, receive, send)


def _store(settings: Any, path: Path) -> Any:
    if settings.backend == "neo4j":  # HIPPORAG_NEO4J_URI and HIPPORAG_NAMESPACE from the environment
        from hipporag_neo4j.stores.neo4j.store import Neo4jStore

        return Neo4jStore(settings.neo4j)
    return EmbeddedStore(path)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--table", type=Path, required=True, help="JSON: {text: triples}")
    parser.add_argument("--queries", type=Path, help="JSON: {query: entities}")
    parser.add_argument("--gate-dir", type=Path, default=Path("."))
    parser.add_argument("--hold-extract", type=int)
    parser.add_argument("--hold-synonyms", type=int)
    args = parser.parse_args()

    settings = load_settings({"store": {"path": str(args.store)}})
    table = json.loads(args.table.read_text(encoding="utf-8"))
    queries = json.loads(args.queries.read_text(encoding="utf-8")) if args.queries else {}

    def service() -> KnowledgeService:
        return KnowledgeService(
            settings,
            store=GatedStore(_store(settings, args.store), args.gate_dir, args.hold_synonyms),
            embedder=HashEmbedder(),
            extractor=GatedExtractor(table, args.gate_dir, args.hold_extract),
            query_ner=FixedQueryNER(queries),
        )

    app = MarkArrivals(create_app(settings, service), args.gate_dir)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="info")


if __name__ == "__main__":
    main()
