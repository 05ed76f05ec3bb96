"""Terminal tables for the judged pipelines: the arena's score per judge, AraGen's 3C3H per judge."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from glotbench.judges.rubric import DIMENSIONS
from glotbench.report.terminal import FEW_NOTE, few_mark, interval_text, n_text
from glotbench.report.terminal import console as make_console


def print_notes(console: Any, res: dict[str, Any]) -> None:
    """Invalid phases and bundled sample data, under the table (rundir/validity.py)."""
    from glotbench.rundir.validity import notes
    from glotbench.rundir.validity import validation_text

    judges = validation_text(res)  # one clause per judge: wrapped to the table's width, the others whole
    for line in notes(res):
        console.print(line, soft_wrap=line != judges)
    if line := cost_text(res.get("judged_cost")):
        console.print(line, soft_wrap=True)


def cost_text(cost: Mapping[str, Any] | None) -> str:
    """A judged run's whole cost (results.json `judged.cost`): every phase's, answers and judges."""
    def usd(x: Any) -> str:  # a hand-edited record: what is not a number is said so, not a traceback
        return f"${x:.4f}" if isinstance(x, (int, float)) and not isinstance(x, bool) else f"(not a number: {x!r})"

    if not isinstance(cost, Mapping) or not isinstance(cost.get("phases"), Mapping):
        return ""
    phases = ", ".join(f"{name} {usd(p.get('run'))}" for name, p in cost["phases"].items() if isinstance(p, Mapping))
    cap = cost.get("max_cost_usd")
    cap_text = f" · --max-cost ${cap:g}" if isinstance(cap, (int, float)) and not isinstance(cap, bool) else ""
    return f"cost {usd(cost.get('run'))} for the whole judged run ({phases}){cap_text}"


def print_arena(res: dict[str, Any]) -> None:
    from rich import box
    from rich.table import Table

    s = res["scores"]
    t = Table(title=f"{res['candidate']} vs baseline {res['baseline']}", box=box.SIMPLE_HEAD,
              caption="candidate score: win 1, tie 0.5, loss 0 (95% CI over prompts)")
    t.add_column("judge", no_wrap=True)
    for c in ("score", "prompts", "consistent", "ties", "failures"):
        t.add_column(c, justify="right")
    for j in res["failures"]:
        est = s["judges"].get(j)
        name = j.split("@")[0]
        pc, tie = res["position_consistency"][j], res["tie_rate"][j]
        if est is None:
            t.add_row(name, "no valid verdict", "0", "—", "—",
                      ", ".join(f"{k} {v}" for k, v in res["failures"][j].items()))
            continue
        t.add_row(name, interval_text(est),
                  str(s["prompts_judged"][j]), "—" if pc is None else f"{100 * pc:.0f}%",
                  "—" if tie is None else f"{100 * tie:.0f}%",
                  ", ".join(f"{k} {v}" for k, v in res["failures"][j].items()) or "none")
    f = s["final"]
    t.add_row("mean of judges", interval_text(f),
              str(s["prompts"]), "", "", "", style="bold")
    console = make_console()
    console.print(t)
    if any(e.get("too_few_units") for e in (*s["judges"].values(), f) if e):
        console.print(FEW_NOTE)
    print_notes(console, res)
    if res["skipped_judges"]:
        console.print(f"skipped (judge is the candidate): {', '.join(res['skipped_judges'])}")
    un = res.get("unanswered") or {}
    n_un = {k: len(un.get(k, [])) for k in ("candidate", "baseline", "both")}
    if any(n_un.values()):
        how = "left out (unanswered=drop)" if un.get("policy") == "drop" else "scored as losses of the side that did not answer"
        console.print(f"unanswered prompts: candidate {n_un['candidate']}, baseline {n_un['baseline']}, "
                      f"both {n_un['both']}: {how}")
    inc = res.get("incomplete_prompts") or {}
    for j, ids in (inc.get("failed") or {}).items():
        if ids:
            console.print(f"{j.split('@')[0]}: {len(ids)} prompt(s) without both orders judged, counted as "
                          "failed (not scored)")
    for j, ids in (inc.get("single_order") or {}).items():
        if ids:
            console.print(f"{j.split('@')[0]}: {len(ids)} prompt(s) scored from one order only "
                          "(single_order=accept)")


def print_mt_bench(res: dict[str, Any]) -> None:
    """SEA-MT-Bench's table (benchmarks/sea_mt_bench.py): each judge's weighted win rate, their mean, per turn
    and per category, with SEA-HELM's outcome counts."""
    from rich import box
    from rich.table import Table

    s = res["scores"]
    t = Table(title=f"{res['model']} vs baseline {res['baseline']} · {res['language']}", box=box.SIMPLE_HEAD,
              caption="SEA-HELM's weighted win rate: the mean of the categories' win rates (95% CI over questions)")
    t.add_column("", overflow="fold")  # a long judge name folds; the numbers and their intervals never shrink
    t.add_column("weighted win rate", justify="right", no_wrap=True)
    for c in ("win", "tie", "lose", "error"):
        t.add_column(c, justify="right", no_wrap=True)
    for j, est in s["judges"].items():
        n = res["outcomes"].get(j, {})
        t.add_row(j.split("@")[0], interval_text(est, none="n/a"),
                  *(str(n.get(c, 0)) for c in ("win", "tie", "lose", "error")))
    t.add_row("mean of judges", interval_text(s["final"], none="n/a"),
              "", "", "", "", style="bold")
    for turn, est in s["turns"].items():
        t.add_row(f"  turn {turn}", interval_text(est), "", "", "", "")
    for cat, est in s["categories"].items():
        t.add_row(f"  {cat}", interval_text(est), "", "", "", "")
    console = make_console()
    console.print(t)
    if any(e.get("too_few_units") for e in (s["final"], *s["turns"].values(), *s["categories"].values())):
        console.print(FEW_NOTE)
    print_notes(console, res)
    if res["skipped_judges"]:
        console.print(f"skipped (judge is the candidate or the baseline): {', '.join(res['skipped_judges'])}")
    un = res.get("unanswered") or {}
    if un.get("turns"):
        how = "left out (unanswered=drop)" if un.get("policy") == "drop" else "scored as losses of the side that did not answer"
        console.print(f"turns not answered: {len(un['turns'])}: {how}")
    console.print(f"signature: {res['signature']}")


