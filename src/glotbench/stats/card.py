"""The per-language report card's statistics: SEA-HELM's normalised score, EuroEval's rank score,
their two-level bootstrap, the paired test between two models over a language's tasks, and tiers
(every pair tested at once by permutation, Westfall–Young step-down maxT adjusted).

Reference rules, reproduced exactly (tests/test_card.py):
- SEA-HELM (`src/metrics/seahelm_metric.py` `normalize_score`, aisingapore/SEA-HELM at
  6844e6c5cae439a413281df31271d388fcbad12f): max((score − min) / (max − min), 0), 0 when min = max.
- EuroEval (`src/leaderboards/score_computation.py` and `src/frontend/md/methodology.md`,
  EuroEval/EuroEval at f37841c8d538d81a7360212746f7a2b30815b1d1): a dataset's rank score is
  1 + (best mean − the model's mean) / pooled SD, the SD (numpy's, ddof 0) of every raw score of
  every model on the dataset (1 when there is one score or the SD is 0); unweighted means upward.
  EuroEval's raw scores are ten evaluations on bootstrapped test sets; here they are the task's
  score on ten bootstrap resamples of its items (`RAW_RESAMPLES`), the same resamples for every model.
  Ties: EuroEval has no tie rule in the rank score itself; models with equal means get equal rank
  scores, and the best ones all get exactly 1. Its "mean bootstrap score" is a Monte-Carlo estimate of
  the score's mean over resamples of the test set. Here each model's mean is that expectation's plug-in,
  the task's score on all its items (for a mean metric, the exact limit of the mean over resamples).
  Two models with equal scores therefore tie exactly. With the ten draws' mean, two models right on 3 of
  5 items (other items) got 1.0 and up to 1.74 (tests/test_card_rank_ties.py's case). Only the pooled SD
  comes from the raw scores.

Everything is vectorised over resamples (numpy); a task's units are its items, or its clusters'
sums where the task names a cluster field, aligned across the models (the items all of them ran).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

RAW_RESAMPLES = 10  # EuroEval's iterations per model and dataset
ScoreRows = Callable[[np.ndarray], np.ndarray]  # (..., k) summed statistics -> (...) scores


def seahelm_normalise(score: float | np.ndarray, floor: float, top: float) -> float | np.ndarray:
    """SEA-HELM's normalisation: (score − floor) / (top − floor), never below 0; 0 when floor = top."""
    if top == floor:
        return np.zeros_like(score) if isinstance(score, np.ndarray) else 0.0
    out = np.maximum((np.asarray(score, dtype=np.float64) - floor) / (top - floor), 0.0)
    return out if isinstance(score, np.ndarray) else float(out)


