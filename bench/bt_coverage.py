"""Coverage of the Bradley–Terry ratings' 95% intervals (`glotbench arena-rank`, the board's arena
section), measured by simulation: the table in docs/metrics.md ("Arena ratings").

    PYTHONPATH=src python bench/bt_coverage.py [--reps 2000] [--resamples 400]

Known strengths: a baseline and candidates at the Elo gaps of each row, every candidate against the
baseline on every prompt in both orders (ties with the row's probability, a tie half a win, the two
orders averaged, as arena.json records them). Each cell is the share of `--reps` seeded simulated
arenas whose percentile bootstrap interval over prompts holds the true centred rating, the lowest
over the models; `*` below 93%. The simulation: glotbench.stats.coverage.bt_coverage.
"""

from __future__ import annotations

import argparse
import time

from glotbench.stats import MIN_ARENA_PROMPTS
from glotbench.stats.coverage import MIN_COVERAGE, bt_coverage

PROMPTS = (10, 15, 20, 30, 50, 75, 100, 150, 200, 300)
ROWS = (  # (Elo gaps of the candidates to the baseline, P(tie) per order)
    ((0.0, 50.0, 100.0), 0.0),
    ((0.0, 100.0, 200.0), 0.3),
    ((-200.0, 100.0, 300.0), 0.15),
    ((200.0, 400.0), 0.0),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000, help="simulated arenas per cell")
    ap.add_argument("--resamples", type=int, default=400, help="bootstrap resamples per arena")
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(f"lowest coverage over the models; {args.reps} arenas per cell, {args.resamples} resamples each\n")
    print("| Elo gaps to the baseline | P(tie) | " + " | ".join(f"{p} prompts" for p in PROMPTS) + " |")
    print("|---|---:|" + "---:|" * len(PROMPTS))
    for gaps, tie in ROWS:
        cells = []
        for p in PROMPTS:
            c = bt_coverage(gaps, tie, p, reps=args.reps, resamples=args.resamples).coverage
            cells.append(f"{100 * c:.1f}" + ("*" if c < MIN_COVERAGE else ""))
        print(f"| {', '.join(f'{g:+.0f}' for g in gaps)} | {tie} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n(* below {100 * MIN_COVERAGE:.0f}%; † in glotbench below {MIN_ARENA_PROMPTS} prompts; "
          f"{time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
