"""The report card's statistics by simulation (docs/reports.md "Report card"): how often the tiering
splits models that are equally good (target 5% ± 1%), and how often the card's 95% interval of
the normalised mean holds the truth (target >= 93%).

    PYTHONPATH=src python bench/card_sim.py [--reps 1000] [--tasks 10] [--items 200] [--models 2]

Data: a language of T tasks drawn from a population of tasks (4-option multiple choice, random
floor 0.25; a task's true accuracy ~ Beta(6, 4), mean 0.6), n independent 0/1 items per task.
- False splits: M models with the same true accuracy on every item (each item's own chance of a
  correct answer ~ Beta around its task's accuracy, the same for all models: the null of the
  paired test); a split is any result with more than one tier (stats/card.py `tiers`, Holm).
- Coverage: one model; the truth is the population's normalised mean, E[max((acc − 0.25)/0.75, 0)]
  over the task population (computed by quadrature), the estimand of a bootstrap over tasks and
  items. A replicate covers when the card's interval (`language_scores`) holds it.
With --figure PATH an SVG of both is written (docs/figures/).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from glotbench.stats.card import TaskUnits, language_scores, ratio_rows, tiers

FLOOR, TOP = 0.25, 1.0
A, B = 6.0, 4.0  # the task population's accuracy: Beta(A, B)


def _language(rng: np.random.Generator, tasks: int, items: int, models: list[str], same: bool) -> list[TaskUnits]:
    out = []
    for t in range(tasks):
        acc = rng.beta(A, B)
        p_item = rng.beta(acc * 4, (1 - acc) * 4, size=items)  # items differ in difficulty
        stats = {}
        for m in models:
            correct = (rng.random(items) < p_item).astype(np.float64)
            stats[m] = np.stack([correct, np.ones(items)], axis=1)
        out.append(TaskUnits(f"t{t}", stats, ratio_rows(), FLOOR, TOP))
    return out


def truth() -> float:
    from scipy import integrate, stats

    f = lambda a: max((a - FLOOR) / (TOP - FLOOR), 0.0) * stats.beta.pdf(a, A, B)  # noqa: E731
    return float(integrate.quad(f, 0, 1, limit=200)[0])


def false_splits(reps: int, tasks: int, items: int, models: int, trials: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    names = [f"m{i}" for i in range(models)]
    splits = 0
    for r in range(reps):
        ts = _language(rng, tasks, items, names, same=True)
        points = {m: float(np.mean([t.normalised(t.stats[m].sum(0)) for t in ts])) for m in names}
        splits += len(set(tiers(ts, points, trials=trials, seed=seed + r).tier.values())) > 1
    return splits / reps


def coverage(reps: int, tasks: int, items: int, resamples: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    target = truth()
    hits = 0
    for r in range(reps):
        ts = _language(rng, tasks, items, ["m"], same=True)
        iv = language_scores(ts, ["m"], resamples=resamples, seed=seed + r).normalised_mean["m"]
        hits += iv.ci_low <= target <= iv.ci_high
    return hits / reps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--tasks", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--models", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--trials", type=int, default=999)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--only", choices=["splits", "coverage"], default=None)
    args = ap.parse_args()
    se = lambda p: (p * (1 - p) / args.reps) ** 0.5  # noqa: E731
    if args.only in (None, "splits"):
        print(f"false-split rate under the null (Holm, alpha 0.05; {args.reps} replicates, {args.items} items per task)")
        for m in args.models:
            for t in args.tasks:
                t0 = time.perf_counter()
                p = false_splits(args.reps, t, args.items, m, args.trials, args.seed)
                print(f"  models {m}, tasks {t:>3}: {100 * p:5.1f}% (± {196 * se(p):.1f})  [{time.perf_counter() - t0:.0f} s]")
    if args.only in (None, "coverage"):
        print(f"coverage of the normalised mean's 95% interval (truth {truth():.4f}; {args.reps} replicates)")
        for t in args.tasks:
            t0 = time.perf_counter()
            c = coverage(args.reps, t, args.items, args.resamples, args.seed)
            print(f"  tasks {t:>3}: {100 * c:5.1f}% (± {196 * se(c):.1f})  [{time.perf_counter() - t0:.0f} s]")


if __name__ == "__main__":
    main()
