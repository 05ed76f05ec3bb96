"""Statistics from per-item sufficient statistics: bootstrap CIs, paired tests, agreement.

Every metric here is a function of the *sum* of per-item statistic rows (a ratio for accuracy, the
n-gram counts for BLEU/chrF). The bootstrap therefore resamples rows: for a block of resamples it
draws item indices, turns them into per-item counts, and gets every resample's sums with one matrix
product; the metric's own formula then scores each summed row. Nothing is re-tokenised or re-scored.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

if TYPE_CHECKING:  # numpy is imported where it is used: a run needs it only for its CIs,
    import numpy as np  # imported while its requests are in flight (engine/evaluate.py)

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 12345
# Below these many independent items the measured coverage of the Wilson interval (30) and of the
# percentile bootstrap over items (100) falls under 93% for some proportion (bench/ci_coverage.py,
# docs/metrics.md): such an interval is still printed, but marked `too_few_units` (a † in every view).
MIN_INDEPENDENT_UNITS = 30
MIN_BOOTSTRAP_UNITS = 100
# Wilson on the effective number of items with t at G − 1 df (`wilson_effective`) covers at least 93%
# from 2 units (clusters, or items) at every value, the ends included; with 1 unit it has no degrees
# of freedom and no measured coverage: marked.
MIN_EFFECTIVE_UNITS = 2
# Bradley–Terry ratings' percentile bootstrap over prompts (`glotbench arena-rank`, the board's arena
# section): its measured coverage is under 93% up to 50 prompts (80.5–93.2%) and 93.3–94.6% from 75
# (two cells 0.1–0.2 points under 93, within the simulation's standard error) (bench/bt_coverage.py,
# docs/metrics.md "Arena ratings"): marked `too_few_units` below this many prompts.
MIN_ARENA_PROMPTS = 75
_BLOCK_ELEMS = 500_000  # resamples x items per block: a block's arrays stay near 12 MB at any corpus size

ScoreFn = Callable[["np.ndarray"], float]


@dataclass(frozen=True, slots=True)
class Estimate:
    value: float
    ci_low: float
    ci_high: float
    n: int  # items

    def to_dict(self) -> dict[str, float | int | None]:
        """NaN (an undefined metric, e.g. no item was scored) becomes None (JSON null)."""
        def d(x: float) -> float | None:
            return None if x != x else x
        return {"value": d(self.value), "ci_low": d(self.ci_low), "ci_high": d(self.ci_high), "n": self.n}


_COUNTS_CACHE: dict[tuple[int, int, int], np.ndarray] = {}
_CACHE_LOCK = threading.Lock()  # `prepare_draws` may fill the cache from a worker thread
_CACHE_LIMIT = 64 * 2**20  # bytes of cached resample counts (uint8), e.g. 10k items x 1000 resamples = 10 MB


def _count_blocks(n: int, resamples: int, seed: int):
    """Per-item draw counts for each resample, in blocks. The same (n, resamples, seed) always gives
    the same counts, so they are cached (as uint8) when small enough: a service scoring many
    submissions against one set does the random draws once."""
    import numpy as np
    key = (n, resamples, seed)
    block = max(1, min(resamples, _BLOCK_ELEMS // max(n, 1)))
    cached = _COUNTS_CACHE.get(key)
    if cached is not None:
        for start in range(0, resamples, block):
            yield cached[start:start + block]
        return
    rng = np.random.default_rng(seed)
    # Filled block by block (no list of parts and no concatenated copy: at 10,000 items that copy
    # was another 10 MB at the run's peak).
    kept = np.empty((resamples, n), dtype=np.uint8) if n * resamples <= _CACHE_LIMIT else None
    done = 0
    while done < resamples:
        b = min(block, resamples - done)
        idx = rng.integers(0, n, size=(b, n))
        idx += (np.arange(b) * n)[:, None]  # in place: one (b, n) array, not two
        counts = np.bincount(idx.ravel(), minlength=b * n).reshape(b, n)
        del idx
        if kept is not None:
            if counts.max(initial=0) < 256:
                kept[done:done + b] = counts
            else:
                kept = None
        yield counts
        done += b
    if kept is not None and resamples:
        with _CACHE_LOCK:
            if sum(v.nbytes for v in _COUNTS_CACHE.values()) + kept.nbytes > _CACHE_LIMIT:
                _COUNTS_CACHE.clear()
            _COUNTS_CACHE[key] = kept


def prepare_draws(n: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> None:
    """Draw (and cache) the resample counts for `n` items ahead of the aggregate, and load the
    parts of numpy the percentiles use. The draws depend only on (n, resamples, seed), so a run
    makes them in a worker thread while its requests are in flight, when the CPU is mostly idle
    (measured: 0.06 of the 0.09 s of a first 2,000-item aggregate)."""
    import numpy as np
    if n > 0 and resamples > 0 and n * resamples <= _CACHE_LIMIT:  # larger draws are not kept: no use
        for _ in _count_blocks(n, resamples, seed):
            pass
    np.nanquantile(np.zeros(2), [0.025, 0.975])  # numpy imports numpy.ma on the first quantile


def forget_draws() -> None:
    """Drop the kept resample counts: a run calls it once its aggregate is made, so the draws (10 MB
    at 10,000 items and 1,000 resamples) are not held through the checks and the input floor, where
    the run's memory peaks (docs/performance.md). The next aggregate draws them again."""
    with _CACHE_LOCK:
        _COUNTS_CACHE.clear()


