"""`glotbench compare --items RUN_A RUN_B`: the items on which two runs' outcomes differ, side by side.

Like `compare`, it refuses runs on different item sets or with different signatures. Each item's
outcome is the headline metric's formula on the item's own statistics (summed over repeats: a ratio
metric gives the share right; a corpus metric, its sentence-level value). Items whose outcomes
differ are listed, each with both outputs (the first repeat's), its references (re-read from the
run's data, SHA-256 checked) and its groups, labelled "A right, B wrong" / "B right, A wrong" for
0/1 outcomes, else "A higher" / "B higher"; counted overall and per group. The paired test over all
shared items (approximate randomisation and paired bootstrap, clusters kept whole where the
benchmark names a cluster field) says whether the difference is more than chance. `--only a|b` and
`--group KEY=VALUE` filter the listing; the HTML page filters the same ways in the browser.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from glotbench.errors import GlotbenchError
from glotbench.report import rundata
from glotbench.rundir import read_results

WINNERS = {"a": "A", "b": "B"}


def _value(fn: Any, keys: list[str], stats: dict[str, float] | None) -> float | None:
    import numpy as np

    if stats is None:
        return None
    v = float(fn(np.array([stats.get(k, 0.0) for k in keys], dtype=np.float64)))
    return None if v != v else v


def _first(samples: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for rec in samples:
        if rec["id"] not in out or rec.get("repeat", 0) < out[rec["id"]].get("repeat", 0):
            out[rec["id"]] = rec
    return out


def _rotations(samples: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """A circular run's answers per original item, rotation by rotation (first repeat): {} otherwise."""
    out: dict[str, dict[int, Any]] = defaultdict(dict)
    for rec in samples:
        meta = rec.get("meta") or {}
        if "circular_item" in meta and rec.get("repeat", 0) == 0:
            out[str(meta["circular_item"])][int(meta.get("rotation", 0))] = rec.get("answer")
    return {i: [r[k] for k in sorted(r)] for i, r in out.items()}


def _side(rec: dict[str, Any] | None, value: float | None, rotations: list[Any] | None = None) -> dict[str, Any]:
    """One run's side of an item: its value, and the first repeat's output and answer (a circular
    run: rotation 0's output, and the answer given in each rotation, in rotation order)."""
    rec = rec or {}
    return {"value": value, "output": rec.get("output"), "answer": rotations if rotations else rec.get("answer"),
            "failure": rec.get("failure"), "error": rec.get("error")}


