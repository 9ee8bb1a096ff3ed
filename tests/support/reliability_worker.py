"""The process the reliability tests kill, run side by side, and read from.

    python tests/support/reliability_worker.py index STORE [--kill-after write_passages:3] [--slow 0.01]
    python tests/support/reliability_worker.py read STORE --seconds 5
    python tests/support/reliability_worker.py reembed STORE --dim 8 [--kill-after set_embeddings:2]

STORE is an embedded store's folder, or ``neo4j`` for the server and namespace named by the
HIPPORAG_NEO4J_* environment variables (tests/neo4j/test_neo4j_e2e.py).

``index`` indexes :func:`corpus` in batches of :data:`BATCH` with the fake embedder and extractor of
``fakes.py`` (no model, seconds per run) and prints its report as JSON. ``--kill-after CALL:N`` sends
SIGKILL to the process itself right after the N-th call of that store method returns: a kill -9 at an
exact point of the write sequence (between a batch's passages and its synonym edges, say). ``read``
retrieves in a loop and checks every state it sees is whole batches; it prints what it saw.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: tests.support is importable

from hipporag_neo4j.api import HippoRAG, create_store
from hipporag_neo4j.indexing.pipeline import Indexer, IndexingOptions
from hipporag_neo4j.models import PassageInput
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.base import GraphStore
from tests.support.fakes import FixedQueryNER, HashEmbedder, TableExtractor

BATCH = 4
N_PASSAGES = 40
QUERY = "Where does person 3 live?"


def corpus(n: int = N_PASSAGES) -> dict[str, list[list[str]]]:
    """Passage text -> triples. Places recur across passages, and "<place> variant" embeds next to
    "<place>" (HashEmbedder), so later batches add synonym edges to phrases of earlier ones."""
    table: dict[str, list[list[str]]] = {}
    for i in range(n):
        place, river = f"place {i % 9}", f"river {i % 5}"
        other = f"place {(i // 3) % 9} variant" if i % 3 == 0 else f"hill {i % 4}"
        text = f"Person {i} lives in {place}, near {river} and {other}."
        table[text] = [[f"person {i}", "lives in", place], [place, "near", river], [river, "passes", other]]
    return table


def expected_states(n: int = N_PASSAGES, batch: int = BATCH) -> list[tuple[int, int, int]]:
    """(passages, mentions, facts) after each whole batch: the only states a reader may see."""
    passages: set[str] = set()
    mentions: set[tuple[str, str]] = set()
    facts: set[tuple[str, str, str]] = set()
    states = [(0, 0, 0)]
    for number, (text, triples) in enumerate(corpus(n).items(), start=1):
        passages.add(text)
        for s, p, o in triples:
            mentions.update({(text, s), (text, o)})
            facts.add((s, p, o))
        if number % batch == 0 or number == n:
            states.append((len(passages), len(mentions), len(facts)))
    return states


def memory(store: Path, dim: int = 16, model: str = "hash-embedder") -> HippoRAG:
    """The memory of STORE; STORE ``neo4j`` means the Neo4j server and namespace of the
    HIPPORAG_NEO4J_URI/_USER/_PASSWORD/_DATABASE/_NAMESPACE environment variables."""
    location: dict[str, Any] = {"store": {"path": str(store)}}
    if str(store) == "neo4j":
        location = {
            "neo4j": {
                "uri": os.environ["HIPPORAG_NEO4J_URI"],
                "user": os.environ.get("HIPPORAG_NEO4J_USER", "neo4j"),
                "password": os.environ.get("HIPPORAG_NEO4J_PASSWORD", ""),
                "database": os.environ.get("HIPPORAG_NEO4J_DATABASE", "neo4j"),
                "namespace": os.environ["HIPPORAG_NAMESPACE"],
            }
        }
    settings = load_settings({**location, "retrieval": {"synonym_top_k": 1000}})
    return HippoRAG(
        settings,
        embedder=HashEmbedder(dim=dim, model_name=model),
        extractor=TableExtractor(corpus()),
        query_ner=FixedQueryNER({QUERY: ["person 3"]}),
    )


def kill_after(store: GraphStore, spec: str | None) -> None:
    """Wrap ``store.<method>`` so the process SIGKILLs itself after its N-th call returns."""
    if not spec:
        return
    method, count = spec.split(":")
    original = getattr(store, method)
    calls = {"n": 0}

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == int(count):
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(store, method, wrapped)


def slow_down(mem: HippoRAG, seconds: float) -> None:
    """Make each encode call take a while, so a long index leaves time for readers and kills."""
    if seconds <= 0:
        return
    embedder = mem.embedder
    encode = embedder.encode

    def slow(texts: Any) -> Any:
        time.sleep(seconds)
        return encode(texts)

    embedder.encode = slow  # type: ignore[method-assign]


def run_index(args: argparse.Namespace) -> None:
    mem = memory(Path(args.store))
    slow_down(mem, args.slow)
    store = mem.store
    kill_after(store, args.kill_after)
    options = IndexingOptions(batch_size=BATCH, synonym_top_k=1000)
    inputs = [PassageInput(text=text) for text in corpus()]
    report = Indexer(store, mem.embedder, mem.extractor, options).index(inputs)
    print(json.dumps(report.model_dump(mode="json")))
    mem.close()


def run_read(args: argparse.Namespace) -> None:
    """Retrieve in a loop; every (passages, mentions, facts) seen must be a whole number of batches."""
    allowed = set(expected_states())
    mem = memory(Path(args.store))
    seen: set[tuple[int, int, int]] = set()
    loops = 0
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        stats = mem.stats()
        state = (stats.passages, stats.mentions, stats.facts)
        if state not in allowed:
            raise SystemExit(f"partial batch visible: {state} is not one of {sorted(allowed)}")
        seen.add(state)
        mem.retrieve(QUERY)
        mem.retrieve("What is near river 2?", mode="dense")
        loops += 1
    print(json.dumps({"loops": loops, "states": sorted(seen)}))
    mem.close()


def run_reembed(args: argparse.Namespace) -> None:
    mem = memory(Path(args.store), dim=args.dim, model=f"hash-{args.dim}")
    if args.kill_after:
        mem._store = create_store(mem.settings)  # not mem.store: that opens (and checks) the store
        kill_after(mem._store, args.kill_after)
    print(json.dumps(mem.reembed()))
    mem.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["index", "read", "reembed"])
    parser.add_argument("store")
    parser.add_argument("--kill-after", default=None)
    parser.add_argument("--slow", type=float, default=0.0)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--dim", type=int, default=8)
    args = parser.parse_args()
    {"index": run_index, "read": run_read, "reembed": run_reembed}[args.command](args)


if __name__ == "__main__":
    main()
