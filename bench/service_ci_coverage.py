"""Coverage of the scoring service's released 95% interval (`ci95` in a submission's reply and on the
leaderboard page), measured by simulation: the table in docs/metrics.md ("The service's released
interval").

    PYTHONPATH=src python bench/service_ci_coverage.py [--reps 2000]

A set of m independent 0/1 items at true proportion p: a submission's score (0–100), released as the
service releases a key's first submission (`service.scoring.noised`: the Gaussian release noise of
`Step.noise_sd`, rounded to the Ladder's step with a uniform secret offset) with its interval
(`released_ci`), the defaults (`Step()`), no subdomain cells (the smallest noise: the narrowest
interval). Each cell is the share of `--reps` seeded submissions whose interval holds 100·p, the lowest
over p in {0.02, 0.05, 0.1, 0.25, 0.5} (the interval is symmetric); `*` below 93%.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from glotbench.service.scoring import MIN_RELEASED_ITEMS, Step, noised, released_ci
from glotbench.stats.coverage import MIN_COVERAGE

P = (0.02, 0.05, 0.1, 0.25, 0.5)
ITEMS = (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 500, 2000)


def released_coverage(m: int, p: float, reps: int, seed: int = 0, step: Step | None = None) -> float:
    """The share of `reps` first releases of a score over m items whose `ci95` holds 100·p."""
    st = Step() if step is None else step
    rng = np.random.default_rng([seed, m, int(1000 * p)])
    scores = 100.0 * rng.binomial(m, p, reps) / m
    z, offsets = rng.standard_normal(reps), rng.random(reps) - 0.5
    sd, s = st.noise_sd(m, m, 1), st.size(m)
    hits = 0
    for v, zz, off in zip(scores.tolist(), z.tolist(), offsets.tolist()):
        lo, hi = released_ci(noised(v, sd, zz, s, 1, off), sd, s, m, 1)
        hits += lo <= 100 * p <= hi
    return hits / reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000, help="simulated submissions per cell")
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(f"lowest coverage over p in {{{', '.join(map(str, P))}}}; {args.reps} submissions per cell; default Step()\n")
    print("| items m | " + " | ".join(str(m) for m in ITEMS) + " |")
    print("|---|" + "---:|" * len(ITEMS))
    cells = []
    for m in ITEMS:
        c = min(released_coverage(m, p, args.reps) for p in P)
        cells.append(f"{100 * c:.1f}" + ("*" if c < MIN_COVERAGE else ""))
    print("| coverage | " + " | ".join(cells) + " |")
    print(f"\n(* below {100 * MIN_COVERAGE:.0f}%; † in the service below {MIN_RELEASED_ITEMS} items; "
          f"{time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