def _why_unanswered(res: Mapping[str, Any]) -> str:
    """Why entries have no answer, by kind (`generation_failures`): a failed call (a timeout) is
    named as one, not left to read as a reply that held no answer."""
    kinds = res.get("generation_failures") or {}
    return f" ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})" if kinds else ""


def print_aragen(res: dict[str, Any], width: int | None = None) -> None:
    """The results table; fits 80 columns (names are shortened, never the numbers)."""
    from rich import box
    from rich.table import Table

    def pct(x: float | None, digits: int = 0) -> str:
        return "—" if x is None else f"{100 * x:.{digits}f}"

    def ci(e: Mapping[str, Any]) -> str:  # whole percent to fit 80 columns; the † as every view (n: its column)
        return "" if e.get("ci_low") is None else f"{100 * e['ci_low']:.0f}–{100 * e['ci_high']:.0f}{few_mark(dict(e))}"

    short = {"Question Answering (QA)": "QA", "Orthographic and Grammatical Analysis": "Orthography"}
    t = Table(title=f"AraGen 3C3H · {res['model']}", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0),
              caption=f"percent, 95% CI over entries · policy {res['policy']} · {res['entries']} entries, "
                      f"{len(res['no_answer'])} without an answer{_why_unanswered(res)} · parse {res['parse']} · jury {res['jury_strategy']}")
    t.add_column("judge / task", no_wrap=True, overflow="ellipsis", max_width=20)
    for c in ("3C3H", "95% CI", "Cor", "Cmp", "Cnc", "Hlp", "Hon", "Hrm", "cov", "n"):
        t.add_column(c, justify="right", no_wrap=True)
    for j, pj in res["per_judge"].items():
        o = pj["scores"]["overall"]
        t.add_row(j.split("@")[0], pct(o["3c3h"]["value"], 1), ci(o["3c3h"]),
                  *(pct(o[d.lower()]["value"]) for d in DIMENSIONS), pct(pj["coverage"]), str(pj["n"]), style="bold")
        for task, est in pj["scores"]["groups"].get("task", {}).items():
            t.add_row(f"  {short.get(task, task)}", pct(est["3c3h"]["value"], 1), "",
                      *(pct(est[d.lower()]["value"]) for d in DIMENSIONS), "", "")
    m = res["mean_of_judges"]
    t.add_row({"mean": "mean of judges", "average": "jury: average", "vote": "jury: vote"}[m["strategy"]],
              pct(m["3c3h"]["value"], 1), ci(m["3c3h"]), *(pct(m["dimensions"][d]) for d in DIMENSIONS), "",
              str(m["n"]), style="bold")
    console = make_console(width=width) if width else make_console()
    console.print(t)
    if any(pj["scores"]["overall"]["3c3h"].get("too_few_units") for pj in res["per_judge"].values()) \
            or m["3c3h"].get("too_few_units"):
        console.print(FEW_NOTE)
    print_notes(console, res)
    if res["skipped_judges"]:
        console.print(f"skipped (same family as the model): {', '.join(res['skipped_judges'])}")
    left_out = [j for j in res["per_judge"] if m["strategy"] == "mean" and j not in m.get("judges", [])]
    if left_out:
        console.print(f"mean of judges over {len(res['per_judge']) - len(left_out)} of {len(res['per_judge'])} judges "
                      f"(no valid verdict: {', '.join(j.split('@')[0] for j in left_out)})")
    for j, pj in res["per_judge"].items():
        if pj["rejected"]:
            console.print(f"rejected verdicts ({j.split('@')[0]}): "
                          + ", ".join(f"{k} {v}" for k, v in sorted(pj["rejected"].items())))
    console.print(f"signature: {res['signature']}", soft_wrap=True)


