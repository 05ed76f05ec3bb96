"""`glotbench judge-audit`: how far can a 3C3H judge be trusted?

From one or more `glotbench aragen` output directories (one candidate model each, the same judges):
- agreement with human labels (`{"model", "sn", "Correct", "Complete", "score"}` per line; score is
  the scaled 3C3H in [0, 1]): Cohen's kappa per binary dimension (the judge's first verdict on the
  first answer) and for the scaled 3C3H binned into [0, 1/3), [1/3, 2/3), [2/3, 1]; a label that
  matches no judged answer is an error (a typo in a model name or SN. would silently shrink n);
- consistency, pooled over answers: the mean over every answer judged at least twice (all runs
  together) of the population standard deviation of its 3C3H over the K repeated judgements
  (`glotbench aragen --judge-repeats K --judge-temperature 0.7`); and the spread of the dataset-level
  3C3H across the K repeated judge runs (its standard deviation, per run, then the mean over runs);
- self-bias: on answers of the judge's own model family, how much higher the judge scores them than
  the other judges do, minus the same gap on the other families' answers;
- guideline adherence, pooled over every verdict asked for: the rate of verdicts that could not be
  parsed (after retries) and the rate of verdicts that break the zeroing rule.
Statistics that the data cannot define (one category, no second judge, no repeats) are null.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from glotbench.errors import DataError, GlotbenchError
from glotbench.loading import read_jsonl
from glotbench.stats import cohens_kappa

RUN_FIELDS = ("model", "family", "per_judge", "item_scores")
JUDGE_FIELDS = ("item_scores", "item_repeats", "dataset_3c3h_by_repeat", "first_verdicts", "family",
                "verdicts_asked", "parse_failures", "zeroing_breaks")


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _count(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


# What each per-judge field must hold, so a hand-edited or foreign file is named, not a traceback.
JUDGE_TYPES = {
    "item_scores": ("an object of numbers", lambda v: isinstance(v, dict) and all(map(_num, v.values()))),
    "item_repeats": ("an object of lists of numbers", lambda v: isinstance(v, dict) and all(
        isinstance(x, list) and all(map(_num, x)) for x in v.values())),
    "dataset_3c3h_by_repeat": ("a list of numbers or nulls", lambda v: isinstance(v, list) and all(
        x is None or _num(x) for x in v)),
    "first_verdicts": ("an object of {Correct, Complete} numbers", lambda v: isinstance(v, dict) and all(
        isinstance(x, dict) and _num(x.get("Correct")) and _num(x.get("Complete")) for x in v.values())),
    "family": ("a string", lambda v: isinstance(v, str)),
    "verdicts_asked": ("a count", _count), "parse_failures": ("a count", _count), "zeroing_breaks": ("a count", _count),
}


def _bin(x: float) -> int:
    return 0 if x < 1 / 3 else (1 if x < 2 / 3 else 2)


def _load_run(d: str) -> dict[str, Any]:
    p = Path(d) / "aragen.json"
    if not p.is_file():
        raise GlotbenchError(f"{d} is not a finished AraGen run (no aragen.json)")
    try:
        run = json.loads(p.read_text(encoding="utf-8"))
    except RecursionError:
        raise DataError(f"{p}: JSON nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise DataError(f"{p}: not a JSON file ({e})") from None
    if not isinstance(run, dict) or any(k not in run for k in RUN_FIELDS) or not isinstance(run["per_judge"], dict):
        raise DataError(f"{p}: not an aragen.json of this glotbench version (needs {', '.join(RUN_FIELDS)}); "
                        "re-run `glotbench aragen` (its calls are cached)")
    for j, pj in run["per_judge"].items():
        if not isinstance(pj, dict) or any(k not in pj for k in JUDGE_FIELDS):
            raise DataError(f"{p}: judge {j}: missing fields (needs {', '.join(JUDGE_FIELDS)})")
        for k, (what, ok) in JUDGE_TYPES.items():
            if not ok(pj[k]):
                raise DataError(f"{p}: judge {j}: '{k}' must be {what}")
    if not isinstance(run["model"], str) or not isinstance(run["family"], str) or not (
            isinstance(run["item_scores"], dict) and all(JUDGE_TYPES["item_scores"][1](v) for v in run["item_scores"].values())):
        raise DataError(f"{p}: 'model' and 'family' must be strings, 'item_scores' an object per judge of numbers")
    return run


def _labels(human: str) -> dict[tuple[str, str], dict[str, Any]]:
    labels: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        for n, rec in read_jsonl(human):
            for k in ("Correct", "Complete"):
                if isinstance(rec.get(k), bool) or rec.get(k) not in (0, 1):
                    raise DataError(f"{human}:{n}: {k} must be 0 or 1")
            s = rec.get("score")
            if isinstance(s, bool) or not isinstance(s, (int, float)) or not 0 <= s <= 1:
                raise DataError(f"{human}:{n}: score must be a number in [0, 1]")
            if not isinstance(rec.get("model"), str) or rec.get("sn") is None:
                raise DataError(f"{human}:{n}: needs 'model' (the candidate spec) and 'sn'")
            key = (rec["model"], str(rec["sn"]))
            if key in labels:
                raise DataError(f"{human}:{n}: a second label for model {key[0]} SN. {key[1]}")
            labels[key] = {**rec, "_line": n}
    except RecursionError:
        raise DataError(f"{human}: JSON nested too deeply") from None
    return labels


def judge_audit(dirs: list[str], human: str | None = None) -> dict[str, Any]:
    runs = [_load_run(d) for d in dirs]
    judges = sorted({j for r in runs for j in r["per_judge"]})
    labels = _labels(human) if human else {}
    if human and not labels:
        raise DataError(f"{human}: no labels (one JSON object per line: model, sn, Correct, Complete, score)")
    if labels:
        known = {(r["model"], sn) for r in runs for pj in r["per_judge"].values() for sn in pj["first_verdicts"]}
        for key, rec in labels.items():
            if key not in known:
                raise DataError(f"{human}:{rec['_line']}: model {key[0]} SN. {key[1]} matches no judged answer in "
                                f"the runs given ({', '.join(sorted({r['model'] for r in runs}))})")
    out: dict[str, Any] = {}
    for j in judges:
        mine = [r for r in runs if j in r["per_judge"]]
        fam = mine[0]["per_judge"][j]["family"]
        report: dict[str, Any] = {"family": fam}
        if labels:
            pairs: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
            for r in mine:
                pj = r["per_judge"][j]
                for sn, first in pj["first_verdicts"].items():
                    h = labels.get((r["model"], sn))
                    if h is None:
                        continue
                    pairs["Correct"].append((h["Correct"], int(first["Correct"] >= 1)))
                    pairs["Complete"].append((h["Complete"], int(first["Complete"] >= 1)))
                    if sn in pj["item_scores"]:
                        pairs["3c3h_binned"].append((_bin(h["score"]), _bin(pj["item_scores"][sn])))
            report["human_kappa"] = {k: {"n": len(v), "kappa": cohens_kappa([a for a, _ in v], [b for _, b in v])}
                                     for k, v in pairs.items()}
        stds = [statistics.pstdev(v) for r in mine for v in r["per_judge"][j]["item_repeats"].values() if len(v) >= 2]
        report["consistency_std"] = statistics.fmean(stds) if stds else None
        report["consistency_answers"] = len(stds)
        spreads = [statistics.stdev(x) for r in mine
                   if len(x := [v for v in r["per_judge"][j]["dataset_3c3h_by_repeat"] if v is not None]) >= 2]
        report["dataset_3c3h_std"] = statistics.fmean(spreads) if spreads else None
        asked = sum(r["per_judge"][j]["verdicts_asked"] for r in mine)
        report["verdicts_asked"] = asked
        report["parse_failure_rate"] = sum(r["per_judge"][j]["parse_failures"] for r in mine) / asked if asked else None
        report["zeroing_break_rate"] = sum(r["per_judge"][j]["zeroing_breaks"] for r in mine) / asked if asked else None
        gaps: dict[bool, list[float]] = {True: [], False: []}
        for r in mine:
            own_scores = r["item_scores"].get(j, {})
            others = [r["item_scores"][o] for o in r["item_scores"] if o != j]
            own = r["family"] == fam
            for sn, v in own_scores.items():
                ov = [o[sn] for o in others if sn in o]
                if ov:
                    gaps[own].append(v - statistics.fmean(ov))
        report["self_bias"] = (statistics.fmean(gaps[True]) - statistics.fmean(gaps[False])
                               if gaps[True] and gaps[False] else None)
        report["self_bias_items"] = {"own_family": len(gaps[True]), "other": len(gaps[False])}
        out[j] = report
    return {"judges": out, "runs": [r["model"] for r in runs]}
