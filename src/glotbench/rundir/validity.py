"""Whether a run's numbers measure the model, and the notes every view shows next to them.

A run is **invalid** when the share of its samples whose model call failed (no reply at all:
HTTP errors, connection, timeout, rate limit, a replay's `missing` output, a backend's exception,
after the retries) or whose scoring raised (`scorer_error`: a bug or a row the scorer cannot read,
so the item's number is not the model's) is above `max_failure_rate` (default 5%). Replies the model did give but that
hold no usable answer (no JSON, no letter, an unclosed think block, truncation) are the model's
own failures and are scored as such: they never make a run invalid, except a judge's (a benchmark
that declares `judge_task`): its reply is a measurement of another model's answer, so a verdict it
cannot read counts against the threshold like a failed call (`unreadable verdict (KIND)`), and a
judged run none of whose items got a judged score is invalid whatever the shares (`combine`'s
`judged`). results.json's `validity`
records the share, the kinds and the threshold; `glotbench run` and `sweep` exit with
`INVALID_RUN_EXIT` after writing everything, and a re-run of the same command finishes the run
(successful replies come from the call cache; only the failed calls are made again).

`notes(results)` are the lines the table, the report and the board show beside a number: invalid,
a subset of the items, bundled sample data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from glotbench.rundir.schema import ValidityRecord

DEFAULT_MAX_FAILURE_RATE = 0.05
INVALID_RUN_EXIT = 3  # input errors exit 2, an interrupted command 130


UNREADABLE = "unreadable verdict"


def run_validity(failures: Mapping[str, int], samples: int, repeats: int, max_failure_rate: float,
                 statuses: Mapping[str, int] | None = None, scorer_errors: int = 0,
                 unreadable: Mapping[str, int] | None = None) -> ValidityRecord:
    """results.json's `validity` from the model-call failures by kind and by HTTP status
    (`RunCounters.call_failures`, `call_failure_status`), the samples whose scoring raised, and a
    judge's replies whose verdict could not be read, by failure kind (`unreadable`)."""
    failures = {**failures, **({"scorer_error": int(scorer_errors)} if scorer_errors else {}),
                **{f"{UNREADABLE} ({k})": int(v) for k, v in (unreadable or {}).items() if v}}
    failed = int(sum(failures.values()))
    share = failed / samples if samples else 0.0
    return {"valid": share <= max_failure_rate, "failed": failed, "of": int(samples),
            "unit": "items" if repeats == 1 else "samples", "failure_share": round(share, 6),
            "kinds": dict(sorted(failures.items())), "http_status": dict(sorted((statuses or {}).items())),
            "max_failure_rate": max_failure_rate,
            "counts": "model calls that returned no reply after the retries, and samples whose scoring raised"
                      + (", and replies whose verdict could not be read" if unreadable is not None else "")}


def combine(phases: Mapping[str, Mapping[str, Any] | None], judged: int | None = None,
            of: int | None = None) -> dict[str, Any]:
    """The validity of a judged run (arena, AraGen, a task's judges) from its phases' (answers, each
    judge: a judge's unreadable verdicts count, `run_validity`): invalid when any phase is, or when
    `judged`, the items with a judged score (the headline's n), is 0: a `judged` entry says so."""
    kept = {name: dict(v) for name, v in phases.items() if isinstance(v, Mapping)}
    if judged == 0:
        kept["judged"] = {"valid": False, "failed": of, "of": of, "unit": "items",
                          "reason": f"no item has a judged score (0 of {of if of is not None else '?'} items): "
                                    "no judge gave a verdict that could be read, or nothing was answered"}
    return {"valid": all(v.get("valid", True) for v in kept.values()), "phases": kept}


def _kinds(kinds: Mapping[str, int]) -> str:
    if len(kinds) == 1:
        return next(iter(kinds))
    return ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))


def validity_text(results: Mapping[str, Any]) -> str | None:
    """`invalid: 44 of 60 items failed (connection)`, or None for a valid run (or one written
    before validity was recorded)."""
    v = results.get("validity")
    if not isinstance(v, Mapping) or v.get("valid", True):
        return None
    if isinstance(v.get("phases"), Mapping):  # a judged run: each invalid phase
        return "invalid: " + "; ".join(f"{name}: {_failed(pv)}" for name, pv in v["phases"].items()
                                       if isinstance(pv, Mapping) and not pv.get("valid", True))
    return "invalid: " + _failed(v)


def _failed(v: Mapping[str, Any]) -> str:
    if v.get("reason"):  # a judged run with no judged item (`combine`)
        return str(v["reason"])
    kinds = v.get("kinds") or {}
    status = v.get("http_status") or {}
    detail = "; ".join(x for x in (_kinds(kinds) if kinds else "",
                                   "HTTP " + _kinds(status) if status else "") if x)
    return f"{v.get('failed')} of {v.get('of')} {v.get('unit', 'items')} failed" + (f" ({detail})" if detail else "")


def is_valid(results: Mapping[str, Any]) -> bool:
    """Valid and whole: not invalid, and not cut short by --max-cost (`status: stopped`)."""
    if results.get("status", "complete") == "stopped":
        return False
    v = results.get("validity")
    return not isinstance(v, Mapping) or bool(v.get("valid", True))


def data_label_text(results: Mapping[str, Any]) -> str | None:
    """`sample data (25 items written for glotbench, not the published benchmark)` for a run on
    bundled data that is not the published benchmark's (results.json's `data_label`)."""
    label = results.get("data_label")
    return str(label["label"]) if isinstance(label, Mapping) and label.get("label") else None


