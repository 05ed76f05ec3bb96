"""The report card of a language (`glotbench board --pivot language`): one view of the runs the
language's table already chose (report/board_pivot.py), per model the SEA-HELM normalised mean and
EuroEval's mean rank score over the language's tasks, each with a two-level bootstrap interval, and
tiers from every pair's paired permutation test, adjusted as one family by Westfall–Young step-down
maxT (glotbench/stats/card.py). Next to the numbers: the
tasks covered, their n, translated or native (the family's datasheet), each task's floor, and the
runs left out (invalid, another item set, another signature, a model missing a task).

A model enters the card when it has a valid run of every task of the language (else it is left
out, named, and the others keep every task); each task's units are the items every model ran (summed per cluster where the task names a cluster field). The floor
is the run's random baseline (1 / options, averaged over items: results.json `random_baseline`),
else its input-unchanged floor (`input_floor`), else 0; the top is 1 (100 for a points metric).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glotbench.report import rundata
from glotbench.report.board import Run
from glotbench.rundir.selection import where_rows_text
from glotbench.rundir.validity import is_valid
from glotbench.stats.card import MAXT, TaskUnits, language_scores, rowwise, tiers

MIN_TASKS = 5  # the interval's coverage is measured from 5 tasks up (bench/card_sim.py); fewer: marked †
# The mean rank score's interval is printed from 2 to 10 tasks: it covered >= 94.5% in every setting of
# bench/rank_coverage.py there; with one task 84% (three equal models, 200 items), at 20 tasks 46%
# (the same: the rank score is biased up for models near the best, and the bias does not shrink with
# more tasks while the interval does). docs/reports.md "Report card" has the figures.
RANK_CI_TASKS = (2, 10)


def _floor(run: Run, head: str) -> tuple[float, str]:
    res = run.results
    if res.get("random_baseline") is not None:
        return float(res["random_baseline"]), "random choice"
    fl = res.get("input_floor") or {}
    if run.lang_group:
        value = (((fl.get("groups") or {}).get("lang") or {}).get(run.lang) or {}).get(head)
    else:
        value = (fl.get("overall") or {}).get(head)
    if value is not None:
        return float(value), "input unchanged"
    return 0.0, "none (0)"


def _origin(res: dict[str, Any], lang: str) -> str:
    try:
        ds = rundata.bench_of(res).datasheet
    except Exception:  # noqa: BLE001 - a benchmark that cannot be rebuilt here: its origin unknown
        return "unknown (no datasheet)"
    return ds.origin_of(lang) if ds is not None and ds.options_for(lang) is not None else "unknown (no datasheet)"


def _units(runs: dict[str, Run], head: str) -> tuple[dict[str, np.ndarray], int, int | None]:
    """Each model's per-unit statistics on the items every model ran, summed per cluster."""
    res0 = next(iter(runs.values())).results
    keys = rundata.metric_keys(res0, head)
    rows = {m: r.samples() for m, r in runs.items()}
    stats = {m: rundata.run_item_stats(r.results, rows[m]) for m, r in runs.items()}
    shared = sorted(set.intersection(*(set(s) for s in stats.values())))
    arrays = {m: np.array([[s[i].get(k, 0.0) for k in keys] for i in shared], dtype=np.float64).reshape(len(shared), len(keys))
              for m, s in stats.items()}
    cluster_of = rundata.item_clusters(res0, next(iter(rows.values())))
    if cluster_of:
        from glotbench.stats.cluster import cluster_codes, sum_by_cluster

        codes, g = cluster_codes((("value", str(v)) if (v := cluster_of.get(i)) not in (None, "") else ("item", i))
                                 for i in shared)
        if g < len(shared):
            return {m: sum_by_cluster(a, codes, g) for m, a in arrays.items()}, len(shared), g
    return arrays, len(shared), None