def diff_runs(run_a: str, run_b: str, *, only: str | None = None, group: tuple[str, str] | None = None,
              resamples: int = 1000, seed: int = 12345) -> dict[str, Any]:
    import numpy as np

    from glotbench.rundir.selection import describe_item_set
    from glotbench.rundir.validity import notes
    from glotbench.report.clusters import paired_rows
    from glotbench.report.compare import check_comparable
    from glotbench.stats import paired_test, paired_too_few

    if only is not None and only not in WINNERS:
        raise GlotbenchError(f"--only must be a (A right or higher) or b, got {only!r}")
    for p in (run_a, run_b):  # its items are its judges' verdicts, not outputs scored against references
        if (kind := rundata.judged_kind(p)) is not None:
            raise GlotbenchError(f"{p} is a judged run ({kind}): the items view (diff, compare --items or --html) shows "
                                 "a plain run's outputs; `glotbench compare RUN_A RUN_B` pairs judged runs on their "
                                 f"judged score, `glotbench report {p}` prints each judge's")
    ra, rb = read_results(run_a), read_results(run_b)
    check_comparable([run_a, run_b], [ra, rb])
    head = ra["headline"]
    keys = rundata.metric_keys(ra, head)
    fn = rundata.score_fn(ra, head)
    scale = ra["metrics"][head].get("scale", "fraction")
    top = 100.0 if scale == "points" else 1.0
    samples = [list(rundata.iter_samples(Path(run_a))), list(rundata.iter_samples(Path(run_b)))]
    stats = [rundata.run_item_stats(r, s) for r, s in zip((ra, rb), samples)]  # a circular run: per original item
    first = [_first(s) for s in samples]
    rotations = [_rotations(s) for s in samples]
    ids = [i for i in stats[0] if i in stats[1]]
    if not ids:
        raise GlotbenchError("the runs share no items")
    group_keys = list((ra["scores"].get("groups") or {}))
    a = np.array([[stats[0][i].get(k, 0.0) for k in keys] for i in ids]).reshape(len(ids), len(keys))
    b = np.array([[stats[1][i].get(k, 0.0) for k in keys] for i in ids]).reshape(len(ids), len(keys))
    a, b, clusters = paired_rows(a, b, ids, rundata.item_clusters(ra, samples[0]))
    test = paired_test(a, b, fn, resamples=resamples, trials=resamples, seed=seed).to_dict()
    test.update(n=len(ids), **({"clusters": clusters} if clusters else {}),
                too_few_units=paired_too_few(len(ids), clusters))
    values = {i: (_value(fn, keys, stats[0].get(i)), _value(fn, keys, stats[1].get(i))) for i in ids}
    binary = all(v in (None, 0.0, top) for pair in values.values() for v in pair)
    refs, ref_note = rundata.references(ra)
    items, counts = [], {"a": 0, "b": 0}
    by_group: dict[str, dict[str, dict[str, int]]] = {k: defaultdict(lambda: {"a": 0, "b": 0}) for k in group_keys}
    for i in ids:
        va, vb = values[i]
        if va == vb:
            continue
        winner = "a" if (vb is None or (va is not None and va > vb)) else "b"
        counts[winner] += 1
        meta = first[0][i].get("meta") or {}
        groups = {k: str(meta.get(k, "unknown")) for k in group_keys}
        for k, v in groups.items():
            by_group[k][v][winner] += 1
        if (only and winner != only) or (group and groups.get(group[0]) != group[1]):
            continue
        outcome = (f"{WINNERS[winner]} right, {WINNERS['b' if winner == 'a' else 'a']} wrong" if binary
                   else f"{WINNERS[winner]} higher")
        items.append({"id": i, "groups": groups, "winner": WINNERS[winner], "outcome": outcome,
                      "a": _side(first[0].get(i), va, rotations[0].get(i)), "b": _side(first[1].get(i), vb, rotations[1].get(i)),
                      "reference": refs.get(i)})
    return {"a": ra["model"]["spec"], "b": rb["model"]["spec"], "paths": {"a": run_a, "b": run_b},
            "benchmark": ra["benchmark"]["name"], "signature": ra["signature"], "item_set": describe_item_set(ra),
            "headline": head, "label": ra["metrics"][head].get("label") or head, "scale": scale,
            "outcomes": "0/1" if binary else "graded", "items": len(ids), "differ": counts["a"] + counts["b"],
            "a_better": counts["a"], "b_better": counts["b"],
            "by_group": {k: dict(sorted(v.items())) for k, v in by_group.items()},
            "test": test, "filter": {"only": only, "group": "=".join(group) if group else None},
            "listed": items, "references": ref_note, "notes": {"a": notes(ra), "b": notes(rb)}}


def _dagger(t: dict[str, Any]) -> str:
    """`†` after a paired CI on too few units (stats.paired_too_few), with what it rests on."""
    from glotbench.report.terminal import n_text

    return f"† too few units for its measured coverage: n={n_text(t)}" if t.get("too_few_units") else ""


def diff_text(d: dict[str, Any], width: int = 100) -> str:
    f = 100.0 if d["scale"] == "fraction" else 1.0
    t = d["test"]

    def cut(x: Any) -> str:
        s = "—" if x is None else " ".join(str(x).split())
        return s if len(s) <= width else s[: width - 1] + "…"

    lines = [f"A: {d['a']}", *(f"   {n}" for n in d["notes"]["a"]), f"B: {d['b']}", *(f"   {n}" for n in d["notes"]["b"]),
             f"{d['benchmark']} {d['label']} over {d['items']} shared items: A {f * t['a']:.1f}, B {f * t['b']:.1f}, "
             f"B − A {f * t['delta']:+.1f} (95% CI {f * t['ci_low']:+.1f} – {f * t['ci_high']:+.1f}{_dagger(t)}); "
             f"p randomisation {t['p_randomization']:.3f}, p bootstrap {t['p_bootstrap']:.3f}"
             + (f" (clusters kept whole: {t['clusters']})" if t.get("clusters") else ""),
             f"outcomes differ on {d['differ']} items: A {'right' if d['outcomes'] == '0/1' else 'higher'} on "
             f"{d['a_better']}, B on {d['b_better']}"]
    for k, vals in d["by_group"].items():
        lines.append(f"by {k}: " + "; ".join(f"{v} A {c['a']} B {c['b']}" for v, c in vals.items()))
    if d["filter"]["only"] or d["filter"]["group"]:
        lines.append(f"listed ({', '.join(x for x in (d['filter']['only'] and 'only ' + d['filter']['only'].upper(), d['filter']['group']) if x)}): "
                     f"{len(d['listed'])}")
    for it in d["listed"]:
        g = " ".join(f"{k}={v}" for k, v in it["groups"].items())
        lines += ["", f"{it['id']} [{it['outcome']}] {g}".rstrip()]
        for side in ("a", "b"):
            s = it[side]
            v = "—" if s["value"] is None else f"{f * s['value']:.1f}"
            lines.append(f"  {side.upper()} ({v}{', ' + s['failure'] if s['failure'] else ''}): {cut(s['output'])}")
        if it["reference"] is not None:
            lines.append(f"  reference: {cut(json.dumps(it['reference'], ensure_ascii=False))}")
    lines += ["", d["references"], f"signature: {d['signature']}", f"items: {d['item_set']}"]
    return "\n".join(lines)


