"""The results table printed after a run and by `glotbench report RUN_DIR`."""

from __future__ import annotations

from typing import Any

from glotbench.console import console as console
from glotbench.console import visible as visible
from glotbench.models.endpoint import endpoint_line


def fit(out: Any, table: Any) -> None:
    """To fit a table wider than the console (80 columns on a pipe or in a log file, the window on
    a terminal), rich cuts numbers (`100.0 (99.1–100.…`) and drops whole columns without a mark; a
    score table never loses a number: the console is widened to the table's natural width instead
    (a narrow terminal then wraps the long lines)."""
    from rich.measure import Measurement

    out.width = max(out.width, Measurement.get(out, out.options.update_width(10_000), table).maximum)


def fold(width: int, names: list[str], headers: dict[str, str],
         body: list[tuple[str, str, dict[str, str], str | None] | None]) -> list[list[str]]:
    """The metric columns of a results table in groups that each fit `width` beside the group and n
    columns: a table with many metrics (vi-tone-errors: 9, 193 columns) is printed as several
    tables, one under the other, each with every row, instead of one wider than the terminal.
    Every column and number stays (a single column wider than `width` is a group of its own, and
    `fit` widens the console for it)."""
    from rich.cells import cell_len

    rows = [r for r in body if r is not None]

    def col(texts: list[str]) -> int:
        return max((cell_len(t) for t in texts), default=0) + 2  # a cell's padding: one space each side

    base = col(["group"] + [r[0] for r in rows]) + col(["n"] + [r[1] for r in rows])
    parts: list[list[str]] = [[]]
    used = base
    for name in names:
        w = col([headers[name]] + [r[2].get(name, "") for r in rows])
        if parts[-1] and used + w > width:
            parts.append([])
            used = base
        parts[-1].append(name)
        used += w
    return parts


def scaled(x: float | None, scale: str | None = "fraction") -> str:
    """A score as every human-facing line prints it (one unit everywhere; fractions stay in JSON):
    a fraction as percent, points (0–100) as they are, one decimal; "—" for none. `scale` None (a
    store row indexed before its unit was recorded): the stored number, marked "?"."""
    if x is None:
        return "—"
    if scale is None:
        return f"{x:.3g}?"
    if scale == "elo":  # Bradley–Terry ratings on the Elo scale (report/arena_rank.py): whole points
        return f"{x:.0f}"
    return f"{(100 if scale == 'fraction' else 1) * x:.1f}"


UNIT = {"fraction": "%", "points": "points", "elo": "Elo", None: "?"}


FEW_MARK = "†"  # an interval on too few units: its measured coverage is under 93% (docs/metrics.md)
FEW_NOTE = (f"{FEW_MARK} too few units for a trustworthy 95% interval: measured coverage under 93% "
            "(Wilson on fewer than 30 independent items, the bootstrap on fewer than 100, a cluster "
            "bootstrap, or one item or cluster; docs/metrics.md)")


def few_mark(est: dict[str, Any] | None) -> str:
    """`†` after an interval whose estimate is marked `too_few_units`, else ""."""
    return FEW_MARK if est and est.get("too_few_units") else ""


def n_text(est: dict[str, Any] | None) -> str:
    """An estimate's units as every view prints them beside its interval: `12`, or `12‡4` for 12
    items in 4 clusters (the clusters are the units of a clustered interval)."""
    if not est or est.get("n") is None:
        return ""
    c = est.get("clusters")
    return f"{est['n']}‡{c}" if c is not None and c < est["n"] else str(est["n"])


def ci_text(est: dict[str, Any] | None, scale: str | None = "fraction", signed: bool = False) -> str:
    """An estimate's 95% interval as every text view prints it: `(55.0–69.1)`, with `†` after it where
    the estimate is marked `too_few_units`; "" without an interval. `signed`: a difference, `(+1.0–+2.0)`."""
    if not est or est.get("ci_low") is None or est.get("ci_high") is None:
        return ""
    if signed:
        f = 100 if scale == "fraction" else 1
        lo, hi = f"{f * est['ci_low']:+.1f}", f"{f * est['ci_high']:+.1f}"
    else:
        lo, hi = scaled(est["ci_low"], scale), scaled(est["ci_high"], scale)
    return f"({lo}–{hi}){few_mark(est)}"


def interval_text(est: dict[str, Any] | None, scale: str | None = "fraction", *, ci: bool = True, n: bool = True,
                  none: str = "—") -> str:
    """THE text of an estimate, in every view that prints one as text: `62.3 (55.0–69.1)† n=12‡4`: the
    value (`scaled`), its interval with † where it rests on too few units (`ci_text`), and the units
    it rests on (`n_text`: items, ‡ clusters). The results table (whose n column carries the units:
    `n=False`), the board's cells and group tables (markdown, LaTeX, the heatmap's tooltips), the
    results store's `runs ls`, `runs show` and `runs board`, and export's Hub notes print through it;
    the HTML views, whose every number links to results.json, compose the same parts (`few_mark`,
    `n_text`). `none` for an estimate without a value."""
    if not est or est.get("value") is None:
        return none
    out = scaled(est["value"], scale)
    if ci and (interval := ci_text(est, scale)):
        out += f" {interval}"
    if n and (units := n_text(est)):
        out += f" n={units}"
    return out


