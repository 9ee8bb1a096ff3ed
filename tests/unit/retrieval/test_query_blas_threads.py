"""retrieval.query_blas_threads limits numpy's BLAS while a query runs, and restores it afterwards."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hipporag_neo4j.stores.base import Matrix
from tests.support.fakes import HashEmbedder
from tests.support.pipeline_support import make_memory

threadpoolctl = pytest.importorskip("threadpoolctl")
pytestmark = pytest.mark.unit

TABLE = {
    "Thomas Edison worked in Menlo Park.": [["Thomas Edison", "worked in", "Menlo Park"]],
    "Menlo Park is in New Jersey.": [["Menlo Park", "is in", "New Jersey"]],
}


class RecordingEmbedder(HashEmbedder):
    """Notes the BLAS thread count each time it encodes."""

    def __init__(self) -> None:
        super().__init__()
        self.blas_threads: list[int] = []

    def encode(self, texts: list[str]) -> Matrix:  # type: ignore[override]
        info = threadpoolctl.threadpool_info()
        self.blas_threads.extend(i["num_threads"] for i in info if i["user_api"] == "blas")
        return super().encode(texts)


def blas_now() -> list[int]:
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]


@pytest.mark.parametrize("mode", ["hipporag2", "hipporag", "dense"])
def test_a_query_runs_on_one_blas_thread_and_leaves_the_count_as_it_was(tmp_path: Path, mode: str) -> None:
    import scipy.linalg  # noqa: F401  (scipy's BLAS loaded before counting)

    before = blas_now()
    if not before:
        pytest.skip("numpy has no BLAS library threadpoolctl can see")
    limited = make_memory(tmp_path / "a", TABLE)  # the default: 1
    assert limited.settings.retrieval.query_blas_threads == 1
    limited.index(list(TABLE))
    embedder = RecordingEmbedder()
    limited.retriever.embedder = embedder
    result = limited.retrieve("Where did Thomas Edison work?", mode=mode, top_k=2)
    assert embedder.blas_threads and set(embedder.blas_threads) == {1}
    assert blas_now() == before  # restored after the query

    free = make_memory(tmp_path / "b", TABLE, query_blas_threads=None)  # unset: the library's own count
    free.index(list(TABLE))
    other = RecordingEmbedder()
    free.retriever.embedder = other
    same = free.retrieve("Where did Thomas Edison work?", mode=mode, top_k=2)
    assert other.blas_threads == before
    assert [p.passage.id for p in same.passages] == [p.passage.id for p in result.passages]
    assert np.allclose([p.score for p in same.passages], [p.score for p in result.passages])
    limited.close()
    free.close()
