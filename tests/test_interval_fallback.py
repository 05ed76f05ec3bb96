"""`wilson_effective` at every value: where every unit scores alike (0%, 100%, a clustered SE of 0) the
interval is Wilson on the G units with Student's t at G − 1 df, as in the interior, and the † rule is
the same at every value (marked only on one unit). The scalar rule (`stats.cluster.effective_wilson`,
what the aggregate prints) and the vectorised one (`stats.coverage.effective_wilson_arrays`, what the
coverage simulation measures) are the same intervals, the flat rows included."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import t as student_t

from glotbench.metrics import ItemScore, RatioMetric, ScoredSample, aggregate
from glotbench.stats.cluster import cluster_codes, clustered_se, effective_wilson
from glotbench.stats.coverage import coverage, effective_wilson_arrays, simulate

ACC = RatioMetric("accuracy", "correct", "n")
WORDS = RatioMetric("words", "words_correct", "words")


def _scalar(row: np.ndarray, size: int) -> tuple[float, float]:
    """The aggregate's rule on one simulated data set: G clusters of `size` 0/1 items."""
    g = len(row)
    outcomes = np.array([1.0 if j < int(k) else 0.0 for k in row for j in range(size)])
    codes, _ = cluster_codes(i // size for i in range(g * size))
    se = clustered_se(outcomes, np.ones(g * size), codes, g)["se_clustered"]
    return effective_wilson(outcomes.sum() / (g * size), se, g, g * size)[:2]


@pytest.mark.parametrize("p, units, size", [(0.03, 2, 3), (0.05, 3, 2), (0.97, 4, 3), (0.5, 5, 1), (0.3, 6, 3)])
def test_the_vectorised_rule_is_the_scalar_rule_at_every_value(p, units, size):
    k = simulate(p, units, size, 0.2, 300, np.random.default_rng([units, size]))
    # rows where every cluster scores alike in the interior (SE 0 at r = 1/3), at 0 and at 1
    k = np.vstack([k, np.full(units, 1.0 if size == 3 else 0.0), np.zeros(units), np.full(units, float(size))])
    r = k.sum(axis=1) / (units * size)
    assert ((r == 0) | (r == 1)).any() and ((r > 0) & (r < 1)).any()  # both kinds of row are compared
    lo, hi = effective_wilson_arrays(k, size)
    for row, a, b in zip(k, lo, hi):
        assert _scalar(row, size) == pytest.approx((a, b), abs=1e-12), row


@pytest.mark.parametrize("g", [2, 3, 10, 29])
def test_the_ends_use_t_at_g_minus_one(g):
    """By hand: Wilson at p = 0 has upper bound q² / (G + q²) and at p = 1 lower bound G / (G + q²)
    (q the quantile); here q = scipy's t.ppf(0.975, G − 1)."""
    q2 = student_t.ppf(0.975, g - 1) ** 2
    assert effective_wilson(0.0, 0.0, g, 5 * g)[:2] == pytest.approx((0.0, q2 / (g + q2)), abs=1e-12)
    assert effective_wilson(1.0, None, g, 5 * g)[:2] == pytest.approx((g / (g + q2), 1.0), abs=1e-12)
    if g == 2:  # t(0.975, 1) = 12.7 is beyond what statsmodels' alpha can express
        return
    # an SE of 0 inside (0, 1): the same t, on the G units
    from statsmodels.stats.proportion import proportion_confint
    from statistics import NormalDist

    alpha = 2 * (1 - NormalDist().cdf(q2 ** 0.5))
    assert effective_wilson(0.25, 0.0, g, 4 * g)[:2] == pytest.approx(
        proportion_confint(0.25 * g, g, alpha=alpha, method="wilson"), abs=1e-9)


def test_the_issue_vi_diacritics_example():
    """`run vi-diacritics --limit 10` printed exact 0.0 (0.0–27.8)† and word accuracy 0.0 (0.0–27.8)
    unmarked: the same Wilson-with-z interval, marked in one column only. Word accuracy now gets t at 9
    df, (0.0–33.9): a wider interval whose coverage is measured (unmarked); exact keeps Wilson on 10
    independent items, under 30, marked."""
    s = [ScoredSample(f"i{i}", 0, {}, ItemScore({"words_correct": 0.0, "words": 7.0, "correct": 0.0, "n": 1.0}))
         for i in range(10)]
    out = aggregate([ACC, WORDS], s)["overall"]
    q2 = student_t.ppf(0.975, 9) ** 2
    assert out["words"]["ci_high"] == pytest.approx(q2 / (10 + q2), abs=1e-12)
    assert round(100 * out["words"]["ci_high"], 1) == 33.9 and "too_few_units" not in out["words"]
    assert round(100 * out["accuracy"]["ci_high"], 1) == 27.8 and out["accuracy"]["too_few_units"] is True


def test_one_item_of_words_is_marked_at_every_value():
    for right in (0.0, 2.0, 4.0):
        s = [ScoredSample("i0", 0, {}, ItemScore({"words_correct": right, "words": 4.0}))]
        est = aggregate([WORDS], s)["overall"]["words"]
        assert est["ci_method"] == "wilson_effective" and est["too_few_units"] is True, right


@pytest.mark.parametrize("units, size, icc", [(2, 3, 0.2), (3, 2, 0.2), (4, 3, 0.0), (10, 5, 0.2)])
def test_coverage_with_the_t_fallback_stays_at_least_93_percent(units, size, icc):
    """Small proportions, where most data sets at 2-4 clusters are all wrong (the fallback)."""
    for p in (0.02, 0.05, 0.1, 0.25):
        assert coverage("effective_wilson", p, units, size, icc, reps=1500).coverage >= 0.93, (p, units)
