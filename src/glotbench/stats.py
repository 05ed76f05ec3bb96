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


def ratio_with_ci(
    numerators: np.ndarray | list[float],
    denominators: np.ndarray | list[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> Estimate:
    """sum(num)/sum(den) with a percentile bootstrap CI over items (rows)."""
    num = np.asarray(numerators, dtype=float)
    den = np.asarray(denominators, dtype=float)
    n = len(num)
    total = den.sum()
    value = float(num.sum() / total) if total > 0 else 0.0
    if n == 0 or resamples <= 0:
        return Estimate(value, value, value, n)
    rng = np.random.default_rng(seed)
    # Multinomial counts per item: resample i draws item j counts[i, j] times.
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples)
    nums = counts @ num
    dens = counts @ den
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(dens > 0, nums / np.where(dens > 0, dens, 1), 0.0)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(ratios, [alpha, 1 - alpha])
    return Estimate(value, float(lo), float(hi), n)