def any_few(results: dict[str, Any]) -> bool:
    """Whether some shown interval of the run is marked `too_few_units`."""
    scores = results.get("scores") or {}
    shown = {n for n, info in (results.get("metrics") or {}).items() if info.get("show_ci", True)}
    ests = [*((scores.get("overall") or {}).items())] + [
        kv for groups in (scores.get("groups") or {}).values() for est in groups.values() for kv in est.items()]
    return any(k in shown and isinstance(e, dict) and e.get("too_few_units") for k, e in ests)


def floor_line(results: dict[str, Any]) -> str | None:
    """`input unchanged (the text as every answer), the do-nothing floor: exact 0.0 · word acc 19.2;
    at or below it: word acc 16.8`, for a benchmark whose input is a possible answer
    (Benchmark.input_answer); a benchmark with no pooled overall number (translation per direction,
    per language) gets it per group of its first grouping (`lo-en: BLEU 2.1 · chrF++ 12.0; ...`).
    None for others and for runs written before it was recorded."""
    fl = results.get("input_floor")
    if not isinstance(fl, dict):
        return None
    if fl.get("error"):  # its scorer could not aggregate it (Benchmark.input_floor): said, not left out
        return f"input unchanged (the {fl.get('field')} as every answer), the do-nothing floor: not computed ({fl['error']})"
    metrics = results.get("metrics") or {}
    scores = results.get("scores") or {}
    if fl.get("overall"):
        parts = [("", fl["overall"], scores.get("overall") or {})]
    else:
        key = next(iter(fl.get("groups") or {}), None)
        mine = ((scores.get("groups") or {}).get(key) or {}) if key else {}
        parts = [(f"{g}: ", values, mine.get(g) or {}) for g, values in ((fl.get("groups") or {}).get(key) or {}).items()]
    shown = [m for m in metrics if metrics[m].get("show_ci", True) and any(v.get(m) is not None for _, v, _ in parts)]
    if not shown:
        return None
    label = {m: metrics[m].get("label") or m for m in shown}
    scale = {m: metrics[m].get("scale", "fraction") for m in shown}
    floors, below = [], []
    for name, values, est in parts:
        floors.append(name + " · ".join(f"{label[m]} {scaled(values[m], scale[m])}" for m in shown
                                        if values.get(m) is not None))
        below += [f"{name}{label[m]} {scaled(est[m]['value'], scale[m])}" for m in shown
                  if values.get(m) is not None and (est.get(m) or {}).get("value") is not None
                  and est[m]["value"] <= values[m] + 1e-12]
    return (f"input unchanged (the {fl.get('field')} as every answer), the do-nothing floor: " + "; ".join(floors)
            + (f"; at or below it: {', '.join(below)}" if below else ""))


def _fmt(est: dict[str, Any] | None, ci: bool = True, scale: str = "fraction") -> str:
    return interval_text(est, scale, ci=ci, n=False)  # the table's n column carries the units


CI_WORDS = {"wilson": "Wilson score interval", "bootstrap": "percentile bootstrap over items",
            "wilson_fallback": "Wilson on the items where the bootstrap collapsed", "none": "no interval",
            "cluster_bootstrap": "percentile bootstrap over clusters",
            "wilson_effective": "Wilson on the effective number of items, t at G − 1 df (G clusters or items)",
            "wilson_clusters_fallback": "Wilson on the clusters where the cluster bootstrap collapsed"}


def ci_caption(results: dict[str, Any]) -> str:
    """The CI methods of a run's estimates (each estimate's `ci_method`) and the metrics that use
    each: `95% CI: Wilson score interval (exact, format); percentile bootstrap over items (word acc)`.
    A results.json written before methods were recorded used the percentile bootstrap."""
    scores = results.get("scores") or {}
    used: dict[str, list[str]] = {}
    for name, info in results.get("metrics", {}).items():
        if not info.get("show_ci", True):
            continue
        ests = [(scores.get("overall") or {}).get(name)] + [
            est.get(name) for groups in (scores.get("groups") or {}).values() for est in groups.values()]
        for method in dict.fromkeys((e or {}).get("ci_method") or "bootstrap" for e in ests if e):
            used.setdefault(method, []).append(info.get("label") or name)
    if not used:
        return "95% CI"
    return "95% CI: " + "; ".join(f"{CI_WORDS.get(m, m)} ({', '.join(labels)})" for m, labels in used.items())


def tokens_text(results: dict[str, Any]) -> str:
    """`tokens in N out M`; a log-likelihood run generates nothing (its "in" counts context + each
    choice), and replies a backend could not count are said, not shown as 0."""
    t = results["tokens"]
    loglik = (results.get("config") or {}).get("method") == "loglik"
    text = f"tokens in {t['prompt']} " + ("(context + each choice) out 0 (log-likelihood generates none)"
                                          if loglik else f"out {t['completion']}")
    if t.get("not_counted"):
        text += f" · tokens of {t['not_counted']} replies not counted (the backend has no tokenizer)"
    return text


