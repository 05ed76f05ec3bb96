"""Coverage where intervals are printed: a small, seeded version of bench/ci_coverage.py (the table in
docs/metrics.md). Where glotbench prints an interval without a † its measured coverage is at least
93%; where it marks one, the simulation shows why; and the simulated intervals are the ones the
aggregate computes."""

from __future__ import annotations

import numpy as np
import pytest

from glotbench.metrics import ItemScore, RatioMetric, ScoredSample, aggregate
from glotbench.stats import MIN_INDEPENDENT_UNITS, wilson
from glotbench.stats.cluster import cluster_codes, clustered_se, effective_wilson
from glotbench.stats.coverage import (
    MIN_COVERAGE,
    coverage,
    effective_wilson_arrays,
    simulate,
    wilson_arrays,
)

P = (0.05, 0.1, 0.25, 0.5)
ACC = RatioMetric("accuracy", "correct", "n")


@pytest.mark.parametrize("units", [MIN_INDEPENDENT_UNITS, 50, 100])
def test_wilson_covers_from_the_printed_threshold(units):
    for p in P:
        assert coverage("wilson", p, units, reps=2000).coverage >= MIN_COVERAGE, p


def test_below_the_threshold_wilson_and_the_bootstrap_do_under_cover():
    """The † is earned: at 3 and 4 independent items some proportion is covered well under 93%."""
    assert coverage("wilson", 0.05, 3, reps=2000).coverage < 0.9
    assert coverage("bootstrap", 0.5, 4, reps=2000).coverage < 0.9


@pytest.mark.parametrize("size, icc", [(2, 0.2), (3, 0.0), (3, 0.2)])
def test_the_clustered_interval_covers_from_two_clusters(size, icc):
    for units in (2, 3, 4, 5, 10, 20):
        for p in P:
            assert coverage("effective_wilson", p, units, size, icc, reps=1500).coverage >= MIN_COVERAGE, (units, p)


def test_the_cluster_bootstrap_it_replaces_under_covers_at_few_clusters():
    """The issue's figure: 2 passages of 3 items at p = 0.25: the percentile cluster bootstrap."""
    assert coverage("bootstrap", 0.5, 2, 3, 0.0, reps=1000).coverage < 0.85


def test_the_simulated_intervals_are_the_aggregates():
    rng = np.random.default_rng(7)
    k = simulate(0.3, 6, 3, 0.2, 40, rng)
    lo, hi = effective_wilson_arrays(k, 3)
    wl, wh = wilson_arrays(k.sum(axis=1), 18)
    for row, a, b, c, d in zip(k, lo, hi, wl, wh):
        outcomes = [1.0 if j < int(kg) else 0.0 for kg in row for j in range(3)]
        samples = [ScoredSample(f"i{i}", 0, {"passage": f"p{i // 3}"}, ItemScore({"correct": o, "n": 1.0}))
                   for i, o in enumerate(outcomes)]
        est = aggregate([ACC], samples, cluster="passage")["overall"]["accuracy"]
        assert (est["ci_low"], est["ci_high"]) == pytest.approx((a, b), abs=1e-12)
        codes, g = cluster_codes([f"p{i // 3}" for i in range(18)])
        se = clustered_se(np.array(outcomes), np.ones(18), codes, g)["se_clustered"]
        assert effective_wilson(sum(outcomes) / 18, se, 6, 18)[:2] == pytest.approx((a, b), abs=1e-12)
        assert wilson(sum(outcomes), 18) == pytest.approx((c, d), abs=1e-12)


def test_the_aggregate_marks_too_few_independent_items():
    def est(n):
        s = [ScoredSample(f"i{i}", 0, {}, ItemScore({"correct": float(i % 3 == 0), "n": 1.0})) for i in range(n)]
        return aggregate([ACC], s)["overall"]["accuracy"]

    assert est(MIN_INDEPENDENT_UNITS - 1)["too_few_units"] is True
    assert "too_few_units" not in est(MIN_INDEPENDENT_UNITS)
    # word accuracy on 5 items: Wilson on the effective items, measured from 2 units, not marked
    words = RatioMetric("words", "wc", "w")
    s = [ScoredSample(f"i{i}", 0, {}, ItemScore({"wc": float(i % 4), "w": 4.0})) for i in range(5)]
    est = aggregate([words], s)["overall"]["words"]
    assert est["ci_method"] == "wilson_effective" and "too_few_units" not in est


@pytest.mark.parametrize("size, icc", [(3, 0.0), (10, 0.1)])
def test_independent_items_of_several_words_are_covered_from_two_items(size, icc):
    """Word accuracy over independent items of `size` words (the words of one item correlated by
    `icc`): the `wilson_effective` interval over items."""
    for units in (2, 3, 5, 10, 30):
        for p in P:
            assert coverage("effective_wilson", p, units, size, icc, reps=1500).coverage >= MIN_COVERAGE, (units, p)


def test_the_t_quantile_matches_scipy():
    from scipy.stats import t

    from glotbench.stats.cluster import t_quantile

    for df in [*range(1, 260), 999, 5000, 10**6]:
        for conf in (0.9, 0.95, 0.99):
            assert t_quantile(df, conf) == pytest.approx(t.ppf(1 - (1 - conf) / 2, df), rel=1e-10), (df, conf)
    with pytest.raises(ValueError):
        t_quantile(0)
