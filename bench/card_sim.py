"""The report card's statistics by simulation (docs/reports.md "Report card"): how often the tiering
splits models that are equally good (target 5% ± 1%), and how often the card's 95% interval of
the normalised mean holds the truth (target >= 93%).

    PYTHONPATH=src python bench/card_sim.py [--reps 1000] [--tasks 10] [--items 200] [--models 2]

Data: a language of T tasks drawn from a population of tasks (4-option multiple choice, random
floor 0.25; a task's true accuracy ~ Beta(6, 4), mean 0.6), n independent 0/1 items per task.
- False splits: M models with the same true accuracy on every item (each item's own chance of a
  correct answer ~ Beta around its task's accuracy, the same for all models: the null of the
  paired test); a split is any result with more than one tier (stats/card.py `tiers`: every pair
  tested at once, Westfall–Young step-down maxT).
- Coverage: one model; the truth is the population's normalised mean, E[max((acc − 0.25)/0.75, 0)]
  over the task population (computed by quadrature), the estimand of a bootstrap over tasks and
  items. A replicate covers when the card's interval (`language_scores`) holds it.
With --figure PATH an SVG of both is written (docs/img/card-sim.svg), the target bands shaded.
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


def figure(rows: list[tuple[str, float, float, float, float]], path: str) -> None:
    """A self-contained SVG: each row's rate (%) with its 95% simulation interval, and the target band."""
    w, left, top, rh = 640, 230, 30, 24
    h = top + rh * len(rows) + 30
    x = lambda v: left + (w - left - 20) * v / 100  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">',
           '<text x="4" y="16" font-weight="bold">Report card statistics by simulation (bench/card_sim.py)</text>']
    for t in range(0, 101, 10):
        out.append(f'<line x1="{x(t):.1f}" y1="{top}" x2="{x(t):.1f}" y2="{h - 24}" stroke="#ddd"/>'
                   f'<text x="{x(t):.1f}" y="{h - 10}" text-anchor="middle" fill="#555">{t}%</text>')
    for i, (label, rate, half, lo_t, hi_t) in enumerate(rows):
        y = top + rh * i + rh / 2
        out.append(f'<rect x="{x(lo_t):.1f}" y="{y - 8:.1f}" width="{x(hi_t) - x(lo_t):.1f}" height="16" fill="#c6f6d5"/>'
                   f'<text x="4" y="{y + 4:.1f}">{label}</text>'
                   f'<line x1="{x(rate - half):.1f}" y1="{y:.1f}" x2="{x(rate + half):.1f}" y2="{y:.1f}" stroke="#2b6cb0" stroke-width="2"/>'
                   f'<circle cx="{x(rate):.1f}" cy="{y:.1f}" r="4" fill="#2b6cb0"><title>{rate:.1f}% ± {half:.1f}</title></circle>')
    out.append("</svg>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--tasks", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--models", type=int, nargs="+", default=[2, 3, 4])
    ap.add_argument("--trials", type=int, default=999)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--only", choices=["splits", "coverage"], default=None)
    ap.add_argument("--figure", default=None, help="write an SVG of the results here (docs/img/card-sim.svg)")
    args = ap.parse_args()
    rows: list[tuple[str, float, float, float, float]] = []
    se = lambda p: (p * (1 - p) / args.reps) ** 0.5  # noqa: E731
    if args.only in (None, "splits"):
        print(f"false-split rate under the null (step-down maxT, alpha 0.05; {args.reps} replicates, {args.items} items per task)")
        for m in args.models:
            for t in args.tasks:
                t0 = time.perf_counter()
                p = false_splits(args.reps, t, args.items, m, args.trials, args.seed)
                print(f"  models {m}, tasks {t:>3}: {100 * p:5.1f}% (± {196 * se(p):.1f})  [{time.perf_counter() - t0:.0f} s]")
                rows.append((f"false splits, {m} models, {t} tasks", 100 * p, 196 * se(p), 4.0, 6.0))
    if args.only in (None, "coverage"):
        print(f"coverage of the normalised mean's 95% interval (truth {truth():.4f}; {args.reps} replicates)")
        for t in args.tasks:
            t0 = time.perf_counter()
            c = coverage(args.reps, t, args.items, args.resamples, args.seed)
            print(f"  tasks {t:>3}: {100 * c:5.1f}% (± {196 * se(c):.1f})  [{time.perf_counter() - t0:.0f} s]")
            rows.append((f"coverage, {t} tasks", 100 * c, 196 * se(c), 93.0, 100.0))
    if args.figure:
        figure(rows, args.figure)


if __name__ == "__main__":
    main()
