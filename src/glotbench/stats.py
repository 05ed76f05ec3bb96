"""Statistics from sufficient statistics: ratio-of-sums metrics and their percentile bootstrap CIs.

A metric such as exact-match rate or micro word accuracy is sum(numerator) / sum(denominator) over
items. The bootstrap resamples items (rows of statistics), never re-scores text, so 1,000 resamples
of 100k items cost one matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 12345


@dataclass(frozen=True, slots=True)
class Estimate:
    value: float
    ci_low: float
    ci_high: float
    n: int  # items

    def to_dict(self) -> dict[str, float | int]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n}


def bootstrap_indices(n: int, resamples: int, seed: int, chunk_elems: int = 2_000_000):
    """Yield blocks of resampled item indices, shape (block, n), bounded to ~chunk_elems each so
    100k items do not mean a 100k x 1000 matrix in memory."""
    rng = np.random.default_rng(seed)
    block = max(1, min(resamples, chunk_elems // max(n, 1)))
    done = 0
    while done < resamples:
        b = min(block, resamples - done)
        yield rng.integers(0, n, size=(b, n))
        done += b


def ratios_with_ci(
    columns: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> dict[str, Estimate]:
    """Several ratio-of-sums metrics over the same items, sharing the resampled indices (so their
    CIs are paired). `columns` maps a name to (numerators, denominators), one entry per item."""
    out: dict[str, Estimate] = {}
    arrays = {k: (np.asarray(a, dtype=float), np.asarray(b, dtype=float)) for k, (a, b) in columns.items()}
    n = len(next(iter(arrays.values()))[0]) if arrays else 0
    values = {k: (float(a.sum() / b.sum()) if b.sum() > 0 else 0.0) for k, (a, b) in arrays.items()}
    if n == 0 or resamples <= 0:
        return {k: Estimate(v, v, v, n) for k, v in values.items()}
    samples: dict[str, list[np.ndarray]] = {k: [] for k in arrays}
    for idx in bootstrap_indices(n, resamples, seed):
        for k, (num, den) in arrays.items():
            nums, dens = num[idx].sum(axis=1), den[idx].sum(axis=1)
            samples[k].append(np.divide(nums, dens, out=np.zeros_like(nums), where=dens > 0))
    alpha = (1 - confidence) / 2
    for k, parts in samples.items():
        lo, hi = np.quantile(np.concatenate(parts), [alpha, 1 - alpha])
        out[k] = Estimate(values[k], float(lo), float(hi), n)
    return out


def ratio_with_ci(
    numerators: np.ndarray | list[float],
    denominators: np.ndarray | list[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> Estimate:
    """sum(num)/sum(den) with a percentile bootstrap CI over items (rows)."""
    return ratios_with_ci({"m": (numerators, denominators)}, resamples=resamples,
                          confidence=confidence, seed=seed)["m"]
