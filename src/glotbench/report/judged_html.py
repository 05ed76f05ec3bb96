"""Report pages of judged runs: an arena or an AraGen directory (its results.json's `judged` summary, or an older arena.json, aragen.json).
Per-judge scores with CIs and their spread, position consistency, and each prompt's answers with
every judge's verdicts next to them. Everything is read from the directory's files."""

from __future__ import annotations

import json
from collections import defaultdict
from html import escape
from pathlib import Path
from typing import Any

from glotbench.errors import GlotbenchError
from glotbench.report import rundata
from glotbench.rundir import read_run_json
from glotbench.rundir.files import RESULTS, RUN_JSON, SAMPLES
from glotbench.report.page import notes_html, page, sample_browser
from glotbench.report.svg import Row, ci_plot, num, units
from glotbench.report.terminal import few_mark, n_text


def _ptr(file: str, *parts: Any) -> str:
    """A number's source: FILE#/json/pointer (`file` may hold a pointer's start already)."""
    return (f"{file}/" if "#" in file else f"{file}#/") + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _summary_source(data: rundata.RunData) -> str:
    """Where the run's summary lies: its results.json's `judged.summary`, or an older run's own file."""
    old = data.path / rundata.JUDGED_FILES[data.kind]
    return old.name if old.is_file() and not (data.path / RESULTS).is_file() else f"{RESULTS}#/judged/summary"


def _phase_dirs(top: Path) -> dict[str, Path]:
    """Each phase's run directory by the model spec its run.json names (judge-*, candidate, ...)."""
    out = {}
    for d in sorted(top.iterdir()):
        if (d / RUN_JSON).is_file() and (d / SAMPLES).is_file():
            spec = read_run_json(d)["model"]["spec"]
            out[d.name if not d.name.startswith("judge-") else spec] = d
    return out


def _verdict(answer: Any) -> str:
    """A parsed verdict as recorded in samples.jsonl: the arena's winner (with the judge's notes after it),
    a rubric's scores, or text from older runs."""
    if answer is None or answer == "":
        return "—"
    if isinstance(answer, dict) and "winner" in answer:
        notes = answer.get("notes")
        return str(answer["winner"]) + (f" (notes: {json.dumps(notes, ensure_ascii=False)})" if notes else "")
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


def _short(spec: str) -> str:
    return spec.split("@")[0]


def _spread(file: str, ests: dict[str, dict[str, Any]], key: str = "value") -> str:
    vals = [(j, e[key]) for j, e in ests.items() if e and e.get(key) is not None]
    if len(vals) < 2:
        return '<p class="note">one judge with a score: no spread between judges.</p>'
    hi, lo = max(vals, key=lambda x: x[1]), min(vals, key=lambda x: x[1])
    return (f'<p>spread between judges: <b id="judge-spread" data-raw="{100 * (hi[1] - lo[1])!r}">'
            f'{100 * (hi[1] - lo[1]):.1f}</b> points ({escape(_short(hi[0]))} highest, {escape(_short(lo[0]))} lowest)</p>')


