import numpy as np
import pytest
from scipy import stats as scipy_stats

from glotbench.metrics import ItemScore, RatioMetric, ScoredSample, aggregate, repeat_stability
from glotbench.stats import ratio_with_ci


def test_ratio_value_is_exact_ratio_of_sums():
    est = ratio_with_ci([1, 0, 3], [1, 1, 4])
    assert est.value == 4 / 6
    assert est.ci_low <= est.value <= est.ci_high
    assert est.n == 3


def test_constant_data_has_zero_width_ci():
    est = ratio_with_ci([1] * 50, [1] * 50)
    assert (est.value, est.ci_low, est.ci_high) == (1.0, 1.0, 1.0)


def test_bootstrap_is_deterministic_for_a_seed():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, 200)
    assert ratio_with_ci(x, np.ones(200), seed=7) == ratio_with_ci(x, np.ones(200), seed=7)


def test_bootstrap_ci_agrees_with_scipy_percentile_bootstrap():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2, 400).astype(float)
    ours = ratio_with_ci(x, np.ones_like(x), resamples=4000)
    ref = scipy_stats.bootstrap((x,), np.mean, n_resamples=4000, method="percentile",
                                random_state=np.random.default_rng(2)).confidence_interval
    assert ours.ci_low == pytest.approx(ref.low, abs=0.01)
    assert ours.ci_high == pytest.approx(ref.high, abs=0.01)


def _s(item, rep, exact, cat="a", key=None):
    return ScoredSample(item, rep, {"category": cat}, ItemScore({"exact": exact, "n": 1.0}), key)


def test_aggregate_groups_and_repeats():
    m = RatioMetric("acc", "exact", "n")
    samples = [_s("1", 0, 1, "a", "x"), _s("1", 1, 0, "a", "y"), _s("2", 0, 1, "b", "z"), _s("2", 1, 1, "b", "z")]
    out = aggregate([m], samples, ["category"], resamples=200)
    assert out["overall"]["acc"]["value"] == 0.75
    assert out["overall"]["acc"]["n"] == 2  # items, not samples: the bootstrap resamples items
    assert out["groups"]["category"]["a"]["acc"]["value"] == 0.5
    st = repeat_stability(m, samples)
    assert st["per_repeat"] == [1.0, 0.5]
    assert st["mean"] == 0.75
    assert st["flip_rate"] == 0.5
    assert st["mean_item_agreement"] == 0.75
    assert repeat_stability(m, samples[:1]) is None


def test_repeat_stability_with_an_unscorable_repeat_is_null_not_nan():
    # Repeat 1 has nothing to score (denominator 0): its figure is undefined, the spread needs two.
    m = RatioMetric("acc", "correct", "total", "accuracy")
    samples = [ScoredSample("a", 0, {}, ItemScore({"correct": 1.0, "total": 1.0})),
               ScoredSample("a", 1, {}, ItemScore({"correct": 0.0, "total": 0.0}))]
    st = repeat_stability(m, samples)
    assert st["per_repeat"] == [1.0, None] and st["mean"] == 1.0 and st["std"] is None
    assert st["min"] == st["max"] == 1.0
