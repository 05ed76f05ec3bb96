"""A judged run's per-item, per-judge sufficient statistics (`JudgedStats`), and the metrics over them.

A judge's verdicts become values: per item and judge, one value per repeat, order or turn (an arena
game's 1 / 0.5 / 0, a rubric's scaled score, SEA-MT-Bench's turn outcome, AraGen's 3C3H). The record
holds them with each item's cluster where the benchmark has one (SEA-MT-Bench's category, AraGen's
task), and is written into results.json (`judged.stats`) by the class that reads it back.

A benchmark declares which metrics its score is (`JudgedMetrics`); `judged_metrics` computes them
all with ONE bootstrap over items (stats `bootstrap_many`: every judge, turn and cluster of an item
resampled together), each with the judged interval record (judges/panel.py `judged_interval`):

| metric      | what                                                                     |
|-------------|--------------------------------------------------------------------------|
| `final`     | the mean of judges (the judges with a value)                             |
| `judge:J`   | judge J's own score                                                      |
| `slot:K`    | the mean of judges over the values in position K only (SEA-MT's turn K)  |
| `cluster:C` | the mean of judges over the items of cluster C (SEA-MT's category C)     |

A judge's score by the declared rule:

| rule                  | a judge's score                                                        |
|-----------------------|------------------------------------------------------------------------|
| `mean_of_items`       | each item's values averaged, then the mean over the items it judged    |
|                       | (the arena's win value, a rubric's mean, AraGen's `mean` jury)        |
| `weighted_by_cluster` | per cluster, every value counted once (sum / count); the mean of the   |
|                       | clusters' rates (SEA-HELM's weighted win rate)                         |

The failure policy (AraGen's): an answered item's repeats without a valid verdict (`repeats` less its
values) and an unanswered item's repeats count as 0 under `zero`; only the unanswered item's under
`upstream`; none under `drop` (the others' values are the verdicts themselves).
An interval's `n` is the items that have a value from the judges in its scope (in its cluster)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from glotbench.stats import (DEFAULT_SEED, MIN_BOOTSTRAP_UNITS, MIN_INDEPENDENT_UNITS, Estimate, bootstrap_many,
                             collapse_fallback)

MetricRule = Literal["mean_of_items", "weighted_by_cluster"]
FailurePolicy = Literal["drop", "zero", "upstream"]


class JudgedStats(BaseModel):
    """Per item, per judge, the values of a judged run (results.json `judged.stats`): `items` in the
    run's order, `judges` as the panel kept them, `values[judge][item]` (only where the judge gave the
    item a value: repeats, orders or turns in order), each item's cluster where the benchmark has
    them, the verdicts asked per item and judge (`repeats`) and the items the candidate left
    unanswered (never asked of a judge) for a declared failure policy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    items: tuple[str, ...]
    judges: tuple[str, ...]
    values: dict[str, dict[str, tuple[float, ...]]]
    clusters: dict[str, str] = Field(default_factory=dict)
    repeats: int = 1
    unanswered: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Mapping[str, Mapping[str, Sequence[float]]], items: Sequence[str], *,
           clusters: Mapping[str, str] | None = None, repeats: int = 1, unanswered: Sequence[str] = ()) -> "JudgedStats":
        """The record from `values[judge][item]` (an item with no value left out)."""
        return cls(items=tuple(items), judges=tuple(values),
                   values={j: {i: tuple(float(x) for x in v) for i, v in per.items() if v} for j, per in values.items()},
                   clusters=dict(clusters or {}), repeats=repeats, unanswered=tuple(unanswered))

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
            raise GlotbenchError(f"{where}.{'.'.join(map(str, err['loc']))}: {err['msg']}") from None

    def counted(self, judge: str, item: str, policy: FailurePolicy) -> list[float]:
        """The values of `item` by `judge` that enter the averages under the failure policy."""
        got = list(self.values.get(judge, {}).get(item, ()))
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
    mean of judges per cluster; `policy` the failure policy."""

    rule: MetricRule = "mean_of_items"
    slots: int = 0
    clusters: bool = False
    policy: FailurePolicy = "drop"

    def record(self) -> dict[str, Any]:
        """What results.json holds (`judged.rule`; `read` reads it back): the readers that pair two
        runs' items (compare) score them by this rule, so their figure is the headline's."""
        return {"rule": self.rule, "slots": self.slots, "clusters": self.clusters, "policy": self.policy}

    @classmethod
    def read(cls, record: Any, where: str = "judged.rule") -> "JudgedMetrics":
        """The record results.json holds; a damaged one is one error naming the field."""
        from glotbench.errors import GlotbenchError

        kinds: dict[str, tuple[Any, ...]] = {"rule": ("mean_of_items", "weighted_by_cluster"), "policy": ("drop", "zero", "upstream")}
        if not isinstance(record, Mapping):
            raise GlotbenchError(f"{where}: expected an object, got {type(record).__name__}")
        for key in record:
            if key not in ("rule", "slots", "clusters", "policy"):
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
    rows: Any  # numpy (items, judges × (slots + 1) × clusters × 2)
    fns: Mapping[str, Callable[[Any], float]]


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
    rows = np.zeros((len(ids), len(judges) * (slots + 1) * width))

    def col(j: int, slot: int, c: int) -> int:
        return (j * (slots + 1) + slot) * width + 2 * c

    for r, item in enumerate(ids):
        c = cats.index(stats.clusters[item]) if cats else 0
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
    fns["final"] = mean_of([rate(i, 0) for i in range(len(judges))])
    for t in range(1, slots + 1):
        fns[f"slot:{t}"] = mean_of([rate(i, t) for i in range(len(judges))])
    if declared.clusters:
        for c, cat in enumerate(cats):
            fns[f"cluster:{cat}"] = mean_of([rate(i, 0, c) for i in range(len(judges))])
    return JudgedRows(tuple(ids), tuple(judges), tuple(cats), slots, rows, fns)


def judged_metrics(stats: JudgedStats, declared: JudgedMetrics, *, resamples: int,
                   seed: int = DEFAULT_SEED) -> dict[str, dict[str, Any]]:
    """Every metric the declaration names (module docstring), by name, each a judged interval record;
    one bootstrap over `stats.items` shares its resamples among them."""
    built = judged_rows(stats, declared)
    rows, fns, judges, ids, cats, slots = built.rows, built.fns, built.judges, built.items, built.clusters, built.slots
    est: dict[str, Estimate] = bootstrap_many(rows, dict(fns), resamples=resamples, seed=seed)
    counts = rows[:, 1::2].reshape(len(ids), len(judges), slots + 1, max(len(cats), 1))[:, :, 0, :]  # slot 0

    def judged(js: Sequence[int], c: int | None = None) -> int:
        part = counts[:, list(js), :] if c is None else counts[:, list(js), c:c + 1]
        return int((part > 0).any(axis=(1, 2)).sum())

    every = range(len(judges))
    out = {name: judged_interval(e, judged(every), resamples) for name, e in est.items() if name == "final"
           or name.startswith("slot:")}
    out.update({f"judge:{j}": judged_interval(est[f"judge:{j}"], judged([i]), resamples) for i, j in enumerate(judges)})
    if declared.clusters:
        out.update({f"cluster:{cat}": judged_interval(est[f"cluster:{cat}"], judged(every, c), resamples)
                    for c, cat in enumerate(cats)})
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
