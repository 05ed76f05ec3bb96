"""Clustered intervals: the analytic clustered standard error against a hand computation and against
statsmodels' cluster-robust variance, the clustered interval (Wilson on the effective number of items
with t at G - 1 df; the cluster bootstrap, marked, for metrics that are not ratios), and the aggregate
cache keyed on the cluster field."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from glotbench.metrics import ItemScore, RatioMetric
from glotbench.metrics.ratio import ScoredSample, aggregate
from glotbench.stats import bootstrap_many, ratio_fn
from glotbench.stats.cluster import cluster_codes, clustered_se, sum_by_cluster

ACC = RatioMetric("accuracy", "correct", "n")


def _samples(outcomes, clusters, den=None):
    den = den or [1] * len(outcomes)
    return [ScoredSample(f"i{i}", 0, {"passage": c}, ItemScore({"correct": float(o), "n": float(d)}))
            for i, (o, c, d) in enumerate(zip(outcomes, clusters, den))]


def test_clustered_se_by_hand():
    # 6 items in 3 clusters: a = (1, 1), b = (0, 0, 1), c = (1,). Mean 4/6.
    y = np.array([1, 1, 0, 0, 1, 1.0])
    codes, g = cluster_codes(["a", "a", "b", "b", "b", "c"])
    assert g == 3 and codes.tolist() == [0, 0, 1, 1, 1, 2]
    r = clustered_se(y, np.ones(6), codes, g)
    # residuals summed per cluster: a: 2(1-m) = 2/3, b: 1 - 3m = -1, c: 1 - m = 1/3
    by_hand = math.sqrt(3 / 2 * ((2 / 3) ** 2 + 1 + (1 / 3) ** 2)) / 6
    iid = math.sqrt(6 / 5 * (4 * (1 / 3) ** 2 + 2 * (2 / 3) ** 2)) / 6
    assert r["se_clustered"] == pytest.approx(by_hand, rel=1e-12)
    assert r["se_iid"] == pytest.approx(iid, rel=1e-12)
    assert r["se_iid"] == pytest.approx(np.std(y, ddof=1) / math.sqrt(6), rel=1e-12)  # s / sqrt(n)
    assert r["design_effect"] == pytest.approx((by_hand / iid) ** 2)
    # on the points scale the SEs are x100; one cluster or one item: undefined, not 0
    assert clustered_se(y, np.ones(6), codes, g, scale=100)["se_clustered"] == pytest.approx(100 * by_hand)
    one = clustered_se(y, np.ones(6), np.zeros(6, dtype=np.int64), 1)
    assert one["se_clustered"] is None and one["se_iid"] is not None
    assert clustered_se(np.zeros(3), np.zeros(3), np.arange(3), 3) == {"se_clustered": None, "se_iid": None,
                                                                       "design_effect": None}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clustered_se_equals_statsmodels_ols_on_a_constant(seed):
    import statsmodels.api as sm

    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=40)
    groups = np.repeat(np.arange(40), sizes)
    p = rng.uniform(0.2, 0.9, size=40)[groups]  # correlated within a cluster
    y = (rng.uniform(size=len(groups)) < p).astype(float)
    codes, g = cluster_codes(groups.tolist())
    ours = clustered_se(y, np.ones_like(y), codes, g)
    X = np.ones((len(y), 1))
    clustered = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": groups})
    hc1 = sm.OLS(y, X).fit(cov_type="HC1")
    assert ours["se_clustered"] == pytest.approx(float(clustered.bse[0]), rel=1e-10)
    assert ours["se_iid"] == pytest.approx(float(hc1.bse[0]), rel=1e-10)


def test_ratio_metric_se_equals_statsmodels_weighted_fit():
    """sum(num)/sum(den) is the weighted mean of num/den with weights den: statsmodels' WLS on a
    constant with a cluster-robust covariance gives the same SE as our residual formula."""
    import statsmodels.api as sm

    rng = np.random.default_rng(7)
    groups = np.repeat(np.arange(25), rng.integers(1, 5, size=25))
    den = rng.integers(3, 20, size=len(groups)).astype(float)  # words per text
    num = np.minimum(den, rng.binomial(den.astype(int), 0.8)).astype(float)
    codes, g = cluster_codes(groups.tolist())
    ours = clustered_se(num, den, codes, g)
    fit = sm.WLS(num / den, np.ones((len(den), 1)), weights=den).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert fit.params[0] == pytest.approx(num.sum() / den.sum())
    assert ours["se_clustered"] == pytest.approx(float(fit.bse[0]), rel=1e-10)


def test_a_clustered_proportion_gets_wilson_on_the_effective_items_with_t():
    from scipy.stats import t as student_t
    from statsmodels.stats.proportion import proportion_confint

    outcomes = [1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1]
    clusters = ["p1", "p1", "p1", "p2", "p2", "p2", "p3", "p3", "p4", "p4", "p5", "p6"]
    out = aggregate([ACC], _samples(outcomes, clusters), cluster="passage", resamples=500)
    est = out["overall"]["accuracy"]
    assert est["ci_method"] == "wilson_effective" and est["n"] == 12 and est["clusters"] == 6
    assert est["value"] == pytest.approx(7 / 12)
    # Wilson on n_eff = p(1 - p) / SE² with z replaced by t(0.975, 5), as statsmodels computes Wilson at
    # the confidence whose normal quantile is that t
    rows = np.array([[o, 1.0] for o in outcomes])
    codes, g = cluster_codes(clusters)
    se = clustered_se(rows[:, 0], rows[:, 1], codes, g)["se_clustered"]
    assert est["se_clustered"] == pytest.approx(se)
    p = 7 / 12
    n_eff = min(12, p * (1 - p) / se ** 2) * 5 / 6  # the small-sample factor (G - 1) / G
    assert est["n_effective"] == pytest.approx(n_eff)
    from statistics import NormalDist
    alpha = 2 * (1 - NormalDist().cdf(student_t.ppf(0.975, 5)))
    ref = proportion_confint(p * n_eff, n_eff, alpha=alpha, method="wilson")
    assert (est["ci_low"], est["ci_high"]) == pytest.approx(ref, abs=1e-9)
    assert "too_few_units" not in est  # measured coverage >= 93% at 6 clusters
    c = out["clusters"]
    assert (c["key"], c["clusters"], c["items"], c["items_without_key"]) == ("passage", 6, 12, 0)
    # without the cluster field the same items get Wilson, which is narrower here, and marked: 12 items
    plain = aggregate([ACC], _samples(outcomes, clusters), resamples=500)["overall"]["accuracy"]
    assert plain["ci_method"] == "wilson" and "clusters" not in plain and plain["too_few_units"] is True
    assert plain["ci_high"] - plain["ci_low"] < est["ci_high"] - est["ci_low"]


def test_the_issue_example_is_no_longer_narrower_than_independent_items():
    """12 Belebele items over 4 passages at 25%: the cluster bootstrap printed 25.0 (8.3–33.3), narrower
    than Wilson's 8.9–53.2 for independent items. The clustered interval is at least as wide."""
    outcomes = [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]
    clusters = [f"p{i // 3}" for i in range(12)]
    est = aggregate([ACC], _samples(outcomes, clusters), cluster="passage")["overall"]["accuracy"]
    plain = aggregate([ACC], _samples(outcomes, clusters))["overall"]["accuracy"]
    assert est["ci_method"] == "wilson_effective" and est["clusters"] == 4
    assert est["ci_low"] <= plain["ci_low"] and est["ci_high"] >= plain["ci_high"]


