"""Item analysis from runs of several models on the same benchmark (classical test theory and 2PL IRT).

An item is right for a model when its headline statistic (numerator / denominator of the headline
metric, summed over repeats) is at least 0.5; a failed sample counts as wrong, as in the run's score.
- difficulty: the share of models that get the item right (higher = easier);
- discrimination: point-biserial correlation (scipy) between being right on the item and the model's
  score on the other items (rest score), undefined when the item or the rest scores are constant;
- items every model gets right or wrong;
- likely wrong keys: items that the `strongest` best models all get wrong *with the same answer*;
- 2PL IRT (girth's marginal maximum likelihood), discrimination a and difficulty b per item. With
  few models the fit is weak: it needs at least 3 models and is reported with the model count.
The review list holds likely wrong keys, negative discriminations and items nobody gets right.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from glotbench.errors import GlotbenchError
from glotbench.rundir.files import RESULTS, SAMPLES


def _load_run(run_dir: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    d = Path(run_dir)
    res_path, samples_path = d / RESULTS, d / SAMPLES
    if not res_path.is_file() or not samples_path.is_file():
        raise GlotbenchError(f"{run_dir} is not a finished run (results.json and samples.jsonl needed)")
    from glotbench.rundir import read_results, read_samples
    from glotbench.rundir.schema import FinishedResults, ReportSampleRow

    return read_results(d, FinishedResults), read_samples(d, ReportSampleRow)


def analyse(run_dirs: Sequence[str], strongest: int = 3, review: int = 20) -> dict[str, Any]:
    if len(run_dirs) < 2:
        raise GlotbenchError("item analysis needs runs of at least two models")
    runs = [_load_run(d) for d in run_dirs]
    bench = {(r["benchmark"]["name"], r["benchmark"].get("data_sha256")) for r, _ in runs}
    if len(bench) != 1:
        raise GlotbenchError(f"the runs are of different benchmarks or data: {sorted(map(str, bench))}")
    models = [r["model"]["spec"] for r, _ in runs]
    if len(set(models)) != len(models):
        raise GlotbenchError("two runs of the same model: give one run per model")
    item_sets = []
    right: list[dict[str, float]] = []
    answers: list[dict[str, Any]] = []
    for (res, samples), d in zip(runs, run_dirs):
        keys = res["metrics"][res["headline"]]["keys"]
        if len(keys) != 2:
            raise GlotbenchError(f"{d}: the headline metric is not a ratio; item analysis needs right/wrong per item")
        num: dict[str, float] = {}
        den: dict[str, float] = {}
        ans: dict[str, Any] = {}
        for s in samples:
            sc = s.get("score") or {}
            num[s["id"]] = num.get(s["id"], 0.0) + float(sc.get(keys[0], 0.0))
            den[s["id"]] = den.get(s["id"], 0.0) + float(sc.get(keys[1], 0.0) or (1.0 if s.get("failure") else 0.0))
            if s.get("repeat", 0) == 0:
                ans[s["id"]] = s.get("answer")
        right.append({i: float(den[i] > 0 and num[i] / den[i] >= 0.5) for i in num})
        answers.append(ans)
        item_sets.append(set(num))
    items = sorted(set.intersection(*item_sets))
    missing = len(set.union(*item_sets)) - len(items)
    if not items:
        raise GlotbenchError("the runs have no item in common")
    X = np.array([[right[m][i] for i in items] for m in range(len(models))])  # models x items
    totals = X.sum(axis=1)
    order = np.argsort(-totals, kind="stable")
    top = [int(m) for m in order[:max(1, min(strongest, len(models)))]]

    from scipy.stats import pointbiserialr

    per_item: list[dict[str, Any]] = []
    for j, i in enumerate(items):
        col = X[:, j]
        rest = totals - col
        rpb = None
        if 0 < col.sum() < len(models) and np.ptp(rest) > 0:
            rpb = float(pointbiserialr(col, rest).statistic)
        wrong_answers = {answers[m].get(i) for m in top}
        likely_wrong_key = bool(all(col[m] == 0 for m in top) and len(wrong_answers) == 1
                                and None not in wrong_answers)
        per_item.append({"id": i, "difficulty": float(col.mean()), "point_biserial": rpb,
                         "likely_wrong_key": likely_wrong_key,
                         "strongest_answer": next(iter(wrong_answers)) if likely_wrong_key else None})
    irt: dict[str, Any] = {"fitted": False}
    varied = [j for j in range(len(items)) if 0 < X[:, j].sum() < len(models)]
    if len(models) < 3:
        irt["reason"] = "a 2PL fit needs at least 3 models"
    elif not varied:
        irt["reason"] = "no item separates the models"
    else:
        try:
            from girth import twopl_mml
        except ImportError:
            irt["reason"] = "girth is not installed (pip install girth)"
        else:
            fit = twopl_mml(X[:, varied].T.astype(int))
            irt = {"fitted": True, "library": "girth (twopl_mml)", "models": len(models), "items": len(varied),
                   "note": "items all right or all wrong are left out of the fit; with few models the estimates are rough",
                   "ability": {models[m]: float(a) for m, a in enumerate(fit["Ability"])}}
            for k, j in enumerate(varied):
                per_item[j]["irt_a"] = float(fit["Discrimination"][k])
                per_item[j]["irt_b"] = float(fit["Difficulty"][k])
    flagged = [p for p in per_item if p["likely_wrong_key"]] + \
              sorted((p for p in per_item if p["point_biserial"] is not None and p["point_biserial"] < 0
                      and not p["likely_wrong_key"]), key=lambda p: p["point_biserial"]) + \
              [p for p in per_item if p["difficulty"] == 0 and not p["likely_wrong_key"]]
    review_list = []
    for p in flagged[:review]:
        why = ("the strongest models all give " + repr(p["strongest_answer"])) if p["likely_wrong_key"] else \
              (f"negative discrimination ({p['point_biserial']:.2f})" if p["difficulty"] > 0 else "no model gets it right")
        review_list.append({"id": p["id"], "why": why})
    return {"benchmark": next(iter(bench))[0], "models": {models[m]: float(totals[m] / len(items)) for m in order},
            "items": len(items), "items_not_in_every_run": missing, "strongest": [models[m] for m in top],
            "all_right": [i for j, i in enumerate(items) if X[:, j].all()],
            "all_wrong": [i for j, i in enumerate(items) if not X[:, j].any()],
            "likely_wrong_keys": [{"id": p["id"], "strongest_answer": p["strongest_answer"]} for p in per_item
                                  if p["likely_wrong_key"]],
            "irt": irt, "review": review_list, "per_item": per_item,
            "rule": "right = headline numerator/denominator >= 0.5 over repeats; failures are wrong"}
