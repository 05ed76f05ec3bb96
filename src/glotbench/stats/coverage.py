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


# -- Bradley–Terry ratings (`glotbench arena-rank`, the board's arena section) ------------------------
# Known strengths: a baseline and candidates at Elo gaps from it, each candidate playing the baseline
# on every prompt in both orders (win 1, tie 1/2, loss 0, the two orders averaged, as an arena's summary's
# `per_prompt`), ties with probability `tie` and P(win) set so that E[y] = σ(β_c − β_b) exactly: the
# fit's target is the known strength. The interval: arena_rank's percentile bootstrap over prompts of
# each model's rating on the Elo scale centred on the mean model. Every candidate meets only the
# baseline, the anchor, so the ridge-penalised Newton fit of stats/bt.py is one scalar Newton per
# candidate (the Hessian is diagonal): `bt_star_fit`, vectorised over data sets and resamples, equal
# to `bt.fit` (tests/test_bt_coverage.py).

@dataclass(frozen=True, slots=True)
class BtCell:
    gaps: tuple[float, ...]  # each candidate's Elo gap to the baseline
    tie: float
    prompts: int
    coverage: float  # the lowest over the models (the baseline included)
    reps: int


def bt_star_fit(s: np.ndarray, n: np.ndarray | float, ridge: float | None = None, tol: float = 1e-10,
                max_iter: int = 100) -> np.ndarray:
    """β of each candidate against the anchored baseline (β_b = 0) from S = Σ w·y and N = Σ w of its
    games: the root of S − N·σ(β) − ridge·β (stats/bt.py's penalised likelihood), any array shape."""
    from glotbench.stats.bt import RIDGE

    ridge = RIDGE if ridge is None else ridge
    s = np.asarray(s, dtype=np.float64)
    n = np.broadcast_to(np.asarray(n, dtype=np.float64), s.shape)
    beta = np.zeros_like(s)
    for _ in range(max_iter):
        prob = 1.0 / (1.0 + np.exp(-beta))
        step = (s - n * prob - ridge * beta) / (n * prob * (1 - prob) + ridge)
        beta += step
        if np.max(np.abs(step), initial=0.0) < tol:
            break
    return beta


def bt_simulate(gaps: tuple[float, ...], tie: float, prompts: int, reps: int, rng: np.random.Generator) -> np.ndarray:
    """Per data set, prompt and candidate the averaged outcome of the two orders, (reps, prompts, C)."""
    from glotbench.stats.bt import ELO

    sig = 1.0 / (1.0 + np.exp(-np.asarray(gaps, dtype=np.float64) / ELO))
    win = sig - tie / 2  # P(win), P(tie) = tie, P(loss) = 1 − sig − tie / 2: E[y] = sig
    if np.any(win < 0) or np.any(1 - sig - tie / 2 < 0):
        raise ValueError("tie too likely for these gaps")
    u = rng.random((reps, prompts, len(gaps), 2))
    w = win[:, None]  # (C, 1) against the two orders
    y = np.where(u < w, 1.0, np.where(u < w + tie, 0.5, 0.0))
    return y.mean(axis=3)


def bt_coverage(gaps: tuple[float, ...], tie: float, prompts: int, reps: int = 500, resamples: int = 400,
                seed: int = 0, confidence: float = 0.95) -> BtCell:
    """The lowest share, over the models, of `reps` simulated arenas whose bootstrap interval (over
    prompts, `resamples` draws) of the centred Elo rating holds the model's true centred rating."""
    from glotbench.stats.bt import ELO

    rng = np.random.default_rng([seed, prompts, int(1000 * tie), *(int(g) + 10_000 for g in gaps)])
    y = bt_simulate(gaps, tie, prompts, reps, rng)
    full = np.concatenate([[0.0], np.asarray(gaps, dtype=np.float64)])
    truth = full - full.mean()  # centred on the mean model (the 1000 of the ratings dropped)
    a = (1 - confidence) / 2
    hits = np.zeros(len(full))

    def centred(beta: np.ndarray) -> np.ndarray:  # (..., C) candidates' β → (..., C + 1) centred Elo
        b = np.concatenate([np.zeros(beta.shape[:-1] + (1,)), beta], axis=-1)
        return ELO * (b - b.mean(axis=-1, keepdims=True))

    block = max(1, 2_000_000 // (resamples * prompts))  # data sets at a time: a block's counts stay near 16 MB
    for start in range(0, reps, block):
        yb = y[start:start + block]  # (b, prompts, C)
        b = len(yb)
        idx = rng.integers(0, prompts, size=(b * resamples, prompts))
        idx += (np.arange(b * resamples) * prompts)[:, None]
        counts = np.bincount(idx.ravel(), minlength=b * resamples * prompts).reshape(b, resamples, prompts)
        s = np.einsum("brp,bpc->brc", counts.astype(np.float64), yb)
        draws = centred(bt_star_fit(s, float(prompts)))  # (b, resamples, C + 1)
        lo, hi = np.quantile(draws, [a, 1 - a], axis=1)  # (b, C + 1) each
        hits += ((lo <= truth + 1e-9) & (truth - 1e-9 <= hi)).sum(axis=0)
    return BtCell(tuple(gaps), tie, prompts, float((hits / reps).min()), reps)
