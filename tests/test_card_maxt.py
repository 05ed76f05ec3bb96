"""The report card's tiering test (glotbench/stats/card.py `pairwise_maxt`, `tiers`): every pair of
models tested at once by permuting the models' labels within each unit, adjusted by Westfall–Young
step-down maxT. Checked against a brute-force enumeration written from the definition, for
exchangeability (the exact level over a whole permutation orbit), and for the tier rule."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from glotbench.stats.card import (TaskUnits, _permuted_means, maxt_hits, pairwise_maxt, paired_language_test,
                                  ratio_rows, tiers)


def _ratio_task(name: str, rows: dict[str, list[tuple[float, float]]], floor: float) -> TaskUnits:
    """A task whose units are (numerator, denominator) sums: clusters of unequal size."""
    return TaskUnits(name, {m: np.array(v, dtype=float) for m, v in rows.items()}, ratio_rows(), floor, 1.0)


def _tiny() -> list[TaskUnits]:
    # two tasks, 2 + 2 clusters, three models: (3!)^4 = 1296 joint relabellings
    t1 = _ratio_task("t1", {"a": [(3, 4), (1, 2)], "b": [(1, 4), (2, 2)], "c": [(0, 4), (0, 2)]}, 0.25)
    t2 = _ratio_task("t2", {"a": [(2, 3), (1, 1)], "b": [(3, 3), (0, 1)], "c": [(1, 3), (1, 1)]}, 0.5)
    return [t1, t2]


def _reference(tasks: list[TaskUnits], models: list[str]) -> tuple[dict, dict, list[float]]:
    """Step-down maxT from the definition, in plain Python over every joint relabelling: per unit one
    of the k! orders of the models. Returns raw and adjusted p per pair, and every relabelling's max."""
    k = len(models)
    units = [(ti, i) for ti, t in enumerate(tasks) for i in range(t.units)]

    def means(orders: tuple) -> list[float]:
        out = []
        for slot in range(k):
            vals = []
            for ti, t in enumerate(tasks):
                num = den = 0.0
                for i in range(t.units):
                    m = models[orders[units.index((ti, i))][slot]]
                    num += t.stats[m][i][0]
                    den += t.stats[m][i][1]
                acc = num / den if den else 0.0
                vals.append(max((acc - t.floor) / (t.top - t.floor), 0.0))
            out.append(sum(vals) / len(vals))
        return out

    pairs = list(itertools.combinations(range(k), 2))
    obs = means(tuple(tuple(range(k)) for _ in units))
    t_obs = {p: abs(obs[p[0]] - obs[p[1]]) for p in pairs}
    ranked = sorted(pairs, key=lambda p: -t_obs[p])
    rows = []
    for orders in itertools.product(itertools.permutations(range(k)), repeat=len(units)):
        mu = means(orders)
        rows.append({p: abs(mu[p[0]] - mu[p[1]]) for p in pairs})
    n = len(rows)
    raw = {p: sum(r[p] >= t_obs[p] - 1e-12 for r in rows) / n for p in pairs}
    adj, running = {}, 0.0
    for r_i, p in enumerate(ranked):
        below = ranked[r_i:]
        running = max(running, sum(max(r[q] for q in below) >= t_obs[p] - 1e-12 for r in rows) / n)
        adj[p] = running
    return raw, adj, [max(r.values()) for r in rows]


def _enumerated(tasks: list[TaskUnits], k: int) -> list[np.ndarray]:
    """Every joint relabelling as the (trials, units, k) arrays `_permuted_means` takes, per task."""
    orders = list(itertools.product(itertools.permutations(range(k)), repeat=sum(t.units for t in tasks)))
    arr = np.array(orders, dtype=np.intp)  # (N, all units, k)
    out, at = [], 0
    for t in tasks:
        out.append(arr[:, at:at + t.units])
        at += t.units
    return out


def test_maxt_matches_a_brute_force_enumeration():
    tasks, models = _tiny(), ["a", "b", "c"]
    ref_raw, ref_adj, _ = _reference(tasks, models)
    perms = _enumerated(tasks, 3)
    observed = _permuted_means(tasks, models, [p[:1] for p in perms])[0]  # the first order is the identity
    null = _permuted_means(tasks, models, perms)
    raw, step = maxt_hits(observed, null)
    n = null.shape[0]
    pairs = list(itertools.combinations(range(3), 2))  # np.triu_indices order
    assert (raw / n).tolist() == pytest.approx([ref_raw[p] for p in pairs])
    from glotbench.stats.card import _stepdown_monotone

    assert _stepdown_monotone(step / n, observed).tolist() == pytest.approx([ref_adj[p] for p in pairs])
    # the public test, by Monte Carlo, approaches the exact values
    got = pairwise_maxt(tasks, models, trials=4000, seed=5)
    for (a, b), p in zip(pairs, pairs):
        d, p_raw, p_adj = got[(models[a], models[b])]
        assert d == pytest.approx(observed[b] - observed[a])
        assert p_raw == pytest.approx(ref_raw[p], abs=0.025) and p_adj == pytest.approx(ref_adj[p], abs=0.025)
        assert p_adj >= p_raw