def test_a_metric_that_is_not_a_ratio_keeps_the_cluster_bootstrap_marked():
    from glotbench.metrics.ratio import MacroMetric

    macro = MacroMetric("macro", ("x", "y"), "correct", "n")
    s = [ScoredSample(f"i{i}", 0, {"passage": f"p{i // 3}"},
                      ItemScore({f"correct:{'xy'[i % 2]}": float(i % 3 == 0), f"n:{'xy'[i % 2]}": 1.0}))
         for i in range(12)]
    est = aggregate([macro], s, cluster="passage")["overall"]["macro"]
    assert est["ci_method"] in ("cluster_bootstrap", "wilson_clusters_fallback") and est["too_few_units"] is True


def test_every_item_its_own_cluster_is_the_independent_case():
    out = aggregate([ACC], _samples([1, 0, 1, 1], ["a", "b", "c", "d"]), cluster="passage")
    assert out["overall"]["accuracy"]["ci_method"] == "wilson"
    assert out["clusters"]["clusters"] == 4 and out["clusters"]["method"].startswith("every item")


def test_items_without_the_key_are_clusters_of_one_and_counted():
    samples = _samples([1, 1, 0, 1, 0], ["a", "a", "", None, "b"])
    out = aggregate([ACC], samples, cluster="passage")
    assert out["clusters"]["items_without_key"] == 2 and out["clusters"]["clusters"] == 4
    assert out["overall"]["accuracy"]["clusters"] == 4


