"""Clustered items: cluster sums for the cluster bootstrap, and the analytic clustered standard error.

Items that share a passage (Belebele: 900 questions on 488 passages), a context (XQuAD) or a
conversation are not independent: a model that misreads a passage misses its questions together.
Treating them as independent makes an interval too narrow (Miller 2024, "Adding error bars to
evals", section 2.3). Two remedies, both over the same clusters:

- the **cluster bootstrap**: every metric here is a function of summed statistic rows, so
  resampling clusters is resampling the rows summed per cluster (`sum_by_cluster`): the ordinary
  bootstrap (`glotbench.stats.bootstrap_many`) over cluster rows instead of item rows;
- the **analytic clustered standard error** of a ratio of sums r = Σnum / Σden (accuracy: den = 1;
  word accuracy: den = words): with each item's residual e_i = num_i − r·den_i and D = Σden,

      SE_clustered² = G/(G−1) · Σ_clusters (Σ_{i in cluster} e_i)² / D²      (CR1, G clusters)
      SE_iid²       = n/(n−1) · Σ_items e_i² / D²                            (HC1, n items)

  For den = 1 the first is Miller's equation (6) with the small-sample factor G/(G−1), and the second
  the usual s/√n. Both equal statsmodels' cluster-robust and HC1 variances of a weighted least-squares
  fit of num/den on a constant with weights den (OLS when den = 1; tests/test_clustered.py).
  `design_effect` = (SE_clustered / SE_iid)²: how many times fewer independent items the clusters
  are worth (effective n = n / design_effect).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Hashable, Iterable

if TYPE_CHECKING:
    import numpy as np


def cluster_codes(values: Iterable[Hashable]) -> tuple[np.ndarray, int]:
    """Each value's cluster number (0, 1, ... in order of first appearance) and the cluster count."""
    import numpy as np

    codes: dict[Hashable, int] = {}
    out = np.fromiter((codes.setdefault(v, len(codes)) for v in values), dtype=np.int64)
    return out, len(codes)


def sum_by_cluster(rows: np.ndarray, codes: np.ndarray, n_clusters: int) -> np.ndarray:
    """The statistic rows (items x k) summed per cluster (clusters x k), clusters in code order."""
    import numpy as np

    out = np.zeros((n_clusters, rows.shape[1]), dtype=np.float64)
    np.add.at(out, codes, rows)
    return out


def clustered_se(num: np.ndarray, den: np.ndarray, codes: np.ndarray, n_clusters: int,
                 scale: float = 1.0) -> dict[str, Any]:
    """`se_clustered` (CR1), `se_iid` (HC1) and `design_effect` of sum(num)/sum(den), each None where
    the data cannot define it (one cluster, one item, no denominator); `scale` multiplies the SEs (100
    for a metric on the 0-100 scale). Items with a zero denominator carry no residual."""
    import numpy as np

    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    total = float(den.sum())
    n = int((den > 0).sum())
    if total <= 0:
        return {"se_clustered": None, "se_iid": None, "design_effect": None}
    r = float(num.sum()) / total
    e = num - r * den
    carrying = np.zeros(n_clusters, dtype=bool)
    carrying[codes[den > 0]] = True
    g = int(carrying.sum())
    per_cluster = np.zeros(n_clusters, dtype=np.float64)
    np.add.at(per_cluster, codes, e)
    se_c = scale * math.sqrt(g / (g - 1) * float(per_cluster @ per_cluster)) / total if g > 1 else None
    se_i = scale * math.sqrt(n / (n - 1) * float(e @ e)) / total if n > 1 else None
    deff = (se_c / se_i) ** 2 if se_c is not None and se_i else None
    return {"se_clustered": se_c, "se_iid": se_i, "design_effect": deff}


