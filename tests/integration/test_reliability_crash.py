"""Crash safety: kill -9 an indexing process, run the same command again, get the uninterrupted store.

The worker (``reliability_worker.py``) indexes 40 passages in 10 batches with the fake embedder and
extractor. Kills land at exact points of the write sequence (after the N-th ``write_passages`` or
``write_synonyms`` returns, i.e. between a batch's passages and its synonym edges) and at random times
(seeded). After every kill the store must pass SQLite's checks and open; after the re-run it must equal,
table by table (synonym edges and their pending marks included), a store indexed without interruption.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.indexing.pipeline import Indexer, IndexingOptions
from hipporag_neo4j.models import PassageInput
from tests.support.reliability_support import (
    assert_opens_cleanly,
    assert_same_store,
    dump_store,
    run_worker,
    start_worker,
)
from tests.support.reliability_worker import corpus, memory

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("clean") / "store"
    report = json.loads(run_worker("index", str(path)).stdout)
    assert len(report["indexed"]) == len(corpus()) and not report["failed"]
    dump = dump_store(path)
    assert dump["synonyms"], "the corpus must give synonym edges, or the test proves nothing"
    return dump


@pytest.mark.parametrize(
    "kill_after",
    ["write_passages:1", "write_passages:4", "write_passages:10", "write_synonyms:3", "write_synonyms:1"],
)
def test_kill_at_a_write_point_then_rerun(tmp_path: Path, clean: dict[str, Any], kill_after: str) -> None:
    store = tmp_path / "store"
    run_worker("index", str(store), "--kill-after", kill_after, expect_kill=True)
    assert_opens_cleanly(store)
    report = json.loads(run_worker("index", str(store)).stdout)
    assert_same_store(dump_store(store), clean)
    everything = report["indexed"] + report["skipped"]
    assert len(everything) == len(set(everything)) == len(corpus())  # each passage once, none twice


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kills_at_random_times_then_rerun(tmp_path: Path, clean: dict[str, Any], seed: int) -> None:
    rng = random.Random(seed)
    store = tmp_path / "store"
    kills = 0
    for _ in range(4):
        proc = start_worker("index", str(store), "--slow", "0.02")
        time.sleep(rng.uniform(0.2, 1.5))
        proc.kill()  # SIGKILL
        proc.communicate(timeout=60)
        if proc.returncode == -9:
            kills += 1
        assert_opens_cleanly(store)
    run_worker("index", str(store))
    assert_same_store(dump_store(store), clean)
    print(f"seed {seed}: {kills} of 4 runs killed before they finished")  # shown with -s


def test_the_store_does_not_depend_on_how_passages_were_batched(tmp_path: Path) -> None:
    """What makes a resumed run equal an uninterrupted one even when its batches are cut differently
    (a re-run's first batch starts where the crash was): the same store for batches of 1, 4 and 40."""
    dumps = []
    for size in (1, 4, 40):
        mem = memory(tmp_path / f"b{size}")
        options = IndexingOptions(batch_size=size, synonym_top_k=1000)
        Indexer(mem.store, mem.embedder, mem.extractor, options).index(
            [PassageInput(text=t) for t in corpus()]
        )
        mem.close()
        dumps.append(dump_store(tmp_path / f"b{size}"))
    assert dumps[0]["synonyms"]
    assert_same_store(dumps[1], dumps[0])
    assert_same_store(dumps[2], dumps[0])
