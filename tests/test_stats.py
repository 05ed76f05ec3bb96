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


def _rows_with_edge_cases() -> np.ndarray:
    rng = np.random.default_rng(7)
    rows = rng.integers(0, 50, size=(500, 2)).astype(np.float64)
    rows[::7, 1] = 0.0  # no denominator
    rows[::11, 1] = np.nan  # a statistic that is not a number
    rows[::13, 0] = 1e308  # overflow towards inf
    return rows


@pytest.mark.parametrize("scale", ["fraction", "points"])
def test_vectorised_ratio_metric_gives_the_same_bits_as_row_by_row(scale):
    """The bootstrap scores blocks of resamples with `score_many`; every value must equal `score` on
    its row bit for bit (NaN where undefined), or the CIs would change with the block size."""
    from glotbench.stats import score_rows

    metric = RatioMetric("acc", "correct", "n", scale=scale)
    rows = _rows_with_edge_cases()
    fast = metric.score_many(rows)
    slow = np.array([metric.score(r) for r in rows])
    assert np.array_equal(fast, slow, equal_nan=True)
    assert np.isnan(fast[7])  # den 0 -> undefined, not 0
    from glotbench.metrics.ratio import _bind

    fn = _bind(metric, [1, 0])  # columns picked in another order than stored
    swapped = rows[:, ::-1].copy()
    assert np.array_equal(score_rows(fn, swapped), slow, equal_nan=True)


def test_vectorised_ratio_fn_matches_row_by_row_and_a_plain_function_still_works():
    from glotbench.stats import ratio_fn, score_rows

    rows = _rows_with_edge_cases()
    fn = ratio_fn(0, 1)
    slow = np.array([fn(r) for r in rows])
    assert np.array_equal(score_rows(fn, rows), slow, equal_nan=True)
    assert score_rows(fn, rows)[7] == 0.0  # ratio_fn's rule: 0 without a denominator
    plain = lambda r: float(r[0] - r[1])  # noqa: E731 - no vectorised form: scored row by row
    assert np.array_equal(score_rows(plain, rows), np.array([plain(r) for r in rows]), equal_nan=True)


def test_bootstrap_cis_do_not_depend_on_the_block_size(monkeypatch):
    """Blocks of resamples, cached draw counts and vectorised scoring are an implementation detail:
    the same seed gives the same interval whatever the block size."""
    import glotbench.stats as st

    num = [float(i % 3 == 0) for i in range(997)]
    den = [1.0] * 997
    first = ratio_with_ci(num, den, resamples=300, seed=5)
    st._COUNTS_CACHE.clear()
    monkeypatch.setattr(st, "_BLOCK_ELEMS", 997 * 7)  # 7 resamples per block instead of all 300
    second = ratio_with_ci(num, den, resamples=300, seed=5)
    cached = ratio_with_ci(num, den, resamples=300, seed=5)  # served from the counts cache
    assert first == second == cached


def test_a_group_holding_every_sample_has_the_overall_figures_and_others_their_own():
    samples = [ScoredSample(f"i{i}", 0, {"cat": "all", "half": str(i < 5)}, ItemScore({"c": float(i % 2), "n": 1.0}))
               for i in range(10)]
    out = aggregate([RatioMetric("acc", "c", "n")], samples, group_by=("cat", "half"), resamples=200)
    assert out["groups"]["cat"]["all"] == out["overall"]
    assert out["groups"]["cat"]["all"] is not out["overall"]
    assert out["groups"]["half"]["True"]["acc"]["n"] == 5


def test_prepare_draws_draws_only_what_the_cache_can_keep(monkeypatch):
    """Draws too large to cache would be thrown away and drawn again by the aggregate: preparing
    them only spends CPU (0.6 s at 100,000 items) while the run's requests are in flight."""
    from glotbench import stats

    drawn = []
    real = stats._count_blocks
    monkeypatch.setattr(stats, "_count_blocks", lambda n, r, s: (drawn.append(n), real(n, r, s))[1])
    monkeypatch.setattr(stats, "_CACHE_LIMIT", 1000)
    monkeypatch.setattr(stats, "_COUNTS_CACHE", {})
    stats.prepare_draws(200, 10, 7)  # 2,000 counts: more than the cache holds
    assert drawn == [] and stats._COUNTS_CACHE == {}
    stats.prepare_draws(50, 10, 7)  # 500: kept, and the aggregate reuses them
    assert drawn == [50] and (50, 10, 7) in stats._COUNTS_CACHE
