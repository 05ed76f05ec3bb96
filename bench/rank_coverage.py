"""Coverage of the report card's mean rank score interval (EuroEval's rank score, stats/card.py
`language_scores`) by simulation: how often the card's 95% interval holds the truth.

    PYTHONPATH=src python bench/rank_coverage.py [--reps 400] [--tasks 5 10 20] [--items 200]

Data: a language of T tasks drawn from a population (4-option multiple choice, floor 0.25): a task's
accuracy a ~ Beta(6, 4); model m answers each of n items correctly with probability a − gap_m,
independently. Three settings of three models: gaps 0, 0.05, 0.10 (separated), 0, 0.02, 0.04
(close) and 0, 0, 0 (equal).
The truth of model m is the population's mean rank score E_task[1 + (max_j a_j − a_m) / s], where
s² = mean_j a_j (1 − a_j) / n + var_j(a_j) is the pooled SD of every model's scores on resampled
items in the limit (the within-model bootstrap variance plus the spread of the means), computed over
200,000 tasks. A replicate covers when the card's interval holds the truth.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from glotbench.stats.card import TaskUnits, language_scores, ratio_rows

FLOOR, TOP = 0.25, 1.0
A, B = 6.0, 4.0
SETTINGS = {"separated": (0.0, 0.05, 0.10), "close": (0.0, 0.02, 0.04), "equal": (0.0, 0.0, 0.0)}


def _accuracies(rng: np.random.Generator, tasks: int, gaps: tuple[float, ...]) -> np.ndarray:
    a = rng.beta(A, B, size=tasks)
    return np.clip(a[:, None] - np.asarray(gaps)[None, :], 0.0, 1.0)  # (tasks, models)


def truth(gaps: tuple[float, ...], items: int, seed: int = 1) -> np.ndarray:
    acc = _accuracies(np.random.default_rng(seed), 200_000, gaps)
    sd = np.sqrt(np.mean(acc * (1 - acc), axis=1) / items + np.var(acc, axis=1))
    return np.mean(1.0 + (acc.max(axis=1, keepdims=True) - acc) / sd[:, None], axis=0)


def _language(rng: np.random.Generator, tasks: int, items: int, gaps: tuple[float, ...]) -> list[TaskUnits]:
    out = []
    for t, acc in enumerate(_accuracies(rng, tasks, gaps)):
        stats = {f"m{j}": np.stack([(rng.random(items) < p).astype(np.float64), np.ones(items)], axis=1)
                 for j, p in enumerate(acc)}
        out.append(TaskUnits(f"t{t}", stats, ratio_rows(), FLOOR, TOP))
    return out


def task_t_interval(ranks: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """The t interval over the tasks' rank scores alone (one level: a task's rank score already
    carries its items' noise), cut at 1."""
    from scipy.stats import t as student

    x = np.asarray(ranks)
    half = float(student.ppf(1 - (1 - confidence) / 2, len(x) - 1) * np.std(x, ddof=1) / np.sqrt(len(x)))
    return max(float(x.mean()) - half, 1.0), float(x.mean()) + half


def coverage(reps: int, tasks: int, items: int, gaps: tuple[float, ...], resamples: int,
             seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per interval method and model: the share of replicates whose interval holds the truth, and the
    interval's mean width."""
    rng = np.random.default_rng(seed)
    target = truth(gaps, items)
    names = [f"m{j}" for j in range(len(gaps))]
    out = {k: (np.zeros(len(gaps)), np.zeros(len(gaps))) for k in METHODS}
    for r in range(reps):
        sc = language_scores(_language(rng, tasks, items, gaps), names, resamples=resamples, seed=seed + r)
        for j, m in enumerate(names):
            ivs = {"card": (sc.rank_score[m].ci_low, sc.rank_score[m].ci_high)}
            if tasks > 1:
                ivs["tasks-t"] = task_t_interval(list(sc.task_rank[m].values()))
            for k, (lo, hi) in ivs.items():
                out[k][0][j] += lo <= target[j] <= hi
                out[k][1][j] += hi - lo
    return {k: (h / reps, w / reps) for k, (h, w) in out.items() if w.any() or h.any()}


METHODS = {"card": "the card's (stats/card.py)", "tasks-t": "t over the tasks' rank scores"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--tasks", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    se = lambda p: (p * (1 - p) / args.reps) ** 0.5  # noqa: E731
    for name, gaps in SETTINGS.items():
        target = truth(gaps, args.items)
        print(f"{name} (gaps {gaps}; truth {', '.join(f'{x:.3f}' for x in target)}; {args.reps} replicates, "
              f"{args.items} items per task): coverage of the mean rank score's 95% interval per model")
        for t in args.tasks:
            t0 = time.perf_counter()
            res = coverage(args.reps, t, args.items, gaps, args.resamples, args.seed)
            for k, (c, w) in res.items():
                cells = "  ".join(f"m{j} {100 * x:5.1f}% (± {196 * se(x):.1f}), width {wj:.2f}"
                                  for j, (x, wj) in enumerate(zip(c, w)))
                print(f"  tasks {t:>3}, {METHODS[k]}: {cells}")
            print(f"  [{time.perf_counter() - t0:.0f} s]")

if __name__ == "__main__":
    main()