def test_the_null_is_the_same_for_every_relabelling_so_the_level_is_exact():
    """Exchangeability: relabelling the models within units (any element of the group) leaves the
    permutation distribution of the maximum unchanged, so over a whole orbit of equally good models
    the chance of min adjusted p <= alpha is at most alpha."""
    tasks, models = _tiny(), ["a", "b", "c"]
    perms = _enumerated(tasks, 3)
    base = np.sort(np.ptp(_permuted_means(tasks, models, perms), axis=1))
    rng = np.random.default_rng(0)
    for g in rng.choice(len(perms[0]), size=4, replace=False):
        moved = [TaskUnits(t.name, {models[j]: np.stack([t.stats[models[p[g, i, j]]][i] for i in range(t.units)])
                                    for j in range(3)}, t.score, t.floor, t.top) for t, p in zip(tasks, perms)]
        assert np.sort(np.ptp(_permuted_means(moved, models, perms), axis=1)) == pytest.approx(base)
    # min adjusted p of the relabelling h = the share of the orbit whose max reaches h's max
    p_min = (base[None, :] >= base[:, None] - 1e-12).mean(axis=1)
    for alpha in (0.05, 0.1, 0.2, 0.5):
        assert np.mean(p_min <= alpha) <= alpha


def test_two_models_is_the_paired_swap_test():
    t = _ratio_task("t", {"a": [(1, 1)] * 12 + [(0, 1)] * 8, "b": [(1, 1)] * 6 + [(0, 1)] * 14}, 0.25)
    ((pair, (d, p_raw, p_adj)),) = pairwise_maxt([t], ["a", "b"], trials=4000, seed=1).items()
    d_old, p_old = paired_language_test([t], "a", "b", trials=4000, seed=1)
    assert pair == ("a", "b") and d == pytest.approx(d_old) and p_raw == p_adj  # one pair: nothing to adjust
    # 6 discordant items, all for a: exact two-sided p = 2 / 2^6 = 1/32
    assert p_raw == pytest.approx(1 / 32, abs=0.01) and p_old == pytest.approx(1 / 32, abs=0.01)


def _acc(name: str, outcomes: dict[str, list[int]]) -> TaskUnits:
    return _ratio_task(name, {m: [(x, 1) for x in v] for m, v in outcomes.items()}, 0.25)


def test_tiers_follow_the_first_model_of_each_tier():
    # a chain: top beats low clearly, top-mid and mid-low are close. Walking down: mid shares top's
    # tier (not separated from its first model), low opens tier 2 (separated from top), whatever mid-low says.
    n = 60
    top = [1] * n
    mid = [0 if i % 10 == 0 else 1 for i in range(n)]  # 6 wrong
    low = [0 if i % 10 in (0, 1, 2, 3) else 1 for i in range(n)]  # 24 wrong, mid's 6 among them
    t = _acc("t", {"top": top, "mid": mid, "low": low})
    points = {m: float(t.normalised(t.stats[m].sum(0))) for m in t.stats}
    tr = tiers([t], points, trials=999, seed=3)
    assert tr.order == ("top", "mid", "low")
    assert tr.p_adjusted[("top", "mid")] >= 0.05 and tr.p_adjusted[("top", "low")] < 0.05
    assert tr.tier == {"top": 1, "mid": 1, "low": 2}
    assert all(tr.p_adjusted[p] >= tr.p_raw[p] for p in tr.p_raw)


def test_equal_models_share_one_tier_and_the_result_does_not_depend_on_their_names():
    rng = np.random.default_rng(4)
    p_item = rng.random(80)
    outs = {m: (rng.random(80) < p_item).astype(int).tolist() for m in ("x", "y", "z", "w")}
    t = _acc("t", outs)
    points = {m: float(t.normalised(t.stats[m].sum(0))) for m in outs}
    tr = tiers([t], points, trials=499, seed=1)
    assert set(tr.tier.values()) == {1}
    # the same data under other names and another insertion order: the same adjusted p per pair
    rename = {"x": "m4", "y": "m1", "z": "m3", "w": "m2"}
    t2 = _acc("t", {rename[m]: outs[m] for m in ("w", "z", "y", "x")})
    tr2 = tiers([t2], {rename[m]: v for m, v in points.items()}, trials=499, seed=1)
    assert {(rename[a], rename[b]): p for (a, b), p in tr.p_adjusted.items()} == tr2.p_adjusted
