"""`glotbench sweep --dry-run`: every run of the matrix with its model calls and, per run, the
dry run's token and cost estimate (engine/estimate.py): what is cached already, prompt tokens
(exact or estimated with a range), completion tokens up to max_tokens, and the cost range where the
model has prices. No model is called and nothing is written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from glotbench.engine.sweep import Run


@dataclass
class _Totals:
    """The sums over the runs still to run."""
    calls: int = 0
    cached: int = 0
    prompt: list[int] = field(default_factory=lambda: [0, 0, 0])  # estimate, low, high
    out: int = 0
    cost: list[float] = field(default_factory=lambda: [0.0, 0.0])  # min, max
    priced: int = 0


def print_sweep_estimate(runs: list[Run], budgets: dict[str, int], echo: Callable[[str], None]) -> None:
    from glotbench.engine.estimate import estimate_run
    from glotbench.engine.sweep_run import build_model

    models: dict[str, Any] = {}  # one backend object per model: a local tokenizer is loaded once
    echo(f"{'run':<60} {'items':>6} {'repeats':>7} {'calls':>7} {'cached':>7} {'prompt tok':>11} "
         f"{'max out tok':>11} {'cost $ (min–max)':>19}  status")
    totals = _Totals()
    left: dict[str, list[str]] = {}  # what a run's figures leave out (a judged task's judges), by run
    todo = [r for r in runs if not r.done]
    for r in runs:
        if r.done:
            echo(f"{r.run_id:<60} {r.items:>6} {r.repeats:>7} {r.calls:>7} {'':>7} {'':>11} {'':>11} {'':>19}  "
                 f"finished (skipped)")
            continue
        if r.model.label not in models:
            models[r.model.label] = build_model(r)
        est = estimate_run(r.benchmark.name, models[r.model.label], r.options)
        cost = "-"
        if est.cost is not None:
            cost = f"{est.cost['min']:.4f}–{est.cost['max']:.4f}"
            totals.cost[0] += est.cost["min"]
            totals.cost[1] += est.cost["max"]
            totals.priced += 1
        prompt = f"{est.prompt[0]:,}" + ("" if est.exact else "~")
        echo(f"{r.run_id:<60} {r.items:>6} {r.repeats:>7} {r.calls:>7} {est.cached:>7} {prompt:>11} "
             f"{est.completion[2]:>11,} {cost:>19}  to run")
        if est.not_counted:
            left[r.run_id] = est.not_counted
        totals.calls += est.to_send
        totals.cached += est.cached
        totals.out += est.completion[2]
        for i in range(3):
            totals.prompt[i] += est.prompt[i]
    echo(f"{len(runs)} runs ({len(todo)} to run), at most {sum(r.calls for r in todo)} model calls "
         f"(fewer when cached): {totals.cached} cached now, {totals.calls} to send")
    p = totals.prompt
    echo(f"prompt tokens {p[0]:,} (range {p[1]:,}–{p[2]:,}; ~ marks estimates, the others are exact), "
         f"completion tokens at most {totals.out:,}")
    if totals.priced:
        unpriced = len(todo) - totals.priced
        echo(f"cost ${totals.cost[0]:.4f}–${totals.cost[1]:.4f}"
             + (f" ({unpriced} runs without prices not counted)" if unpriced else ""))
    for run_id, what in left.items():
        echo(f"not counted in {run_id}: " + "; ".join(what))
    for ep, n in budgets.items():
        echo(f"endpoint {ep}: {n} requests in flight, shared by its runs")
