"""Agreement with bootstrap CIs, shared by `build review agree` (annotators) and the judge validity
cards (a judge against people): a percentile bootstrap over items for any statistic, Krippendorff's
alpha (the `krippendorff` package) on a raters x items matrix with missing labels, and the two-rater
summary (Cohen's kappa, nominal alpha, raw agreement) each with its CI."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

from glotbench.stats import DEFAULT_SEED, cohens_kappa

if TYPE_CHECKING:
    import numpy as np


def bootstrap_statistic(n: int, stat: Callable[[Any], float | None], resamples: int, seed: int = DEFAULT_SEED,
                        confidence: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile CI of `stat(indices)` over `resamples` item resamples; none with 0 resamples (no
    bootstrap, as in `glotbench score`) or when most resamples leave the statistic undefined."""
    import numpy as np

    if resamples <= 0 or n <= 0:
        return None, None
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(resamples):
        v = stat(rng.integers(0, n, n))
        if v is not None and v == v:
            vals.append(v)
    if len(vals) < resamples * 0.5:  # mostly undefined resamples (one category): no CI
        return None, None
    a = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(vals, [a, 100 - a])
    return float(lo), float(hi)


def krippendorff_alpha(data: np.ndarray, domain: Sequence[float],
                       level: Literal["nominal", "ordinal", "interval", "ratio"]) -> float | None:
    """Krippendorff's alpha of a raters x items matrix (NaN: no label); None where undefined (one
    value in the domain, fewer than two items with a label, a constant resample)."""
    import numpy as np
    import krippendorff

    if len(domain) < 2 or np.count_nonzero(~np.isnan(data).all(axis=0)) < 2:
        return None
    try:
        with warnings.catch_warnings():  # a resample with one value only: undefined, returned as None
            warnings.simplefilter("ignore", RuntimeWarning)
            v = krippendorff.alpha(reliability_data=data, value_domain=list(domain), level_of_measurement=level)
    except (ValueError, ZeroDivisionError):
        return None
    return None if v != v else float(v)


def two_raters(a: Sequence[Any], b: Sequence[Any], *, resamples: int = 1000, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Two raters over the same items (a judge and people): Cohen's kappa and Krippendorff's nominal
    alpha, each with a 95% percentile bootstrap CI over items, and the raw agreement rate."""
    import numpy as np

    n = len(a)
    cats = {c: float(i) for i, c in enumerate(sorted(set(a) | set(b), key=str))}
    data = np.array([[cats[x] for x in a], [cats[x] for x in b]], dtype=np.float64).reshape(2, n)

    def kappa(idx: Sequence[int]) -> float | None:
        return cohens_kappa([a[i] for i in idx], [b[i] for i in idx])

    def alpha(idx: Sequence[int]) -> float | None:
        return krippendorff_alpha(data[:, list(idx)], sorted(cats.values()), "nominal")

    out: dict[str, Any] = {"n": n, "raw_agreement": sum(x == y for x, y in zip(a, b)) / n if n else None}
    for name, fn in (("cohens_kappa", kappa), ("krippendorff_alpha", alpha)):
        value = fn(range(n)) if n else None
        lo, hi = bootstrap_statistic(n, fn, resamples, seed) if value is not None else (None, None)
        out[name] = {"value": value, "ci_low": lo, "ci_high": hi, "n": n}
    return out