def effective_wilson(value: float, se: float | None, clusters: int, trials: float,
                     confidence: float = 0.95) -> tuple[float, float, float]:
    """The interval of a clustered ratio `value` in [0, 1]: Wilson's score interval on the
    **effective number of items** n_eff = value(1 − value) / se² · (G − 1) / G (the number of
    independent items whose binomial variance equals the clustered variance `se`², CR1, at most
    `trials`, the summed denominators; times a small-sample factor), with Student's t at `clusters`
    − 1 degrees of freedom in place of z (the small-cluster correction). Where the SE is 0 or
    undefined, or the value is 0 or 1 (every cluster scores alike), Wilson with the G clusters as
    trials, with the same t at G − 1 df: 0 of 10 items is (0, 0.339) with t(0.975, 9) = 2.262, not
    z's (0, 0.278), which is the plain Wilson interval marked † below 30 units. One cluster (no
    degrees of freedom): Wilson with z on it, an interval whose coverage nobody measured
    (`metrics.ratio` marks it too_few_units). Returns (low, high, n_eff). Measured coverage:
    bench/ci_coverage.py (docs/metrics.md); `stats.coverage.effective_wilson_arrays` is the same
    rule on arrays (tests/test_ci_coverage.py holds them equal)."""
    from glotbench.stats import wilson

    z = t_quantile(clusters - 1, confidence) if clusters >= 2 else None
    if se is None or se <= 1e-12 or clusters < 2 or not 0.0 < value < 1.0:
        lo, hi = wilson(value * clusters, clusters, confidence, z=z)
        return lo, hi, float(clusters)
    # (G - 1) / G: a second small-sample factor on the effective count, as if the CR1 variance carried
    # G / (G - 1) twice; chosen by the coverage simulation (5-item clusters, ICC 0.2, 30 clusters:
    # 92.3% without it, 95.1% with it; docs/metrics.md)
    n_eff = min(float(trials), value * (1 - value) / (se * se)) * (clusters - 1) / clusters
    lo, hi = wilson(value * n_eff, n_eff, confidence, z=z)
    return lo, hi, n_eff


def _t_central(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with an integer `df`: Abramowitz & Stegun 26.7.3 and 26.7.4 (a
    finite sum in cos θ, θ = atan(t / √df)), exact up to rounding."""
    theta = math.atan(t / math.sqrt(df))
    cos = math.cos(theta)
    c2, sin = cos * cos, math.sin(theta)
    if df % 2 == 1:  # (2/π)(θ + sin θ cos θ (1 + 2/3 cos² θ + (2·4)/(3·5) cos⁴ θ + ...)); df 1: 2θ/π
        if df == 1:
            return 2 / math.pi * theta
        term = total = cos
        for k in range(3, df - 1, 2):
            term *= (k - 1) / k * c2
            total += term
        return 2 / math.pi * (theta + sin * total)
    term = total = 1.0  # sin θ (1 + 1/2 cos² θ + (1·3)/(2·4) cos⁴ θ + ...)
    for k in range(2, df - 1, 2):
        term *= (k - 1) / k * c2
        total += term
    return sin * total


@lru_cache(maxsize=1024)
def t_quantile(df: int, confidence: float = 0.95) -> float:
    """Student's t two-sided quantile (the half-width of the `confidence` central interval) for an
    integer `df` >= 1, by bisection on the exact central probability (tested against
    scipy.stats.t.ppf; written out because importing scipy.special cost a run over a second)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    if df > 200:  # the Cornish-Fisher expansion in 1/df (A&S 26.7.5): the finite sum grows with df
        z2 = z * z
        return (z + z * (z2 + 1) / (4 * df) + z * ((5 * z2 + 16) * z2 + 3) / (96 * df ** 2)
                + z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * df ** 3)
                + z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / (92160 * df ** 4))
    lo = z  # t's quantile lies above the normal's
    hi = 2 * lo
    while _t_central(hi, df) < confidence:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_central(mid, df) < confidence:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return (lo + hi) / 2
