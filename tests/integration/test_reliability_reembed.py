"""An interrupted ``reembed`` is refused until it is finished, resumes, and ends where a fresh index would.

The store is built with the 16-d fake embedder and re-embedded to an 8-d one ("hash-8"). The reference
is the same corpus indexed from scratch with the 8-d model: every vector and every synonym edge of the
re-embedded store must match it (the edges are recomputed from the new vectors, not kept).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.errors import ModelMismatchError, ReembedPendingError
from hipporag_neo4j.stores.base import Matrix
from tests.support.reliability_support import assert_same_store, dump_store, run_worker
from tests.support.reliability_worker import QUERY, corpus, memory

pytestmark = pytest.mark.integration


def built(path: Path, dim: int = 16) -> Path:
    mem = memory(path, dim=dim, model=f"hash-{dim}" if dim != 16 else "hash-embedder")
    report = mem.index(list(corpus()))
    assert not report.failed
    mem.close()
    return path


@pytest.fixture(scope="module")
def fresh_8d(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return dump_store(built(tmp_path_factory.mktemp("fresh") / "store", dim=8))


class Interrupted(Exception):
    """Stands for Ctrl-C or a crash in the middle of a re-embed."""


def interrupting(mem: HippoRAG, after_calls: int) -> None:
    """The embedder raises on its ``after_calls``+1-th encode call."""
    embedder = mem.embedder
    encode = embedder.encode
    calls = {"n": 0}

    def flaky(texts: Any) -> Matrix:
        calls["n"] += 1
        if calls["n"] > after_calls:
            raise Interrupted
        return encode(texts)

    embedder.encode = flaky  # type: ignore[method-assign]


def test_an_interrupted_reembed_refuses_to_serve_then_resumes(
    tmp_path: Path, fresh_8d: dict[str, Any]
) -> None:
    store = built(tmp_path / "store")
    reader = memory(store)  # a process that had the store open before the re-embed
    reader.retrieve(QUERY)

    mem = memory(store, dim=8, model="hash-8")
    interrupting(mem, after_calls=1)  # passages re-encoded, phrases not
    with pytest.raises(Interrupted):
        mem.reembed()

    for dim, model in ((8, "hash-8"), (16, "hash-embedder")):  # neither model may read the mixture
        with pytest.raises(ReembedPendingError, match=r"reembed` again") as refused:
            memory(store, dim=dim, model=model).retrieve(QUERY)
        assert "hash-8" in str(refused.value) and "passages up to" in str(refused.value)
    with pytest.raises(ReembedPendingError):
        reader.retrieve(QUERY)  # the open reader sees the change and stops, no silent mix
    reader.close()

    again = memory(store, dim=8, model="hash-8")
    counts = again.reembed()
    assert counts["passage"] == 0 and counts["phrase"] > 0  # resumed after the passages
    assert again.retrieve(QUERY).passages
    again.close()
    assert_same_store(dump_store(store), fresh_8d)


def test_reembed_recomputes_synonym_edges_with_the_new_model(tmp_path: Path) -> None:
    store = built(tmp_path / "store")
    before = dump_store(store)["synonyms"]
    assert before

    class Shuffled:
        """An 8-d model under which no two phrases are near: every old synonym edge must go."""

        model_name, dimension, max_tokens = "random-8", 8, 64

        def token_count(self, text: str) -> int:
            return len(text.split())

        def encode(self, texts: Any) -> Matrix:
            rng = np.random.default_rng(len(texts))
            v = rng.standard_normal((len(texts), 8))
            return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    mem = memory(store)
    mem._embedder = Shuffled()  # type: ignore[assignment]
    mem.reembed()
    mem.close()
    dump = dump_store(store)
    assert {r[:2] for r in dump["synonyms"]} != {r[:2] for r in before}
    assert dump["synonyms_pending"] == []


def test_reembed_killed_mid_way_then_rerun(tmp_path: Path, fresh_8d: dict[str, Any]) -> None:
    store = tmp_path / "store"
    run_worker("index", str(store))
    run_worker("reembed", str(store), "--dim", "8", "--kill-after", "set_embeddings:2", expect_kill=True)
    with pytest.raises(ReembedPendingError):
        memory(store, dim=8, model="hash-8").stats()
    counts = json.loads(run_worker("reembed", str(store), "--dim", "8").stdout)
    assert counts["passage"] == 0  # resumed
    assert_same_store(dump_store(store), fresh_8d)


def test_a_store_reembedded_elsewhere_is_refused_by_an_open_reader(tmp_path: Path) -> None:
    store = built(tmp_path / "store")
    reader = memory(store)
    reader.retrieve(QUERY)
    memory(store, dim=8, model="hash-8").reembed()
    with pytest.raises(ModelMismatchError, match="hash-8"):
        reader.retrieve(QUERY)


def test_an_indexer_open_before_a_reembed_began_writes_nothing_into_it(tmp_path: Path) -> None:
    store = built(tmp_path / "store")
    indexer = memory(store)
    indexer.stats()  # open, with the 16-d model
    mem = memory(store, dim=8, model="hash-8")
    interrupting(mem, after_calls=1)
    with pytest.raises(Interrupted):
        mem.reembed()
    extra = {"Person 99 lives in place 99.": [["person 99", "lives in", "place 99"]]}
    indexer.extractor.table.update(extra)  # type: ignore[attr-defined]
    with pytest.raises(ReembedPendingError):
        indexer.index(list(extra))  # its vectors are 16-d: they must not land in the 8-d store
    assert all("Person 99" not in row[2] for row in dump_store(store)["passages"])
