"""`glotbench plan`: can this many items tell two models apart? (stats/power.py, docs/metrics.md)

The item count comes from `--items`, a benchmark's data (its items; its clusters, when it names a
cluster field) or two finished runs on the same items; the base rate and the correlation between
the two models' per-item outcomes are given, or measured from the two runs (their mean accuracy and
the phi coefficient of their 0/1 headline outcomes; with clusters, the design effect of the per-item
differences). Without runs or `--correlation` the correlation 0.5 is assumed, and the output says so.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from glotbench.errors import GlotbenchError
from glotbench.stats import power as pw

ASSUMED_CORRELATION = 0.5
CURVE = (0.01, 0.02, 0.03, 0.05, 0.10)


def _check_unit(name: str, x: float | None, lo: float = 0.0, hi: float = 1.0) -> None:
    if x is not None and not lo < x < hi:
        raise GlotbenchError(f"--{name} must lie strictly between {lo:g} and {hi:g}, got {x:g}")


def _from_runs(paths: list[str]) -> dict[str, Any]:
    """n, the two accuracies, their phi correlation and (clustered runs) the design effect of the
    per-item differences, from two finished runs on the same items with a 0/1 headline."""
    from glotbench.rundir.selection import comparability
    from glotbench.report import rundata
    from glotbench.rundir import read_results
    from glotbench.stats.cluster import cluster_codes, clustered_se

    if len(paths) != 2:
        raise GlotbenchError(f"--runs takes two run directories, got {len(paths)}")
    res = [read_results(p) for p in paths]
    if comparability(res[0]) != comparability(res[1]):
        from glotbench.report.compare import check_comparable

        check_comparable(list(paths), res)  # says which: the item sets, or the signature parts that differ
        raise GlotbenchError("the two runs have different signatures or item sets; plan needs two runs on the same items")
    head = res[0]["headline"]
    keys = rundata.metric_keys(res[0], head)
    if len(keys) != 2:
        raise GlotbenchError(f"the headline {head} is not a proportion of 0/1 items; plan needs one (accuracy, exact match)")
    samples = [list(rundata.iter_samples(Path(p))) for p in paths]
    outcomes = []
    for p, rows, r in zip(paths, samples, res):
        per = rundata.run_item_stats(r, rows)
        item_outcome: dict[str, int] = {}
        for i, st in per.items():
            num, den = st.get(keys[0], 0.0), st.get(keys[1], 0.0)
            if den != 1 or num not in (0, 1):
                raise GlotbenchError(f"{p}: item {i}'s {head} is {num:g}/{den:g}, not a 0/1 outcome (repeats or "
                                     "partial credit); plan needs one 0/1 outcome per item")
            item_outcome[i] = int(num)
        outcomes.append(item_outcome)
    ids = sorted(set(outcomes[0]) & set(outcomes[1]))
    if len(ids) < 2:
        raise GlotbenchError("the two runs share fewer than two items")
    a = [outcomes[0][i] for i in ids]
    b = [outcomes[1][i] for i in ids]
    n = len(ids)
    p_a, p_b, p11 = sum(a) / n, sum(b) / n, sum(x * y for x, y in zip(a, b)) / n
    out: dict[str, Any] = {"items": n, "accuracy_a": p_a, "accuracy_b": p_b, "correlation": pw.phi(p11, p_a, p_b),
           "discordant": sum(x != y for x, y in zip(a, b)) / n, "design_effect": None, "clusters": None}
    cluster_of = rundata.item_clusters(res[0], samples[0])
    if cluster_of:
        import numpy as np

        codes, g = cluster_codes((("value", str(v)) if (v := cluster_of.get(i)) not in (None, "") else ("item", i)) for i in ids)
        if g < n:
            diff = np.array(b, dtype=float) - np.array(a, dtype=float)
            out["design_effect"] = clustered_se(diff, np.ones(n), codes, g)["design_effect"]
            out["clusters"] = g
    return out


def _why_assumed(measured: dict[str, Any]) -> str:
    """Why the correlation is the assumed one: no runs were given, or the runs' phi is undefined
    (a run whose outcomes never vary: every item right, or every item wrong)."""
    if not measured:
        return "assumed; measure it with --runs"
    constant = [f"run {k.upper()} got {'every' if measured[f'accuracy_{k}'] == 1 else 'no'} item right"
                for k in ("a", "b") if measured[f"accuracy_{k}"] in (0, 1)]
    return (f"assumed: the runs' correlation (phi) is undefined because {' and '.join(constant)} of the "
            f"{measured['items']} shared, so its outcomes do not vary; give --correlation to set it")


def _from_benchmark(name: str, data: str | None, bench_options: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    from glotbench.registry import get_benchmark

    bench = get_benchmark(name, **dict(bench_options))
    ds = bench.load(data)
    out: dict[str, Any] = {"items": len(ds), "benchmark": bench.name, "data": str(ds.source), "clusters": None}
    if bench.cluster_by:
        values = [it.meta.get(bench.cluster_by) or f"item:{it.id}" for it in ds]
        out["clusters"] = len(set(values))
        out["cluster_key"] = bench.cluster_by
    return out


def plan(*, benchmark: str | None = None, data: str | None = None, bench_options: tuple[tuple[str, str], ...] = (),
         items: int | None = None, runs: list[str] | None = None, base_rate: float | None = None,
         correlation: float | None = None, design_effect: float | None = None, alpha: float = 0.05,
         target_power: float = 0.8, target_diff: float | None = None) -> dict[str, Any]:
    """The smallest difference the paired test detects, the items a target difference needs, and
    the power at a few differences (module docstring)."""
    _check_unit("alpha", alpha)
    _check_unit("power", target_power)
    _check_unit("base-rate", base_rate)
    _check_unit("target-diff", target_diff)
    if target_power <= alpha:  # the test rejects with probability alpha when nothing differs
        raise GlotbenchError(f"--power must exceed --alpha ({alpha:g}): a test with no difference at all already "
                             f"rejects that often, got --power {target_power:g}")
    if correlation is not None and not -1 <= correlation <= 1:
        raise GlotbenchError(f"--correlation must lie in [-1, 1], got {correlation:g}")
    if design_effect is not None and not 1e-9 <= design_effect < math.inf:
        raise GlotbenchError(f"--design-effect must be a positive number, got {design_effect:g}")
    if sum(x is not None and x != [] for x in (benchmark, items, runs)) != 1:
        raise GlotbenchError("give one of: a benchmark, --items N, or --runs RUN_A --runs RUN_B")
    source: dict[str, Any] = {}
    measured: dict[str, Any] = {}
    if runs:
        measured = _from_runs(runs)
        source = {"runs": list(runs)}
        n = measured["items"]
    elif benchmark:
        source = _from_benchmark(benchmark, data, bench_options)
        n = source["items"]
    else:
        if items is None or items < 2:
            raise GlotbenchError(f"--items must be at least 2, got {items}")
        n = items
        source = {"items": items}
    if base_rate is None:
        if not measured:
            raise GlotbenchError("give --base-rate (the accuracy expected of the models) or --runs RUN_A --runs RUN_B")
        base_rate = (measured["accuracy_a"] + measured["accuracy_b"]) / 2
        if not 0 < base_rate < 1:
            raise GlotbenchError(f"the runs' mean accuracy is {base_rate:g}: no room for a difference")
    corr_from = "given"
    if correlation is None:
        if measured and measured["correlation"] is not None:
            correlation, corr_from = measured["correlation"], "measured from the runs (phi of the per-item outcomes)"
        else:
            correlation, corr_from = ASSUMED_CORRELATION, _why_assumed(measured)
    deff_from = "given"
    if design_effect is None:
        if measured.get("design_effect"):
            design_effect, deff_from = measured["design_effect"], "measured from the runs' clusters (per-item differences)"
        else:
            design_effect = 1.0
            if measured.get("clusters"):  # clustered runs whose per-item differences do not vary across clusters
                deff_from = (f"assumed 1: the runs' {measured['clusters']} clusters give no design effect (their "
                             "per-item differences do not vary); give --design-effect")
            else:
                deff_from = ("assumed 1: the benchmark names clusters; give --design-effect (a clustered run's "
                             "design_effect) or --runs" if source.get("clusters") else "independent items")
    room = 2 * min(base_rate, 1 - base_rate)  # accuracies base ± diff/2 stay within [0, 1]
    if target_diff is not None and target_diff > room + 1e-12:
        raise GlotbenchError(f"--target-diff {target_diff:g} does not fit base rate {base_rate:g}: the accuracies "
                             f"base ± diff/2 would leave [0, 1]; at most {room:.4g} here")
    eff = n / design_effect
    if eff < 2:
        raise GlotbenchError(f"{n} items at design effect {design_effect:g} are {eff:.3g} effective items; "
                             "a paired test needs at least 2")
    mde = pw.min_detectable(eff, base_rate, correlation, alpha, target_power)
    out: dict[str, Any] = {
        "source": source, "items": n, "design_effect": design_effect, "design_effect_from": deff_from,
        "effective_items": eff, "base_rate": base_rate, "correlation": correlation, "correlation_from": corr_from,
        "alpha": alpha, "power": target_power, "min_detectable_diff": mde,
        "curve": [{"diff": d, "power": pw.power(eff, base_rate - d / 2, base_rate + d / 2, correlation, alpha)}
                  for d in CURVE if d <= 2 * min(base_rate, 1 - base_rate)],
        "method": "two-sided paired test of B − A on 0/1 outcomes: McNemar's exact test, which glotbench's "
                  "approximate randomisation computes; its exact power (normal approximation, Connor 1987, above "
                  f"{pw.EXACT_MAX} items); accuracies base ± diff/2",
    }
    if measured:
        out["measured"] = measured
    if mde is not None:
        out["discordant_at_min_diff"] = pw.cells(base_rate - mde / 2, base_rate + mde / 2, correlation).discordant
    if target_diff is not None:
        need = pw.items_needed(target_diff, base_rate, correlation, alpha, target_power)
        out["target_diff"] = target_diff
        out["items_needed"] = None if need is None else int(-(-need * design_effect // 1))
        out["power_at_target"] = pw.power(eff, base_rate - target_diff / 2, base_rate + target_diff / 2, correlation, alpha)
    capped = pw.cells(base_rate - (mde or 0) / 2, base_rate + (mde or 0) / 2, correlation).capped
    if capped:
        out["note"] = "the correlation is beyond what these accuracies allow: capped at the largest they allow"
    return out


def plan_text(p: dict[str, Any]) -> str:
    pct = lambda x: f"{100 * x:.1f}"  # noqa: E731
    src = p["source"]
    where = (f"{src.get('benchmark')} ({src.get('data')})" if "benchmark" in src else
             f"runs {', '.join(src['runs'])}" if "runs" in src else "--items")
    lines = [f"items: {p['items']} from {where}" + (f", {src['clusters']} clusters ({src.get('cluster_key')})"
                                                     if src.get("clusters") else ""),
             f"design effect: {p['design_effect']:.2f} ({p['design_effect_from']}); effective items {p['effective_items']:.0f}",
             f"base rate: {pct(p['base_rate'])}% · correlation between the models' outcomes: {p['correlation']:.2f} "
             f"({p['correlation_from']})",
             f"paired test at alpha {p['alpha']:g}, power {p['power']:g}: "
             + (f"smallest detectable difference {pct(p['min_detectable_diff'])} points"
                if p["min_detectable_diff"] is not None else "no difference the base rate allows is detectable")]
    if "target_diff" in p:
        lines.append(f"a {pct(p['target_diff'])}-point difference: power {p['power_at_target']:.2f} with these items; "
                     + (f"{p['items_needed']} items needed for power {p['power']:g}" if p["items_needed"] else
                        "no item count suffices"))
    lines.append("power by difference: " + ", ".join(f"{pct(c['diff'])} pt {c['power']:.2f}" for c in p["curve"]))
    if p.get("note"):
        lines.append(p["note"])
    lines.append(f"method: {p['method']}")
    return "\n".join(lines)