def arena_report(data: rundata.RunData) -> str:
    r, F = data.results, _summary_source(data)
    s = r["scores"]
    f = s["final"]
    head = (f'<h1>arena · {escape(r["candidate"])} vs {escape(r["baseline"])}</h1>'
            f'<div class="headline" id="headline">candidate score: {num(f["value"], _ptr(F, "scores", "final", "value"), factor=100)}% '
            f'<span class="ci">(95% CI {num(f["ci_low"], _ptr(F, "scores", "final", "ci_low"), factor=100)}–'
            f'{num(f["ci_high"], _ptr(F, "scores", "final", "ci_high"), factor=100)}){few_mark(f)} n={escape(n_text(f))}</span></div>'
            f'<div class="sig" id="signature">{escape(r["rules"])} · judge prompt v{escape(str(r.get("judge_prompt_version")))} · '
            f'data {escape(str(r.get("data")))} sha256:{escape(str(r.get("data_sha256", ""))[:12])}</div>'
            + notes_html(r))
    rows = [Row(_short(j), e.get("value"), e.get("ci_low"), e.get("ci_high"), **units(e)) for j, e in s["judges"].items()]
    table = ["<table><tr><th>judge</th><th>score</th><th>prompts</th><th>position consistency</th><th>ties</th><th>failures</th></tr>"]
    for j in r["failures"]:
        e = s["judges"].get(j)
        pc, tie = r["position_consistency"].get(j), r["tie_rate"].get(j)
        table.append(f'<tr><td>{escape(_short(j))}</td><td>{num(e["value"], _ptr(F, "scores", "judges", j, "value"), factor=100) if e else "no valid verdict"}</td>'
                     f'<td>{s["prompts_judged"].get(j, 0)}</td><td>{num(pc, _ptr(F, "position_consistency", j), factor=100, digits=0)}</td>'
                     f'<td>{num(tie, _ptr(F, "tie_rate", j), factor=100, digits=0)}</td>'
                     f'<td>{escape(", ".join(f"{k} {v}" for k, v in r["failures"][j].items()) or "none")}</td></tr>')
    judges = (ci_plot(rows, factor=100) + "".join(table) + "</table>" + _spread(F, s["judges"])
              + (f'<p class="note">skipped (judge is the candidate): {escape(", ".join(r["skipped_judges"]))}</p>' if r["skipped_judges"] else "")
              + '<p class="note">position consistency: share of prompts where the judge gave the same verdict with the answers swapped.</p>')
    phases = _phase_dirs(data.path)
    answers = {role: {x["id"]: x for x in rundata.iter_samples(phases[role])} for role in ("candidate", "baseline") if role in phases}
    verdicts: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for j in r["failures"]:
        if j in phases:
            for x in rundata.iter_samples(phases[j]):
                verdicts[x["meta"]["prompt_id"]][j].append(x)
    brows = []
    for pid, cand in answers.get("candidate", {}).items():
        base = answers.get("baseline", {}).get(pid, {})
        blocks: list[list[Any]] = [["prompt", "j", cand.get("input")], ["candidate answer", "t", cand.get("answer")],
                                   ["baseline answer", "t", base.get("answer")]]
        failure, flags = None, []
        for j, recs in verdicts.get(pid, {}).items():
            lines = []
            for x in sorted(recs, key=lambda x: x["meta"]["order"]):
                cand_pos = "A" if x["meta"]["order"] == "0" else "B"
                lines.append(f'order {x["meta"]["order"]} (candidate is {cand_pos}): verdict {_verdict(x.get("answer"))}'
                             + (f' → candidate {x["score"].get("value")}' if x.get("failure") is None else f' → failure {x["failure"]}'))
                failure = failure or x.get("failure")
            vals = {x["meta"]["order"]: x["score"].get("value") for x in recs if x.get("failure") is None}
            if len(vals) == 2 and vals["0"] != vals["1"]:
                flags.append(f"inconsistent: {_short(j)}")
            blocks.append([f"judge {_short(j)}", "t", "\n".join(lines)])
        per = [r["per_prompt"][j][pid] for j in r["per_prompt"] if pid in r["per_prompt"][j]]
        o = None if not per else "win" if sum(per) / len(per) > 0.5 else "loss" if sum(per) / len(per) < 0.5 else "tie"
        brows.append({"id": pid, "g": {"category": str((cand.get("meta") or {}).get("category", "unknown"))},
                      "o": o, "f": failure, "fl": flags, "b": blocks})
    return _page(data, head, judges, brows, "candidate " + r["candidate"])


