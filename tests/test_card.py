"""The report card's statistics (glotbench/stats/card.py): SEA-HELM's normalisation and EuroEval's
rank score against their reference rules, the two-level bootstrap, the paired test and the tiers
(the tiers' maxT test itself: tests/test_card_maxt.py)."""

from __future__ import annotations

import numpy as np
import pytest

from glotbench.stats.card import (TaskUnits, euroeval_rank_scores, language_scores, paired_language_test,
                                  ratio_rows, rowwise, seahelm_normalise, tiers)


# -- SEA-HELM: src/metrics/seahelm_metric.py normalize_score (6844e6c5) -------------------------

def _seahelm_reference(score: float, min_score: float, max_score: float) -> float:
    """SEA-HELM's `normalize_score`, line for line."""
    if min_score == max_score:
        return 0.0
    return max((score - min_score) / (max_score - min_score), 0)


@pytest.mark.parametrize("score,floor,top,expected", [
    (0.625, 1 / 4, 1, 0.5),  # SuperGPQA-style: accuracy over 4 labels, floor 1/len(label_map): (0.625-0.25)/0.75
    (0.2, 1 / 4, 1, 0.0),  # below chance: 0, never negative
    (0.8, 0, 1, 0.8),  # BBH/IFEval: normalize_score(x, 0, 1) = x
    (0.5, 0.5, 0.5, 0.0),  # min = max: 0
    (75.0, 50.0, 100.0, 0.5),  # a points metric: floor 50, top 100
])
def test_seahelm_normalisation_is_the_reference_rule(score, floor, top, expected):
    assert seahelm_normalise(score, floor, top) == pytest.approx(expected)
    assert seahelm_normalise(score, floor, top) == pytest.approx(_seahelm_reference(score, floor, top))
    arr = seahelm_normalise(np.array([score, score]), floor, top)
    assert arr.tolist() == pytest.approx([expected, expected])


# -- EuroEval: methodology.md "Mean rank score", score_computation.py (f37841c8) ------------------

def test_euroeval_rank_score_on_a_hand_example():
    raw = {"a": [0.8, 0.9], "b": [0.6, 0.7], "c": [0.7, 0.8]}
    # means .85 .65 .75; every raw score pooled: mean .75, squared deviations .0025 .0225 .0225 .0025
    # .0025 .0025 = .055, / 6 = .0091667 (numpy's std, ddof 0), sd = .0957427
    sd = (0.055 / 6) ** 0.5
    got = euroeval_rank_scores(raw)
    assert got["a"] == 1.0  # the best scores exactly 1
    assert got["b"] == pytest.approx(1 + 0.2 / sd) and got["b"] == pytest.approx(3.08893, abs=1e-5)
    assert got["c"] == pytest.approx(1 + 0.1 / sd) and got["c"] == pytest.approx(2.04447, abs=1e-5)


def test_euroeval_rank_score_edge_rules():
    assert euroeval_rank_scores({"a": [0.5]}) == {"a": 1.0}  # one raw score: SD 1
    assert euroeval_rank_scores({"a": [0.5, 0.5], "b": [0.5, 0.5]}) == {"a": 1.0, "b": 1.0}  # SD 0: 1
    assert euroeval_rank_scores({"a": [0.9], "b": [0.7]}) == {"a": 1.0, "b": pytest.approx(1 + 0.2 / 0.1)}
    assert euroeval_rank_scores({}) == {}


def _task(name: str, outcomes: dict[str, list[int]], floor: float) -> TaskUnits:
    stats = {m: np.stack([np.array(v, dtype=float), np.ones(len(v))], axis=1) for m, v in outcomes.items()}
    return TaskUnits(name, stats, ratio_rows(), floor, 1.0)


def test_normalised_means_and_rank_scores_by_hand():
    # task 1 (4 options): a 8/8, b 6/8 -> (0.75-0.25)/0.75 = 2/3; task 2 (2 options): a 6/8 -> 0.5, b 4/8 -> 0
    t1 = _task("t1", {"a": [1] * 8, "b": [1] * 6 + [0] * 2}, 0.25)
    t2 = _task("t2", {"a": [1] * 6 + [0] * 2, "b": [1] * 4 + [0] * 4}, 0.5)
    sc = language_scores([t1, t2], ["a", "b"], resamples=400, seed=3)
    assert sc.task_normalised["a"] == pytest.approx({"t1": 1.0, "t2": 0.5})
    assert sc.task_normalised["b"] == pytest.approx({"t1": 2 / 3, "t2": 0.0})
    assert sc.normalised_mean["a"].value == pytest.approx(0.75)
    assert sc.normalised_mean["b"].value == pytest.approx(1 / 3)
    for m in "ab":
        iv = sc.normalised_mean[m]
        assert 0.0 <= iv.ci_low <= iv.value <= iv.ci_high <= 1.0
        assert iv.ci_high > iv.ci_low  # two tasks and varying items: a real interval
    lo, hi = sc.task_normalised_ci["b"]["t1"]  # b's 6 of 8 items resampled: an interval around 2/3
    assert lo < 2 / 3 < hi and sc.task_normalised_ci["a"]["t1"] == (1.0, 1.0)
    assert all(sc.task_rank["a"][t] == 1.0 for t in ("t1", "t2"))  # a leads both tasks: rank score 1
    assert all(sc.task_rank["b"][t] > 1.0 for t in ("t1", "t2"))
    assert sc.rank_score["b"].value == pytest.approx(np.mean(list(sc.task_rank["b"].values())))


