"""Metrics over sufficient statistics, and their aggregation.

Each scored sample carries named statistics (e.g. exact=1, texts=1, words_correct=7, words=8, or
sacrebleu's n-gram counts). A metric names the statistics it reads (`keys`) and scores their sums:
a `RatioMetric` is sum(numerator) / sum(denominator); a corpus metric applies sacrebleu's formula.
Repeats of one item are summed into one row before bootstrapping, so the CI resamples items, and a
ratio's value equals the mean over repeats.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Protocol, Sequence

import numpy as np

from glotbench.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_many


@dataclass(frozen=True, slots=True)
class ItemScore:
    """The outcome of scoring one sample.

    `stats`: sufficient statistics. `flags`: notable facts that still got a score (e.g. rewritten).
    `failure`: why no answer could be scored (format, think_unclosed, or a model error kind).
    """

    stats: Mapping[str, float]
    flags: tuple[str, ...] = ()
    failure: str | None = None


class Metric(Protocol):
    """What aggregation needs from a metric. `scale` is "fraction" (0-1, shown as percent) or
    "points" (already 0-100, as BLEU and chrF)."""

    name: str
    description: str
    show_ci: bool
    label: str
    scale: str

    @property
    def keys(self) -> tuple[str, ...]: ...

    def score(self, row: np.ndarray) -> float:
        """The metric from the summed statistics, in `keys` order."""


@dataclass(frozen=True, slots=True)
class RatioMetric:
    name: str
    numerator: str
    denominator: str
    description: str = ""
    show_ci: bool = True  # diagnostic rates (format failures...) are shown without a CI
    label: str = ""  # short column header for the terminal table
    scale: str = "fraction"

    @property
    def keys(self) -> tuple[str, str]:
        return (self.numerator, self.denominator)

    def score(self, row: np.ndarray) -> float:
        """sum(numerator) / sum(denominator); undefined (NaN, reported as null) with no denominator.
        On the "points" scale the ratio is reported x100 (0-100, as upstream scorers do)."""
        if row[1] <= 0:
            return float("nan")
        return float(row[0] / row[1]) * (100.0 if self.scale == "points" else 1.0)


@dataclass(frozen=True, slots=True)
class ScoredSample:
    item_id: str
    repeat: int
    meta: Mapping[str, Any]
    score: ItemScore
    answer_key: str | None = None  # normalised answer, for agreement across repeats


def _per_item(samples: Iterable[ScoredSample], stat_names: set[str]) -> dict[str, dict[str, float]]:
    rows: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(stat_names, 0.0))
    for s in samples:
        row = rows[s.item_id]
        for k in stat_names:
            row[k] += float(s.score.stats.get(k, 0.0))
    return rows


def aggregate(
    metrics: Sequence[Metric],
    samples: Sequence[ScoredSample],
    group_by: Sequence[str] = (),
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Overall and per-group metric estimates with bootstrap CIs (all metrics share resamples)."""
    names = sorted({k for m in metrics for k in m.keys})
    col = {k: i for i, k in enumerate(names)}
    fns = {m.name: _bind(m, [col[k] for k in m.keys]) for m in metrics}

    def estimates(subset: Sequence[ScoredSample]) -> dict[str, Any]:
        rows = list(_per_item(subset, set(names)).values())
        mat = np.array([[r[k] for k in names] for r in rows], dtype=np.float64).reshape(len(rows), len(names))
        return {k: e.to_dict() for k, e in bootstrap_many(mat, fns, resamples=resamples, seed=seed).items()}

    out: dict[str, Any] = {"overall": estimates(samples), "groups": {}}
    for key in group_by:
        buckets: dict[str, list[ScoredSample]] = defaultdict(list)
        for s in samples:
            buckets[str(s.meta.get(key, "unknown"))].append(s)
        out["groups"][key] = {value: estimates(b) for value, b in sorted(buckets.items())}
    return out


@dataclass(frozen=True, slots=True)
class MacroMetric:
    """The unweighted mean over groups (e.g. subjects) of each group's ratio: items carry
    `<num>:<group>` and `<den>:<group>` statistics; groups with no items are left out."""

    name: str
    groups: tuple[str, ...]
    numerator: str = "correct"
    denominator: str = "n"
    description: str = ""
    show_ci: bool = True
    label: str = ""
    scale: str = "points"

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for g in self.groups for k in (f"{self.numerator}:{g}", f"{self.denominator}:{g}"))

    def score(self, row: np.ndarray) -> float:
        parts = [row[2 * i] / row[2 * i + 1] for i in range(len(self.groups)) if row[2 * i + 1] > 0]
        if not parts:
            return float("nan")
        return float(np.mean(parts)) * (100.0 if self.scale == "points" else 1.0)


def _bind(metric: Metric, cols: list[int]):
    def fn(row: np.ndarray) -> float:
        return metric.score(row[cols])
    return fn


def repeat_stability(metric: Metric, samples: Sequence[ScoredSample]) -> dict[str, Any] | None:
    """Stability over repeats: the headline's mean and spread across repeats, per-item agreement
    (share of repeats giving the item's most common answer), and the share of items whose outcome
    flips (correct in some repeats, wrong in others)."""
    repeats = sorted({s.repeat for s in samples})
    if len(repeats) < 2:
        return None
    per_repeat = []
    for r in repeats:
        sub = [s for s in samples if s.repeat == r]
        row = np.array([sum(float(s.score.stats.get(k, 0)) for s in sub) for k in metric.keys])
        per_repeat.append(metric.score(row))
    by_item: dict[str, list[ScoredSample]] = defaultdict(list)
    for s in samples:
        by_item[s.item_id].append(s)
    agreements, flips = [], 0
    for group in by_item.values():
        answers = Counter(s.answer_key for s in group)
        agreements.append(answers.most_common(1)[0][1] / len(group))
        outcomes = {metric.score(np.array([float(s.score.stats.get(k, 0)) for k in metric.keys]))
                    for s in group}
        flips += len(outcomes) > 1
    return {
        "metric": metric.name,
        "repeats": len(repeats),
        "per_repeat": per_repeat,
        "mean": statistics.fmean(per_repeat),
        "std": statistics.stdev(per_repeat),
        "min": min(per_repeat),
        "max": max(per_repeat),
        "mean_item_agreement": statistics.fmean(agreements),
        "flip_rate": flips / len(by_item),
    }
