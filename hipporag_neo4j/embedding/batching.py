"""Batches of texts for a local encoder, and the L2 normalisation every embedder's vectors get."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from hipporag_neo4j.stores.base import Matrix

#: up to this many texts in one call count as a query (encoded on ``query_threads``)
QUERY_BATCH = 8
#: characters per batch, per text of ``batch_size`` (~128 tokens): short texts share larger batches
CHARS_PER_BATCH_SLOT = 512
#: a batch of short texts holds at most this many times ``batch_size`` texts
MAX_BATCH_FACTOR = 16
#: tokens per batch, per text of ``batch_size`` (ONNX Runtime): 64 x 32 = 2,048 tokens a batch
TOKENS_PER_BATCH_SLOT = 32


def normalise(vectors: np.ndarray[Any, Any]) -> Matrix:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Matrix = vectors / norms
    return out


def length_batches(lengths: Sequence[int], batch_size: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of consecutive batches over texts sorted by ascending ``lengths`` (characters).

    Each batch has ``batch_size`` texts, or more while the batch's longest text times its size stays
    within ``batch_size * CHARS_PER_BATCH_SLOT`` characters (at most ``MAX_BATCH_FACTOR * batch_size``):
    a phrase of 15 characters shares a batch of 1,024, a passage of 600 one of ``batch_size``. Measured
    (torch, 2 threads, busy 2-core machine, same process): 600 phrases 1.7x and 600 facts 1.5x faster in
    batches of 256 than of 64; passages gained nothing (``benchmarks/README.md``, issue 11).
    """
    budget = batch_size * CHARS_PER_BATCH_SLOT
    most = batch_size * MAX_BATCH_FACTOR
    start, n = 0, len(lengths)
    while start < n:
        stop = min(n, start + batch_size)
        while stop < n and stop - start < most and (stop - start + 1) * max(lengths[stop], 1) <= budget:
            stop += 1
        yield start, stop
        start = stop


def token_batches(lengths: Sequence[int], batch_size: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of consecutive batches over texts sorted by ascending token ``lengths``.

    A batch grows while its padded size (its longest text times its count) stays within ``batch_size *
    TOKENS_PER_BATCH_SLOT`` tokens, up to ``MAX_BATCH_FACTOR * batch_size`` texts, and has at least one
    text: 8 passages of 256 tokens, ~400 phrases of 5. Measured (ONNX Runtime, 2 threads, MuSiQue texts,
    CPU seconds, loads 8 to 15): 1,530 texts took 7.7 s in batches of 4,096 tokens against 9.8 s in
    batches of 64 texts sorted by tokens, 11.8 s sorted by characters (main before) and 12.8 s in batches
    of 16,384 tokens; 950 texts with idle threads not spinning took 4.5 s in batches of 2,048 tokens,
    5.2 s of 4,096, 7.9 s of 8,192 (benchmarks/results/index_speed.md).
    """
    budget = batch_size * TOKENS_PER_BATCH_SLOT
    most = batch_size * MAX_BATCH_FACTOR
    start, n = 0, len(lengths)
    while start < n:
        stop = start + 1
        while stop < n and stop - start < most and (stop - start + 1) * max(lengths[stop], 1) <= budget:
            stop += 1
        yield start, stop
        start = stop