def euroeval_rank_scores(raw: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """EuroEval's dataset rank score of each model from its raw scores on the dataset."""
    means = {m: float(np.mean(v)) for m, v in raw.items() if len(v) and np.isfinite(np.mean(v))}
    return rank_scores(means, raw)


def rank_scores(means: Mapping[str, float], raw: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """EuroEval's rank score 1 + (best mean − mean) / pooled SD of the raw scores, for given means:
    equal means give equal rank scores, and the best ones exactly 1."""
    if not means:
        return {}
    pooled = _pooled_sd([x for m in means for x in raw[m]])
    best = max(means.values())
    return {m: 1.0 + (best - v) / pooled for m, v in means.items()}


def _pooled_sd(values: Sequence[float]) -> float:
    sd = float(np.std(values)) if len(values) > 1 else 1.0
    return sd if sd > 0 else 1.0


@dataclass(frozen=True)
class TaskUnits:
    """One task of a language: each model's per-unit statistics (units aligned across models), the
    metric's formula on summed statistics (vectorised), and the normalisation's floor and top."""

    name: str
    stats: Mapping[str, np.ndarray]  # model -> (units, k)
    score: ScoreRows
    floor: float
    top: float

    @property
    def units(self) -> int:
        return next(iter(self.stats.values())).shape[0]

    def normalised(self, sums: np.ndarray) -> np.ndarray:
        return np.asarray(seahelm_normalise(np.asarray(self.score(sums), dtype=np.float64), self.floor, self.top))


@dataclass(frozen=True)
class Interval:
    value: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class LanguageScores:
    """Per model: each task's normalised score and rank score, their means over tasks with 95% CIs."""

    task_normalised: dict[str, dict[str, float]]  # model -> task -> normalised score
    task_normalised_ci: dict[str, dict[str, tuple[float, float]]]  # its percentile interval over the task's items
    task_rank: dict[str, dict[str, float]]  # model -> task -> EuroEval rank score
    normalised_mean: dict[str, Interval]
    rank_score: dict[str, Interval]
    resamples: int


def _counts(rng: np.random.Generator, n: int, b: int) -> np.ndarray:
    """(b, n) bootstrap counts: how often each of n units is drawn in each of b resamples."""
    idx = rng.integers(0, n, size=(b, n)) + (np.arange(b) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(np.float64)


def language_scores(tasks: Sequence[TaskUnits], models: Sequence[str], *, resamples: int = 1000,
                    seed: int = 12345, confidence: float = 0.95) -> LanguageScores:
    """The card's numbers with their two-level bootstrap: tasks drawn with replacement from the
    language's tasks, and in each task its units drawn with replacement (the same units for every
    model, so the models' draws stay paired). The interval of a mean over T tasks is the point ± t
    (T − 1 degrees of freedom) × the resampled values' SD × sqrt(T / (T − 1)): the percentile interval
    covered 86% at 5 tasks, 91% at 10 (bench/card_sim.py); with one task, the percentile interval."""
    rng = np.random.default_rng(seed)
    t_n = len(tasks)
    task_norm: dict[str, dict[str, float]] = {m: {} for m in models}
    task_rank: dict[str, dict[str, float]] = {m: {} for m in models}
    norm_draws = np.zeros((resamples, t_n, len(models)))
    rank_draws = np.zeros((resamples, t_n, len(models)))
    for t, task in enumerate(tasks):
        raw_counts = _counts(np.random.default_rng([seed, t]), task.units, RAW_RESAMPLES)
        raw = {m: np.asarray(task.score(raw_counts @ task.stats[m]), dtype=np.float64) for m in models}
        means = {m: float(task.score(task.stats[m].sum(0))) for m in models}  # the plug-in (module doc)
        ranks = rank_scores(means, {m: list(v) for m, v in raw.items()})
        best = max(means.values())
        pooled = _pooled_sd([x for v in raw.values() for x in v])
        counts = _counts(rng, task.units, resamples)
        for j, m in enumerate(models):
            task_norm[m][task.name] = float(task.normalised(task.stats[m].sum(0)))
            task_rank[m][task.name] = ranks[m]
            scores = np.asarray(task.score(counts @ task.stats[m]), dtype=np.float64)
            norm_draws[:, t, j] = seahelm_normalise(scores, task.floor, task.top)
            rank_draws[:, t, j] = 1.0 + (best - scores) / pooled  # EuroEval: the best's mean fixed
    weights = _counts(rng, t_n, resamples) / t_n  # the tasks' draw: (resamples, tasks)
    lo_q, hi_q = (1 - confidence) / 2, 1 - (1 - confidence) / 2

    def interval(point: float, draws: np.ndarray, low: float, high: float) -> Interval:
        """The interval, cut to the values the statistic can take (never less coverage); over the
        resamples where the statistic is defined (an entity F1 of resampled sentences with no entity
        at all is 0/0: that resample is left out, not a NaN that makes the interval NaN)."""
        draws = draws[~np.isnan(draws)]
        if len(draws) < 2:
            return Interval(point, low if point == point else float("nan"), high)
        if t_n < 2:
            lo, hi = (float(x) for x in np.quantile(draws, [lo_q, hi_q]))
        else:
            from scipy.stats import t as student

            half = float(student.ppf(hi_q, t_n - 1) * np.std(draws, ddof=1) * np.sqrt(t_n / (t_n - 1)))
            lo, hi = point - half, point + half
        return Interval(point, max(lo, low), min(hi, high))

    def task_interval(draws: np.ndarray) -> tuple[float, float]:
        defined = draws[~np.isnan(draws)]  # a resample where the task's metric is 0/0 is left out
        if not len(defined):
            return (0.0, 1.0)  # no resample defined: nothing is known beyond the scale
        return tuple(float(x) for x in np.quantile(defined, [lo_q, hi_q]))  # type: ignore[return-value]

    def mean_draws(draws: np.ndarray) -> np.ndarray:
        """Each resample's weighted mean over the tasks drawn (a task not drawn adds nothing, even
        where its own resample is undefined: NaN only where an undefined task was drawn)."""
        return np.einsum("bt,bt->b", weights, np.where(weights > 0, draws, 0.0))

    task_ci = {m: {t.name: task_interval(norm_draws[:, i, j]) for i, t in enumerate(tasks)}
               for j, m in enumerate(models)}
    norm_mean, rank_mean = {}, {}
    for j, m in enumerate(models):
        norm_mean[m] = interval(float(np.mean(list(task_norm[m].values()))), mean_draws(norm_draws[:, :, j]), 0.0, 1.0)
        if len(models) < 2:  # the only model is the best on every task: 1 by definition, no interval
            rank_mean[m] = Interval(1.0, 1.0, 1.0)
            continue
        rank_mean[m] = interval(float(np.mean(list(task_rank[m].values()))), mean_draws(rank_draws[:, :, j]),
                                1.0, float("inf"))
    return LanguageScores(task_norm, task_ci, task_rank, norm_mean, rank_mean, resamples)  # type: ignore[arg-type]


def paired_language_test(tasks: Sequence[TaskUnits], a: str, b: str, *, trials: int = 1000,
                         seed: int = 12345) -> tuple[float, float]:
    """Approximate randomisation on the same units: each unit's two models' statistics swapped with
    probability 1/2 (a cluster's as one), the difference of the normalised means over the tasks
    recomputed; two-sided p = (hits + 1) / (trials + 1). Returns (b − a, p)."""
    rng = np.random.default_rng(seed)
    observed = np.mean([float(t.normalised(t.stats[b].sum(0)) - t.normalised(t.stats[a].sum(0))) for t in tasks])
    null = np.zeros(trials)
    for t in tasks:
        sa, sb = t.stats[a], t.stats[b]
        swap = (rng.random((trials, t.units)) < 0.5).astype(np.float64)
        moved = swap @ (sb - sa)  # what the swapped units move from b's sums to a's
        null += t.normalised(sb.sum(0) - moved) - t.normalised(sa.sum(0) + moved)
    null /= len(tasks)
    hits = int(np.sum(np.abs(null) >= abs(observed) - 1e-12))
    return float(observed), (hits + 1) / (trials + 1)


def _joint_permutations(rng: np.random.Generator, trials: int, units: int, k: int) -> np.ndarray:
    """(trials, units, k): in each trial, each unit's k models' labels in a uniformly random order
    (for two models: the swap with probability 1/2)."""
    if k <= 7:  # a draw from the table of all k! orders (a third of argsort's time)
        from itertools import permutations

        table = np.array(list(permutations(range(k))), dtype=np.intp)
        return table[rng.integers(0, len(table), size=(trials, units))]
    return np.argsort(rng.random((trials, units, k)), axis=2)


def _permuted_means(tasks: Sequence[TaskUnits], models: Sequence[str], perms: Sequence[np.ndarray]) -> np.ndarray:
    """(trials, k): each trial's normalised mean over the tasks of each model slot, when the task's
    unit i gives slot j the statistics of model perms[t][trial, i, j]. The identity permutation gives
    the observed means."""
    trials = perms[0].shape[0]
    out = np.zeros((trials, len(models)))
    for task, perm in zip(tasks, perms):
        stats = np.stack([task.stats[m] for m in models], axis=1)  # (units, k, d)
        n, k, d = stats.shape
        flat = stats.reshape(n * k, d)
        step = max(1, (1 << 21) // max(1, n * k))  # trials per chunk: ~16 MB of indices at most
        for lo in range(0, trials, step):
            idx = perm[lo:lo + step] + (np.arange(n) * k)[None, :, None]  # rows of `flat`
            sums = np.stack([np.take(flat[:, c], idx).sum(axis=1) for c in range(d)], axis=-1)  # (chunk, k, d)
            out[lo:lo + step] += task.normalised(sums)
    return out / len(tasks)


def _pairs(k: int) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.triu_indices(k, 1)
    return i, j


def maxt_hits(observed: np.ndarray, null: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Westfall–Young step-down maxT on every pair's |difference of means| (pairs in np.triu_indices
    order). observed: (k,) means; null: (trials, k) means under the permutations. Returns per pair the
    count of trials reaching its own statistic (raw) and the step-down count (before monotonicity):
    with the pairs ranked by observed |difference| (largest first), the trials whose maximum over the
    pairs ranked at or below it reaches it."""
    i, j = _pairs(observed.shape[0])
    t_obs = np.abs(observed[i] - observed[j]) - 1e-12  # float noise of one formula is no difference
    t_null = np.abs(null[:, i] - null[:, j])  # (trials, pairs)
    raw = (t_null >= t_obs).sum(axis=0)
    order = np.argsort(-t_obs, kind="stable")
    tail_max = np.maximum.accumulate(t_null[:, order[::-1]], axis=1)[:, ::-1]  # max over ranks >= r
    step = np.empty_like(raw)
    step[order] = (tail_max >= t_obs[order]).sum(axis=0)
    return raw, step


def _stepdown_monotone(p: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Adjusted p-values never decrease down the ranking by observed |difference|."""
    i, j = _pairs(observed.shape[0])
    order = np.argsort(-(np.abs(observed[i] - observed[j]) - 1e-12), kind="stable")
    out = np.empty_like(p)
    out[order] = np.maximum.accumulate(p[order])
    return out


def _varying(task: TaskUnits, models: Sequence[str]) -> TaskUnits:
    """The task with the units on which every model has the same statistics (no relabelling moves
    them) summed into one unit: the same test, fewer units to permute."""
    stats = np.stack([task.stats[m] for m in models], axis=1)  # (units, k, d)
    same = np.all(stats == stats[:, :1], axis=(1, 2))
    if same.sum() < 2:
        return task
    keep = stats[~same]
    fixed = stats[same].sum(axis=0, keepdims=True)
    return TaskUnits(task.name, {m: np.concatenate([keep[:, j], fixed[:, j]]) for j, m in enumerate(models)},
                     task.score, task.floor, task.top)


def pairwise_maxt(tasks: Sequence[TaskUnits], models: Sequence[str], *, trials: int = 1000,
                  seed: int = 12345) -> dict[tuple[str, str], tuple[float, float, float]]:
    """Every pair of models tested at once by permutation on the same units: in each trial each
    unit's models' statistics are handed out among the models in a random order (a cluster's as one;
    for two models, the paired swap of `paired_language_test`), the same trials for every pair; the
    statistic is |difference of normalised means over the tasks|. Adjusted p-values: Westfall–Young
    step-down maxT (Westfall & Young 1993, Algorithm 2.8) from the trials' maximum statistic, so the
    chance of any false separation is alpha for any number of models when they are equally good
    (exchangeable on each unit). p = (hits + 1) / (trials + 1). Returns pair -> (b − a, raw p, adjusted p)."""
    k = len(models)
    if k < 2:
        return {}
    rng = np.random.default_rng(seed)
    tasks = [_varying(t, models) for t in tasks]
    perms = [_joint_permutations(rng, trials, t.units, k) for t in tasks]
    ident = [np.broadcast_to(np.arange(k), (1, t.units, k)) for t in tasks]
    observed = _permuted_means(tasks, models, ident)[0]
    raw, step = maxt_hits(observed, _permuted_means(tasks, models, perms))
    p_raw = (raw + 1) / (trials + 1)
    p_adj = _stepdown_monotone((step + 1) / (trials + 1), observed)
    i, j = _pairs(k)
    return {(models[a], models[b]): (float(observed[b] - observed[a]), float(pr), float(pa))
            for a, b, pr, pa in zip(i, j, p_raw, p_adj)}


MAXT = "Westfall–Young step-down maxT (permutation)"


@dataclass(frozen=True)
class Tiers:
    order: tuple[str, ...]  # models by normalised mean, best first
    tier: dict[str, int]  # model -> tier (1 = the top)
    p_adjusted: dict[tuple[str, str], float]  # each pair's maxT-adjusted p (family-wise over all pairs)
    p_raw: dict[tuple[str, str], float]  # each pair's own permutation p (the same trials)


def tiers(tasks: Sequence[TaskUnits], points: Mapping[str, float], *, alpha: float = 0.05,
          trials: int = 1000, seed: int = 12345) -> Tiers:
    """Models grouped into tiers: every pair tested at once (`pairwise_maxt`, step-down maxT
    adjusted); walking down the models by normalised mean, a model opens a new tier only when its
    test against the current tier's first model separates them (adjusted p < alpha), else it shares
    that tier."""
    order = tuple(sorted(points, key=lambda m: -points[m]))
    tests = pairwise_maxt(tasks, order, trials=trials, seed=seed)
    adj = {pair: v[2] for pair, v in tests.items()}
    tier: dict[str, int] = {}
    anchor, level = None, 0
    for m in order:
        if anchor is None or adj[(anchor, m)] < alpha:
            anchor, level = m, level + 1
        tier[m] = level
    return Tiers(order, tier, adj, {pair: v[1] for pair, v in tests.items()})


def ratio_rows(scale: float = 1.0) -> ScoreRows:
    """The score of a two-statistic ratio metric (numerator, denominator) on summed rows, vectorised."""
    def score(sums: np.ndarray) -> np.ndarray:
        num, den = sums[..., 0], sums[..., 1]
        return np.where(den > 0, scale * num / np.where(den > 0, den, 1.0), 0.0)
    return score


def rowwise(fn: Callable[[np.ndarray], float]) -> ScoreRows:
    """A metric's scalar formula on one summed row made to take (..., k) arrays."""
    def score(sums: np.ndarray) -> np.ndarray:
        arr = np.asarray(sums, dtype=np.float64)
        if arr.ndim == 1:
            return np.asarray(fn(arr), dtype=np.float64)
        flat = arr.reshape(-1, arr.shape[-1])
        return np.asarray([fn(r) for r in flat], dtype=np.float64).reshape(arr.shape[:-1])
    return score