def diff_html(d: dict[str, Any]) -> str:
    """One self-contained page: the test and counts, then the differing items in the sample browser
    (filters: each group, the outcome "A right, B wrong" / "B right, A wrong", a failure, text)."""
    from html import escape

    from glotbench.report.page import page, sample_browser

    f = 100.0 if d["scale"] == "fraction" else 1.0
    t = d["test"]
    rows = []
    for it in d["listed"]:
        a, b = it["a"], it["b"]
        blocks = [["outputs", "s", [[f"A · {d['a']} · {'—' if a['value'] is None else round(f * a['value'], 2)}", a["output"]],
                                    [f"B · {d['b']} · {'—' if b['value'] is None else round(f * b['value'], 2)}", b["output"]]]]]
        blocks.append(["answers (extracted)", "s", [["A", json.dumps(a["answer"], ensure_ascii=False)],
                                                    ["B", json.dumps(b["answer"], ensure_ascii=False)]]])
        if it["reference"] is not None:
            blocks.append(["reference", "j", it["reference"]])
        fail = "; ".join(f"{s}: {x[s.lower()]['failure']}" for s, x in (("A", it), ("B", it)) if x[s.lower()]["failure"])
        rows.append({"id": it["id"], "g": it["groups"], "o": it["outcome"], "f": fail or None, "fl": [], "b": blocks})
    groups = {k: sorted(v) for k, v in d["by_group"].items()}
    failures = sorted({r["f"] for r in rows if r["f"]})
    browser, script = sample_browser(rows, groups, failures, [], note=d["references"])
    summary = (f'<p id="diff-test">B − A = {f * t["delta"]:+.1f} (95% CI {f * t["ci_low"]:+.1f} – {f * t["ci_high"]:+.1f}{escape(_dagger(t))}) '
               f'over {d["items"]} shared items; p randomisation {t["p_randomization"]:.3f}, p bootstrap '
               f'{t["p_bootstrap"]:.3f}' + (f'; clusters kept whole: {t["clusters"]}' if t.get("clusters") else "") + "</p>"
               f'<p id="diff-counts" data-a="{d["a_better"]}" data-b="{d["b_better"]}">outcomes differ on {d["differ"]} items: '
               f'A {d["a_better"]}, B {d["b_better"]}</p>'
               + "".join(f'<h3>by {escape(k)}</h3><table><tr><th>{escape(k)}</th><th>A better</th><th>B better</th></tr>'
                         + "".join(f'<tr><td>{escape(v)}</td><td>{c["a"]}</td><td>{c["b"]}</td></tr>' for v, c in vals.items())
                         + "</table>" for k, vals in d["by_group"].items()))
    hdr = (f"<h1>diff · {escape(d['benchmark'])} · {escape(d['label'])}</h1>"
           f'<p class="note">A: {escape(d["a"])}<br>B: {escape(d["b"])}</p>'
           + "".join(f'<p class="warn">{escape(side.upper())}: {escape(n)}</p>' for side in ("a", "b") for n in d["notes"][side])
           + f'<div class="sig">{escape(d["signature"])}</div>')
    return page(f"glotbench diff · {d['benchmark']}", hdr,
                [("summary", "Paired test and counts", summary), ("items", "Items whose outcome differs", browser)],
                script=script)


def write_diff_html(d: dict[str, Any], path: str | Path) -> Path:
    target = Path(path)
    try:
        target.write_text(diff_html(d), encoding="utf-8", errors="replace")
    except OSError as e:
        raise GlotbenchError(f"cannot write the diff page: {e}") from None
    return target
