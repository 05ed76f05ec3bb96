"""Combining 3C3H verdicts: the failure policy, one judge's figures, and the jury strategies.

Every entry of the task file is counted. An entry is one of: judged (a valid verdict), without an
answer (`no_answer`: the candidate's reply failed or is missing; the judge is never asked), or without
a valid verdict (the judge's failure kind). Policies:
- `drop`: only judged entries enter the averages;
- `zero`: every entry does, unanswered and unjudged ones scoring 0;
- `upstream`: unanswered entries score 0 (upstream judges its failure strings, which score 0) and
  unjudged ones are dropped (upstream skips a judge whose reply it cannot parse).
`coverage` is judged / all entries under every policy, and `n` is the number of entries averaged.

Jury strategies over several judges:
- `mean`: the mean of the judges' own figures (each under the policy); equals the judge when alone;
- `average` (upstream's): per entry, the mean of the judges' item scores, over entries every judge
  scored (under `zero`, every entry counts, failures scoring 0);
- `vote` (upstream's): per entry, if more judges give Correct 1 than Correct 0, the mean of the judges
  that gave 1, else 0 everywhere; over the same entries as `average`.
In "3c3h" parse mode every aggregate is rounded to 4 decimals, as upstream's averaging script does.

Upstream defines no interval. Every figure shown (each judge's 3C3H and per task, the jury's and per
task) is a declared metric over the run's values (`verdict_stats`, `rule`), by judges/stats.py's one
bootstrap over entries (`jury_metrics`): its point upstream's, its interval that statistic's.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from glotbench.core import Sample

from glotbench.judges.rubric import DIMENSIONS
from glotbench.judges.stats import JudgedMetrics, JudgedStats, judged_metrics
from glotbench.metrics import ItemScore, RatioMetric, ScoredSample, aggregate

POLICIES = ("drop", "zero", "upstream")
STRATEGIES = ("mean", "average", "vote")


@dataclass(frozen=True, slots=True)
class Outcome:
    """One judgement of one entry: `dims` (scaled dimensions and "3c3h") or a `failure` kind."""

    dims: Mapping[str, float] | None = None
    failure: str | None = None
    breaks_zeroing: bool = False


def metrics() -> tuple[RatioMetric, ...]:
    return (RatioMetric("3c3h", "3c3h", "scored", "mean of the six scaled dimensions", label="3C3H"),
            *(RatioMetric(d.lower(), d, "scored", f"scaled {d}", label=d) for d in DIMENSIONS),
            RatioMetric("coverage", "judged", "items", "share of entries with a valid verdict", show_ci=False))


def counted(o: Outcome, policy: str) -> bool:
    """Does this outcome enter the averages under the policy?"""
    if o.dims is not None:
        return True
    return policy == "zero" or (policy == "upstream" and o.failure == "no_answer")


def _stats(o: Outcome, policy: str) -> dict[str, float]:
    dims = o.dims or dict.fromkeys((*DIMENSIONS, "3c3h"), 0.0)
    return {**{k: float(dims[k]) for k in (*DIMENSIONS, "3c3h")}, "scored": float(counted(o, policy)),
            "judged": float(o.dims is not None), "items": 1.0, "no_answer": float(o.failure == "no_answer")}


def _round(scores: dict[str, Any]) -> dict[str, Any]:
    """Round every value of an aggregate() result to 4 decimals (upstream's rounding)."""
    for part in [scores["overall"], *(g for groups in scores["groups"].values() for g in groups.values())]:
        for est in part.values():
            if est.get("value") is not None:
                est["value"] = round(est["value"], 4)
    return scores


def _aggregate(samples: list[ScoredSample], mode: str, resamples: int) -> dict[str, Any]:
    scores = aggregate(metrics(), samples, ("task",), resamples=resamples)
    return _round(scores) if mode == "3c3h" else scores


def judge_summary(entries: Sequence[tuple[str, str]], outcomes: Mapping[str, Sequence[Outcome]], *,
                  policy: str, mode: str = "strict", resamples: int = 1000) -> dict[str, Any]:
    """One judge's figures over every entry ((sn, task) in file order); outcomes: sn -> repeats."""
    samples = [ScoredSample(sn, r, {"task": task}, ItemScore(_stats(o, policy), failure=o.failure))
               for sn, task in entries for r, o in enumerate(outcomes[sn])]
    all_o = [o for sn, _ in entries for o in outcomes[sn]]
    failures: dict[str, int] = {}
    for o in all_o:
        if o.failure is not None:
            failures[o.failure] = failures.get(o.failure, 0) + 1
    asked = [o for o in all_o if o.failure != "no_answer"]
    scores = _aggregate(samples, mode, resamples)
    parse_failures = sum(1 for o in asked if o.failure in ("bad_response", "bad_verdict"))
    breaks = sum(1 for o in asked if o.breaks_zeroing)
    return {
        "scores": scores,
        "coverage": scores["overall"]["coverage"]["value"],
        "n": sum(1 for sn, _ in entries if any(counted(o, policy) for o in outcomes[sn])),
        "entries": len(entries),
        "no_answer": sum(1 for sn, _ in entries if outcomes[sn] and outcomes[sn][0].failure == "no_answer"),
        "failures": failures,
        "verdicts_asked": len(asked),
        "parse_failures": parse_failures,
        "zeroing_breaks": breaks,
        "parse_failure_rate": parse_failures / len(asked) if asked else None,
        "zeroing_break_rate": breaks / len(asked) if asked else None,
    }


def item_value(outs: Sequence[Outcome], policy: str) -> dict[str, float] | None:
    """A judge's value for one entry over its repeats under the policy, or None when not counted."""
    use = [o for o in outs if counted(o, policy)]
    if not use:
        return None
    keys = (*DIMENSIONS, "3c3h")
    return {k: statistics.fmean(float((o.dims or {}).get(k, 0.0)) for o in use) for k in keys}


def _vote(values: list[dict[str, float]]) -> dict[str, float]:
    ones = [v for v in values if v["Correct"] == 1]
    zeros = sum(1 for v in values if v["Correct"] == 0)
    if len(ones) > zeros:
        return {k: sum(v[k] for v in ones) / len(ones) for k in ones[0]}
    return dict.fromkeys(values[0], 0.0)


def rule(policy: str, strategy: str) -> JudgedMetrics:
    """AraGen's figures as declared metrics over its `JudgedStats` (judges/stats.py): a judge's figure
    every counted verdict once (`pooled`, upstream's ratio of sums), `final` the jury's strategy, and
    both per task (the entries' clusters)."""
    return JudgedMetrics(rule="pooled", clusters=True, policy=policy, jury=strategy)  # type: ignore[arg-type]  # checked by the caller


def jury(entries: Sequence[tuple[str, str]], per_judge: Mapping[str, Mapping[str, Sequence[Outcome]]],
         summaries: Mapping[str, Mapping[str, Any]], *, strategy: str, policy: str, mode: str = "strict",
         resamples: int = 1000) -> dict[str, Any]:
    """The combined row over the judges (see the module docstring)."""
    return jury_metrics(entries, per_judge, summaries, strategy=strategy, policy=policy, mode=mode,
                        resamples=resamples)[0]


def jury_metrics(entries: Sequence[tuple[str, str]], per_judge: Mapping[str, Mapping[str, Sequence[Outcome]]],
                 summaries: Mapping[str, Mapping[str, Any]], *, strategy: str, policy: str, mode: str = "strict",
                 resamples: int = 1000) -> tuple[dict[str, Any], JudgedStats, dict[str, dict[str, Any]]]:
    """The combined row over the judges, the run's values (`verdict_stats`) and AraGen's declared
    metrics over them (`rule`: `final`, `judge:J`) by ONE bootstrap (judges/stats.py `judged_metrics`):
    each point by upstream's rule (its order of summation, its rounding in "3c3h" mode), each interval
    the percentile bootstrap over entries of the same statistic."""
    combined = _jury_point(entries, per_judge, summaries, strategy=strategy, policy=policy, mode=mode,
                           resamples=resamples)
    stats = verdict_stats(entries, per_judge)
    points = {"final": combined["3c3h"]["value"], **{f"cluster:{t}": v for t, v in combined["tasks"].items()}}
    for j in per_judge:
        scores = summaries[j]["scores"]
        points[f"judge:{j}"] = scores["overall"]["3c3h"]["value"]
        points.update({f"judge:{j}/cluster:{t}": g["3c3h"]["value"] for t, g in scores["groups"].get("task", {}).items()})
    found = judged_metrics(stats, rule(policy, strategy), resamples=resamples, values=points)
    if combined["3c3h"]["value"] is not None:
        combined["3c3h"] = found["final"]
    if "scores" in combined:  # `average`, `vote`: their aggregate's 3C3H, overall and per task, the same records
        combined["scores"]["overall"]["3c3h"] = combined["3c3h"]
        for t, g in combined["scores"]["groups"].get("task", {}).items():
            if g["3c3h"]["value"] is not None:
                g["3c3h"] = found[f"cluster:{t}"]
    return combined, stats, found


def _jury_point(entries: Sequence[tuple[str, str]], per_judge: Mapping[str, Mapping[str, Sequence[Outcome]]],
                summaries: Mapping[str, Mapping[str, Any]], *, strategy: str, policy: str, mode: str,
                resamples: int) -> dict[str, Any]:
    """The combined row over the judges by upstream's rule (its `3c3h` interval: `jury_metrics`)."""
    judges = list(per_judge)
    if strategy == "mean":
        return _mean_of_judges(summaries, judges, [t for _, t in entries], mode=mode)
    samples = []
    for sn, task in entries:
        values = [item_value(per_judge[j][sn], policy) for j in judges]
        ok = all(v is not None for v in values)
        if ok:
            vals = [v for v in values if v is not None]
            # One judge: its own scores, whatever the strategy (upstream's "SingleJudge").
            combined = ({k: sum(v[k] for v in vals) / len(vals) for k in vals[0]}
                        if strategy == "average" or len(vals) == 1 else _vote(vals))
        else:
            combined = dict.fromkeys((*DIMENSIONS, "3c3h"), 0.0)
        stats = {**combined, "scored": float(ok), "judged": float(ok), "items": 1.0}
        samples.append(ScoredSample(sn, 0, {"task": task}, ItemScore(stats)))
    scores = _aggregate(samples, mode, resamples)
    o = scores["overall"]
    return {"strategy": strategy, "3c3h": o["3c3h"], "dimensions": {d: o[d.lower()]["value"] for d in DIMENSIONS},
            "tasks": {t: g["3c3h"]["value"] for t, g in scores["groups"].get("task", {}).items()},
            "n": int(sum(s.score.stats["scored"] for s in samples)), "scores": scores}


def verdict_stats(entries: Sequence[tuple[str, str]], per_judge: Mapping[str, Mapping[str, Sequence[Outcome]]]) -> JudgedStats:
    """The judges' valid 3C3H values and their six dimensions (`components`: the vote reads Correct)
    per entry and repeat (judges/stats.py `JudgedStats`): each entry's task its cluster, the repeats
    asked, the entries without an answer (`no_answer`: never judged), so that the failure policy is a
    metric's declared rule (`JudgedMetrics.policy`)."""
    judges = list(per_judge)
    repeats = max((len(per_judge[j][sn]) for j in judges for sn, _ in entries), default=1)
    unanswered = [sn for sn, _ in entries if any(o.failure == "no_answer" for j in judges for o in per_judge[j][sn])]

    def of(key: str) -> dict[str, dict[str, list[float]]]:
        return {j: {sn: [float(o.dims[key]) for o in per_judge[j][sn] if o.dims is not None] for sn, _ in entries}
                for j in judges}
    return JudgedStats.of(of("3c3h"), [sn for sn, _ in entries], clusters=dict(entries), repeats=max(repeats, 1),
                          unanswered=unanswered, components={d: of(d) for d in DIMENSIONS})


def _mean_of_judges(summaries: Mapping[str, Mapping[str, Any]], every: Sequence[str], tasks_of: Sequence[str], *,
                    mode: str) -> dict[str, Any]:
    """The mean of the judges' own figures (each under the policy: ratio of sums over repeats), over
    the judges with a figure."""
    judges = [j for j in every if summaries[j]["scores"]["overall"]["3c3h"]["value"] is not None]
    est: dict[str, Any] = {"value": statistics.fmean(summaries[j]["scores"]["overall"]["3c3h"]["value"] for j in judges)
                           if judges else None, "ci_low": None, "ci_high": None, "n": 0}
    dims = {d: statistics.fmean(summaries[j]["scores"]["overall"][d.lower()]["value"] for j in judges) if judges else None
            for d in DIMENSIONS}
    tasks: dict[str, float] = {}
    for t in set(tasks_of):
        vals = [summaries[j]["scores"]["groups"]["task"][t]["3c3h"]["value"] for j in judges]
        vals = [v for v in vals if v is not None]
        if vals:
            tasks[t] = statistics.fmean(vals)
    if mode == "3c3h":
        est["value"] = round(est["value"], 4) if est["value"] is not None else None
        dims = {d: round(v, 4) if v is not None else None for d, v in dims.items()}
        tasks = {t: round(v, 4) for t, v in tasks.items()}
    return {"strategy": "mean", "3c3h": est, "dimensions": dims, "tasks": dict(sorted(tasks.items())),
            "n": max((summaries[j]["n"] for j in judges), default=0), "judges": judges}


_REJECTIONS = ("no_block", "not_json", "keys", "not_integer", "out_of_range", "not_finite", "think_unclosed")


def _rejection(failure: str, error: str | None) -> str | None:
    """Why a judge's verdict was rejected: the extraction's failure (`bad_verdict:keys`, or
    `think_unclosed`), itself or as named in a retried reply's error ("malformed 3C3H verdict
    (bad_verdict:keys): ...")."""
    m = re.search(r"\((?:bad_verdict:)?(\w+)\)", error or "")
    kind = m.group(1) if m else failure.rsplit(":", 1)[-1]
    return kind if kind in _REJECTIONS else None


def outcomes(rows: Sequence[Sample], repeats: int) -> tuple[dict[str, list[Outcome]], Counter[str]]:
    """One judge's verdicts per entry (a repeat each; `missing` where none came) and its rejections by kind."""
    by_sn: dict[str, list[Outcome]] = defaultdict(lambda: [Outcome(failure="missing")] * repeats)
    rejected: Counter[str] = Counter()
    for r in rows:
        outs = by_sn[r.id]
        if r.failure is None:
            o = Outcome({k: r.stats[k] for k in (*DIMENSIONS, "3c3h")}, None, bool(r.stats.get("breaks_zeroing")))
        else:
            kind = r.failure.split(":", 1)[0]
            o = Outcome(None, kind)
            rejected[_rejection(r.failure, r.error) or kind] += 1
        outs = list(outs)
        outs[r.repeat] = o
        by_sn[r.id] = outs
    return by_sn, rejected
