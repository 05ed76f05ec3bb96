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
- Frontier: headline against cost (USD, from results.json) when every run in the column has a price,
  else total tokens when every run counted tokens, else the request phase's wall time; the Pareto front
  holds the runs no other run beats on both (cheaper or equal and higher).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from glotbench.rundir.selection import comparability, describe_item_set
from glotbench.rundir.validity import is_valid, notes
from glotbench.errors import GlotbenchError
from glotbench.report import rundata
from glotbench.stats import paired_test


@dataclass(frozen=True)
class Run:
    path: Path
    results: dict[str, Any]

    @property
    def model(self) -> str:
        return self.results["model"]["spec"]

    @property
    def benchmark(self) -> str:
        return self.results["benchmark"]["name"]

    @property
    def headline(self) -> dict[str, Any]:
        return self.results["scores"]["overall"].get(self.results["headline"]) or {}


def collect(paths: list[str]) -> tuple[list[Run], list[dict[str, str]]]:
    """Finished runs under the given paths (run directories, or folders searched recursively)."""
    runs, left_out, seen = [], [], set()
    for p in paths:
        root = Path(p)
        if not root.exists():
            raise GlotbenchError(f"{root} does not exist")
        cands = [root] if (root / "results.json").is_file() or (root / "run.json").is_file() else sorted(
            {f.parent for n in ("results.json", "run.json", *rundata.JUDGED_FILES.values()) for f in root.rglob(n)})
        judged = [c for c in cands if any((c / n).is_file() for n in rundata.JUDGED_FILES.values())]
        for c in cands:
            if c.resolve() in seen:
                continue
            seen.add(c.resolve())
            if c in judged:
                left_out.append({"path": str(c), "reason": "a judged run (arena/AraGen): see its own report"})
            elif any(j in c.parents for j in judged):
                continue  # a phase of a judged run
            elif not (c / "results.json").is_file():
                left_out.append({"path": str(c), "reason": "unfinished run (no results.json)"})
            else:
                try:
                    runs.append(Run(c, rundata.read_results(c)))
                except GlotbenchError as e:
                    left_out.append({"path": str(c), "reason": str(e)})
    if not runs:
        raise GlotbenchError("no finished run found in " + ", ".join(paths))
    return runs, left_out


def _columns(runs: list[Run], left_out: list[dict[str, str]]) -> dict[str, list[Run]]:
    by_bench: dict[str, list[Run]] = {}
    for r in runs:
        by_bench.setdefault(r.benchmark, []).append(r)
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
        order = sorted(rs, key=lambda r: (is_valid(r.results), r.results.get("finished", "")), reverse=True)
        for r in order:
            sig, items = keys[id(r)]
            if sig != key[0] and items == key[1]:
                left_out.append({"path": str(r.path), "reason": f"{bench}: signature differs from the column's "
                                 f"({rundata.signature_difference(key[0], sig)}); never pooled"})
            elif items != key[1]:
                left_out.append({"path": str(r.path), "reason": f"{bench}: another item set "
                                 f"({describe_item_set(r.results)}) than the column's ({describe_item_set(shown.results)})"
                                 + (f", and signature differs ({rundata.signature_difference(key[0], sig)})"
                                    if sig.split("|subset:")[0] != key[0].split("|subset:")[0] else "")
                                 + "; never pooled"})
            elif r.model in kept:
                why = "an invalid or stopped run" if not is_valid(r.results) and is_valid(kept[r.model].results) else "an older run"
                left_out.append({"path": str(r.path), "reason": f"{bench}: {why} of {r.model} "
                                 f"({kept[r.model].path} is shown)"})
            else:
                kept[r.model] = r
        cols[bench] = list(kept.values())
    return cols


