"""Ratio-of-sums metrics (accuracy, exact match, micro word accuracy) over sufficient statistics.

Each scored sample carries named statistics (e.g. exact=1, sentences=1, words_correct=7, words=8).
A metric is sum(numerator) / sum(denominator). Repeats of one item are summed into one row before
bootstrapping, so the CI resamples items, and the value equals the mean over repeats.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from glotbench.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, ratios_with_ci


@dataclass(frozen=True, slots=True)
class ItemScore:
    """The outcome of scoring one sample.

    `stats`: sufficient statistics. `flags`: notable facts that still got a score (e.g. rewritten).
    `failure`: why no answer could be scored (format, think_unclosed, or a model error kind).
    """

    stats: Mapping[str, float]
    flags: tuple[str, ...] = ()
    failure: str | None = None


@dataclass(frozen=True, slots=True)
class RatioMetric:
    name: str
    numerator: str
    denominator: str
    description: str = ""
    show_ci: bool = True  # diagnostic rates (format failures...) are shown without a CI
    label: str = ""  # short column header for the terminal table


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
    metrics: Sequence[RatioMetric],
    samples: Sequence[ScoredSample],
    group_by: Sequence[str] = (),
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Overall and per-group metric estimates with bootstrap CIs."""
    names = {m.numerator for m in metrics} | {m.denominator for m in metrics}

    def estimates(subset: Sequence[ScoredSample]) -> dict[str, Any]:
        rows = list(_per_item(subset, names).values())
        cols = {m.name: ([r[m.numerator] for r in rows], [r[m.denominator] for r in rows]) for m in metrics}
        return {k: e.to_dict() for k, e in ratios_with_ci(cols, resamples=resamples, seed=seed).items()}

    out: dict[str, Any] = {"overall": estimates(samples), "groups": {}}
    for key in group_by:
        buckets: dict[str, list[ScoredSample]] = defaultdict(list)
        for s in samples:
            buckets[str(s.meta.get(key, "unknown"))].append(s)
        out["groups"][key] = {value: estimates(b) for value, b in sorted(buckets.items())}
    return out


def repeat_stability(metric: RatioMetric, samples: Sequence[ScoredSample]) -> dict[str, Any] | None:
    """Stability over repeats: the headline's mean and spread across repeats, per-item agreement
    (share of repeats giving the item's most common answer), and the share of items whose outcome
    flips (correct in some repeats, wrong in others)."""
    repeats = sorted({s.repeat for s in samples})
    if len(repeats) < 2:
        return None
    per_repeat = []
    for r in repeats:
        sub = [s for s in samples if s.repeat == r]
        num = sum(float(s.score.stats.get(metric.numerator, 0)) for s in sub)
        den = sum(float(s.score.stats.get(metric.denominator, 0)) for s in sub)
        per_repeat.append(num / den if den else 0.0)
    by_item: dict[str, list[ScoredSample]] = defaultdict(list)
    for s in samples:
        by_item[s.item_id].append(s)
    agreements, flips = [], 0
    for group in by_item.values():
        answers = Counter(s.answer_key for s in group)
        agreements.append(answers.most_common(1)[0][1] / len(group))
        outcomes = {float(s.score.stats.get(metric.numerator, 0)) for s in group}
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