def stopped_text(results: Mapping[str, Any]) -> str | None:
    """`stopped by --max-cost: 40 requests not sent (the same command resumes)` for a run the cost cap
    cut short (results.json's `status: stopped`): its numbers cover only the requests sent."""
    stopped = results.get("stopped")
    if results.get("status") != "stopped" or not isinstance(stopped, Mapping):
        return None
    return (f"stopped by --max-cost: {stopped.get('not_sent', '?')} requests not sent; the numbers cover only "
            "what was sent (the same command resumes)")


def leak_text(results: Mapping[str, Any]) -> str | None:
    """`few-shot leak: 3 of 20 items are among their own examples` (a task's `fewshot_leak`)."""
    leak = results.get("fewshot_leak")
    if not isinstance(leak, Mapping) or not leak.get("items"):
        return None
    return f"few-shot leak: {leak['items']} of {leak.get('of', '?')} items are among their own examples"


def notes(results: Mapping[str, Any]) -> list[str]:
    """What must be read with the run's numbers: invalid, stopped by the cost cap, a subset of the
    items, the rows a task's data.where left out, sample data, a judge not validated for the language (judges/cards.py), a few-shot leak,
    items whose options share one text, Burmese data in the Zawgyi encoding."""
    from glotbench.rundir.selection import selection_text, where_text

    imported = results.get("imported")
    if isinstance(imported, Mapping) and isinstance(imported.get("notes"), list):  # an EEE record read back:
        return [str(n) for n in imported["notes"]]  # its notes as the run's views wrote them
    return [t for t in (phase_text(results), validity_text(results), stopped_text(results), selection_text(results),
                        where_text(results), data_label_text(results), validation_text(results), leak_text(results),
                        duplicates_text(results), zawgyi_text(results)) if t]


def phase_text(results: Mapping[str, Any]) -> str | None:
    """`judge's phase ...` for the run a judged run's judge made (its config's `phase`): its numbers are
    that judge's verdicts on another model's answers, never a score of the judge; any other phase (a
    judged run's answers, a pivot's step): its number is not the run's score."""
    phase = str((results.get("config") or {}).get("phase") or "")
    if not phase:
        return None
    if not phase.startswith("judge "):  # the candidate's answers (or a baseline's, a pivot's step)
        return (f"a phase of the run in the directory above ({phase}): its numbers are this phase's own (a judged "
                "run's answers: the share answered), not that run's score")
    return (f"a judge's phase of a judged run: {phase.removeprefix('judge ')}'s verdicts on another model's "
            "answers, not a score of that judge (the judged run is the directory above)")


def duplicates_text(results: Mapping[str, Any]) -> str | None:
    """`options of one text: 2 of 40 items (ids s3, s9); a reply naming that text reads as no answer`."""
    d = results.get("duplicate_options")
    if not isinstance(d, Mapping) or not d.get("items"):
        return None
    ids = ", ".join(map(str, d.get("ids") or ()))
    return (f"options of one text: {d['items']} of {d.get('of', '?')} items (ids {ids}"
            f"{', ...' if d['items'] > len(d.get('ids') or ()) else ''}); a reply naming that text reads as no answer")


def zawgyi_text(results: Mapping[str, Any]) -> str | None:
    """`Zawgyi-encoded data: 3 of 3 items (ids ...) ...`: the data's Burmese is in the Zawgyi font
    encoding, not Unicode (tasks/benchmark.py `_zawgyi_items`)."""
    z = results.get("zawgyi_data")
    if not isinstance(z, Mapping) or not z.get("items"):
        return None
    ids = ", ".join(map(str, z.get("ids") or ()))
    return (f"Zawgyi-encoded data: {z['items']} of {z.get('of', '?')} items (ids {ids}"
            f"{', ...' if z['items'] > len(z.get('ids') or ()) else ''}) hold Burmese in the Zawgyi font encoding "
            f"({z.get('library', 'myanmartools')} p >= {z.get('p', '?')}), not Unicode: the model read mis-encoded "
            "text; convert the data to Unicode")


def judge_name(spec: str) -> str:
    """A judge as cards name it: its spec without the endpoint (the model, wherever it is served)."""
    return spec.split("@", 1)[0]


def judge_validation_of(results: Mapping[str, Any]) -> dict[str, Any] | None:
    """The results' judge validation (judges/cards.py `validation`: the language and, per judge,
    `validated` and `reason`), or None when they record none: top-level (a judged run's
    results.json, a results-store row) or in a judged run's summary."""
    v = results.get("judge_validation")
    judged = results.get("judged")
    if v is None and isinstance(judged, Mapping) and isinstance(judged.get("summary"), Mapping):
        v = judged["summary"].get("judge_validation")  # a judged run's results.json: in its summary
    return dict(v) if isinstance(v, Mapping) and isinstance(v.get("judges"), Mapping) else None


def validation_text(results: Mapping[str, Any]) -> str | None:
    """`judge not validated for lo: openai:j1 (no card for lo); openai:j2 (kappa 0.41 below 0.6)`, or
    None when every judge is validated (or the results record no judge validation)."""
    v = judge_validation_of(results)
    if v is None:
        return None
    bad = [(j, x.get("reason", "")) for j, x in v["judges"].items() if isinstance(x, Mapping) and not x.get("validated")]
    if not bad:
        return None
    return f"judge not validated for {v.get('language') or 'this language'}: " + "; ".join(
        f"{judge_name(j)} ({why})" for j, why in bad)