def _x_axis(rs: list[Run]) -> tuple[str, dict[str, float]] | None:
    if all(r.results.get("cost") for r in rs):
        return "cost (USD)", {r.model: float(r.results["cost"]["run"]) for r in rs}
    toks = {r.model: float(r.results["tokens"]["prompt"] + r.results["tokens"]["completion"]) for r in rs}
    if all(v > 0 for v in toks.values()):
        return "tokens (prompt + completion)", toks
    lat = {r.model: (r.results.get("timing") or {}).get("request_phase_s") for r in rs}
    if all(v for v in lat.values()):
        return "request time (s)", {k: float(v) for k, v in lat.items()}
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
                resamples: int = 1000, seed: int = 12345) -> dict[str, Any]:
    if test not in ("randomization", "bootstrap"):
        raise GlotbenchError(f"--test must be randomization or bootstrap, got {test!r}")
    runs, left_out = collect(paths)
    cols = _columns(runs, left_out)
    columns = []
    for bench, rs in cols.items():
        res0 = rs[0].results
        head = res0["headline"]
        scored = [r for r in rs if r.headline.get("value") is not None]
        valid = [r for r in scored if is_valid(r.results)]  # an invalid run is never the best
        best = max(valid, key=lambda r: r.headline["value"]) if valid else None
        stats = {r.model: rundata.item_stats(list(rundata.iter_samples(r.path))) for r in rs} if best else {}
        fn = rundata.score_fn(res0, head) if best else None
        keys = rundata.metric_keys(res0, head)
        cells = {}
        for r in rs:
            est = r.headline
            cell: dict[str, Any] = {"value": est.get("value"), "ci_low": est.get("ci_low"), "ci_high": est.get("ci_high"),
                                    "n": est["n"] if est.get("n") is not None else r.results["counts"]["items"],
                                    "ci_method": est.get("ci_method"), "path": str(r.path),
                                    "best": r is best, "valid": is_valid(r.results), "notes": notes(r.results)}
            if best is not None and r is not best and est.get("value") is not None and cell["valid"]:
                shared = sorted(set(stats[r.model]) & set(stats[best.model]))
                a = np.array([[stats[best.model][i].get(k, 0.0) for k in keys] for i in shared]).reshape(len(shared), len(keys))
                b = np.array([[stats[r.model][i].get(k, 0.0) for k in keys] for i in shared]).reshape(len(shared), len(keys))
                pr = paired_test(a, b, fn, resamples=resamples, trials=resamples, seed=seed)
                p = pr.p_randomization if test == "randomization" else pr.p_bootstrap
                cell.update({"shared_items": len(shared), "delta_vs_best": pr.delta, "p_vs_best": p,
                             "p_bootstrap": pr.p_bootstrap, "p_randomization": pr.p_randomization,
                             "tied_with_best": bool(p >= alpha)})
            cells[r.model] = cell
        groups = {}
        for key, vals in res0["scores"].get("groups", {}).items():
            groups[key] = {v: {r.model: {k: (r.results["scores"]["groups"].get(key, {}).get(v, {}).get(head) or {}).get(k)
                                         for k in ("value", "ci_low", "ci_high", "n")} for r in rs} for v in vals}
        frontier = None
        axis = _x_axis(scored)
        if axis and len(scored) >= 2:
            label, xs = axis
            pts = {r.model: (xs[r.model], r.headline["value"]) for r in scored}
            frontier = {"x": label, "points": {m: {"x": x, "y": y} for m, (x, y) in pts.items()},
                        "front": pareto_front(pts)}
        columns.append({"benchmark": bench, "signature": res0["signature"], "item_set": describe_item_set(res0),
                        "headline": head,
                        "label": res0["metrics"][head].get("label") or head, "scale": res0["metrics"][head].get("scale", "fraction"),
                        "cells": cells, "groups": groups, "frontier": frontier})
    models = list(dict.fromkeys(m for c in columns for m in c["cells"]))
    return {"models": models, "columns": columns, "left_out": left_out,
            "significance": {"test": "approximate randomisation" if test == "randomization" else "paired bootstrap",
                             "alpha": alpha, "resamples": resamples, "seed": seed,
                             "against": "the column's best, on the items both runs share"}}


def display_names(models: list[str]) -> dict[str, str]:
    """Model specs without their endpoint (`openai:m@http://...` -> `openai:m`) where that stays unique."""
    short = {m: m.split("@", 1)[0] for m in models}
    counts = Counter(short.values())
    return {m: s if counts[s] == 1 else m for m, s in short.items()}


def _f(col: dict[str, Any]) -> float:
    return 100.0 if col["scale"] == "fraction" else 1.0


def _est_text(e: dict[str, Any], f: float) -> str:
    if e.get("value") is None:
        return "—"
    ci = f" ({f * e['ci_low']:.1f}–{f * e['ci_high']:.1f})" if e.get("ci_low") is not None else ""
    return f"{f * e['value']:.1f}{ci}"