def resampled_sums(stats: np.ndarray, resamples: int, seed: int):
    """Yield (block, k) arrays: the column sums of `stats` (n, k) for each bootstrap resample."""
    import numpy as np
    for counts in _count_blocks(stats.shape[0], resamples, seed):
        yield counts.astype(np.float64) @ stats


def _percentiles(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    import numpy as np
    alpha = (1 - confidence) / 2
    if np.all(np.isnan(samples)):
        return float("nan"), float("nan")
    lo, hi = np.nanquantile(samples, [alpha, 1 - alpha])  # NaN: a resample a metric cannot score
    return float(lo), float(hi)


def bootstrap_many(
    stats: np.ndarray,
    metrics: Mapping[str, ScoreFn],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
    values: Mapping[str, float] | None = None,
) -> dict[str, Estimate]:
    """Percentile bootstrap CIs for several metrics of the same items, sharing the resamples.

    `stats` is (n items, k statistics); each metric maps a summed row (k,) to its score. `values`
    overrides the point estimates (e.g. with an exact value computed from integer sums)."""
    import numpy as np
    stats = np.asarray(stats, dtype=np.float64)
    n = stats.shape[0]
    total = stats.sum(axis=0)
    point = {k: (values[k] if values and k in values else float(fn(total))) for k, fn in metrics.items()}
    if n == 0 or resamples <= 0:
        return {k: Estimate(v, v, v, n) for k, v in point.items()}
    draws: dict[str, list[np.ndarray]] = {k: [] for k in metrics}
    for sums in resampled_sums(stats, resamples, seed):
        for k, fn in metrics.items():
            draws[k].append(score_rows(fn, sums))
    return {k: Estimate(point[k], *_percentiles(np.concatenate(draws[k]), confidence), n) for k in metrics}


def wilson(successes: float, trials: float, confidence: float = 0.95, z: float | None = None) -> tuple[float, float]:
    """The Wilson score interval of a proportion `successes / trials` (NaN, NaN with no trials).

    Unlike the percentile bootstrap it never collapses at 0 or 1: 0 of 164 gives (0, 0.023), 5 of
    5 gives (0.566, 1). The formula is statsmodels' `proportion_confint(method="wilson")` (tested
    against it); written out here because importing statsmodels' proportion module (scipy.stats)
    would cost a run more than the whole aggregate. A non-integer `successes` (the sum of per-item
    means) is allowed: `metrics.ratio.aggregate` uses it as the fallback of a collapsed bootstrap."""
    import math
    from statistics import NormalDist

    if trials <= 0:
        return float("nan"), float("nan")
    if z is None:  # a caller may pass another quantile (Student's t: stats.cluster.effective_wilson)
        z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = min(max(successes / trials, 0.0), 1.0)
    z2 = z * z
    denom = 1 + z2 / trials
    center = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    # At p = 0 (or 1) the bound is 0 (or 1) exactly, as statsmodels sets it (not 3e-17).
    return (0.0 if p == 0 else max(0.0, center - half)), (1.0 if p == 1 else min(1.0, center + half))


def collapse_fallback(value: float | None, lo: float | None, hi: float | None, items: int,
                      scale: float = 1.0) -> tuple[float, float] | None:
    """The interval that replaces a percentile bootstrap collapsed to one value (every item scored
    alike: all right, all BLEU 0, every prompt won): Wilson's for `value` as a proportion over the
    `items` that carry the statistic, on the metric's `scale` (1 or 100). Each item's value lies in
    [0, scale], whose variance is at most p(1 - p): the interval is, if anything, wide. None when the
    interval did not collapse, the value is not in [0, scale] or no item carries it."""
    if value is None or lo is None or hi is None or value != value or not items:
        return None
    if hi - lo > 1e-12 * max(1.0, abs(value)) or not 0.0 <= value / scale <= 1.0:
        return None
    low, high = wilson(value / scale * items, items)
    return scale * low, scale * high


def score_rows(fn: ScoreFn, rows: np.ndarray) -> np.ndarray:
    """`fn` applied to every row of `rows` (resamples x statistics). A score function may carry a
    vectorised form as its `many` attribute (rows -> values, the same IEEE operations as `fn` on each
    row, so the same bits): ratio metrics do, which takes the bootstrap's Python loop of 1,000
    calls per metric out of every aggregate."""
    import numpy as np
    many = getattr(fn, "many", None)
    if many is not None:
        return np.asarray(many(rows), dtype=np.float64)
    return np.fromiter((fn(row) for row in rows), dtype=np.float64, count=len(rows))


def ratio_fn(num: int, den: int) -> ScoreFn:
    """A ratio-of-sums metric over columns `num` and `den` (0 when the denominator is 0)."""
    import numpy as np
    def fn(row: np.ndarray) -> float:
        return float(row[num] / row[den]) if row[den] > 0 else 0.0

    def many(rows: np.ndarray) -> np.ndarray:
        d = rows[:, den]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return np.divide(rows[:, num], d, out=np.zeros(len(rows)), where=d > 0)

    fn.many = many  # type: ignore[attr-defined]
    return fn


def ratios_with_ci(
    columns: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> dict[str, Estimate]:
    """Several ratio-of-sums metrics over the same items (paired resamples). `columns` maps a name
    to (numerators, denominators), one entry per item."""
    import numpy as np
    names = list(columns)
    if not names:
        return {}
    mat = np.column_stack([np.asarray(c, dtype=np.float64) for k in names for c in columns[k]]) \
        if len(next(iter(columns.values()))[0]) else np.zeros((0, 2 * len(names)))
    fns = {k: ratio_fn(2 * i, 2 * i + 1) for i, k in enumerate(names)}
    return bootstrap_many(mat, fns, resamples=resamples, confidence=confidence, seed=seed)


def ratio_with_ci(numerators, denominators, **kw) -> Estimate:
    """sum(num)/sum(den) with a percentile bootstrap CI over items (rows)."""
    return ratios_with_ci({"m": (numerators, denominators)}, **kw)["m"]


@dataclass(frozen=True, slots=True)
class PairedResult:
    """System B minus system A on the same items."""

    a: float
    b: float
    delta: float
    ci_low: float
    ci_high: float
    p_bootstrap: float
    p_randomization: float
    n: int

    def to_dict(self) -> dict[str, float | int]:
        return {k: getattr(self, k) for k in self.__slots__}


def paired_too_few(n: int, clusters: int | None = None) -> bool:
    """A paired bootstrap CI of B − A resamples the shared items (or whole clusters): it is marked as
    resting on too few units where the item bootstrap's measured coverage is under 93% (fewer than
    MIN_BOOTSTRAP_UNITS items), and always when clusters are resampled (the cluster bootstrap
    under-covers at every measured size: docs/metrics.md)."""
    return bool(clusters) or n < MIN_BOOTSTRAP_UNITS


def paired_test(
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    score: ScoreFn,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    trials: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> PairedResult:
    """Paired bootstrap (same resampled items for both systems: CI of the difference, and a two-sided
    p-value from the centred bootstrap distribution, |d* - d| >= |d|; 1 where every resample gives the
    same difference: one unit, or every unit alike) and approximate randomisation (swap each item's
    two outputs with probability 1/2; p = (hits + 1) / (trials + 1))."""
    import numpy as np
    a = np.asarray(stats_a, dtype=np.float64)
    b = np.asarray(stats_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired statistics differ in shape: {a.shape} vs {b.shape}")
    n = a.shape[0]
    sa, sb = score(a.sum(0)), score(b.sum(0))
    d = sb - sa
    if n == 0:
        return PairedResult(sa, sb, d, d, d, 1.0, 1.0, 0)
    both = np.concatenate([a, b], axis=1)
    k = a.shape[1]
    deltas = np.asarray([score(row[k:]) - score(row[:k]) for sums in resampled_sums(both, resamples, seed)
                         for row in sums])
    lo, hi = _percentiles(deltas, confidence)
    # Every resample giving the same difference (one item or cluster; every unit moving alike) says
    # nothing of its spread: the centred distribution is a point, and (0 + 1) / (R + 1) would read as
    # p = 0.001 from a single item. The test then has no evidence: p = 1 (the randomisation p stands).
    collapsed = deltas.size == 0 or float(np.ptp(deltas)) <= 1e-12 * max(1.0, abs(d))  # resamples=0: none
    p_boot = 1.0 if collapsed else float((np.sum(np.abs(deltas - d) >= abs(d) - 1e-12) + 1) / (resamples + 1))
    rng = np.random.default_rng(seed + 1)
    diff = b - a
    total_a, total_b = a.sum(0), b.sum(0)
    hits = 0
    done = 0
    block = max(1, min(trials, _BLOCK_ELEMS // max(n, 1)))
    while done < trials:
        m = min(block, trials - done)
        swap = rng.integers(0, 2, size=(m, n)).astype(np.float64) @ diff  # what moves from B to A
        for s in swap:
            hits += abs(score(total_b - s) - score(total_a + s)) >= abs(d) - 1e-12
        done += m
    p_rand = (hits + 1) / (trials + 1)
    return PairedResult(sa, sb, d, lo, hi, p_boot, float(p_rand), n)


# -- agreement ---------------------------------------------------------------------------------
# Undefined values (constant input: a single category, or a rater who never varies) are None.

def _defined(x: float) -> float | None:
    return None if x != x else float(x)  # NaN -> None

def cohens_kappa(rater1: Sequence, rater2: Sequence) -> float | None:
    """Cohen's kappa of two raters over the same items (statsmodels)."""
    import numpy as np
    import warnings

    from statsmodels.stats.inter_rater import cohens_kappa as _kappa, to_table

    codes = {v: i for i, v in enumerate(sorted(set(rater1) | set(rater2), key=str))}
    if len(codes) < 2:
        return None  # one category only: chance agreement is 1 and kappa is undefined
    data = np.column_stack([[codes[v] for v in rater1], [codes[v] for v in rater2]])
    table, _ = to_table(data, bins=len(codes))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _defined(_kappa(table).kappa)


def fleiss_kappa(ratings: Sequence[Sequence]) -> float | None:
    """Fleiss' kappa; `ratings[i]` holds every rater's category for item i (statsmodels)."""
    import numpy as np
    import warnings

    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa as _fleiss

    cats = {v: i for i, v in enumerate(sorted({v for row in ratings for v in row}, key=str))}
    table, _ = aggregate_raters(np.asarray([[cats[v] for v in row] for row in ratings]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _defined(_fleiss(table))


def spearman(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float | None]:
    """Spearman's rho and its p-value (scipy)."""
    import warnings

    from scipy.stats import spearmanr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = spearmanr(x, y)
    return _defined(r.statistic), _defined(r.pvalue)


def kendall(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float | None]:
    """Kendall's tau-b and its p-value (scipy)."""
    import warnings

    from scipy.stats import kendalltau

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = kendalltau(x, y)
    return _defined(r.statistic), _defined(r.pvalue)
