"""`glotbench report RUN --html`: one self-contained HTML page for a run (see docs/reports.md).

Every number comes from the run directory: results.json (tagged `data-src="results.json#/json/pointer"`)
or samples.jsonl (latency percentiles, flip rates per group); references are re-read from the run's
data file only when its SHA-256 still matches."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from html import escape
from pathlib import Path
from typing import Any, TypedDict

from glotbench.errors import GlotbenchError
from glotbench.report import rundata
from glotbench.report.checks_html import checks_sections, sample_checks
from glotbench.benchmarks.base import Benchmark
from glotbench.report.page import notes_html, page, sample_browser
from glotbench.report.svg import Row, bar_plot, ci_plot, num, units
from glotbench.report.terminal import FEW_NOTE, any_few, ci_caption, few_mark, floor_line, n_text


def ptr(*parts: Any) -> str:
    """A JSON pointer into results.json (RFC 6901)."""
    return "results.json#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _factor(results: dict[str, Any], metric: str) -> float:
    return 100.0 if results["metrics"].get(metric, {}).get("scale", "fraction") == "fraction" else 1.0


def _est_cells(results: dict[str, Any], est: dict[str, Any] | None, path: tuple, metric: str) -> str:
    f = _factor(results, metric)
    if not est or est.get("value") is None:
        return '<td>—</td><td></td>'
    ci = (f'{num(est["ci_low"], ptr(*path, "ci_low"), factor=f)}–{num(est["ci_high"], ptr(*path, "ci_high"), factor=f)}'
          f'{few_mark(est)}' if est.get("ci_low") is not None and results["metrics"].get(metric, {}).get("show_ci", True) else "")
    return f'<td>{num(est["value"], ptr(*path, "value"), factor=f)}</td><td class="ci">{ci}</td>'


def header(results: dict[str, Any]) -> str:
    floor = floor_line(results)
    return (_header(results) + (f'<p class="note" id="input-floor">{escape(floor)}</p>' if floor else "")
            + notes_html(results))


def _header(results: dict[str, Any]) -> str:
    b, head = results["benchmark"], results["headline"]
    est = results["scores"]["overall"].get(head) or {}
    f = _factor(results, head)
    label = results["metrics"][head].get("label") or head
    ci = (f' <span class="ci">(95% CI {num(est.get("ci_low"), ptr("scores", "overall", head, "ci_low"), factor=f)}'
          f'–{num(est.get("ci_high"), ptr("scores", "overall", head, "ci_high"), factor=f)}){few_mark(est)}'
          f' n={escape(n_text(est))}</span>' if est.get("ci_low") is not None else "")
    unit = "%" if f == 100 else " points"
    if est.get("value") is None:
        keys = ", ".join(results["scores"].get("groups", {})) or "group"
        return (f'<h1>{escape(b["name"])} v{escape(str(b["version"]))} · {escape(results["model"]["spec"])}</h1>'
                f'<div class="headline" id="headline">{escape(label)}: <span class="note">scored per {escape(keys)} only '
                f'(no pooled overall score; see the groups)</span></div><div class="sig" id="signature">{escape(results["signature"])}</div>')
    return (f'<h1>{escape(b["name"])} v{escape(str(b["version"]))} · {escape(results["model"]["spec"])}</h1>'
            f'<div class="headline" id="headline">{escape(label)}: '
            f'{num(est.get("value"), ptr("scores", "overall", head, "value"), factor=f)}{unit}{ci}</div>'
            f'<div class="sig" id="signature">{escape(results["signature"])}</div>')


def scores_section(results: dict[str, Any]) -> str:
    scores, out = results["scores"], []
    for metric, info in results["metrics"].items():
        f = _factor(results, metric)
        rows, table = [], []
        if scores["overall"]:  # benchmarks scored per group only (translation directions) have none
            rows.append(Row("overall", *_vals(scores["overall"].get(metric)), src=ptr("scores", "overall", metric, "value"),
                            **_units(scores["overall"].get(metric))))
            table.append(f'<tr><td>overall</td><td>{_n(scores["overall"].get(metric))}</td>'
                         f'{_est_cells(results, scores["overall"].get(metric), ("scores", "overall", metric), metric)}</tr>')
        for key, groups in scores.get("groups", {}).items():
            rows.append(Row(f"by {key}", None, header=True))
            for value, ests in groups.items():
                rows.append(Row(value, *_vals(ests.get(metric)), src=ptr("scores", "groups", key, value, metric, "value"),
                                **_units(ests.get(metric))))
                table.append(f'<tr><td>{escape(key)}: {escape(value)}</td><td>{_n(ests.get(metric))}</td>'
                             f'{_est_cells(results, ests.get(metric), ("scores", "groups", key, value, metric), metric)}</tr>')
        show_ci = info.get("show_ci", True)
        rows = [r if show_ci or r.header else Row(r.label, r.value, src=r.src, n=r.n) for r in rows]
        star = " ★ headline" if metric == results["headline"] else ""
        out.append(f'<h3>{escape(info.get("label") or metric)}{star}</h3><p class="note">{escape(info.get("description", ""))}'
                   f' · {"percent" if f == 100 else "points (0–100)"}{", " + ci_caption({**results, "metrics": {metric: info}}) if show_ci else ""}</p>'
                   f'<div class="plotbox" data-metric="{escape(metric)}">{ci_plot(rows, factor=f, unit="%" if f == 100 else "")}</div>'
                   f'<details><summary>numbers</summary><table><tr><th>group</th><th>n</th><th>value</th><th>95% CI</th></tr>'
                   f'{"".join(table)}</table></details>')
    rg = scores.get("resource_groups")
    if rg:
        out.append("<h3>resource groups (mean of languages)</h3><table>" + "".join(
            f'<tr><td>{escape(g)}</td><td>{num(v.get("value"), ptr("scores", "resource_groups", g, "value"))}</td>'
            f'<td class="note">{escape(", ".join(v.get("missing") or []))}</td></tr>' for g, v in rg.items()) + "</table>")
    b = results.get("bootstrap") or {}
    out.append(f'<p class="note">bootstrap: {escape(str(b.get("resamples", "?")))} resamples, '
               f'{escape(str(b.get("method", "")))}, seed {escape(str(b.get("seed", "")))}; intervals: '
               f'{escape(ci_caption(results))} (docs/metrics.md)</p>')
    if any_few(results):
        out.append(f'<p class="note" id="few-units">{escape(FEW_NOTE)}</p>')
    out.append(cluster_note(results))
    return "".join(out)


def cluster_note(results: dict[str, Any]) -> str:
    """The clusters paragraph (report/clusters.py), empty for a run without a cluster field."""
    from glotbench.report.clusters import cluster_line

    line = cluster_line(results)
    return f'<p class="note" id="clusters">{escape(line)}</p>' if line else ""


def _vals(est: dict[str, Any] | None) -> tuple[float | None, float | None, float | None]:
    if not est:
        return (None, None, None)
    return est.get("value"), est.get("ci_low"), est.get("ci_high")


def _n(est: dict[str, Any] | None) -> str:
    return n_text(est)


class _Units(TypedDict):
    n: str
    few: bool


def _units(est: dict[str, Any] | None) -> _Units:
    """A plot row's units and † (a plotted interval always shows its n)."""
    u = units(est)
    return _Units(n=u["n"], few=u["few"])