def language_card(lang: str, chosen: dict[str, list[Run]], left_out: list[dict[str, str]], *, alpha: float = 0.05,
                  resamples: int = 1000, seed: int = 12345) -> dict[str, Any]:
    """The card of one language from the runs its table chose (task -> runs, one per model)."""
    out_runs: list[dict[str, str]] = []
    valid: dict[str, dict[str, Run]] = {}
    for task, rs in chosen.items():
        for r in rs:
            if not is_valid(r.results):
                out_runs.append({"path": str(r.path), "reason": f"{task}: invalid run of {r.model} (not in the card)"})
            elif r.imported:  # an EEE record holds aggregates only; the card resamples each task's items
                out_runs.append({"path": str(r.path), "reason": f"{task}: an EEE record of {r.model} holds no items "
                                 "(the card resamples them): give its run directory (not in the card)"})
            elif r.headline.get("value") is None:
                out_runs.append({"path": str(r.path), "reason": f"{task}: {r.model} has no score (not in the card)"})
            else:
                valid.setdefault(task, {})[r.model] = r
    # Every model of the card ran every task of it: a model missing a valid run of a task is left
    # out (named), never scored over fewer tasks than the others.
    ran = sorted({m for runs in valid.values() for m in runs})
    models = [m for m in ran if all(m in runs for runs in valid.values())]
    for m in ran:
        missing = [t for t, runs in valid.items() if m not in runs]
        if missing and models:
            out_runs.append({"path": m, "reason": f"{m}: no valid run of {', '.join(missing)}; not in the card"})
    full = {t: {m: runs[m] for m in models} for t, runs in valid.items()} if models else {}
    card: dict[str, Any] = {"language": lang, "tasks": [], "models": [], "tests": [],
                            "left_out": [*left_out, *out_runs], "alpha": alpha, "correction": MAXT,
                            "resamples": resamples, "min_tasks": MIN_TASKS}
    if not full or len(models) < 1:
        card["note"] = "no model has a valid run of every task: no card"
        return card
    units: list[TaskUnits] = []
    for task, runs in sorted(full.items()):
        r0 = next(iter(runs.values()))
        head = r0.results["headline"]
        stats, n, clusters = _units(runs, head)
        if n == 0:
            card["left_out"].append({"path": str(r0.path), "reason": f"{task}: the models share no item"})
            continue
        floor, kind = _floor(r0, head)
        scale = r0.results["metrics"][head].get("scale", "fraction")
        top = 100.0 if scale == "points" else 1.0
        units.append(TaskUnits(task, stats, rowwise(rundata.score_fn(r0.results, head)), floor, top))
        card["tasks"].append({"task": task, "metric": head, "n": n, "clusters": clusters, "origin": _origin(r0.results, lang),
                              "rows_note": where_rows_text(r0.results),
                              "floor": floor, "floor_kind": kind, "top": top, "signature": r0.results["signature"],
                              "scores": {m: runs[m].headline.get("value") for m in models}})
    if not units:
        card["note"] = "no task left: no card"
        return card
    sc = language_scores(units, models, resamples=resamples, seed=seed)
    tr = tiers(units, {m: sc.normalised_mean[m].value for m in models}, alpha=alpha, trials=resamples, seed=seed)
    for m in tr.order:
        nm, rk = sc.normalised_mean[m], sc.rank_score[m]
        card["models"].append({"model": m, "tier": tr.tier[m],
                               "normalised_mean": {"value": nm.value, "ci_low": nm.ci_low, "ci_high": nm.ci_high},
                               "rank_score": {"value": rk.value, "ci_low": rk.ci_low, "ci_high": rk.ci_high},
                               "tasks": {t: {"normalised": sc.task_normalised[m][t],
                                             "normalised_ci": list(sc.task_normalised_ci[m][t]),
                                             "rank_score": sc.task_rank[m][t]} for t in sc.task_normalised[m]}})
    card["tests"] = [{"a": a, "b": b, "p": tr.p_raw[(a, b)], "p_adjusted": tr.p_adjusted[(a, b)],
                      "separated": tr.p_adjusted[(a, b)] < alpha} for a, b in tr.p_adjusted]
    card["too_few_tasks"] = len(units) < MIN_TASKS
    lo, hi = RANK_CI_TASKS
    if len(models) == 1:  # no interval around a value fixed by definition
        card["rank_no_interval"] = "one model: its rank score is 1 by definition (the best of one), no interval"
    elif not lo <= len(units) <= hi:
        card["rank_no_interval"] = (f"{len(units)} task{'s' if len(units) > 1 else ''}: the rank score's interval "
                                    f"covered under 93% in simulation outside {lo}-{hi} tasks (bench/rank_coverage.py)")
        for m in card["models"]:  # refused in every view, the JSON too
            m["rank_score"].update(ci_low=None, ci_high=None)
    return card