def test_repeats_are_summed_per_item_before_clusters():
    s = [ScoredSample(f"i{i}", r, {"passage": "ab"[i // 2]}, ItemScore({"correct": float((i + r) % 2), "n": 1.0}))
         for i in range(4) for r in range(2)]
    est = aggregate([ACC], s, cluster="passage")["overall"]["accuracy"]
    assert est["n"] == 4 and est["clusters"] == 2 and est["value"] == 0.5


def test_clusters_that_all_score_alike_give_wilson_on_the_clusters_with_t():
    """Every cluster right: Wilson with the 3 clusters as 3 trials and t(0.975, 2) in place of z. At
    p = 1 Wilson's lower bound is n / (n + q²) for the quantile q: 3 / (3 + 4.303²) = 0.139, where z
    gave 3 / (3 + 1.96²) = 0.439 (the interval of 3 independent items, which carries a †)."""
    from scipy.stats import t as student_t

    est = aggregate([ACC], _samples([1] * 9, list("aaabbbccc")), cluster="passage")["overall"]["accuracy"]
    assert est["ci_method"] == "wilson_effective" and est["n_effective"] == 3
    q = student_t.ppf(0.975, 2)
    assert (est["ci_low"], est["ci_high"]) == pytest.approx((3 / (3 + q * q), 1.0), abs=1e-12)
    assert "too_few_units" not in est  # measured >= 93% from 2 clusters, at 100% as elsewhere
    # ... and all wrong: the upper bound is q² / (n + q²)
    est = aggregate([ACC], _samples([0] * 9, list("aaabbbccc")), cluster="passage")["overall"]["accuracy"]
    assert (est["ci_low"], est["ci_high"]) == pytest.approx((0.0, q * q / (3 + q * q)), abs=1e-12)


def test_the_issue_belebele_example_two_passages_at_100_percent():
    """Belebele on 2 passages at 100% printed (34.2–100.0), Wilson with z on 2 units, unmarked. With
    t(0.975, 1) = 12.706: 2 / (2 + 12.706²) = 1.2%."""
    from scipy.stats import t as student_t

    est = aggregate([ACC], _samples([1] * 6, list("aaabbb")), cluster="passage")["overall"]["accuracy"]
    q = student_t.ppf(0.975, 1)
    assert (est["ci_low"], est["ci_high"]) == pytest.approx((2 / (2 + q * q), 1.0), abs=1e-12)
    assert 100 * est["ci_low"] == pytest.approx(1.224, abs=1e-3)


def test_one_cluster_has_no_degrees_of_freedom_and_is_marked():
    """One passage: no t, no measured coverage. Wilson with z on the one unit, marked †, at every value."""
    from glotbench.stats import wilson

    for outcomes in ([1, 1, 1], [0, 0, 0], [1, 0, 1]):
        est = aggregate([ACC], _samples(outcomes, list("aaa")), cluster="passage")["overall"]["accuracy"]
        assert est["ci_method"] == "wilson_effective" and est["too_few_units"] is True, outcomes
        assert (est["ci_low"], est["ci_high"]) == pytest.approx(wilson(sum(outcomes) / 3, 1), abs=1e-12)


def test_groups_get_their_own_clusters():
    s = [ScoredSample(f"i{i}", 0, {"passage": f"p{i // 3}", "lang": "lo" if i < 6 else "th"},
                      ItemScore({"correct": float(i % 2), "n": 1.0})) for i in range(9)]
    out = aggregate([ACC], s, ("lang",), cluster="passage")
    assert out["groups"]["lang"]["lo"]["accuracy"]["clusters"] == 2
    assert out["groups"]["lang"]["th"]["accuracy"]["clusters"] == 1


def test_clustered_width_matches_the_analytic_se_on_a_large_set():
    """With 300 clusters of 3 correlated items, the clustered 95% interval is about ±1.97 clustered
    SEs (t at 299 degrees of freedom), and clearly wider than the independent-items interval."""
    rng = np.random.default_rng(3)
    p = rng.uniform(0.1, 0.9, size=300)
    outcomes = (rng.uniform(size=(300, 3)) < p[:, None]).astype(int).ravel().tolist()
    clusters = [f"c{i // 3}" for i in range(900)]
    est = aggregate([ACC], _samples(outcomes, clusters), cluster="passage", resamples=2000)["overall"]["accuracy"]
    width = est["ci_high"] - est["ci_low"]
    assert width == pytest.approx(2 * 1.959964 * est["se_clustered"], rel=0.1)
    assert est["design_effect"] > 1.3  # positively correlated within clusters


def test_deepsea_xquad_clusters_by_context(tmp_path):
    from glotbench.benchmarks.deepsea import DeepSEATask

    bench = DeepSEATask("xquad")
    data = {"task": "xquad", "languages": {"vi": [
        {"context": "Hà Nội là thủ đô.", "question": f"Câu {i}?", "answers": ["Hà Nội"]} for i in range(3)] + [
        {"context": "Phở là món ăn.", "question": "Phở là gì?", "answers": ["món ăn"]}]}}
    f = tmp_path / "xquad.json"
    f.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    ds = bench.load(str(f))
    assert bench.cluster_by == "context" and len({it.meta["context"] for it in ds}) == 2
    assert "Hà Nội" not in json.dumps([dict(it.meta) for it in ds], ensure_ascii=False)  # a digest, not the text
    samples = [ScoredSample(it.id, 0, it.meta, ItemScore({"f1": float(i % 2), "n": 1.0})) for i, it in enumerate(ds)]
    out = bench.aggregate(samples, ds)
    assert out["groups"]["lang"]["vi"]["token_f1_first_ref"]["ci_method"] == "wilson_effective"
    assert out["clusters"]["clusters"] == 2 and DeepSEATask("mgsm").cluster_by is None


def test_the_cluster_field_is_in_the_aggregate_cache_key(tmp_path, cache_path):
    """A fully cached re-run reads its aggregate; the same run with a cluster field computes it
    afresh (clustered intervals), and reads that one back the next time."""
    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
    from glotbench.engine.evaluate import RunOptions, evaluate

    class Counting(VietnameseDiacritics):
        aggregates = 0

        def aggregate(self, samples, dataset=None, **kw):
            type(self).aggregates += 1
            return super().aggregate(samples, dataset, **kw)

    items = VietnameseDiacritics().load()
    f = tmp_path / "preds.jsonl"
    f.write_text("".join(json.dumps({"id": it.id, "output": json.dumps(
        {"restored_text": it.gold["references"][0] if i % 3 else it.public["text"]}, ensure_ascii=False)},
        ensure_ascii=False) + "\n" for i, it in enumerate(items)), encoding="utf-8")

    def run(bench, n):
        return evaluate(bench, f"replay:{f}", RunOptions(cache_path=cache_path, progress=False,
                                                          out=str(tmp_path / f"r{n}"))).results["scores"]

    plain = run(Counting(), 0)
    assert run(Counting(), 1) == plain and Counting.aggregates == 1
    clustered_bench = Counting()
    clustered_bench.cluster_by = "category"
    clustered = run(clustered_bench, 2)
    assert Counting.aggregates == 2 and clustered["overall"]["sentence_exact"]["ci_method"] == "wilson_effective"
    assert plain["overall"]["sentence_exact"]["ci_method"] == "wilson" and "clusters" not in plain
    again = Counting()
    again.cluster_by = "category"
    assert run(again, 3) == clustered and Counting.aggregates == 2
