"""`glotbench board RUNS_OR_DIRS...`: models x benchmarks with CIs, significance against each column's
best, the score–cost frontier and per-group scores, from finished run directories.

Rules (docs/reports.md):
- A column is one benchmark at one signature on one item set (rundir/selection.py `comparability`).
  The column's item set is the whole dataset when any run has it, else the one most models ran; runs
  with another signature or item set are left out (never pooled) and the board says which signature
  parts or item sets differ; so are unfinished runs and judged directories. Per model the cell takes
  its newest valid run (an invalid run only when the model has no valid one); the others are left out.
- A cell carries n, and the notes of its run (invalid, subset, sample data: rundir/validity.py).
  An invalid run is never the column's best and gets no significance mark.
- Significance: every run is tested against the column's best (highest headline) on the items both
  ran, with approximate randomisation (default) or the paired bootstrap from `glotbench.stats`; a cell
  is marked when p >= alpha (not significantly different from the best).
- Frontier: headline against cost (USD, from results.json) when every valid run in the column has a
  price, else total tokens when every valid run counted tokens, else the request phase's wall time; the
  Pareto front holds the valid runs no other valid run beats on both (cheaper or equal and higher). An
  invalid run is not on it: its calls failed, so it looks cheap.

Over 400 lines on purpose: the column rules above and the exports (markdown, CSV, LaTeX, JSON) read
the same cells (`cell_text`, `marked`); the page is board_html.py, the per-language board board_pivot.py.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from glotbench.rundir.files import RESULTS, RUN_JSON
from glotbench.rundir.selection import comparability, describe_item_set
from glotbench.rundir.validity import is_valid, notes
from glotbench.signature import Signature
from glotbench.errors import GlotbenchError
from glotbench.report import rundata
from glotbench.report.checks_board import column_checks, column_tokens
from glotbench.report.arena_rank import board_markdown, board_section
from glotbench.report.clusters import MARK, cell_fields, paired_rows
from glotbench.report.terminal import interval_text, n_text
from glotbench.stats import paired_test
from glotbench.stats.multitest import NAMES, adjust, check_correction


@dataclass(frozen=True)
class Run:
    """A finished run; with `lang`, the view of one language of a run reported by language (its
    `lang` group: DeepSEA's), whose headline and items are that language's."""

    path: Path
    results: dict[str, Any]
    lang: str | None = None
    rows: tuple[dict[str, Any], ...] | None = None  # a judged run's per-item judged values (rundata.judged_view)
    metric: str | None = None  # the learned metric it was scored with (its own column), None: the headline

    @property
    def model(self) -> str:
        return self.results["model"]["spec"]

    @property
    def benchmark(self) -> str:
        return self.results["benchmark"]["name"]

    @property
    def task(self) -> str:
        """The benchmark, and the settings of a task run that make it another column (a prompt
        variant, log-likelihood): `belebele [prompt=lm-eval, loglik]`."""
        opts = (self.results.get("task") or {}).get("options") or {}
        marks = [f"prompt={opts['prompt']}"] if opts.get("prompt", "default") != "default" else []
        marks += ["loglik"] if opts.get("method") == "loglik" else []
        return self.benchmark + (f" [{', '.join(marks)}]" if marks else "")

    @property
    def column(self) -> str:
        """The board's column: the task, and a task run's language (`belebele · lo`)."""
        lang = (self.results.get("task") or {}).get("language")
        base = f"{self.task} · {lang}" if lang else self.task
        return f"{base} · learned" if self.metric else base  # the views add the metric's label (xCOMET)

    @property
    def headline(self) -> dict[str, Any]:
        head = self.metric or self.results["headline"]
        if self.lang is not None and self.lang_group:
            return (self.results["scores"].get("groups", {}).get("lang", {}).get(self.lang) or {}).get(head) or {}
        return self.results["scores"]["overall"].get(head) or {}

    @property
    def lang_group(self) -> bool:
        """True when this language's figures come from the run's `lang` group (a run of several)."""
        return self.lang is not None and not (self.results.get("task") or {}).get("language")

    @property
    def imported(self) -> bool:
        """An EEE record read back (report/export.py `eee_results`): aggregates only, no samples."""
        return "imported" in self.results

    def samples(self) -> list[dict[str, Any]]:
        if self.imported:
            return []
        if self.rows is not None:
            return list(self.rows)
        rows = list(rundata.iter_samples(self.path))
        return [r for r in rows if (r.get("meta") or {}).get("lang") == self.lang] if self.lang_group else rows


def collect(paths: list[str]) -> tuple[list[Run], list[dict[str, str]]]:
    """Finished runs under the given paths (run directories, or folders searched recursively)."""
    from glotbench.report.export import eee_results, is_eee_file

    runs, left_out, seen = [], [], set()
    for p in paths:
        root = Path(p)
        if not root.exists():
            raise GlotbenchError(f"{root} does not exist")
        records = [root] if root.is_file() else sorted(f for f in root.rglob("*.json") if is_eee_file(f))
        if root.is_file() and not is_eee_file(root):
            raise GlotbenchError(f"{root}: not a run directory nor an EEE record written by glotbench")
        for f in records:  # EEE records (glotbench export --format eee): their aggregates, no samples
            if f.resolve() not in seen:
                seen.add(f.resolve())
                runs.append(Run(f, eee_results(f)))
        if root.is_file():
            continue
        cands = [root] if (root / RESULTS).is_file() or (root / RUN_JSON).is_file() else sorted(
            {f.parent for n in (RESULTS, RUN_JSON, *rundata.JUDGED_FILES.values()) for f in root.rglob(n)})
        kinds = {c: rundata.judged_kind(c) for c in cands}
        judged = [c for c in cands if kinds[c] is not None]
        for c in cands:
            if c.resolve() in seen:
                continue
            seen.add(c.resolve())
            if kinds[c] is not None and kinds[c] != "arena":
                try:  # a task scored by a rubric, AraGen: the candidate's column, with the mean of judges
                    res, rows = rundata.judged_view(c)
                    runs.append(Run(c, res, rows=tuple(rows)))
                except GlotbenchError as e:
                    left_out.append({"path": str(c), "reason": str(e)})
            elif c in judged:
                left_out.append({"path": str(c), "reason": "; ".join(["a judged run (arena): see its own report",
                                                                     *rundata.judged_notes(c)])})
            elif any(j in c.parents for j in judged):
                continue  # a phase of a judged run
            elif rundata.judged_phase(c):  # given on its own: its candidate's or judge's run is not a contestant
                top = c.resolve().parent
                left_out.append({"path": str(c), "reason": f"a phase of the judged run {top}: " + (
                    "give that directory" if rundata.judged_kind(top) is not None else
                    "it has no readable results.json (unfinished or damaged): "
                    + rundata.unfinished_why([p for p in top.iterdir() if p.is_dir()]))})
            elif not (c / RESULTS).is_file():
                left_out.append({"path": str(c), "reason": "unfinished run (no results.json)"})
            else:
                res = None
                try:  # its samples too (a file cut mid-line): a damaged run is named, the others still shown
                    res = rundata.read_results(c)
                    if "imported" not in res:
                        rundata.check_samples(c)
                    runs.append(Run(c, res))
                except GlotbenchError as e:  # `languages`: the cards of its languages name it too
                    left_out.append({"path": str(c), "reason": str(e),
                                     **({"languages": " ".join(languages_of(res))} if res else {})})
    if not runs and not any(rundata.judged_kind(x["path"]) == "arena" for x in left_out):  # arenas: ranked apart
        why = "; ".join(f"{x['path']}: {x['reason']}" for x in left_out[:3]) + (
            f"; and {len(left_out) - 3} more" if len(left_out) > 3 else "")
        raise GlotbenchError("no finished run found in " + ", ".join(paths) + (f" (left out: {why})" if why else ""))
    return runs, left_out


def learned_views(runs: list[Run]) -> list[Run]:
    """Each run directory scored with a learned metric (`run --metric-checkpoint`) once more, as that
    metric's own column (`flores-plus · learned`, shown with its label: xCOMET): its cells tested against that column's best as every
    column's are, on the per-sample scores samples.jsonl keeps."""
    from glotbench.metrics.learned import stored_metric

    out = []
    for r in runs:
        m = None if r.imported or r.rows is not None else stored_metric(r.results)
        if m is not None:
            out.append(Run(r.path, r.results, r.lang, metric=m.name))
    return out


def cell_label(results: dict[str, Any], metric: str) -> str:
    return str(results["metrics"][metric].get("label") or metric)


def languages_of(results: dict[str, Any]) -> list[str]:
    """The languages a run reports: a task's or a one-language benchmark's one (`benchmark.language`,
    its group: `zh-Hant`, `ar-Latn` apart from `zh`, `ar`; languages.language_group), or its `lang`
    group's values."""
    from glotbench.languages import language_group

    lang = (results.get("task") or {}).get("language") or (results.get("benchmark") or {}).get("language")
    if lang:
        return [language_group(str(lang)) or str(lang)]
    return sorted(((results.get("scores") or {}).get("groups") or {}).get("lang") or {})


def columns_of(runs: list[Run], left_out: list[dict[str, str]], by: str = "column") -> dict[str, list[Run]]:
    by_bench: dict[str, list[Run]] = {}
    for r in runs:
        by_bench.setdefault(getattr(r, by), []).append(r)
    cols = {}
    for bench, rs in sorted(by_bench.items()):
        keys = {id(r): comparability(r.results) for r in rs}
        models: dict[tuple[str, str], set[str]] = {}
        newest: dict[tuple[str, str], str] = {}
        for r in rs:
            models.setdefault(keys[id(r)], set()).add(r.model)
            newest[keys[id(r)]] = max(newest.get(keys[id(r)], ""), r.results.get("finished", ""))
        # The whole dataset first, then the item set most models ran, then the newest.
        key = max(models, key=lambda k: (k[1] == "full", len(models[k]), newest[k]))
        shown = next(r for r in rs if keys[id(r)] == key)
        kept: dict[str, Run] = {}
        # on a tie (a run and its EEE record, finished at the same time) the run directory: it has the samples
        order = sorted(rs, key=lambda r: (is_valid(r.results), r.results.get("finished", ""), not r.imported),
                       reverse=True)
        for r in order:
            sig, items = keys[id(r)]
            if sig != key[0] and items == key[1]:
                left_out.append({"path": str(r.path), "reason": f"{bench}: signature differs from the column's "
                                 f"({rundata.signature_difference(key[0], sig)}); never pooled"})
            elif items != key[1]:
                left_out.append({"path": str(r.path), "reason": f"{bench}: another item set "
                                 f"({describe_item_set(r.results)}) than the column's ({describe_item_set(shown.results)})"
                                 + (f", and signature differs ({rundata.signature_difference(key[0], sig)})"
                                    if Signature.parse(sig).without("subset") != Signature.parse(key[0]).without("subset") else "")
                                 + "; never pooled"})
            elif r.model in kept:
                why = ("an invalid or stopped run" if not is_valid(r.results) and is_valid(kept[r.model].results)
                       else "the same run again (finished at the same time: its EEE record or a copy)"
                       if r.results.get("finished") == kept[r.model].results.get("finished") else "an older run")
                left_out.append({"path": str(r.path), "reason": f"{bench}: {why} of {r.model} "
                                 f"({kept[r.model].path} is shown)"})
            else:
                kept[r.model] = r
        cols[bench] = list(kept.values())
    return cols


def _x_axis(rs: list[Run]) -> tuple[str, dict[str, float]] | None:
    if all(r.results.get("cost") for r in rs):
        # a judged run's `cost` is its candidate's answers (results.json `judged.cost` holds the judges')
        label = "cost (USD; a judged run's answers only)" if any(r.results.get("judged") for r in rs) else "cost (USD)"
        return label, {r.model: float(r.results["cost"]["run"]) for r in rs}
    toks = {r.model: float(r.results["tokens"]["prompt"] + r.results["tokens"]["completion"]) for r in rs}
    if all(v > 0 for v in toks.values()):
        return "tokens (prompt + completion)", toks
    lat = {r.model: (r.results.get("timing") or {}).get("request_phase_s") for r in rs}
    if all(v for v in lat.values()):
        return "request time (s)", {k: float(v) for k, v in lat.items() if v}
    return None


def pareto_front(points: dict[str, tuple[float, float]]) -> list[str]:
    """Names whose (x: lower is better, y: higher is better) no other point matches or beats on both
    with one strictly better; in order of x."""
    front = []
    for name, (x, y) in points.items():
        if not any((x2 <= x and y2 >= y) and (x2 < x or y2 > y) for n2, (x2, y2) in points.items() if n2 != name):
            front.append(name)
    return sorted(front, key=lambda n: points[n][0])


def build_board(paths: list[str], *, test: str = "randomization", alpha: float = 0.05,
                resamples: int = 1000, seed: int = 12345, pivot: str | None = None,
                languages: list[str] | None = None, correction: str = "holm") -> dict[str, Any]:
    """The board over finished runs: models x columns; with `pivot="language"`, one table per
    language (models x tasks: report/board_pivot.py), `languages` keeping only those."""
    if test not in ("randomization", "bootstrap"):
        raise GlotbenchError(f"--test must be randomization or bootstrap, got {test!r}")
    check_correction(correction)
    significance = {"test": "approximate randomisation" if test == "randomization" else "paired bootstrap",
                    "alpha": alpha, "resamples": resamples, "seed": seed,
                    "against": "the column's best, on the items both runs share",
                    "correction": correction, "correction_name": NAMES[correction],
                    "family": "each column's tests against its best"}
    runs, left_out = collect(paths)
    if pivot is not None:
        from glotbench.report.board_pivot import language_tables

        if pivot != "language":
            raise GlotbenchError(f"--pivot must be language, got {pivot!r}")
        from glotbench.report.card import language_card

        tables = language_tables(runs, left_out, languages,
                                 lambda name, rs: _column(name, rs, test, alpha, resamples, seed, correction, detail=False),
                                 lambda lang, chosen, out: language_card(lang, chosen, out, alpha=alpha, resamples=resamples,
                                                                         seed=seed))
        return {"pivot": "language", "tables": tables,
                "models": list(dict.fromkeys(m for t in tables for m in t["models"])),
                "left_out": left_out, "significance": significance}
    columns = [_column(name, rs, test, alpha, resamples, seed, correction)
               for name, rs in columns_of([*runs, *learned_views(runs)], left_out).items()]
    models = list(dict.fromkeys(m for c in columns for m in c["cells"]))
    return {"models": models, "columns": columns, "left_out": left_out,
            "arena_ranking": board_section(paths, resamples=resamples, seed=seed), "significance": significance}


def _column(bench: str, rs: list[Run], test: str, alpha: float, resamples: int, seed: int,
            correction: str = "holm", detail: bool = True) -> dict[str, Any]:
    """One column: each model's cell (n, notes, significance against the column's best), and with
    `detail` its groups and its score-cost frontier (a whole run's: not for one language of it)."""
    res0 = rs[0].results
    head = rs[0].metric or res0["headline"]
    lower = bool(res0["metrics"][head].get("lower_is_better"))  # MetricX-24: an error score
    scored = [r for r in rs if r.headline.get("value") is not None]
    valid = [r for r in scored if is_valid(r.results)]  # an invalid run is never the best
    best = (min if lower else max)(valid, key=lambda r: r.headline["value"]) if valid else None
    # a paired test needs each item's score in both runs: an EEE record (aggregates only) is not tested
    pb = best if best is not None and not best.imported else None  # the best run, when it has samples
    paired = pb is not None
    rows = {r.model: r.samples() for r in rs} if pb else {}
    stats = {r.model: rundata.run_item_stats(r.results, rows[r.model]) for r in rs} if pb else {}  # per original item
    cluster_of = rundata.item_clusters(pb.results, rows[pb.model]) if pb else None
    fn = rundata.score_fn(pb.results, head) if pb else None
    keys = rundata.metric_keys(pb.results, head) if pb else []
    judged = rundata.judged_pairing([r.results for r in rs]) if pb and all(r.rows is not None for r in rs) else None
    if judged is not None:  # judged runs: paired by their declared rule, so a Δ is their headlines' (not items' means)
        stats, fn, keys = {r.model: rows for r, rows in zip(rs, judged.rows)}, judged.score, list(judged.keys)
    cells = {}
    for r in rs:
        est = r.headline
        cell: dict[str, Any] = {"value": est.get("value"), "ci_low": est.get("ci_low"), "ci_high": est.get("ci_high"),
                                "n": est["n"] if est.get("n") is not None else r.results["counts"]["items"],
                                "ci_method": est.get("ci_method"), "path": str(r.path),
                                "json_path": (f"/scores/groups/lang/{r.lang}/{head}" if r.lang_group
                                              else f"/scores/overall/{head}"),
                                "best": r is best, "valid": is_valid(r.results), "notes": notes(r.results),
                                **cell_fields(est)}
        unscored = [x for x in (r, best) if x is not None and rs[0].metric and x.model in stats
                    and not any(keys[0] in row for row in stats[x.model].values())]
        if best is not None and r is not best and est.get("value") is not None and cell["valid"] and unscored:
            # a run written before samples.jsonl kept each sample's learned score: nothing to pair
            cell["untested"] = (f"not tested against the best: samples.jsonl of {'this run' if r in unscored else 'the best'}"
                                f" holds no per-sample {cell_label(res0, head)} score (written before its `learned` field)")
            cell["notes"] = [*cell["notes"], "no per-sample learned score: not tested against the best"]
        elif best is not None and r is not best and est.get("value") is not None and cell["valid"] and (r.imported or not paired):
            cell["untested"] = (f"not tested against the best: {'this run' if r.imported else 'the best'} is an EEE "
                                "record, and a paired test needs each item's score in both runs (samples.jsonl)")
            cell["notes"] = [*cell["notes"], "EEE record: not tested against the best"]  # every view shows notes
        elif best is not None and fn is not None and r is not best and est.get("value") is not None and cell["valid"]:
            shared = sorted(set(stats[r.model]) & set(stats[best.model]))
            a = np.array([[stats[best.model][i].get(k, 0.0) for k in keys] for i in shared]).reshape(len(shared), len(keys))
            b = np.array([[stats[r.model][i].get(k, 0.0) for k in keys] for i in shared]).reshape(len(shared), len(keys))
            a, b, clusters = paired_rows(a, b, shared, cluster_of)
            pr = paired_test(a, b, fn, resamples=resamples, trials=resamples, seed=seed)
            p = pr.p_randomization if test == "randomization" else pr.p_bootstrap
            cell.update({"shared_items": len(shared), "delta_vs_best": pr.delta, "p_vs_best": p,
                         "p_bootstrap": pr.p_bootstrap, "p_randomization": pr.p_randomization,
                         "tied_with_best": bool(p >= alpha), **({"test_clusters": clusters} if clusters else {})})
        cells[r.model] = cell
    correct_column(cells, correction, alpha)
    groups = {}
    for key, vals in (res0["scores"].get("groups", {}) if detail else {}).items():
        groups[key] = {v: {r.model: group_estimate(r.results["scores"]["groups"].get(key, {}).get(v, {}).get(head))
                           for r in rs} for v in vals}
    frontier = None
    axis = _x_axis(valid) if detail else None  # an invalid run spent little because its calls failed: never on the front
    if axis and len(valid) >= 2 and not lower:  # the front reads higher as better
        label, xs = axis
        pts = {r.model: (xs[r.model], r.headline["value"]) for r in valid}
        frontier = {"x": label, "points": {m: {"x": x, "y": y} for m, (x, y) in pts.items()},
                    "front": pareto_front(pts)}
    fl = res0.get("input_floor") or {}
    r0 = rs[0]
    floor = (((fl.get("groups") or {}).get("lang") or {}).get(r0.lang) or {} if r0.lang_group
             else fl.get("overall") or {}).get(head)
    return {"benchmark": bench, "signature": res0["signature"], "item_set": describe_item_set(res0),
            "checks": column_checks(cells, rs), "tokens": column_tokens(rs),  # report/checks_board.py
            "headline": head, "input_floor": floor,
            "group_floors": {key: {v: (x or {}).get(head) for v, x in vals.items()}  # a group's do-nothing floor
                             for key, vals in (fl.get("groups") or {}).items() if key in groups},
            # an error score (MetricX-24) says so in its column's label, in every view: its best is the lowest
            "label": (res0["metrics"][head].get("label") or head) + (" (lower is better)" if lower else ""),
            "lower_is_better": lower, "scale": res0["metrics"][head].get("scale", "fraction"),
            "cells": cells, "groups": groups, "frontier": frontier}


def group_estimate(est: dict[str, Any] | None) -> dict[str, Any]:
    """What the board keeps of a group's estimate: the number, its interval with its method, and what
    every view prints beside it (n, clusters, the † of `too_few_units`)."""
    est = est or {}
    return {"value": est.get("value"), "ci_low": est.get("ci_low"), "ci_high": est.get("ci_high"), "n": est.get("n"),
            "ci_method": est.get("ci_method"), **cell_fields(est)}


def correct_column(cells: dict[str, dict[str, Any]], correction: str, alpha: float) -> None:
    """The column's p-values against its best adjusted as one family (stats/multitest.py): each
    tested cell keeps its raw `p_vs_best` and gets `p_vs_best_adjusted`; the mark follows the adjusted one."""
    tested = [c for c in cells.values() if "p_vs_best" in c]
    for c, p in zip(tested, adjust([c["p_vs_best"] for c in tested], correction)):
        c["p_vs_best_adjusted"] = p
        c["tied_with_best"] = bool(p >= alpha)


def display_names(models: list[str]) -> dict[str, str]:
    """Model specs without their endpoint (`openai:m@http://...` -> `openai:m`) where that stays unique."""
    short = {m: m.split("@", 1)[0] for m in models}
    counts = Counter(short.values())
    return {m: s if counts[s] == 1 else m for m, s in short.items()}


def _f(col: dict[str, Any]) -> float:
    return 100.0 if col["scale"] == "fraction" else 1.0


def cell_text(col: dict[str, Any], model: str, ci: bool = True, with_notes: bool = True) -> str:
    """`62.3 (55.0–69.1)† n=164‡40` (report/terminal.py `interval_text`), then the run's notes in
    brackets (invalid, subset, sample data)."""
    c = col["cells"].get(model)
    if not c:
        return "—"
    s = interval_text(c, col["scale"], ci=ci)
    if c["value"] is None and n_text(c):
        s += f" n={n_text(c)}"
    if with_notes and c.get("notes"):
        s += " [" + "; ".join(c["notes"]) + "]"
    return s


def marked(col: dict[str, Any], model: str) -> bool:
    c = col["cells"].get(model) or {}
    return bool(c.get("best") or c.get("tied_with_best"))


def legend(board: dict[str, Any]) -> str:
    s = board["significance"]
    return (f"percent or points, 95% CI (Wilson for proportions of independent items, Wilson on the effective "
            f"number of items for other ratios and clustered items, else percentile bootstrap: each cell's "
            f"ci_method; n{MARK}G: G clusters, the benchmark names a cluster field; † too few units: measured "
            f"coverage under 93%, docs/metrics.md), n items; bold: the column's best valid run and every valid run not significantly "
            f"different from it ({s['test']}, adjusted p ≥ {s['alpha']}, {s['resamples']} trials, shared items; "
            f"p-values adjusted per column: {s.get('correction_name', NAMES['none'])})")


def floor_text(col: dict[str, Any], key: str | None = None, value: str | None = None) -> str:
    """` · input unchanged 19.2`: the column's do-nothing floor (Benchmark.input_answer), or its group
    `key`=`value`'s (a translation's direction: the floor of a column that pools no overall), or ""."""
    x = col.get("input_floor") if key is None else ((col.get("group_floors") or {}).get(key) or {}).get(value)
    return "" if x is None else f" · input unchanged {_f(col) * x:.1f}"


def _md_table(models: list[str], cols: list[dict[str, Any]]) -> list[str]:
    lines = ["| model | " + " | ".join(f"{c['benchmark']} {c['label']}{floor_text(c)}" for c in cols) + " |",
             "|---|" + "---:|" * len(cols)]
    for m in models:
        cells = [(f"**{cell_text(c, m)}**" if marked(c, m) else cell_text(c, m)) for c in cols]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return lines


def _md_signatures(cols: list[dict[str, Any]]) -> list[str]:
    lines = []
    for c in cols:
        lines.append(f"- `{c['benchmark']}` signature: `{c['signature']}`; items: {c['item_set']}")
        if c["frontier"]:
            lines.append(f"  - Pareto front ({c['frontier']['x']}): " + ", ".join(c["frontier"]["front"]))
    return lines


def _left_out_md(board: dict[str, Any]) -> list[str]:
    return ["", "Left out:"] + [f"- {x['path']}: {x['reason']}" for x in board["left_out"]] if board["left_out"] else []


def to_markdown(board: dict[str, Any]) -> str:
    if board.get("pivot"):
        from glotbench.report.card import card_lines

        lines = []
        for t in board["tables"]:
            lines += [f"### {t['name']} ({t['language']})", "", *_md_table(t["models"], t["columns"]), "",
                      *_md_signatures(t["columns"]), "", *(card_lines(t["card"]) if t.get("card") else [])]
        return "\n".join(lines + [legend(board)] + _left_out_md(board)) + "\n"
    cols = board["columns"]
    lines = [*_md_table(board["models"], cols), "", legend(board), "", *_md_signatures(cols)] if cols else []
    for c in cols:
        for key, vals in c["groups"].items():
            lines += ["", f"{c['benchmark']} {c['label']} by {key}:", "",
                      "| model | " + " | ".join(v + floor_text(c, key, v) for v in vals) + " |",
                      "|---|" + "---:|" * len(vals)]
            for m in c["cells"]:
                lines.append(f"| {m} | " + " | ".join(interval_text(v[m], c["scale"]) for v in vals.values()) + " |")
    lines.append(board_markdown(board.get("arena_ranking") or []))
    lines += _left_out_md(board)
    return "\n".join(lines) + "\n"


def tables(board: dict[str, Any]) -> list[tuple[str | None, list[str], list[dict[str, Any]]]]:
    """(language or None, models, columns) of each table the board holds: one, or one per language."""
    if board.get("pivot"):
        return [(t["language"], t["models"], t["columns"]) for t in board["tables"]]
    return [(None, board["models"], board["columns"])]


def to_csv(board: dict[str, Any]) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    lang = ["language"] if board.get("pivot") else []
    w.writerow(lang + ["model", "benchmark", "metric", "value", "ci_low", "ci_high", "n", "best", "p_vs_best",
                       "not_significantly_different_from_best", "signature", "path", "ci_method", "valid", "item_set",
                       "notes", "p_vs_best_adjusted", "correction", "clusters", "too_few_units"])
    for language, _, cols in tables(board):
        for c in cols:
            for m, x in c["cells"].items():
                w.writerow(([language] if lang else []) + [
                    m, c["benchmark"], c["headline"], x["value"], x["ci_low"], x["ci_high"], x["n"], x["best"],
                    x.get("p_vs_best", ""), x["best"] or x.get("tied_with_best", False), c["signature"], x["path"],
                    x.get("ci_method") or "", x.get("valid", True), c["item_set"], "; ".join(x.get("notes") or ()),
                    x.get("p_vs_best_adjusted", ""), board["significance"].get("correction", ""),
                    x.get("clusters", ""), bool(x.get("too_few_units"))])
    if board.get("pivot"):
        from glotbench.report.card import card_csv_rows

        for t in board["tables"]:
            for row in card_csv_rows(t["card"]) if t.get("card") else []:
                w.writerow([t["language"], *row])
    return buf.getvalue()


def _tex(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
        s = s.replace(a, b) if a != "\\" else s.replace(a, "\x00")
    return s.replace("\x00", r"\textbackslash{}")


def to_latex(board: dict[str, Any]) -> str:
    out = []
    for language, models, cols in tables(board):
        out += [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{l" + "r" * len(cols) + "}", r"\toprule",
                "Model & " + " & ".join(_tex(f"{c['benchmark']} {c['label']}") for c in cols) + r" \\", r"\midrule"]
        for m in models:
            cells = []
            for c in cols:
                t = _tex(cell_text(c, m)).replace("–", "--")
                cells.append(rf"\textbf{{{t}}}" if marked(c, m) else t)
            out.append(_tex(m) + " & " + " & ".join(cells) + r" \\")
        head = f"{language}: " if language else ""
        out += [r"\bottomrule", r"\end{tabular}", r"\caption{" + _tex(head + legend(board)) + "}", r"\end{table}"]
        card = next((t.get("card") for t in board.get("tables") or () if t["language"] == language), None)
        if card:
            from glotbench.report.card import card_latex

            out += card_latex(card, _tex)
    return "\n".join(out) + "\n"


def write_board_html(board: dict[str, Any], path: str | Path) -> Path:
    from glotbench.report.board_html import board_html

    target = Path(path)
    try:
        target.write_text(board_html(board), encoding="utf-8", errors="replace")  # a lone surrogate: "?"
    except OSError as e:
        raise GlotbenchError(f"cannot write the board: {e}") from None
    return target


def export(board: dict[str, Any], fmt: str) -> str:
    if fmt == "md":
        return to_markdown(board)
    if fmt == "csv":
        return to_csv(board)
    if fmt == "latex":
        return to_latex(board)
    if fmt == "json":
        return json.dumps(board, ensure_ascii=False, indent=2) + "\n"
    raise GlotbenchError(f"--format must be md, csv, latex or json, got {fmt!r}")