def failures_section(results: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    c = results["counts"]
    fails, flags = c.get("failures") or {}, c.get("flags") or {}
    out = [f'<p>{num(c["samples"], ptr("counts", "samples"), digits=0)} samples, '
           f'{num(c["failed"], ptr("counts", "failed"), digits=0)} failed '
           f'(scored by the benchmark\'s failure rule, never dropped).</p>']
    if fails:
        out.append("<h3>failures by kind</h3>" + bar_plot([(k, v, ptr("counts", "failures", k)) for k, v in sorted(fails.items())])
                   + "<table>" + "".join(f'<tr><td>{escape(k)}</td><td>{num(v, ptr("counts", "failures", k), digits=0)}</td></tr>'
                                         for k, v in sorted(fails.items())) + "</table>")
    else:
        out.append("<p>no failures.</p>")
    if flags:
        out.append("<h3>flags</h3><table>" + "".join(
            f'<tr><td>{escape(k)}</td><td>{num(v, ptr("counts", "flags", k), digits=0)}</td></tr>' for k, v in sorted(flags.items()))
                   + "</table>")
    errors = Counter((s.get("error") or "").split(":")[0] for s in samples if s.get("error"))
    if errors:
        out.append('<p class="note">failures with an error message (a model call that failed after its retries, a scorer error), by kind: ' + escape(", ".join(f"{k} {v}" for k, v in errors.items())) + "</p>")
    return "".join(out)


def flips(samples: list[dict[str, Any]], keys: list[str], group_keys: list[str]) -> tuple[dict[str, list], dict]:
    """Items whose headline outcome differs between repeats, and the flip rate per group value."""
    by_item: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in samples:
        by_item[s["id"]].append(s)
    flipped = {}
    for i, recs in by_item.items():
        outcomes = [tuple(float(r["score"].get(k, 0.0)) for k in keys) for r in recs]
        ratios = {o[0] / o[1] if len(o) == 2 and o[1] > 0 else o for o in outcomes}
        if len(recs) > 1 and len(ratios) > 1:
            flipped[i] = [(r["repeat"], rundata.outcome(r, keys) or r["score"]) for r in recs]
    per_group: dict[str, dict[str, tuple[int, int]]] = {}
    for key in group_keys:
        tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for i, recs in by_item.items():
            v = str((recs[0].get("meta") or {}).get(key, "unknown"))
            tally[v][0] += i in flipped
            tally[v][1] += 1
        per_group[key] = {v: (a, b) for v, (a, b) in sorted(tally.items())}
    return flipped, per_group


def stability_section(results: dict[str, Any], flipped: dict[str, list], per_group: dict) -> str | None:
    st = results["scores"].get("stability")
    if not st:
        return None
    f = _factor(results, st["metric"])
    p = lambda k: ptr("scores", "stability", k)  # noqa: E731
    out = [f'<p>{num(st["repeats"], p("repeats"), digits=0)} repeats of {escape(st["metric"])}: mean '
           f'{num(st["mean"], p("mean"), factor=f)} ± {num(st["std"], p("std"), factor=f)} (min {num(st["min"], p("min"), factor=f)}, '
           f'max {num(st["max"], p("max"), factor=f)}) · answer agreement per item {num(st["mean_item_agreement"], p("mean_item_agreement"), factor=100)}% · '
           f'items that flip {num(st["flip_rate"], p("flip_rate"), factor=100)}%</p>',
           '<table><tr><th>repeat</th>' + "".join(f"<th>{i}</th>" for i in range(len(st["per_repeat"]))) + "</tr><tr><td>"
           + escape(st["metric"]) + "</td>" + "".join(f'<td>{num(v, p("per_repeat") + f"/{i}", factor=f)}</td>'
                                                     for i, v in enumerate(st["per_repeat"])) + "</tr></table>"]
    for key, tally in per_group.items():
        out.append(f"<h3>flip rate by {escape(key)}</h3>" + bar_plot(
            [(f"{v} ({a}/{b})", 100 * a / b, f"samples.jsonl#flip/{key}/{v}") for v, (a, b) in tally.items()],
            unit="%", digits=1) + '<table class="fliptable">' + "".join(
            f'<tr><td>{escape(v)}</td><td data-flipped="{a}" data-items="{b}">{a} of {b}</td></tr>' for v, (a, b) in tally.items())
            + "</table>")
    if flipped:
        out.append(f'<details><summary>items that flipped ({len(flipped)})</summary><table id="flipped"><tr><th>item</th><th>outcome per repeat</th></tr>'
                   + "".join(f'<tr><td><code>{escape(i)}</code></td><td>{escape(", ".join(f"{r}: {o}" for r, o in rs))}</td></tr>'
                             for i, rs in flipped.items()) + "</table></details>"
                   + '<p class="note">In the sample browser, the flag "flipped" shows them.</p>')
    return "".join(out)


def usage_section(results: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    t, c, cost, tm = results["tokens"], results["counts"], results.get("cost"), results.get("timing") or {}
    rows = [("prompt tokens", num(t["prompt"], ptr("tokens", "prompt"), digits=0)),
            ("completion tokens", num(t["completion"], ptr("tokens", "completion"), digits=0)),
            ("model calls", num(c["model_calls"], ptr("counts", "model_calls"), digits=0)),
            ("retries", num(c["retries"], ptr("counts", "retries"), digits=0)),
            ("cache hits", num(c["cache_hits"], ptr("counts", "cache_hits"), digits=0))]
    if cost:
        rows += [("cost of the run (USD)", num(cost["run"], ptr("cost", "run"), digits=4)),
                 ("billed in this invocation (USD)", num(cost["billed_now"], ptr("cost", "billed_now"), digits=4)),
                 ("price in / out per M tokens", f'{num(cost["price_in_per_mtok"], ptr("cost", "price_in_per_mtok"), digits=2)} / '
                                                 f'{num(cost["price_out_per_mtok"], ptr("cost", "price_out_per_mtok"), digits=2)}')]
    else:
        rows.append(("cost", "no price given (--price-in/--price-out)"))
    all_cached = tm.get("samples_sent") == 0 or ("samples_sent" not in tm and not results.get("batch")
                                                 and c.get("samples") and c.get("cache_hits") == c.get("samples"))
    for k, label in (("run_s", "run time (s)"), ("request_phase_s", "request phase (s)"),
                     ("samples_per_s", "samples the model answered per second")):
        if tm.get(k) is not None and not (k == "samples_per_s" and all_cached):
            rows.append((label, num(tm[k], ptr("timing", k), digits=2)))
    if all_cached:  # a cached re-run (results.json before `samples_sent` too): no model speed
        rows.append(("speed", "no request sent: every reply came from the cache, so no model speed was measured"))
    lat = sorted(s["latency_s"] for s in samples if s.get("latency_s") is not None and not s.get("cached"))
    if lat:
        q = statistics.quantiles(lat, n=100, method="inclusive") if len(lat) > 1 else [lat[0]] * 99
        rows.append(("latency of uncached calls (s): median / p90 / p99 / max",
                     " / ".join(f'<span data-latency="{k}">{v:.2f}</span>'
                                for k, v in (("p50", q[49]), ("p90", q[89]), ("p99", q[98]), ("max", lat[-1])))))
        if tm.get("latency"):  # what one sample's latency is (a batched backend: a share of its batch)
            rows.append(("latency measured", escape(str(tm["latency"]))))
    else:
        rows.append(("latency", "every reply came from the cache (no latency measured in this run)"))
    return '<table class="wrap">' + "".join(f"<tr><td>{escape(a)}</td><td>{b}</td></tr>" for a, b in rows) + "</table>"


def browser_rows(results: dict[str, Any], samples: list[dict[str, Any]], gold: dict[str, dict[str, Any]],
                 flipped: set[str]) -> list[dict[str, Any]]:
    keys = rundata.metric_keys(results, results["headline"])
    group_keys = list(results["scores"].get("groups", {}))
    bench = _bench(results) if gold else None  # its word diff (Benchmark.word_diff: vi-diacritics)
    repeats = (results.get("config") or {}).get("repeats", 1) > 1
    rows = []
    for s in samples:
        g = {k: str((s.get("meta") or {}).get(k, "unknown")) for k in group_keys}
        if repeats:
            g["repeat"] = str(s["repeat"])
        blocks: list[list[Any]] = [["input", "j", s.get("input")], ["raw output", "t", s.get("output")],
                                   ["extracted answer", "t", s.get("answer")]]
        if s.get("prompt") is not None:  # what was sent: a fill the page joins with the run's template
            blocks.insert(0, [f"prompt ({s.get('prompt_form') or 'chat'} form)", "p", s["prompt"]])
        it = gold.get(s["id"])
        o = rundata.outcome(s, keys)
        if it is not None:
            blocks.append(["references", "j", it])
            words = bench.word_diff(s["answer"], it) if bench is not None and isinstance(s.get("answer"), str) \
                and s["answer"] and o != "correct" else None  # a right answer needs no diff
            if words is not None:
                blocks.append(["word diff against the closest reference", "d", _compact(words)])
        blocks.append(["score statistics", "j", s.get("score")])
        if s.get("error"):
            blocks.append(["error", "t", s["error"]])
        blocks.append(["call", "j", {k: s.get(k) for k in ("finish_reason", "latency_s", "tokens", "retries", "cached")}])
        extra, check_flags = sample_checks(s)  # the sample's language check (report/checks_html.py)
        blocks[-1:-1] = extra
        fl = list(s.get("flags") or []) + (["flipped"] if s["id"] in flipped else []) + check_flags
        rows.append({"id": s["id"], "g": g, "o": o, "f": s.get("failure"), "fl": fl, "b": blocks})
    return rows


def _bench(results: dict[str, Any]) -> Benchmark | None:
    """The run's benchmark, rebuilt (as `rundata.references` does), or None."""
    try:
        bench: Benchmark = rundata.bench_of(results)
    except Exception:  # noqa: BLE001 - a benchmark that cannot be rebuilt: its references are not shown either
        return None
    return bench


def _compact(diff: list[tuple[str, str]]) -> list[Any]:
    """A right word travels as a plain string, others as [word, kind]: about half the bytes."""
    return [w if k == "ok" else [w, k] for w, k in diff]


def run_report(run_dir: str | Path) -> str:
    """The HTML of a run's report (a finished run directory, or an arena/AraGen directory)."""
    data = rundata.load_run(run_dir)
    if data.kind != "run":
        from glotbench.report.judged_html import judged_report

        return judged_report(data)
    results = data.results
    samples = list(rundata.iter_samples(data.path))
    gold, ref_note = rundata.references(results)
    st = results["scores"].get("stability")
    flipped, per_group = (flips(samples, rundata.metric_keys(results, st["metric"]), list(results["scores"].get("groups", {})))
                          if st else ({}, {}))
    rows = browser_rows(results, samples, gold, set(flipped))
    groups = {k: sorted({r["g"][k] for r in rows}) for k in (rows[0]["g"] if rows else {})}
    browser, script = sample_browser(rows, groups, sorted({s["failure"] for s in samples if s.get("failure")}),
                                     sorted({f for r in rows for f in r["fl"]}), ref_note,
                                     prompt_template=results.get("prompt_template"))
    sections = [("scores", "Scores by group", scores_section(results)),
                ("failures", "Failures", failures_section(results, samples))]
    stab = stability_section(results, flipped, per_group)
    if stab:
        sections.append(("stability", "Stability over repeats", stab))
    sections += checks_sections(results)  # results.json `checks` (report/checks_html.py)
    sections += [("usage", "Tokens, cost and latency", usage_section(results, samples)),
                 ("samples", "Samples", browser), ("config", "Configuration", config_section(results))]
    return page(f"{results['benchmark']['name']} · {results['model']['spec']}", header(results), sections, script=script)


def config_section(results: dict[str, Any]) -> str:
    import json

    keep = {k: results.get(k) for k in ("benchmark", "model", "config", "started", "finished", "versions", "argv")}
    return f'<pre class="sig">{escape(json.dumps(keep, ensure_ascii=False, indent=1))}</pre>'


def write_report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    target = Path(out) if out else Path(run_dir) / "report.html"
    html = run_report(run_dir)
    tmp = target.with_suffix(target.suffix + ".tmp")
    try:
        tmp.write_text(html, encoding="utf-8", errors="replace")  # a lone surrogate from a data file: "?"
        tmp.replace(target)
    except OSError as e:
        raise GlotbenchError(f"cannot write the report: {e}") from None
    return target
