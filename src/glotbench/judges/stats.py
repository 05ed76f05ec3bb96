"""A judged run's per-item, per-judge sufficient statistics (`JudgedStats`), and the metrics over them.

A judge's verdicts become values: per item and judge, one value per repeat, order or turn (an arena
game's 1 / 0.5 / 0, a rubric's scaled score, SEA-MT-Bench's turn outcome, AraGen's 3C3H). The record
holds them with each item's cluster where the benchmark has one (SEA-MT-Bench's category, AraGen's
task), and is written into results.json (`judged.stats`) by the class that reads it back.

A benchmark declares which metrics its score is (`JudgedMetrics`); `judged_metrics` computes them
all with ONE bootstrap over items (stats `bootstrap_many`: every judge, turn and cluster of an item
resampled together), each with the judged interval record (`judged_interval`):

| metric      | what                                                                     |
|-------------|--------------------------------------------------------------------------|
| `final`     | the mean of judges (the judges with a value)                             |
| `judge:J`   | judge J's own score                                                      |
| `slot:K`    | the mean of judges over the values in position K only (SEA-MT's turn K)  |
| `cluster:C` | the mean of judges over the items of cluster C (SEA-MT's category C)     |
| `judge:J/cluster:C` | judge J's score over the items of cluster C (AraGen's per task)  |

`final` is the mean of the judges' scores, or under a declared `jury` (AraGen's `average`, `vote`:
`jury_value`) each item's value over the judges, averaged over the items every judge scored (and
`cluster:C` that over cluster C's items).

A judge's score by the declared rule:

| rule                  | a judge's score                                                        |
|-----------------------|------------------------------------------------------------------------|
| `mean_of_items`       | each item's values averaged, then the mean over the items it judged    |
|                       | (the arena's win value, a rubric's mean)                               |
| `weighted_by_cluster` | per cluster, every value counted once (sum / count); the mean of the   |
|                       | clusters' rates (SEA-HELM's weighted win rate)                         |
| `pooled`              | every value counted once (sum / count), whatever its cluster (AraGen's |
|                       | ratio of sums over verdicts)                                           |

The failure policy (AraGen's): an answered item's repeats without a valid verdict (`repeats` less its
values) and an unanswered item's repeats count as 0 under `zero`; only the unanswered item's under
`upstream`; none under `drop` (the others' values are the verdicts themselves).
An interval's `n` is the items that have a value from the judges in its scope (in its cluster)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from glotbench.stats import (DEFAULT_SEED, MIN_BOOTSTRAP_UNITS, MIN_INDEPENDENT_UNITS, Estimate, bootstrap_many,
                             collapse_fallback)

MetricRule = Literal["mean_of_items", "weighted_by_cluster", "pooled"]
FailurePolicy = Literal["drop", "zero", "upstream"]
Jury = Literal["mean", "average", "vote"]
RULES: tuple[str, ...] = ("mean_of_items", "weighted_by_cluster", "pooled")
POLICIES: tuple[str, ...] = ("drop", "zero", "upstream")
JURIES: tuple[str, ...] = ("mean", "average", "vote")


class JudgedStats(BaseModel):
    """Per item, per judge, the values of a judged run (results.json `judged.stats`): `items` in the
    run's order, `judges` as the panel kept them, `values[judge][item]` (only where the judge gave the
    item a value: repeats, orders or turns in order), each item's cluster where the benchmark has
    them, the verdicts asked per item and judge (`repeats`) and the items the candidate left
    unanswered (never asked of a judge) for a declared failure policy. `components`: named parts of
    each value where a rule reads them (AraGen's six 3C3H dimensions: its `vote` jury reads Correct),
    `components[name][judge][item]` beside `values[judge][item]`, one per value (a record written
    before them has none)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    items: tuple[str, ...]
    judges: tuple[str, ...]
    values: dict[str, dict[str, tuple[float, ...]]]
    clusters: dict[str, str] = Field(default_factory=dict)
    repeats: int = 1
    unanswered: tuple[str, ...] = ()
    components: dict[str, dict[str, dict[str, tuple[float, ...]]]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_item_judge_and_finite_value_each(self) -> "JudgedStats":
        """A record edited by hand is refused, not read as a different number: an item or judge named
        twice, a value's judge or item the record does not list, a value that is not finite."""
        import math

        from collections import Counter

        for name, names in (("items", self.items), ("judges", self.judges)):
            twice = sorted(x for x, k in Counter(names).items() if k > 1)  # one pass: a run's items are thousands
            if twice:
                raise ValueError(f"{name}: {twice[0]!r} is named twice")
        items, judges = set(self.items), set(self.judges)
        if self.repeats < 1:
            raise ValueError(f"repeats: expected a whole number ≥ 1, got {self.repeats}")
        for name, listed in (("unanswered", self.unanswered), ("clusters", tuple(self.clusters))):
            stray = [i for i in listed if i not in items]
            if stray:
                raise ValueError(f"{name}: {stray[0]!r} is not one of the items")
        for where, by_judge in (("values", self.values),
                                *((f"components.{n}", per) for n, per in self.components.items())):
            for judge, per_item in by_judge.items():
                if judge not in judges:
                    raise ValueError(f"{where}.{judge}: not one of the judges ({', '.join(self.judges) or 'none'})")
                for item, v in per_item.items():
                    if item not in items:
                        raise ValueError(f"{where}.{judge}.{item}: not one of the items")
                    if not all(math.isfinite(x) for x in v):
                        raise ValueError(f"{where}.{judge}.{item}: {list(v)} holds a value that is not a finite number")
        return self

    @model_validator(mode="after")
    def _components_beside_values(self) -> "JudgedStats":
        for name, per in self.components.items():
            for judge, items in per.items():
                for item, v in items.items():
                    if len(v) != len(self.values.get(judge, {}).get(item, ())):
                        raise ValueError(f"components.{name}.{judge}.{item}: {len(v)} value(s) beside "
                                         f"{len(self.values.get(judge, {}).get(item, ()))} in values")
            for judge, items in self.values.items():
                missing = [i for i in items if i not in per.get(judge, {})]
                if missing:
                    raise ValueError(f"components.{name}.{judge}: no values for {missing[0]!r}, which values has")
        return self

    @classmethod
    def of(cls, values: Mapping[str, Mapping[str, Sequence[float]]], items: Sequence[str], *,
           clusters: Mapping[str, str] | None = None, repeats: int = 1, unanswered: Sequence[str] = (),
           components: Mapping[str, Mapping[str, Mapping[str, Sequence[float]]]] | None = None) -> "JudgedStats":
        """The record from `values[judge][item]` (an item with no value left out), and the named
        `components[name][judge][item]` beside them."""
        return cls(items=tuple(items), judges=tuple(values),
                   values={j: {i: tuple(float(x) for x in v) for i, v in per.items() if v} for j, per in values.items()},
                   clusters=dict(clusters or {}), repeats=repeats, unanswered=tuple(unanswered),
                   components={n: {j: {i: tuple(float(x) for x in v) for i, v in per.items() if v}
                                   for j, per in by.items()} for n, by in (components or {}).items()})

    def record(self) -> dict[str, Any]:
        """What results.json holds (`read` reads it back)."""
        return self.model_dump(mode="json")

    @classmethod
    def read(cls, record: Any, where: str = "judged.stats") -> "JudgedStats":
        """The record results.json holds; a damaged one is one error naming the field."""
        from pydantic import ValidationError

        from glotbench.errors import GlotbenchError

        try:
            return cls.model_validate(record)
        except ValidationError as e:
            err = e.errors()[0]
            loc = '.'.join(map(str, err['loc']))
            raise GlotbenchError(f"{where}{'.' + loc if loc else ''}: {err['msg'].removeprefix('Value error, ')}") from None

    def counted(self, judge: str, item: str, policy: FailurePolicy, component: str | None = None) -> list[float]:
        """The values of `item` by `judge` (or their `component`) that enter the averages under the
        failure policy."""
        got = list((self.values if component is None else self.components.get(component, {})).get(judge, {}).get(item, ()))
        if policy == "drop":
            return got
        if item in self.unanswered:
            return [0.0] * self.repeats
        return got + [0.0] * (self.repeats - len(got)) if policy == "zero" else got

    def item_means(self) -> dict[str, float]:
        """Per item, the mean over the judges that gave it a value of each judge's mean value (the
        board's paired tests read these rows; a judge's mean by `statistics.fmean`, as AraGen's
        `item_scores`, the same bits as sum / count for the arena's two orders and SEA-MT's two turns)."""
        import statistics

        per: dict[str, list[float]] = {}
        for judge in self.judges:
            for item, v in self.values.get(judge, {}).items():
                per.setdefault(item, []).append(statistics.fmean(v))
        return {i: sum(v) / len(v) for i, v in per.items()}


@dataclass(frozen=True)
class JudgedMetrics:
    """Which metrics a judged benchmark's score is, over its `JudgedStats` (module docstring):
    `rule` a judge's score; `slots` metrics per value position (SEA-MT's 2 turns); `clusters` the
    mean of judges per cluster; `policy` the failure policy; `jury` how `final` combines the judges
    (`mean`: the mean of the judges' scores; AraGen's `average` and `vote`: per item over the judges)."""

    rule: MetricRule = "mean_of_items"
    slots: int = 0
    clusters: bool = False
    policy: FailurePolicy = "drop"
    jury: Jury = "mean"

    def record(self) -> dict[str, Any]:
        """What results.json holds (`judged.rule`; `read` reads it back): the readers that pair two
        runs' items (compare) score them by this rule, so their figure is the headline's."""
        out: dict[str, Any] = {"rule": self.rule, "slots": self.slots, "clusters": self.clusters, "policy": self.policy}
        return out if self.jury == "mean" else {**out, "jury": self.jury}  # a record before `jury` is the mean

    def words(self) -> str:
        """What `final` is, in words (compare's `paired_on`)."""
        how = {"mean_of_items": "each judge's mean over the items it judged",
               "weighted_by_cluster": "each judge's mean of its clusters' rates",
               "pooled": "each judge's mean over every value it gave"}[self.rule]
        jury = {"mean": f"the mean of judges of {how}",
                "average": "per item the mean of the judges' means, over the items every judge judged",
                "vote": "per item the judges' vote on Correct, over the items every judge judged"}[self.jury]
        return f"{jury} (failure policy {self.policy})"

    @classmethod
    def read(cls, record: Any, where: str = "judged.rule") -> "JudgedMetrics":
        """The record results.json holds; a damaged one is one error naming the field."""
        from glotbench.errors import GlotbenchError

        kinds: dict[str, tuple[Any, ...]] = {"rule": RULES, "policy": POLICIES, "jury": JURIES}
        if not isinstance(record, Mapping):
            raise GlotbenchError(f"{where}: expected an object, got {type(record).__name__}")
        for key in record:
            if key not in ("rule", "slots", "clusters", "policy", "jury"):
                raise GlotbenchError(f"{where}.{key}: not a field of a judged rule")
        for key, allowed in kinds.items():
            if key in record and record[key] not in allowed:
                raise GlotbenchError(f"{where}.{key}: expected one of {', '.join(allowed)}, got {record[key]!r}")
        slots = record.get("slots", 0)
        if type(slots) is not int or slots < 0:
            raise GlotbenchError(f"{where}.slots: expected a whole number ≥ 0, got {slots!r}")
        if type(record.get("clusters", False)) is not bool:
            raise GlotbenchError(f"{where}.clusters: expected true or false, got {record['clusters']!r}")
        return cls(**record)


@dataclass(frozen=True)
class JudgedRows:
    """A judged run's per-item rows under a declaration (`judged_rows`): `items` (the rows' order),
    `rows` (an item's row: per judge, per slot (0: every value, K: the K-th), per cluster: (sum,
    count)), and each metric's score of a summed row (`fns`: `final`, `judge:J`, `slot:K`, `cluster:C`).
    The bootstrap resamples the rows (`judged_metrics`), compare pairs two runs' rows on the same items."""

    items: tuple[str, ...]
    judges: tuple[str, ...]
    clusters: tuple[str, ...]
    slots: int
    rows: Any  # numpy (items, judges × (slots + 1) × clusters × 2, then a jury's clusters × 2)
    fns: Mapping[str, Callable[[Any], float]]
    jury_at: int  # the first column of a jury's (after the judges')


def judged_rows(stats: JudgedStats, declared: JudgedMetrics, items: Sequence[str] | None = None) -> JudgedRows:
    """The rows of `items` (default: every item of the run) under the declared rule and policy, and
    the score of each declared metric over their sum (module docstring): a row's sum over the items
    is what `judged_metrics` scores, so the paired tests of two runs score the same figures."""
    import numpy as np

    judges, ids = list(stats.judges), list(stats.items if items is None else items)
    if not judges:
        raise ValueError("no judge produced a verdict")
    every = list(stats.items)
    cats = sorted({stats.clusters[i] for i in every}) if declared.rule == "weighted_by_cluster" or declared.clusters else []
    width = max(len(cats), 1) * 2
    slots = declared.slots
    jury = declared.jury != "mean"  # per cluster two more columns: the item's value over the judges, and 1
    at = len(judges) * (slots + 1) * width  # the first of them
    rows = np.zeros((len(ids), at + (width if jury else 0)))

    def col(j: int, slot: int, c: int) -> int:
        return (j * (slots + 1) + slot) * width + 2 * c

    for r, item in enumerate(ids):
        c = cats.index(stats.clusters[item]) if cats else 0
        if jury and (v := jury_value(stats, judges, item, declared)) is not None:
            rows[r, at + 2 * c:at + 2 * c + 2] = (v, 1.0)
        for j, judge in enumerate(judges):
            vals = stats.counted(judge, item, declared.policy)
            if not vals:
                continue
            if declared.rule == "mean_of_items":
                rows[r, col(j, 0, c)] = sum(vals) / len(vals)
                rows[r, col(j, 0, c) + 1] = 1.0
                continue
            for t, v in enumerate(vals):
                for slot in (0, t + 1) if t < slots else (0,):
                    rows[r, col(j, slot, c)] += v
                    rows[r, col(j, slot, c) + 1] += 1

    def rate(j: int, slot: int, only: int | None = None) -> Callable[[np.ndarray], float]:
        if not cats:  # one rate: the judge's sum over its count
            return lambda row: float(row[col(j, slot, 0)] / row[col(j, slot, 0) + 1]) if row[col(j, slot, 0) + 1] > 0 \
                else float("nan")
        if declared.rule == "pooled":  # every value counted once, whatever its cluster (only: cluster `only`'s)
            first, last = col(j, slot, 0), col(j, slot, len(cats) - 1) + 2
            own = slice(first, last) if only is None else slice(col(j, slot, only), col(j, slot, only) + 2)

            def pooled(row: np.ndarray) -> float:
                part = row[own]
                den = part[1::2].sum()
                return float(part[0::2].sum() / den) if den > 0 else float("nan")
            return pooled

        def fn(row: np.ndarray) -> float:
            per = [row[col(j, slot, c)] / row[col(j, slot, c) + 1] for c in range(len(cats))
                   if (only is None or c == only) and row[col(j, slot, c) + 1] > 0]
            return float(np.mean(per)) if per else float("nan")
        return fn

    def mean_of(fns: list[Callable[[np.ndarray], float]]) -> Callable[[np.ndarray], float]:
        def fn(row: np.ndarray) -> float:
            vals = [v for v in (f(row) for f in fns) if v == v]
            return float(np.mean(vals)) if vals else float("nan")
        return fn

    fns: dict[str, Callable[[np.ndarray], float]] = {f"judge:{j}": rate(i, 0) for i, j in enumerate(judges)}
    def jury_of(part: slice) -> Callable[[np.ndarray], float]:
        def fn(row: np.ndarray) -> float:
            den = row[part][1::2].sum()
            return float(row[part][0::2].sum() / den) if den > 0 else float("nan")
        return fn

    fns["final"] = jury_of(slice(at, None)) if jury else mean_of([rate(i, 0) for i in range(len(judges))])
    for t in range(1, slots + 1):
        fns[f"slot:{t}"] = mean_of([rate(i, t) for i in range(len(judges))])
    if declared.clusters:
        for c, cat in enumerate(cats):
            fns[f"cluster:{cat}"] = jury_of(slice(at + 2 * c, at + 2 * c + 2)) if jury \
                else mean_of([rate(i, 0, c) for i in range(len(judges))])
            fns.update({f"judge:{j}/cluster:{cat}": rate(i, 0, c) for i, j in enumerate(judges)})
    return JudgedRows(tuple(ids), tuple(judges), tuple(cats), slots, rows, fns, at)


def jury_value(stats: JudgedStats, judges: Sequence[str], item: str, declared: JudgedMetrics) -> float | None:
    """An item's value over the judges by AraGen's jury (upstream's): None unless every judge has a
    counted value (under the policy); each judge's mean over its values; `average` their mean; `vote`
    (one judge: its own) the mean of the judges whose mean Correct is 1 if they outnumber those whose
    mean Correct is 0, else 0."""
    import statistics

    policy = declared.policy
    if any(not stats.counted(j, item, policy) for j in judges):
        return None
    means = [statistics.fmean(stats.counted(j, item, policy)) for j in judges]
    if declared.jury == "average" or len(judges) == 1:
        return sum(means) / len(means)
    if "Correct" not in stats.components:
        raise ValueError("the vote jury reads each verdict's Correct: judged.stats has no components.Correct")
    correct = [statistics.fmean(stats.counted(j, item, policy, "Correct")) for j in judges]
    ones = [m for m, c in zip(means, correct) if c == 1]
    return sum(ones) / len(ones) if len(ones) > sum(1 for c in correct if c == 0) else 0.0


def judged_metrics(stats: JudgedStats, declared: JudgedMetrics, *, resamples: int,
                   seed: int = DEFAULT_SEED, values: Mapping[str, float | None] | None = None) -> dict[str, dict[str, Any]]:
    """Every metric the declaration names (module docstring), by name, each a judged interval record;
    one bootstrap over `stats.items` shares its resamples among them. `values`: point values computed
    by a reference's own rule (AraGen's order of summation and 4-decimal rounding), shown with the
    interval of the same statistic."""
    built = judged_rows(stats, declared)
    rows, fns, judges, ids, cats, slots = built.rows, built.fns, built.judges, built.items, built.clusters, built.slots
    given = {k: v for k, v in (values or {}).items() if v is not None and k in fns}
    est: dict[str, Estimate] = bootstrap_many(rows, dict(fns), resamples=resamples, seed=seed, values=given)
    width, at = max(len(cats), 1), built.jury_at
    counts = rows[:, 1:at:2].reshape(len(ids), len(judges), slots + 1, width)[:, :, 0, :]  # slot 0
    jury = rows[:, at + 1::2]  # an item's count in the jury's columns, per cluster (none: the mean of judges)

    def judged(js: Sequence[int], c: int | None = None, of_jury: bool = False) -> int:
        if of_jury and jury.shape[1]:  # the items with the jury's value
            return int((jury[:, slice(None) if c is None else slice(c, c + 1)] > 0).any(axis=1).sum())
        part = counts[:, list(js), :] if c is None else counts[:, list(js), c:c + 1]
        return int((part > 0).any(axis=(1, 2)).sum())

    every = range(len(judges))
    out = {name: judged_interval(e, judged(every, of_jury=name == "final"), resamples) for name, e in est.items()
           if name == "final" or name.startswith("slot:")}
    out.update({f"judge:{j}": judged_interval(est[f"judge:{j}"], judged([i]), resamples) for i, j in enumerate(judges)})
    if declared.clusters:
        for c, cat in enumerate(cats):
            out[f"cluster:{cat}"] = judged_interval(est[f"cluster:{cat}"], judged(every, c, True), resamples)
            out.update({f"judge:{j}/cluster:{cat}": judged_interval(est[f"judge:{j}/cluster:{cat}"], judged([i], c),
                                                                    resamples) for i, j in enumerate(judges)})
    return out


def panel_scores(stats: JudgedStats, found: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The panel's scores as a judged run's summary holds them (a rubric's, an arena's), from its
    metrics `found` (`judged_metrics`): `final` (the mean of judges), each judge's, the items each
    judge judged (`prompts_judged`) and the items."""
    return {"final": dict(found["final"]), "judges": {j: dict(found[f"judge:{j}"]) for j in stats.judges},
            "prompts_judged": {j: found[f"judge:{j}"]["n"] for j in stats.judges}, "prompts": len(stats.items)}


def judged_interval(e: Estimate, items: int, resamples: int) -> dict[str, Any]:
    """A judged score's interval record, the same for every judged metric: the percentile bootstrap
    over items; where it collapsed (all prompts won), Wilson on the items judged, as metrics/ratio.py
    `interval` does for any other score (every item's value in [0, 1]). `items`: the items the value
    rests on (an item no judge gave a valid verdict for is not one of them)."""
    d: dict[str, Any] = {**e.to_dict(), "n": items, "ci_method": "bootstrap" if resamples > 0 else "none"}
    fallback = collapse_fallback(d["value"], d["ci_low"], d["ci_high"], items) if resamples > 0 else None
    if fallback is not None:
        d.update(ci_low=fallback[0], ci_high=fallback[1], ci_method="wilson_fallback")
    # the † rule of every other score (metrics/ratio.py `interval`): the bootstrap under 100
    # items, Wilson under 30 (measured coverage under 93%: docs/metrics.md)
    if d["ci_method"] != "none" and d["n"] < (MIN_BOOTSTRAP_UNITS if d["ci_method"] == "bootstrap"
                                              else MIN_INDEPENDENT_UNITS):
        d["too_few_units"] = True
    return d