def print_results(results: dict[str, Any], out: Any = None, *, endpoint: bool = True) -> None:
    from rich.table import Table

    out = out or console()
    scores = results["scores"]
    metric_names = list(results["metrics"])
    show_ci = {n: bool(results["metrics"][n].get("show_ci", True)) for n in metric_names}
    scale = {n: results["metrics"][n].get("scale", "fraction") for n in metric_names}
    title = (f"{results['benchmark']['name']} v{results['benchmark']['version']} · "
             f"{results['model']['spec']}")
    from rich import box

    scales = set(scale.values())
    unit = "percent" if scales == {"fraction"} else "points (0–100)" if scales == {"points"} else "percent or points"
    from glotbench.rundir.validity import notes

    from glotbench.report.clusters import cluster_line

    lines = notes(results)
    caption = "\n".join([*lines, f"{unit} · ★ headline", ci_caption(results), *([FEW_NOTE] if any_few(results) else []),
                         *filter(None, [cluster_line(results)])])
    cov = results.get("coverage")
    if cov and cov.get("missing"):
        caption += (f"\nPARTIAL COVERAGE: {cov['with_output']} of {cov['expected']} items have an output in "
                    f"{cov['source']}; the {cov['missing']} missing are scored as failures")
    def n_of(est: dict[str, Any]) -> str:
        first = next((v for v in est.values() if v), None)
        return n_text(first) if first else "0"

    headers = {n: (results["metrics"][n].get("label") or n) + (" ★" if n == results["headline"] else "")
               for n in metric_names}
    body: list[tuple[str, str, dict[str, str], str | None] | None] = []  # None: a section break
    overall = scores["overall"]
    if overall:
        body.append(("overall", n_of(overall), {n: _fmt(overall.get(n), show_ci[n], scale[n]) for n in metric_names},
                     "bold"))
    for key, groups in scores.get("groups", {}).items():
        body += [None, (f"by {key}", "", {}, "dim")]
        for value, est in groups.items():
            body.append((f"  {value}", n_of(est), {n: _fmt(est.get(n), show_ci[n], scale[n]) for n in metric_names},
                         None))
    parts = fold(out.width, metric_names, headers, body)
    for i, names in enumerate(parts):
        last = i == len(parts) - 1
        # A note (invalid, subset, sample data) is read whole: the table with the caption is at least
        # as wide as it (up to 80).
        table = Table(title=title if i == 0 else None, box=box.SIMPLE_HEAD, caption=caption if last else None,
                      min_width=(min(80, max((len(x) + 2 for x in lines), default=0)) or None) if last else None)
        table.add_column("group", no_wrap=True)
        table.add_column("n", justify="right")
        for name in names:
            table.add_column(headers[name], justify="right", no_wrap=show_ci[name])
        for row in body:
            if row is None:
                table.add_section()
            else:
                label, n, cells, style = row
                table.add_row(label, n, *(cells.get(name, "") for name in names), style=style)
        fit(out, table)
        out.print(table)
    rg = scores.get("resource_groups")
    if rg:
        out.print("resource groups (mean of languages): " + "; ".join(
            f"{g} {v['value']:.1f}" if v.get("value") is not None else f"{g} — (missing {', '.join(v['missing'])})"
            for g, v in rg.items()), soft_wrap=True)
    if results.get("random_baseline") is not None:
        out.print(f"random baseline: {100 * results['random_baseline']:.1f}%")
    floor = floor_line(results)
    if floor:
        out.print(floor, soft_wrap=True)
    counts = results["counts"]
    fails = ", ".join(f"{k} {v}" for k, v in sorted(counts["failures"].items())) or "none"
    flags = ", ".join(f"{k} {v}" for k, v in sorted(counts["flags"].items())) or "none"
    out.print(f"samples {counts['samples']} · failures: {fails} · flags: {flags}")
    out.print(f"model calls {counts['model_calls']} · retries {counts['retries']} · "
                  f"cache hits {counts['cache_hits']} · {tokens_text(results)}"
                  + (f" · cost ${results['cost']['run']:.4f}" if results.get("cost") else ""))
    if endpoint and (where := endpoint_line(results["model"])) is not None:  # `run` prints it at its start
        out.print(where, soft_wrap=True)
    if counts.get("structured_output"):
        out.print(f"structured output: {counts['structured_output']}")
    st = scores.get("stability")
    if st:
        def p(x: float | None) -> str:  # a repeat with nothing to score leaves these undefined
            return "—" if x is None else f"{100 * x:.1f}"
        out.print(f"repeats {st['repeats']}: {st['metric']} mean {p(st['mean'])} "
                      f"± {p(st['std'])} (min {p(st['min'])}, max {p(st['max'])}) · "
                      f"item agreement {100 * st['mean_item_agreement']:.1f}% · "
                      f"items that flip {100 * st['flip_rate']:.1f}%")
    out.print(f"signature: {results['signature']}", soft_wrap=True)
