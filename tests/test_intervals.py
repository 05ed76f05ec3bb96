"""CIs that do not collapse: Wilson for proportions of 0/1 items (checked against statsmodels), Wilson on
the effective number of items for other bounded ratios, the percentile bootstrap elsewhere, Wilson on
the items where the bootstrap collapses; each estimate
names its method, the table's caption names them, and a cached aggregate of other interval code is
never served."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from judged_helpers import summary
from glotbench import stats
from glotbench.metrics import ItemScore, RatioMetric, ScoredSample, aggregate
from glotbench.metrics import ratio as ratio_module
from glotbench.stats import wilson

EXACT = RatioMetric("exact", "exact", "items", scale="fraction")
WORDS = RatioMetric("words", "words_correct", "words")
POINTS = RatioMetric("exact_points", "exact", "items", scale="points")


def wilson_t(k: float, n: float, df: int) -> tuple[float, float]:
    """statsmodels' Wilson interval with Student's t(0.975, df) in place of z: at the confidence whose
    normal quantile is that t (the reference for `wilson_effective`, computed apart from glotbench)."""
    from statistics import NormalDist

    from scipy.stats import t

    return proportion_confint(k, n, alpha=2 * (1 - NormalDist().cdf(t.ppf(0.975, df))), method="wilson")


@pytest.mark.parametrize("k, n", [(0, 1), (1, 1), (0, 5), (1, 5), (4, 5), (5, 5), (0, 164), (164, 164),
                                  (37, 164), (1, 1000), (999, 1000), (2.5, 5)])
def test_wilson_matches_statsmodels(k, n):
    lo, hi = wilson(k, n)
    ref_lo, ref_hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert lo == pytest.approx(ref_lo, abs=1e-12) and hi == pytest.approx(ref_hi, abs=1e-12)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    if k == 0:
        assert lo == 0.0 and hi > 0  # never (0.0, 0.0)
    if k == n:
        assert hi == 1.0 and lo < 1  # never (1.0, 1.0)


def test_wilson_at_other_confidence_levels_matches_statsmodels():
    for conf in (0.8, 0.9, 0.99):
        assert wilson(3, 17, conf) == pytest.approx(proportion_confint(3, 17, alpha=1 - conf, method="wilson"), abs=1e-12)


def test_wilson_with_no_trials_is_undefined():
    lo, hi = wilson(0, 0)
    assert lo != lo and hi != hi


def _samples(values, repeats=1, key="exact", den="items", cat=lambda i: "a"):
    out = []
    for i, v in enumerate(values):
        for r in range(repeats):
            x = v[r] if isinstance(v, (list, tuple)) else v
            out.append(ScoredSample(f"i{i}", r, {"category": cat(i)}, ItemScore({key: float(x), den: 1.0})))
    return out


@pytest.mark.parametrize("n, k", [(164, 0), (5, 5), (1, 1), (1, 0), (30, 7)])
def test_a_proportion_of_items_gets_the_wilson_interval(n, k):
    est = aggregate([EXACT, POINTS], _samples([1] * k + [0] * (n - k)))["overall"]
    ref = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert est["exact"]["ci_method"] == "wilson" and est["exact"]["value"] == k / n and est["exact"]["n"] == n
    assert (est["exact"]["ci_low"], est["exact"]["ci_high"]) == pytest.approx(ref, abs=1e-12)
    # The points scale: the same interval x 100.
    assert (est["exact_points"]["ci_low"], est["exact_points"]["ci_high"]) == pytest.approx(
        (100 * ref[0], 100 * ref[1]), abs=1e-9)
    assert est["exact"]["ci_high"] > est["exact"]["ci_low"]  # never collapsed


def test_a_ratio_of_word_counts_gets_wilson_on_its_effective_items():
    """Word accuracy (0 <= words right <= words per item): Wilson on the effective number of items
    value(1 - value) / SE² · (n - 1) / n with t at n - 1 degrees of freedom (the SE over items, HC1);
    the percentile bootstrap it replaced needed 100 items for 93% coverage (docs/metrics.md)."""
    from glotbench.stats.cluster import clustered_se, effective_wilson

    rng = np.random.default_rng(3)
    correct = rng.integers(0, 9, 60).astype(float)
    samples = [ScoredSample(f"i{i}", 0, {}, ItemScore({"words_correct": c, "words": 8.0})) for i, c in enumerate(correct)]
    est = aggregate([WORDS], samples)["overall"]["words"]
    assert est["ci_method"] == "wilson_effective" and est["ci_low"] < est["value"] < est["ci_high"]
    se = clustered_se(correct, np.full(60, 8.0), np.arange(60), 60)
    assert se["se_clustered"] == pytest.approx(se["se_iid"])  # each item its own cluster: HC1
    lo, hi, n_eff = effective_wilson(correct.sum() / 480, se["se_iid"], 60, 480)
    assert (est["ci_low"], est["ci_high"], est["n_effective"]) == pytest.approx((lo, hi, n_eff), abs=1e-12)
    assert "too_few_units" not in est


def test_a_ratio_that_is_not_bounded_by_its_denominator_is_bootstrapped():
    """An item whose numerator exceeds its denominator (not a share): the percentile bootstrap over
    items, as before, marked below 100 items."""
    rng = np.random.default_rng(4)
    num = rng.integers(0, 12, 60).astype(float)
    samples = [ScoredSample(f"i{i}", 0, {}, ItemScore({"words_correct": c, "words": 8.0})) for i, c in enumerate(num)]
    est = aggregate([WORDS], samples)["overall"]["words"]
    assert est["ci_method"] == "bootstrap" and est["too_few_units"] is True
    direct = stats.ratio_with_ci(num.tolist(), [8.0] * 60)
    assert (est["ci_low"], est["ci_high"]) == (direct.ci_low, direct.ci_high)  # the same resamples


@pytest.mark.parametrize("correct", [0, 8])
def test_every_item_scored_alike_gives_wilson_on_the_items(correct):
    """Every item with the same word accuracy (all wrong, all right): no spread, Wilson on the items
    with t at n − 1 df, as at every other value (unmarked: measured >= 93% from 2 items)."""
    samples = [ScoredSample(f"i{i}", 0, {}, ItemScore({"words_correct": float(correct), "words": 8.0}))
               for i in range(40)]
    est = aggregate([WORDS], samples)["overall"]["words"]
    assert est["ci_method"] == "wilson_effective" and est["n_effective"] == 40
    p = correct / 8
    assert (est["ci_low"], est["ci_high"]) == pytest.approx(wilson_t(40 * p, 40, 39), abs=1e-9)
    # by hand: at 0 Wilson's upper bound is q² / (n + q²), at 1 the lower is n / (n + q²); q = t(0.975, 39)
    from scipy.stats import t

    q2 = t.ppf(0.975, 39) ** 2
    assert (est["ci_low"], est["ci_high"]) == pytest.approx((0.0, q2 / (40 + q2)) if p == 0 else (40 / (40 + q2), 1.0),
                                                            abs=1e-12)
    assert "too_few_units" not in est


def test_a_collapsed_bootstrap_falls_back_to_wilson_on_the_items():
    """A metric that keeps the bootstrap (a macro average) and scores every item alike."""
    from glotbench.metrics.ratio import MacroMetric

    macro = MacroMetric("macro", ("x", "y"), "correct", "n")
    samples = [ScoredSample(f"i{i}", 0, {}, ItemScore({f"correct:{'xy'[i % 2]}": 0.0, f"n:{'xy'[i % 2]}": 1.0}))
               for i in range(40)]
    est = aggregate([macro], samples)["overall"]["macro"]
    assert est["ci_method"] == "wilson_fallback"
    assert est["ci_high"] == pytest.approx(100 * proportion_confint(0, 40, method="wilson")[1], abs=1e-9)


def test_items_without_the_statistic_do_not_count():
    """A rate defined on some items only (false alarms on error-free sentences): n is those items."""
    samples = [ScoredSample(f"i{i}", 0, {}, ItemScore({"words_correct": 0.0, "words": 4.0 if i < 10 else 0.0}))
               for i in range(50)]
    est = aggregate([WORDS], samples)["overall"]["words"]
    assert est["ci_method"] == "wilson_effective" and est["n"] == 50
    assert est["ci_high"] == pytest.approx(wilson_t(0, 10, 9)[1], abs=1e-9)  # 10 units, t at 9 df


def test_repeats_make_the_per_item_value_a_mean():
    """Three repeats: an item's row is (0..3, 3), a mean over repeats, not a 0/1 outcome: the interval
    counts items, not samples."""
    rng = np.random.default_rng(5)
    values = [list(rng.integers(0, 2, 3)) for _ in range(40)]
    est = aggregate([EXACT], _samples(values, repeats=3))["overall"]["exact"]
    assert est["ci_method"] == "wilson_effective" and est["ci_low"] < est["value"] < est["ci_high"]
    assert est["n_effective"] <= 120
    # ... and when every repeat of every item failed, Wilson on the 40 items (not on 120 samples)
    est = aggregate([EXACT], _samples([[0, 0, 0]] * 40, repeats=3))["overall"]["exact"]
    assert est["ci_method"] == "wilson_effective"
    assert est["ci_high"] == pytest.approx(wilson_t(0, 40, 39)[1], abs=1e-9)


def test_groups_get_their_own_method_and_resamples_zero_still_gives_intervals():
    samples = _samples([1, 1, 1, 0, 0, 0, 1, 0], cat=lambda i: "all-right" if i < 3 else "mixed")
    out = aggregate([EXACT, WORDS], [ScoredSample(s.item_id, 0, s.meta, ItemScore({**s.score.stats,
                                                                                  "words_correct": 1.0, "words": 2.0}))
                                     for s in samples], ("category",), resamples=0)
    g = out["groups"]["category"]
    assert g["all-right"]["exact"]["ci_method"] == "wilson" and g["all-right"]["exact"]["ci_low"] < 1
    assert g["mixed"]["words"]["ci_method"] == "wilson_effective"  # no resamples needed
    from glotbench.metrics.ratio import MacroMetric

    macro = MacroMetric("macro", ("x",), "correct", "n")
    s = [ScoredSample(f"i{i}", 0, {}, ItemScore({"correct:x": float(i % 2), "n:x": 1.0})) for i in range(6)]
    est = aggregate([macro], s, resamples=0)["overall"]["macro"]
    assert est["ci_method"] == "none" and "too_few_units" not in est  # no bootstrap, and none pretended


def test_the_interval_code_is_in_the_aggregate_cache_key():
    """An aggregate stored by other interval code (the collapsing percentile bootstrap of the previous
    release) is never served: the files defining the interval code are hashed into the key."""
    from glotbench.engine.aggregate import AGGREGATE_CODE

    hashed = {inspect.getsourcefile(f) for f in AGGREGATE_CODE}
    for fn in (wilson, ratio_module.interval, ratio_module.proportion, ratio_module.aggregate, stats.bootstrap_many):
        assert inspect.getsourcefile(fn) in hashed


def test_the_table_caption_names_the_methods(tmp_path):
    from glotbench.report.terminal import ci_caption

    results = {"metrics": {"exact": {"label": "exact"}, "words": {"label": "word acc"},
                           "fmt": {"label": "no JSON", "show_ci": False}},
               "scores": {"overall": {"exact": {"ci_method": "wilson"}, "words": {"ci_method": "bootstrap"},
                                      "fmt": {"ci_method": "wilson"}},
                          "groups": {"c": {"x": {"words": {"ci_method": "wilson_fallback"}}}}}}
    assert ci_caption(results) == ("95% CI: Wilson score interval (exact); percentile bootstrap over items "
                                   "(word acc); Wilson on the items where the bootstrap collapsed (word acc)")
    old = {"metrics": {"exact": {}}, "scores": {"overall": {"exact": {"value": 0.5}}}}
    assert ci_caption(old) == "95% CI: percentile bootstrap over items (exact)"  # written before methods


def test_a_judged_score_that_every_item_agrees_on_keeps_an_interval(srv, tmp_path):
    """The arena and AraGen's mean of judges (judges/panel.mean_of_judges) took the percentile
    bootstrap alone: three prompts all won printed 100.0 (100.0–100.0). Where it collapses, Wilson on
    the items judged, as every other score (`wilson_fallback`), named in results and on screen."""
    import json

    from conftest import cli
    from glotbench.stats import wilson

    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"},
                          "rubric": {"mode": "rubric", "scores": {"Correct": 1, "Complete": 1, "Concise": 5,
                                                                  "Helpful": 5, "Honest": 5, "Harmless": 5}}})
    p = cli("run", "laobench-arena", "--model", "python:helpers:good_answer", "--bench-opt", "baseline=python:helpers:plain_answer",
            "--judge", srv.spec("fair"), "--limit", "3", "--out", str(tmp_path / "arena"), "--no-cache", "--no-progress")
    assert p.returncode == 0, p.stderr
    scores = summary(tmp_path / "arena")["scores"]
    lo, hi = wilson(3, 3)
    for est in (scores["final"], scores["judges"][srv.spec("fair")]):
        assert est["value"] == 1.0 and est["ci_method"] == "wilson_fallback"
        assert (est["ci_low"], est["ci_high"]) == pytest.approx((lo, hi))
    assert "(100.0–100.0)" not in p.stdout and f"({100 * lo:.1f}–100.0)" in p.stdout
    p = cli("run", "aragen", "--model", "python:helpers:good_answer", "--judge", srv.spec("rubric"), "--limit", "4",
            "--out", str(tmp_path / "aragen"), "--no-cache", "--no-progress")
    assert p.returncode == 0, p.stderr
    est = summary(tmp_path / "aragen")["mean_of_judges"]["3c3h"]
    assert est["value"] == 1.0 and est["ci_method"] == "wilson_fallback"
    assert (est["ci_low"], est["ci_high"]) == pytest.approx(wilson(4, 4))
    assert "100–100" not in p.stdout
