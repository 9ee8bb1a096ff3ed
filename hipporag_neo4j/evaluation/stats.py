"""Paired bootstrap for comparing two retrieval modes on the same questions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

_CHUNK = 1_000  # resamples drawn per batch, to bound memory at CHUNK x n indices


class BootstrapResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    mean_diff: float
    """mean(a) - mean(b) over the questions."""
    low: float
    high: float
    """Percentile confidence interval of the mean difference."""
    p_value_two_sided: float
    n_questions: int
    n_resamples: int
    ci: float


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    n_resamples: int = 10_000,
    seed: int = 0,
    ci: float = 0.95,
) -> BootstrapResult:
    """Bootstrap the mean of the per-question differences ``a[i] - b[i]`` (questions resampled with
    replacement, pairs kept together); deterministic for a given seed.

    The interval is the percentile interval at level ``ci``. The two-sided p-value tests a zero mean
    difference by shifting the bootstrap distribution to the null: the share of resampled means at least as
    far from the observed mean as the observed mean is from 0, with the +1 correction
    ``(count + 1) / (n_resamples + 1)`` so that it is never exactly 0.
    """
    first, second = _as_vector(a), _as_vector(b)
    if first.shape != second.shape:
        raise ValueError(
            f"paired samples must have the same length, got {first.shape[0]} and {second.shape[0]}"
        )
    diffs = first - second
    n = diffs.shape[0]
    if n == 0:
        raise ValueError("paired_bootstrap needs at least one question")
    if not np.all(np.isfinite(diffs)):
        raise ValueError("paired_bootstrap inputs must be finite numbers")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")

    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, _CHUNK):
        size = min(_CHUNK, n_resamples - start)
        means[start : start + size] = diffs[rng.integers(0, n, size=(size, n))].mean(axis=1)

    observed = float(diffs.mean())
    alpha = (1.0 - ci) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    extreme = int(np.count_nonzero(np.abs(means - observed) >= abs(observed)))
    return BootstrapResult(
        mean_diff=observed,
        low=float(low),
        high=float(high),
        p_value_two_sided=(extreme + 1) / (n_resamples + 1),
        n_questions=n,
        n_resamples=n_resamples,
        ci=ci,
    )


def _as_vector(values: Sequence[float]) -> npt.NDArray[np.float64]:
    vector = np.asarray(values, dtype=np.float64)
    if vector.ndim != 1:
        raise ValueError(f"paired_bootstrap takes flat sequences of numbers, got shape {vector.shape}")
    return vector
