"""Coverage of glotbench's 95% intervals, measured by simulation: the table in docs/metrics.md
("How often the intervals hold the truth").

    PYTHONPATH=src python bench/ci_coverage.py [--reps 2000] [--boot-reps 1000] [--method effective_wilson]

Data: G units (independent 0/1 items; items of several 0/1 words, as word accuracy counts them; or
clusters of 2, 3 or 5 items), a unit's own rate varying with intra-cluster correlation 0, 0.1, 0.2
or 0.4, at true proportions 0.05, 0.1, 0.15, 0.25, 0.35 and 0.5 (every method here
is symmetric in p and 1 - p). Each cell is the share of `--reps` seeded simulated data sets whose
interval holds the truth; the table prints, per method and setting, the **lowest** coverage over the
six proportions at each G, and `*` where it is below 93%. The simulation itself:
glotbench.stats.coverage.
"""

from __future__ import annotations

import argparse
import time

from glotbench.stats.coverage import MIN_COVERAGE, coverage

P = (0.05, 0.1, 0.15, 0.25, 0.35, 0.5)
UNITS = (2, 3, 4, 5, 7, 10, 15, 20, 30, 50, 100, 200)
# (label, method, cluster size, icc, used by glotbench for)
ROWS = (
    ("independent 0/1 items", "wilson", 1, 0.0, "a proportion of independent 0/1 items (`wilson`): † below 30 items"),
    ("independent 0/1 items", "bootstrap", 1, 0.0, "corpus metrics, macro averages (`bootstrap`): † below 100 items"),
    ("items of 3 words (= clusters of 3, ICC 0)", "bootstrap", 3, 0.0, "(as above); was word accuracy's interval"),
    ("items of 3 words (= clusters of 3, ICC 0)", "effective_wilson", 3, 0.0,
     "word accuracy, F1 sums, repeats (`wilson_effective` over items); clustered ratios"),
    ("items of 10 words, ICC 0.1", "effective_wilson", 10, 0.1, "(as above)"),
    ("clusters of 3, ICC 0.2", "bootstrap", 3, 0.2, "was the clustered interval; now non-ratio metrics, always †"),
    ("clusters of 3, ICC 0", "cluster_t", 3, 0.0, "not used (evaluated)"),
    ("clusters of 3, ICC 0.2", "cluster_t", 3, 0.2, "not used (evaluated)"),
    ("clusters of 2, ICC 0.2", "effective_wilson", 2, 0.2, "clustered ratio metrics (`wilson_effective`)"),
    ("clusters of 3, ICC 0.2", "effective_wilson", 3, 0.2, "(as above)"),
    ("clusters of 5, ICC 0.2", "effective_wilson", 5, 0.2, "(as above)"),
    ("clusters of 5, ICC 0.4", "effective_wilson", 5, 0.4, "(as above; a stress case)"),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000, help="simulated data sets per cell (analytic intervals)")
    ap.add_argument("--boot-reps", type=int, default=1000, help="simulated data sets per cell (bootstrap)")
    ap.add_argument("--method", action="append", default=None, metavar="METHOD",
                    help="only the rows of this interval (repeatable; wilson, bootstrap, cluster_t, effective_wilson)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(f"lowest coverage over p in {{{', '.join(map(str, P))}}}; G = units (items or clusters); "
          f"{args.reps} data sets per cell ({args.boot_reps} for the bootstrap, 400 resamples each)\n")
    print("| data | interval | " + " | ".join(f"G={u}" for u in UNITS) + " | used for |")
    print("|---|---|" + "---:|" * len(UNITS) + "---|")
    for label, method, size, icc, used in ROWS:
        if args.method and method not in args.method:
            continue
        reps = args.boot_reps if method == "bootstrap" else args.reps
        cells = []
        for u in UNITS:
            low = min(coverage(method, p, u, size, icc, reps=reps).coverage for p in P)
            cells.append(f"{100 * low:.1f}" + ("*" if low < MIN_COVERAGE else ""))
        print(f"| {label} | {method} | " + " | ".join(cells) + f" | {used} |", flush=True)
    print(f"\n(* below {100 * MIN_COVERAGE:.0f}%; {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