def _panel(results: dict[str, Any], title: str, score: str, judge: Callable[[str, dict[str, Any]], str],
           footer: str) -> None:
    """The lines of a panel's run: its title, its score (the mean of judges), each judge, a footer,
    the notes and the signature."""
    c = make_console()
    c.print(title)
    judges = results["scores"]["judges"]
    none = [j for j, e in judges.items() if e.get("value") is None]  # no valid verdict: not in the mean
    of = (f"{len(judges) - len(none)} of {len(judges)} judges (no valid verdict: {', '.join(j.split('@')[0] for j in none)})"
          if none else f"{len(judges)} judge(s)")
    c.print(f"{score} · mean of {of} over {results['items']} items")
    if results["scores"]["final"].get("too_few_units"):
        c.print(FEW_NOTE)
    for j, e in results["scores"]["judges"].items():
        c.print(f"  {j}: {judge(j, e)}")
    c.print(footer)
    print_notes(c, results)
    c.print(f"signature: {results['signature']}")


def print_panel(results: dict[str, Any]) -> None:
    """A judged run of a kind with no table of its own (a plugin's: runfiles.JudgedFile): its
    headline (the mean of judges), each judge, the notes."""
    judged = results["scores"].get("prompts_judged") or {}
    _panel(results, f"{results['benchmark']} · {results['model']} · {results.get('label') or results['headline']}",
           f"{results['headline']} {interval_text(results['scores']['final'])}",
           lambda j, e: f"{interval_text(e, n=False)} ({judged.get(j, e.get('n'))} judged)",
           f"skipped judges: {', '.join(results.get('skipped_judges') or ()) or 'none'}")


def print_judged(results: dict[str, Any]) -> None:
    """A task's rubric run (tasks/rubric.py RubricRun): the mean of judges, each judge, the notes."""

    def num(x: Any) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    f = results["scores"]["final"]
    _panel(results, f"{results['benchmark']} · {results['model']} · {results['mode']} rubric",
           f"score {num(f['value'])} (95% CI {num(f['ci_low'])}–{num(f['ci_high'])}){few_mark(f)} n={n_text(f)}",
           lambda j, e: f"{num(e['value'])} ({results['scores']['prompts_judged'][j]} judged)",
           f"unanswered: {len(results['unanswered'])} (0 each) · skipped judges: "
           f"{', '.join(results['skipped_judges']) or 'none'}")
