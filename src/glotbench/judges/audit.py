"""`glotbench report --judges` on AraGen directories (formerly `judge-audit`): how far can a 3C3H judge be trusted?

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

import statistics
from collections import defaultdict
from typing import Any

from glotbench.errors import DataError
from glotbench.runfiles import AragenFile, aragen_place, AragenHumanRow, read_judged, read_unique_rows
from glotbench.stats import cohens_kappa

def _bin(x: float) -> int:
    return 0 if x < 1 / 3 else (1 if x < 2 / 3 else 2)


def _load_run(d: str) -> dict[str, Any]:
    """An AraGen run's summary (results.json's `judged.summary`, or an older aragen.json) validated
    against its schema (glotbench.runfiles.AragenFile)."""
    return read_judged(d, "aragen", AragenFile, "a finished AraGen run", aragen_place)


def _labels(human: str) -> dict[tuple[str, str], dict[str, Any]]:
    rows = read_unique_rows(human, AragenHumanRow, lambda r: (f"model {r.model}", f"SN. {r.sn}"),
                            "one JSON object per line: model, sn, Correct, Complete, score")
    return {(r.model, r.sn): {**r.model_dump(), "_line": n} for n, r in rows}


def human_pairs(judge: str, runs: list[dict[str, Any]], labels: dict[tuple[str, str], dict[str, Any]]
                ) -> dict[str, list[tuple[Any, Any]]]:
    """(person, judge) pairs per dimension over the labelled answers the judge scored: Correct and
    Complete (the judge's first verdict on the first answer, 0/1) and the binned scaled 3C3H."""
    pairs: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
    for r in runs:
        pj = r["per_judge"][judge]
        for sn, first in pj["first_verdicts"].items():
            h = labels.get((r["model"], sn))
            if h is None:
                continue
            pairs["Correct"].append((h["Correct"], int(first["Correct"] >= 1)))
            pairs["Complete"].append((h["Complete"], int(first["Complete"] >= 1)))
            if sn in pj["item_scores"]:
                pairs["3c3h_binned"].append((_bin(h["score"]), _bin(pj["item_scores"][sn])))
    return pairs


def load_audit_inputs(dirs: list[str], human: str | None) -> tuple[list[dict[str, Any]], dict[tuple[str, str], dict[str, Any]]]:
    """The runs (validated AraGen summaries) and the human labels, each label checked to match a
    judged answer (a typo in a model name or SN. would silently shrink n)."""
    runs = [_load_run(d) for d in dirs]
    labels = _labels(human) if human else {}
    if labels:
        known = {(r["model"], sn) for r in runs for pj in r["per_judge"].values() for sn in pj["first_verdicts"]}
        for key, rec in labels.items():
            if key not in known:
                raise DataError(f"{human}:{rec['_line']}: model {key[0]} SN. {key[1]} matches no judged answer in "
                                f"the runs given ({', '.join(sorted({r['model'] for r in runs}))})")
    return runs, labels


def judge_audit(dirs: list[str], human: str | None = None) -> dict[str, Any]:
    runs, labels = load_audit_inputs(dirs, human)
    judges = sorted({j for r in runs for j in r["per_judge"]})
    out: dict[str, Any] = {}
    for j in judges:
        mine = [r for r in runs if j in r["per_judge"]]
        fam = mine[0]["per_judge"][j]["family"]
        report: dict[str, Any] = {"family": fam}
        if labels:
            pairs = human_pairs(j, mine, labels)
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
