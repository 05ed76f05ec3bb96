"""How often a 95% interval holds the truth: a seeded, vectorised simulation over proportions,
cluster counts and cluster sizes (bench/ci_coverage.py prints the table in docs/metrics.md; the
tests run a small version of it).

Data: `units` clusters of `size` 0/1 items each (size 1: independent items). A cluster's own rate is
drawn from a Beta with mean `p` and intra-cluster correlation `icc` (0: every item independent), its
items from a Binomial. The truth is `p`.

Methods, each vectorised over the simulated data sets (`successes` is (reps, units)):
- `wilson`: Wilson's interval on all items as independent trials (glotbench's proportions of
  independent 0/1 items);
- `bootstrap`: the percentile bootstrap over units (glotbench's item bootstrap when size is 1, its
  cluster bootstrap otherwise), with the Wilson fallback on units when it collapses;
- `cluster_t`: the ratio r = Σk / Σm ± Student's t (G − 1 degrees of freedom) times the CR1
  clustered standard error, clipped to [0, 1], Wilson on the clusters where the SE is 0 (evaluated,
  not used: it under-covers small proportions);
- `effective_wilson`: Wilson on the effective number of items r(1 − r) / SE² with t at G − 1 degrees
  of freedom, and Wilson on the G units with the same t where SE is 0 or r is 0 or 1
  (`glotbench.stats.cluster.effective_wilson`, what a clustered ratio metric gets).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from glotbench.stats.cluster import t_quantile

Z95 = 1.959963984540054  # NormalDist().inv_cdf(0.975)
MIN_COVERAGE = 0.93  # below this measured coverage an interval is not printed as trustworthy


def wilson_arrays(k: np.ndarray, n: np.ndarray | float, z: float | np.ndarray = Z95) -> tuple[np.ndarray, np.ndarray]:
    """`glotbench.stats.wilson` on arrays (the same formula; k may be fractional)."""
    k = np.asarray(k, dtype=np.float64)
    n = np.broadcast_to(np.asarray(n, dtype=np.float64), k.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.clip(k / n, 0.0, 1.0)
        z2 = z * z
        denom = 1 + z2 / n
        center = (p + z2 / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    lo = np.where(p == 0, 0.0, np.maximum(0.0, center - half))
    hi = np.where(p == 1, 1.0, np.minimum(1.0, center + half))
    return lo, hi




def cluster_t_arrays(k: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The `cluster_t` interval of every row of `k` (reps, G): G clusters of `size` items."""
    _, g = k.shape
    n = g * size
    r = k.sum(axis=1) / n
    e = k - r[:, None] * size  # each cluster's residual sum
    se = np.sqrt(g / (g - 1) * (e * e).sum(axis=1)) / n
    t = float(t_quantile(g - 1))
    lo, hi = np.clip(r - t * se, 0.0, 1.0), np.clip(r + t * se, 0.0, 1.0)
    flat = se <= 1e-12
    if flat.any():  # every cluster alike: Wilson with the clusters as trials
        wl, wh = wilson_arrays(r[flat] * g, g)
        lo[flat], hi[flat] = wl, wh
    return lo, hi


def effective_wilson_arrays(k: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """`glotbench.stats.cluster.effective_wilson` of every row of `k` (reps, G): Wilson's interval on
    the effective number of items r(1 - r) / SE² · (G - 1) / G (the CR1 clustered SE; at most the n
    items before the factor), with
    Student's t at G - 1 degrees of freedom in place of z; Wilson on the G clusters, with the same t,
    where the SE is 0 or the ratio is 0 or 1."""
    _, g = k.shape
    n = g * size
    r = k.sum(axis=1) / n
    e = k - r[:, None] * size
    se2 = g / (g - 1) * (e * e).sum(axis=1) / (n * n)
    flat = (se2 <= 1e-24) | (r <= 0) | (r >= 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        n_eff = np.where(flat, g, np.minimum(n, r * (1 - r) / np.where(flat, 1.0, se2)) * (g - 1) / g)
    return wilson_arrays(r * n_eff, n_eff, float(t_quantile(g - 1)))


def bootstrap_arrays(k: np.ndarray, size: int, rng: np.random.Generator, resamples: int = 400,
                     confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The percentile bootstrap over units of every row of `k` (reps, G), Wilson on the units where it
    collapses. Independent 0/1 items (size 1) resample exactly as a Binomial(n, p̂) total."""
    reps, g = k.shape
    n = g * size
    a = (1 - confidence) / 2
    if size == 1:
        p_hat = k.sum(axis=1) / g
        draws = rng.binomial(g, p_hat[:, None], size=(reps, resamples)) / g
    else:
        draws = np.empty((reps, resamples))
        step = max(1, 4_000_000 // (resamples * g))
        for s in range(0, reps, step):
            block = k[s:s + step]
            idx = rng.integers(0, g, size=(len(block), resamples, g))
            draws[s:s + step] = np.take_along_axis(block[:, None, :], idx, axis=2).sum(axis=2) / n
    lo, hi = np.quantile(draws, [a, 1 - a], axis=1)
    flat = hi - lo <= 1e-12
    if flat.any():
        wl, wh = wilson_arrays(k.sum(axis=1)[flat] / size, g)  # the value as a proportion of units
        lo[flat], hi[flat] = wl, wh
    return lo, hi


def simulate(p: float, units: int, size: int, icc: float, reps: int, rng: np.random.Generator) -> np.ndarray:
    """Successes per cluster, (reps, units)."""
    if icc <= 0 or size == 1:
        return rng.binomial(size, p, size=(reps, units)).astype(np.float64)
    a, b = p * (1 - icc) / icc, (1 - p) * (1 - icc) / icc
    return rng.binomial(size, rng.beta(a, b, size=(reps, units))).astype(np.float64)


METHODS: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
    "wilson": lambda k, size, rng: wilson_arrays(k.sum(axis=1), k.shape[1] * size),
    "bootstrap": lambda k, size, rng: bootstrap_arrays(k, size, rng),
    "cluster_t": lambda k, size, rng: cluster_t_arrays(k, size),
    "effective_wilson": lambda k, size, rng: effective_wilson_arrays(k, size),
}


@dataclass(frozen=True, slots=True)
class Cell:
    method: str
    p: float
    units: int
    size: int
    icc: float
    coverage: float
    reps: int


def coverage(method: str, p: float, units: int, size: int = 1, icc: float = 0.0, reps: int = 2000,
             seed: int = 0) -> Cell:
    """The share of `reps` simulated data sets whose interval holds `p` (seeded: the same call gives
    the same figure)."""
    rng = np.random.default_rng([seed, int(1000 * p), units, size, int(1000 * icc)])
    k = simulate(p, units, size, icc, reps, rng)
    lo, hi = METHODS[method](k, size, rng)
    hit = (lo <= p + 1e-12) & (p - 1e-12 <= hi)
    return Cell(method, p, units, size, icc, float(hit.mean()), reps)


def coverage_se(c: float, reps: int) -> float:
    """The simulation's own standard error of a coverage figure."""
    return math.sqrt(max(c * (1 - c), 1e-9) / reps)