# -- views --------------------------------------------------------------------------------------

def _iv(e: dict[str, Any], pct: bool, mark: str) -> str:
    f = 100.0 if pct else 1.0
    d = 1 if pct else 2
    return f"{f * e['value']:.{d}f} ({f * e['ci_low']:.{d}f}–{f * e['ci_high']:.{d}f}){mark}"


def _rank_cell(m: dict[str, Any], card: dict[str, Any]) -> str:
    """The mean rank score with its interval, or its value alone and why it has none."""
    why = card.get("rank_no_interval")
    # the † of fewer than MIN_TASKS tasks is the normalised mean's: the rank score's is measured from 2
    return f"{m['rank_score']['value']:.2f} (no interval: {why})" if why else _iv(m["rank_score"], False, "")


def _task_cell(t: dict[str, Any], task: dict[str, Any]) -> str:
    """A model's normalised score of one task, its bootstrap interval and the units it rests on: †
    where the bootstrap's measured coverage is under 93% (fewer than 100 items, or clusters resampled:
    stats.paired_too_few), as every other view marks it (`40.0 (0.0–100.0)† n=3`, `n=12‡4`)."""
    from glotbench.stats import paired_too_few

    lo, hi = t["normalised_ci"]
    few = "†" if paired_too_few(task["n"], task.get("clusters")) else ""
    units = f"{task['n']}‡{task['clusters']}" if task.get("clusters") else f"{task['n']}"
    return f"{100 * t['normalised']:.1f} ({100 * lo:.1f}–{100 * hi:.1f}){few} n={units}"


def _rows(task: dict[str, Any]) -> str:
    """`, data.where left out 1 of 3 rows` after a task's n where its filter left rows out."""
    return f", {task['rows_note']}" if task.get("rows_note") else ""


def _task_few(card: dict[str, Any]) -> bool:
    from glotbench.stats import paired_too_few

    return any(paired_too_few(t["n"], t.get("clusters")) for t in card["tasks"])


def card_lines(card: dict[str, Any]) -> list[str]:
    """The card as markdown: tiers, numbers, tasks (n, origin, floor) and what was left out."""
    from glotbench.report.board_pivot import language_name

    lines = [f"#### Report card: {language_name(card['language'])} ({card['language']})", ""]
    if card.get("note"):
        lines += [card["note"], ""]
    if card["models"]:
        mark = "†" if card.get("too_few_tasks") else ""
        tasks = [t["task"] for t in card["tasks"]]
        info = {t["task"]: t for t in card["tasks"]}
        lines += ["| tier | model | normalised mean (95% CI) | mean rank score (95% CI) | " + " | ".join(
                      f"{t} normalised (95% CI)" for t in tasks) + " |",
                  "|---:|---|---:|---:|" + "---:|" * len(tasks)]
        for m in card["models"]:
            lines.append(f"| {m['tier']} | {m['model']} | {_iv(m['normalised_mean'], True, mark)} | "
                         f"{_rank_cell(m, card)} | "
                         + " | ".join(_task_cell(m["tasks"][t], info[t]) for t in tasks) + " |")
        lines += ["", f"Tiers: models share a tier unless a paired randomisation test over the card's tasks "
                      f"(same items) separates them at adjusted p < {card['alpha']} ({card['correction']}, all pairs); "
                      "read tiers, not the order within one. Normalised: SEA-HELM's max((score − floor)/(top − floor), 0) "
                      "in percent (a task's interval: its items resampled); rank score: EuroEval's (1 = the best; lower is better)."
                  + (f" † fewer than {card['min_tasks']} tasks: the normalised mean's interval's coverage is not measured there."
                     if mark else "")
                  + (" † on a task's cell: its bootstrap rests on fewer than 100 items, or resamples clusters "
                     "(measured coverage under 93%, docs/metrics.md)." if _task_few(card) else ""), ""]
    if card["tasks"]:
        lines.append("Tasks in the card:")
        for t in card["tasks"]:
            cl = f", {t['clusters']} clusters" if t.get("clusters") else ""
            lines.append(f"- {t['task']} ({t['metric']}): n={t['n']}{cl}{_rows(t)}, {t['origin']}, floor {t['floor']:.3g} "
                         f"({t['floor_kind']}), top {t['top']:g}")
    if card["left_out"]:
        lines.append("Left out of the card:")
        lines += [f"- {x['path']}: {x['reason']}" for x in card["left_out"]]
    return lines + [""]


