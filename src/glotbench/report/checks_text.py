"""Text (markdown) views of the checks: `glotbench rescore`'s rankings and flips."""

from __future__ import annotations

from typing import Any


from glotbench.report.terminal import FEW_NOTE, interval_text, scaled

RESCORED_NOTE = ("Re-scored rows are point values: rescore scores the stored answers once under each setting and "
                 "resamples nothing, so they carry no interval; read them against the stored row's interval and n "
                 "(the same items).")


def rescore_markdown(got: dict[str, Any]) -> str:
    """Per run and variant the re-scored figures (the run's stored figure beside `as_run`), then per
    benchmark, metric and group each variant's ranking and the pairs whose order flips."""
    lines = ["Segmenters: " + ", ".join(f"`{v}` = {sig}" for v, sig in got["segmenters"].items()), ""] \
        if got.get("segmenters") else []
    lower = " (an error score: lower is better, ranked lowest first)" if got.get("learned_lower_is_better") else ""
    lines += [f"Learned metric: `{k}` = {sig}{lower}" for k, sig in (got.get("learned") or {}).items()] + \
        ([""] if got.get("learned") else [])
    for run in got["runs"]:
        lines += [f"## {run['benchmark']} · {run['model']}", "", f"`{run['path']}`", ""]
        lines += [f"> {n}" for n in run.get("notes", ())] + ([""] if run.get("notes") else [])
        metrics = list(next(iter(run["scores"].values())))
        groups = sorted({g for v in run["scores"].values() for m in v.values() for g in m["groups"]}) or ["overall"]
        lines += ["| variant | metric | " + " | ".join(groups) + " |", "|---|---|" + "---:|" * len(groups)]
        few = False
        for m in metrics:
            stored, scale = run["stored"][m], (run.get("scales") or {}).get(m, "fraction")
            ests = (run.get("stored_estimates") or {}).get(m) or {}
            cells = []
            for g in groups:
                est = ests.get("overall") if g == "overall" else (ests.get("groups") or {}).get(g)
                few = few or bool((est or {}).get("too_few_units"))
                cells.append(interval_text(est, scale) if est else
                             scaled(stored["overall"] if g == "overall" else stored["groups"].get(g), scale))
            lines.append(f"| stored in results.json | {m} | " + " | ".join(cells) + " |")
            for v, per in run["scores"].items():
                lines.append(f"| {v} | {m} | " + " | ".join(
                    scaled(per[m]["overall"] if g == "overall" else per[m]["groups"].get(g), scale) for g in groups) + " |")
        lines += ["", RESCORED_NOTE] + ([FEW_NOTE] if few else [])
        lines.append("")
    ranked = [r for r in got["rankings"] if r["variants"] and len(next(iter(r["variants"].values()))["order"]) >= 2]
    left = {(x["model"], x["path"]): (r["benchmark"], x["why"]) for r in got["rankings"] for x in r.get("not_ranked", ())}
    if ranked or left:
        lines += ["## Rankings (models in order, best first, `=` for equal scores; valid runs on the same items only)", ""]
        for r in ranked:
            lines.append(f"- {r['benchmark']} {r['metric']} ({r['group']}; {r['item_set']}):")
            for v, x in r["variants"].items():
                flips = "; ".join(f"{a} ↔ {b}" for a, b in x["flips"])
                order = " > ".join(" = ".join(t) for t in x["tiers"]) if "tiers" in x else " > ".join(x["order"])
                lines.append(f"  - {v}: " + order + (f" — **order flips:** {flips}" if flips else ""))
        for (model, path), (bench, why) in left.items():
            lines.append(f"- not ranked: {bench} · {model} (`{path}`): {why}")
        lines.append("")
    if got.get("spm_models"):
        lines += ["SentencePiece models: " + ", ".join(f"`{x['tok']}` = `{x['path']}` (SHA-256 {x['sha256']})"
                                                     for x in got["spm_models"].values()), ""]
    if "agreement" in got:
        lines += agreement_markdown(got["agreement"])
    return "\n".join(lines)


def agreement_markdown(entries: list[dict[str, Any]]) -> list[str]:
    """`rescore --agreement`: per benchmark, language and level, Kendall's τ-b between every two
    metric columns (2 decimals; `–` where undefined: a constant column)."""
    lines = ["## Metric agreement (Kendall's τ-b, scipy.stats.kendalltau)", ""]
    for e in entries:
        head = f"### {e['benchmark']} · {e['language']} · {e['level']} level"
        what = (f"n = {e['n']} segments of {e['runs']} run{'s' if e['runs'] != 1 else ''}" if e["level"] == "segment"
                else f"n = {e['n']} runs" if e["n"] or not e.get("note")
                else f"{e['runs']} run{'s' if e['runs'] != 1 else ''}")  # not computed: how many there are
        lines += [f"{head} ({what}; {e['item_set']})", ""]
        lines += [f"> not pooled: {x['model']} (`{x['path']}`): {x['why']}" for x in e.get("not_pooled", ())]
        lines += [""] if e.get("not_pooled") else []
        if e.get("note"):
            lines += [f"> {e['note']}", ""]
            continue
        cols = e["columns"]
        lines += ["| | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
        for c, row in zip(cols, e["tau"]):
            lines.append(f"| {c} | " + " | ".join("–" if t is None else f"{t:.2f}" for t in row) + " |")
        lines.append("")
    return lines


def checks_lines(results: dict[str, Any]) -> list[str]:
    """What the terminal prints under the results table: the checks a reader must see beside the
    number (docs/checks.md)."""
    c = results.get("checks") or {}
    out = []
    lang = c.get("language")
    if lang and lang.get("checked"):
        out.append(f"checks: {lang['wrong']} of {lang['checked']} answers in the wrong language or script "
                   f"({lang['policy']}; {lang['expected']})")
        if zawgyi := (lang.get("verdicts") or {}).get("zawgyi"):  # the right language, another encoding
            out.append(f"checks: {zawgyi} of {lang['checked']} answers in Zawgyi, scored as written against "
                       "Unicode references (`rescore --variant norm=zawgyi` reads them as Unicode)")
    x = c.get("extraction")
    if x and "error" not in x and x.get("unread"):
        f = 100.0 if x.get("scale", "fraction") == "fraction" else 1.0
        unit = "%" if f == 100 else ""
        rng = (f"range {f * x['lower']:.1f}–{f * x['upper']:.1f}{unit} if they were all wrong/right"
               if x.get("upper") is not None else "no bounds for a corpus metric")
        out.append(f"checks: {x['unread']} of {x['samples']} replies unread by the {x['metric']} rule; {rng}; "
                   f"lenient {f * x['lenient']:.1f}{unit}" if x.get("lenient") is not None else
                   f"checks: {x['unread']} of {x['samples']} replies unread; {rng}")
    pos = (results.get("scores", {}).get("overall", {}).get("follows_position") or {}).get("value")
    if pos is not None:
        out.append(f"checks: {100 * pos:.1f}% of items answered with the same letter in every rotation")
    return out
