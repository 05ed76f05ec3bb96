"""`glotbench judge-audit`: how far can a 3C3H judge be trusted?

From one or more `glotbench aragen` output directories (one candidate model each, the same judges):
- agreement with human labels (`{"model", "sn", "Correct", "Complete", "score"}` per line; score is
  the scaled 3C3H in [0, 1]): Cohen's kappa per binary dimension (the judge's first verdict on the
  first answer) and for the scaled 3C3H binned into [0, 1/3), [1/3, 2/3), [2/3, 1];
- consistency: the mean over answers of the standard deviation of the 3C3H over K repeated
  judgements (`glotbench aragen --judge-repeats K --judge-temperature 0.7`);
- self-bias: on answers of the judge's own model family, how much higher the judge scores them than
  the other judges do, minus the same gap on the other families' answers;
- guideline adherence: the rate of verdicts that could not be parsed (after retries) and the rate of
  verdicts that break the zeroing rule (Correct 0 with another dimension above 0).
Statistics that the data cannot define (one category, no second judge) are null.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from glotbench.judges.panel import model_family
from glotbench.errors import GlotbenchError
from glotbench.loading import read_jsonl
from glotbench.stats import cohens_kappa


def _bin(x: float) -> int:
    return 0 if x < 1 / 3 else (1 if x < 2 / 3 else 2)


def judge_audit(dirs: list[str], human: str | None = None) -> dict[str, Any]:
    runs = []
    for d in dirs:
        p = Path(d) / "aragen.json"
        if not p.is_file():
            raise GlotbenchError(f"{d} is not a finished AraGen run (no aragen.json)")
        runs.append(json.loads(p.read_text(encoding="utf-8")))
    judges = sorted({j for r in runs for j in r["per_judge"]})
    labels: dict[tuple[str, str], dict[str, Any]] = {}
    if human:
        for n, rec in read_jsonl(human):
            for k in ("Correct", "Complete"):
                if rec.get(k) not in (0, 1):
                    raise GlotbenchError(f"{human}:{n}: {k} must be 0 or 1")
            if not isinstance(rec.get("score"), (int, float)) or not 0 <= rec["score"] <= 1:
                raise GlotbenchError(f"{human}:{n}: score must be a number in [0, 1]")
            labels[(str(rec.get("model")), str(rec.get("sn")))] = rec
    out: dict[str, Any] = {}
    for j in judges:
        fam = model_family(j)
        report: dict[str, Any] = {"family": fam}
        # human agreement
        pairs: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
        for r in runs:
            pj = r["per_judge"].get(j)
            if not pj:
                continue
            for sn, first in pj["first_verdicts"].items():
                h = labels.get((r["model"], sn))
                if h is None:
                    continue
                # the verdict object ({"scores", "breaks_zeroing"} per turn); older files: a JSON string
                scores = json.loads(first)[0][0] if isinstance(first, str) else first[0]["scores"]
                pairs["Correct"].append((h["Correct"], scores["Correct"]))
                pairs["Complete"].append((h["Complete"], scores["Complete"]))
                if sn in r["item_scores"].get(j, {}):
                    pairs["3c3h_binned"].append((_bin(h["score"]), _bin(r["item_scores"][j][sn])))
        if labels:
            report["human_kappa"] = {k: {"n": len(v), "kappa": cohens_kappa([a for a, _ in v], [b for _, b in v])}
                                     for k, v in pairs.items()}
        # consistency and adherence (pooled over runs)
        cons = [r["per_judge"][j]["consistency_std"] for r in runs
                if j in r["per_judge"] and r["per_judge"][j]["consistency_std"] is not None]
        report["consistency_std"] = statistics.fmean(cons) if cons else None
        for key in ("parse_failure_rate", "zeroing_break_rate"):
            vals = [r["per_judge"][j][key] for r in runs if j in r["per_judge"] and r["per_judge"][j][key] is not None]
            report[key] = statistics.fmean(vals) if vals else None
        # self-bias: gap to the other judges on own-family answers minus the gap on other answers
        gaps: dict[bool, list[float]] = {True: [], False: []}
        for r in runs:
            mine = r["item_scores"].get(j, {})
            others = [r["item_scores"][o] for o in r["item_scores"] if o != j]
            own = model_family(r["model"]) == fam
            for sn, v in mine.items():
                ov = [o[sn] for o in others if sn in o]
                if ov:
                    gaps[own].append(v - statistics.fmean(ov))
        report["self_bias"] = (statistics.fmean(gaps[True]) - statistics.fmean(gaps[False])
                               if gaps[True] and gaps[False] else None)
        report["self_bias_items"] = {"own_family": len(gaps[True]), "other": len(gaps[False])}
        out[j] = report
    return {"judges": out, "runs": [r["model"] for r in runs]}