def card_html(card: dict[str, Any]) -> str:
    from html import escape

    parts = [f'<h3 id="card-{escape(card["language"])}">Report card</h3>']
    if card.get("note"):
        parts.append(f'<p class="note">{escape(card["note"])}</p>')
    if card["models"]:
        mark = "†" if card.get("too_few_tasks") else ""
        tasks = [t["task"] for t in card["tasks"]]
        info = {t["task"]: t for t in card["tasks"]}
        head = "".join(f"<th>{escape(t)}</th>" for t in tasks)
        rows = "".join(
            f"<tr><td>{m['tier']}</td><td>{escape(m['model'])}</td><td>{escape(_iv(m['normalised_mean'], True, mark))}</td>"
            f"<td>{escape(_rank_cell(m, card))}</td>"
            + "".join(f"<td>{escape(_task_cell(m['tasks'][t], info[t]))}</td>" for t in tasks) + "</tr>"
            for m in card["models"])
        parts.append(f'<table class="card"><tr><th>tier</th><th>model</th><th>normalised mean (95% CI)</th>'
                     f"<th>mean rank score (95% CI)</th>{head}</tr>{rows}</table>")
    parts.append("<ul>" + "".join(
        f"<li>{escape(t['task'])} ({escape(t['metric'])}): n={t['n']}{escape(_rows(t))}, {escape(t['origin'])}, floor {t['floor']:.3g} "
        f"({escape(t['floor_kind'])})</li>" for t in card["tasks"]) + "</ul>")
    if card["left_out"]:
        parts.append("<p>Left out of the card:</p><ul>" + "".join(
            f"<li><code>{escape(x['path'])}</code>: {escape(x['reason'])}</li>" for x in card["left_out"]) + "</ul>")
    return "".join(parts)



def _covers(card: dict[str, Any]) -> str:
    tasks = "; ".join(f"{t['task']} (n={t['n']}{_rows(t)}, {t['origin']})" for t in card["tasks"])
    out = "; ".join(f"{x['path']}: {x['reason']}" for x in card["left_out"])
    return f"tasks: {tasks}" + (f" | left out: {out}" if out else "")


def card_csv_rows(card: dict[str, Any]) -> list[list[Any]]:
    """The card in the board's CSV columns (after `language`): per model its normalised mean and
    mean rank score, n = the tasks, `best` = the top tier, notes = its tier, the tasks and what was left out."""
    rows = []
    for m in card["models"]:
        for metric in ("normalised_mean", "rank_score"):
            e = m[metric]
            bare = card.get("rank_no_interval") if metric == "rank_score" else None
            lo, hi = ("", "") if bare else (e["ci_low"], e["ci_high"])
            rows.append([m["model"], "report card", metric, e["value"], lo, hi, len(card["tasks"]),
                         m["tier"] == 1, "", m["tier"] == 1, "", "", bare or "two-level bootstrap (t over tasks)", True,
                         _covers(card), f"tier {m['tier']}" + ("; † fewer than 5 tasks" if card.get("too_few_tasks") and not bare
                                                                        and metric == "normalised_mean" else ""),
                         "", card["correction"]])
    return rows


def card_latex(card: dict[str, Any], tex: Any) -> list[str]:
    """The card as a LaTeX table (tiers, both scores with intervals), its caption naming the tasks."""
    if not card["models"]:
        return []
    mark = "†" if card.get("too_few_tasks") else ""
    out = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{rlrr}", r"\toprule",
           r"Tier & Model & Normalised mean & Mean rank score \\", r"\midrule"]
    for m in card["models"]:
        out.append(f"{m['tier']} & {tex(m['model'])} & {tex(_iv(m['normalised_mean'], True, mark))} & "
                   f"{tex(_rank_cell(m, card))} " + r"\\")
    out += [r"\bottomrule", r"\end{tabular}",
            r"\caption{" + tex(f"Report card, {card['language']}: " + _covers(card)) + "}", r"\end{table}"]
    return [x.replace("–", "--") for x in out]