def aragen_report(data: rundata.RunData) -> str:
    r, F = data.results, _summary_source(data)
    m = r["mean_of_judges"]["3c3h"]
    head = (f'<h1>AraGen 3C3H · {escape(r["model"])}</h1>'
            f'<div class="headline" id="headline">3C3H, {escape(str(r["mean_of_judges"].get("strategy", "mean")))} of judges: {num(m["value"], _ptr(F, "mean_of_judges", "3c3h", "value"), factor=100)}% '
            f'<span class="ci">(95% CI {num(m["ci_low"], _ptr(F, "mean_of_judges", "3c3h", "ci_low"), factor=100)}–'
            f'{num(m["ci_high"], _ptr(F, "mean_of_judges", "3c3h", "ci_high"), factor=100)}){few_mark(m)} n={escape(n_text(m))}</span></div>'
            f'<div class="sig" id="signature">{escape(r["signature"])}</div>' + notes_html(r))
    pj = r["per_judge"]
    rows = []
    for j, p in pj.items():
        o = p["scores"]["overall"]["3c3h"]
        rows += [Row(f"judge {_short(j)}", None, header=True), Row("all tasks", o.get("value"), o.get("ci_low"), o.get("ci_high"), **units(o))]
        for task, est in p["scores"].get("groups", {}).get("task", {}).items():
            e = est.get("3c3h") or {}
            rows.append(Row(task, e.get("value"), e.get("ci_low"), e.get("ci_high"), **units(e)))
    dims = list(r["mean_of_judges"]["dimensions"])
    extra = {k: label for k, label in (("coverage", "coverage"), ("parse_failure_rate", "parse failures"),
                                       ("zeroing_break_rate", "zeroing breaks"), ("consistency_std", "repeat std"))
             if any(k in p for p in pj.values())}  # what this run's summary records
    table = ["<table><tr><th>judge</th><th>3C3H</th>" + "".join(f"<th>{escape(d)}</th>" for d in dims)
             + "".join(f"<th>{escape(v)}</th>" for v in extra.values()) + "</tr>"]
    for j, p in pj.items():
        o = p["scores"]["overall"]
        table.append(f'<tr><td>{escape(_short(j))}</td><td>{num(o["3c3h"]["value"], _ptr(F, "per_judge", j, "scores", "overall", "3c3h", "value"), factor=100)}</td>'
                     + "".join(f'<td>{num(o[d.lower()]["value"], _ptr(F, "per_judge", j, "scores", "overall", d.lower(), "value"), factor=100)}</td>' for d in dims)
                     + "".join(f'<td>{num(p.get(k), _ptr(F, "per_judge", j, k), factor=100)}</td>' for k in extra) + "</tr>")
    judges = (ci_plot(rows, factor=100) + "".join(table) + "</table>"
              + _spread(F, {j: p["scores"]["overall"]["3c3h"] for j, p in pj.items()})
              + f'<p class="note">failure policy: {escape(str(r.get("policy")))}'
              + (" · repeat std: mean standard deviation of a judge's scores over repeated judgings of one answer "
                 "(needs judge_repeats=K)" if "consistency_std" in extra else "") + "</p>")
    phases = _phase_dirs(data.path)
    by_item: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for j in pj:
        if j in phases:
            for x in rundata.iter_samples(phases[j]):
                by_item[x["id"]][j].append(x)
    brows = []
    for sn, judged in by_item.items():
        first = next(iter(judged.values()))[0]
        blocks: list[list[Any]] = [["question, reference and answer (per turn)", "j", first.get("input")]]
        failure = None
        for j, recs in judged.items():
            for x in recs:
                failure = failure or x.get("failure")
                blocks.append([f"judge {_short(j)}" + (f" (repeat {x['repeat']})" if len(recs) > 1 else ""), "t",
                               f"verdict: {_verdict(x.get('answer'))}\n3C3H: {x['score'].get('3c3h', '—')}"
                               + (f"\nfailure: {x['failure']}" if x.get("failure") else "") + f"\n\nraw judge output:\n{x.get('output')}"])
        meta = first.get("meta") or {}
        brows.append({"id": sn, "g": {"task": str(meta.get("task", "unknown")), "round": str(meta.get("round", "?"))},
                      "o": None, "f": failure, "fl": [], "b": blocks})
    return _page(data, head, judges, brows, "model " + r["model"])


def _page(data: rundata.RunData, head: str, judges: str, brows: list[dict[str, Any]], title: str) -> str:
    groups = {k: sorted({b["g"][k] for b in brows}) for k in (brows[0]["g"] if brows else {})}
    browser, script = sample_browser(brows, groups, sorted({b["f"] for b in brows if b["f"]}),
                                     sorted({f for b in brows for f in b["fl"]}),
                                     "one card per prompt: the answers, and every judge's verdicts next to them")
    return page(f"{data.kind} · {title}", head, [("judges", "Judges", judges), ("samples", "Answers and verdicts", browser)],
                script=script)


def judged_report(data: rundata.RunData) -> str:
    if data.kind not in rundata.JUDGED_SCHEMAS:  # a plugin's kind
        raise GlotbenchError(f"{data.path}: a {data.kind} run has no HTML page yet; `glotbench report {data.path}` prints "
                             "its scores")
    from shlex import quote  # a command to copy: a path with spaces stays one argument

    if data.kind == "rubric":
        raise GlotbenchError(f"{data.path}: a rubric run has no HTML page yet; `glotbench report {quote(str(data.path))}` "
                             f"prints its scores, `glotbench report --html {quote(str(data.path / 'answers'))}` shows "
                             "the answers")
    if data.kind == "mt-bench":
        raise GlotbenchError(f"{data.path}: a SEA-MT-Bench run has no HTML page yet; `glotbench report "
                             f"{quote(str(data.path))}` prints its scores, `glotbench report --html "
                             f"{quote(str(data.path / 'candidate-turn2'))}` shows the answers")
    return arena_report(data) if data.kind == "arena" else aragen_report(data)