def cell_text(col: dict[str, Any], model: str, ci: bool = True, with_notes: bool = True) -> str:
    """`62.3 (55.0–69.1) n=164`, then the run's notes in brackets (invalid, subset, sample data)."""
    c = col["cells"].get(model)
    if not c:
        return "—"
    s = "—"
    if c["value"] is not None:
        f = _f(col)
        s = f"{f * c['value']:.1f}"
        if ci and c.get("ci_low") is not None:
            s += f" ({f * c['ci_low']:.1f}–{f * c['ci_high']:.1f})"
    if c.get("n") is not None:
        s += f" n={c['n']}"
    if with_notes and c.get("notes"):
        s += " [" + "; ".join(c["notes"]) + "]"
    return s


def marked(col: dict[str, Any], model: str) -> bool:
    c = col["cells"].get(model) or {}
    return bool(c.get("best") or c.get("tied_with_best"))


def legend(board: dict[str, Any]) -> str:
    s = board["significance"]
    return (f"percent or points, 95% CI (Wilson for proportions, else percentile bootstrap: each cell's "
            f"ci_method), n items; bold: the column's best valid run and every valid run not significantly "
            f"different from it ({s['test']}, p ≥ {s['alpha']}, {s['resamples']} trials, shared items)")


def to_markdown(board: dict[str, Any]) -> str:
    cols = board["columns"]
    lines = ["| model | " + " | ".join(f"{c['benchmark']} {c['label']}" for c in cols) + " |",
             "|---|" + "---:|" * len(cols)]
    for m in board["models"]:
        cells = [(f"**{cell_text(c, m)}**" if marked(c, m) else cell_text(c, m)) for c in cols]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines += ["", legend(board), ""]
    for c in cols:
        lines.append(f"- `{c['benchmark']}` signature: `{c['signature']}`; items: {c['item_set']}")
        if c["frontier"]:
            lines.append(f"  - Pareto front ({c['frontier']['x']}): " + ", ".join(c["frontier"]["front"]))
    for c in cols:
        for key, vals in c["groups"].items():
            lines += ["", f"{c['benchmark']} {c['label']} by {key}:", "",
                      "| model | " + " | ".join(vals) + " |", "|---|" + "---:|" * len(vals)]
            for m in c["cells"]:
                lines.append(f"| {m} | " + " | ".join(_est_text(v[m], _f(c)) for v in vals.values()) + " |")
    if board["left_out"]:
        lines += ["", "Left out:"] + [f"- {x['path']}: {x['reason']}" for x in board["left_out"]]
    return "\n".join(lines) + "\n"


def to_csv(board: dict[str, Any]) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["model", "benchmark", "metric", "value", "ci_low", "ci_high", "n", "best", "p_vs_best",
                "not_significantly_different_from_best", "signature", "path", "ci_method", "valid", "item_set", "notes"])
    for c in board["columns"]:
        for m, x in c["cells"].items():
            w.writerow([m, c["benchmark"], c["headline"], x["value"], x["ci_low"], x["ci_high"], x["n"], x["best"],
                        x.get("p_vs_best", ""), x["best"] or x.get("tied_with_best", False), c["signature"], x["path"],
                        x.get("ci_method") or "", x.get("valid", True), c["item_set"], "; ".join(x.get("notes") or ())])
    return buf.getvalue()


def _tex(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
        s = s.replace(a, b) if a != "\\" else s.replace(a, "\x00")
    return s.replace("\x00", r"\textbackslash{}")


def to_latex(board: dict[str, Any]) -> str:
    cols = board["columns"]
    out = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{l" + "r" * len(cols) + "}", r"\toprule",
           "Model & " + " & ".join(_tex(f"{c['benchmark']} {c['label']}") for c in cols) + r" \\", r"\midrule"]
    for m in board["models"]:
        cells = []
        for c in cols:
            t = _tex(cell_text(c, m)).replace("–", "--")
            cells.append(rf"\textbf{{{t}}}" if marked(c, m) else t)
        out.append(_tex(m) + " & " + " & ".join(cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}", r"\caption{" + _tex(legend(board)) + "}", r"\end{table}"]
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