def test_one_task_uses_the_percentile_interval_and_a_constant_model_has_none():
    t = _task("t", {"a": [1] * 10, "b": [1, 0] * 5}, 0.25)
    sc = language_scores([t], ["a", "b"], resamples=300, seed=1)
    a = sc.normalised_mean["a"]
    assert (a.value, a.ci_low, a.ci_high) == (1.0, 1.0, 1.0)  # every resample is all correct
    b = sc.normalised_mean["b"]
    assert b.value == pytest.approx((0.5 - 0.25) / 0.75) and b.ci_low < b.value < b.ci_high


def test_paired_test_same_outputs_p_is_one_and_opposite_outputs_p_is_the_minimum():
    t = _task("t", {"a": [1, 0] * 20, "b": [1, 0] * 20, "c": [0, 1] * 20, "d": [1] * 40}, 0.25)
    d, p = paired_language_test([t], "a", "b", trials=199, seed=1)
    assert d == 0.0 and p == 1.0
    d, p = paired_language_test([t], "a", "d", trials=199, seed=1)  # 20 discordant items, all for d
    assert d == pytest.approx(1.0 - (0.5 - 0.25) / 0.75)
    assert p == pytest.approx(1 / 200)  # no swap of 20 items (p 2^-20 each) reaches it in 199 trials


def test_tiers_group_models_a_paired_test_cannot_separate_after_maxt():
    n = 40
    good = [1] * n
    mid = [0 if i % 3 == 0 else 1 for i in range(n)]
    mid2 = [0 if i % 3 == 1 else 1 for i in range(n)]  # as accurate as mid, on other items
    t = _task("t", {"good": good, "mid": mid, "mid2": mid2}, 0.25)
    points = {m: float(t.normalised(t.stats[m].sum(0))) for m in t.stats}
    tr = tiers([t], points, trials=499, seed=2)
    assert tr.order[0] == "good"
    assert tr.tier == {"good": 1, "mid": 2, "mid2": 2}
    # good against mid: 14 discordant items, all for good; the maximum over all three pairs of the
    # relabelled data reaches that gap almost never: adjusted p near the floor 1/500
    assert tr.p_adjusted[("good", "mid")] < 0.01
    assert all(tr.p_adjusted[p] >= tr.p_raw[p] for p in tr.p_raw)  # a family-wise p is never smaller
    same = next(p for p in tr.p_raw if set(p) == {"mid", "mid2"})
    assert tr.p_adjusted[same] >= 0.05


def test_rowwise_matches_the_vectorised_ratio():
    sums = np.array([[[3.0, 4.0], [0.0, 0.0]], [[1.0, 2.0], [5.0, 5.0]]])
    assert rowwise(lambda r: r[0] / r[1] if r[1] else 0.0)(sums).tolist() == ratio_rows()(sums).tolist()


def test_the_floor_is_the_random_baseline_else_the_input_unchanged_floor_else_zero(tmp_path):
    from glotbench.report.board import Run
    from glotbench.report.card import _floor

    task = {"task": {"language": "vi"}}
    assert _floor(Run(tmp_path, {**task, "random_baseline": 0.25}), "accuracy") == (0.25, "random choice")
    fl = {"input_floor": {"overall": {"word_acc": 0.192}, "groups": {"lang": {"th": {"word_acc": 0.3}}}}}
    assert _floor(Run(tmp_path, {**task, **fl}), "word_acc") == (0.192, "input unchanged")
    # a run reported by language (a `lang` group, no task language): that language's floor
    assert _floor(Run(tmp_path, fl, lang="th"), "word_acc") == (0.3, "input unchanged")
    assert _floor(Run(tmp_path, task), "chrf") == (0.0, "none (0)")


def test_one_model_is_one_tier_and_its_card_has_numbers():
    t = _task("t", {"a": [1, 0, 1, 1]}, 0.5)
    sc = language_scores([t], ["a"], resamples=200, seed=1)
    assert sc.normalised_mean["a"].value == pytest.approx(0.5) and sc.rank_score["a"].value == 1.0
    tr = tiers([t], {"a": 0.5})
    assert tr.tier == {"a": 1} and tr.p_adjusted == {}
