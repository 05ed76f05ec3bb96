"""Metrics over sufficient statistics, and their aggregation.

Each scored sample carries named statistics (e.g. exact=1, texts=1, words_correct=7, words=8, or
sacrebleu's n-gram counts). A metric names the statistics it reads (`keys`) and scores their sums:
a `RatioMetric` is sum(numerator) / sum(denominator); a corpus metric applies sacrebleu's formula.
Repeats of one item are summed into one row before bootstrapping, so the CI resamples items, and a
ratio's value equals the mean over repeats.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Literal, Mapping, Protocol, Sequence

if TYPE_CHECKING:  # numpy is imported where it is used: a run needs it only for its CIs,
    import numpy as np  # imported while its requests are in flight (engine/evaluate.py)

from glotbench.core import ItemScore  # noqa: F401 - defined with the other core objects; imported from here too
from glotbench.errors import GlotbenchError
from glotbench.stats import (DEFAULT_RESAMPLES, DEFAULT_SEED, MIN_BOOTSTRAP_UNITS, MIN_EFFECTIVE_UNITS,
                             MIN_INDEPENDENT_UNITS, bootstrap_many, collapse_fallback, wilson)
from glotbench.stats.cluster import cluster_codes, clustered_se, effective_wilson, sum_by_cluster


class MissingStatistic(GlotbenchError):
    """A metric needs a statistic that a sample does not carry: a bug in a benchmark (a typo, or a
    failure score without every key), never a silent zero."""


Scale = Literal["fraction", "points"]  # 0-1 (shown as percent), or already 0-100


class Metric(Protocol):
    """What aggregation needs from a metric. `scale` is "fraction" (0-1, shown as percent) or
    "points" (already 0-100, as BLEU and chrF)."""

    # read-only: a metric is a frozen record (RatioMetric, CorpusMetric...), never reassigned
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def show_ci(self) -> bool: ...
    @property
    def label(self) -> str: ...
    @property
    def scale(self) -> Scale: ...
    @property
    def keys(self) -> tuple[str, ...]: ...
    @property
    def lower_is_better(self) -> bool: ...  # an error or failure rate: its direction, for the views that rank

    def score(self, row: np.ndarray) -> float:
        """The metric from the summed statistics, in `keys` order."""

    def credit(self, stats: Mapping[str, float]) -> tuple[str, ...]:
        """The statistics among `stats` that give a sample credit (a ratio's numerator): zeroed for a
        reply in the wrong language (`zero_credit`; a corpus metric is made its `sentence_mean` first)."""

    def sentence_mean(self) -> Metric | None:
        """This metric as a mean of per-item scores, for a corpus metric (metrics.corpus
        `sentence_mean`); None for one that already is a mean of items."""


@dataclass(frozen=True, slots=True)
class RatioMetric:
    name: str
    numerator: str
    denominator: str
    description: str = ""
    show_ci: bool = True  # diagnostic rates (format failures...) are shown without a CI
    label: str = ""  # short column header for the terminal table
    scale: Scale = "fraction"
    lower_is_better: bool = False  # an error or failure rate (no answer, format failures): 0 is best

    @property
    def keys(self) -> tuple[str, str]:
        return (self.numerator, self.denominator)

    def credit(self, stats: Mapping[str, float]) -> tuple[str, ...]:
        return (self.numerator,) if self.numerator != self.denominator else ()

    def sentence_mean(self) -> None:
        return None

    def score(self, row: np.ndarray) -> float:
        """sum(numerator) / sum(denominator); undefined (NaN, reported as null) with no denominator.
        On the "points" scale the ratio is reported x100 (0-100, as upstream scorers do)."""
        if row[1] <= 0:
            return float("nan")
        return float(row[0] / row[1]) * (100.0 if self.scale == "points" else 1.0)

    def score_many(self, rows: np.ndarray) -> np.ndarray:
        """`score` of every row of a (resamples x 2) array, with the same operations."""
        import numpy as np
        den = rows[:, 1]
        out = np.full(len(rows), np.nan)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # as Python floats: inf, no warning
            np.divide(rows[:, 0], den, out=out, where=den > 0)
            return out * (100.0 if self.scale == "points" else 1.0)


class Scored(Protocol):
    """What aggregation reads of a sample: a ScoredSample, or a run's core.Sample as it is."""

    @property
    def item_id(self) -> str: ...
    @property
    def repeat(self) -> int: ...
    @property
    def meta(self) -> Mapping[str, Any]: ...
    @property
    def score(self) -> ItemScore: ...
    @property
    def answer_key(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class ScoredSample:
    item_id: str
    repeat: int
    meta: Mapping[str, Any]
    score: ItemScore
    answer_key: str | None = None  # normalised answer, for agreement across repeats


def needed_keys(metric: Metric, stats: Mapping[str, float]) -> tuple[str, ...]:
    """The statistics `metric` needs from one sample: its `keys`, unless it declares `needed`
    (a macro average needs only the pair of its sample's own group)."""
    fn = getattr(metric, "needed", None)
    return tuple(fn(stats)) if fn is not None else tuple(metric.keys)


def zero_credit(metrics: Sequence[Metric], stats: Mapping[str, float]) -> dict[str, float]:
    """`stats` with every metric's credit statistics zeroed and everything else kept (the items
    counted): the sample counts as fully wrong. Means of items only: a corpus metric is made its
    `sentence_mean` first (the `wrong_language=zero` policy, benchmarks/settings.py). A
    statistic that is one metric's credit and another's denominator is kept: zeroing it could
    raise the other."""
    denominators = {k for m in metrics for k in m.keys if k not in m.credit({k: 0.0})}
    zero = {k for m in metrics for k in m.credit(stats)} - denominators
    return {k: (0.0 if k in zero else v) for k, v in stats.items()}


def check_statistics(metrics: Sequence[Metric], samples: Iterable[Any]) -> None:
    """Raise MissingStatistic naming the metric, the key and the sample when a sample lacks a
    statistic that a metric reads."""
    for s in samples:
        stats = s.score.stats
        for m in metrics:
            for k in needed_keys(m, stats):
                if k not in stats:
                    raise MissingStatistic(
                        f"metric {m.name!r} needs statistic {k!r}, which sample {getattr(s, 'item_id', '?')!r} "
                        f"does not carry (it has: {', '.join(sorted(stats)) or 'none'})")


def _per_item_matrix(samples: Sequence[Scored], col: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """One pass over the samples: their statistics as a matrix (samples x statistics; a key absent from
    a sample is 0 only where no metric needs it from that sample — another group's macro columns;
    check_statistics ran first) and each sample's item code. Summing per item happens in numpy, so a
    statistic list of many macro columns costs nothing per item (measured: the service's 10,000-answer
    submission spent half its time building per-item dicts)."""
    import numpy as np
    mat = np.zeros((len(samples), len(col)), dtype=np.float64)
    codes: dict[str, int] = {}
    item = np.empty(len(samples), dtype=np.int64)
    for i, s in enumerate(samples):
        item[i] = codes.setdefault(s.item_id, len(codes))
        row = mat[i]
        for k, v in s.score.stats.items():
            j = col.get(k)
            if j is not None:
                row[j] = float(v)
    return mat, item


def _sum_per_item(mat: np.ndarray, item: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of `idx` summed per item, items in order of first appearance (as a dict of items would be),
    each sum taken in sample order (np.add.at is unbuffered and sequential); and the item codes in
    that order."""
    import numpy as np
    codes = item[idx]
    uniq, first = np.unique(codes, return_index=True)
    order = uniq[np.argsort(first, kind="stable")]
    pos = np.empty(int(item.max()) + 1 if len(item) else 0, dtype=np.int64)
    pos[order] = np.arange(len(order))
    out = np.zeros((len(order), mat.shape[1]), dtype=np.float64)
    np.add.at(out, pos[codes], mat[idx])
    return out, order


def aggregate(
    metrics: Sequence[Metric],
    samples: Sequence[Scored],
    group_by: Sequence[str] = (),
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    cluster: str | None = None,
) -> dict[str, Any]:
    """Overall and per-group metric estimates with 95% CIs, each naming its method (`ci_method`,
    see `interval`); the bootstrapped metrics share resamples. With `cluster` (a meta key: items
    sharing its value form a cluster) the intervals resample clusters (`clustered_interval`) and
    `clusters` records how. Raises MissingStatistic when a sample lacks a statistic a metric needs."""
    import numpy as np
    check_statistics(metrics, samples)
    names = sorted({k for m in metrics for k in m.keys})
    col = {k: i for i, k in enumerate(names)}
    cols = {m.name: [col[k] for k in m.keys] for m in metrics}
    fns = {m.name: _bind(m, cols[m.name]) for m in metrics}

    stats, item = _per_item_matrix(samples, col)
    of_item = _item_clusters(samples, item, cluster) if cluster else None

    def estimates(idx: np.ndarray) -> dict[str, Any]:
        mat, order = _sum_per_item(stats, item, idx)
        if of_item is not None:
            codes, g = cluster_codes(of_item[order])
            if g < len(order):  # some cluster holds two items or more
                boot = bootstrap_many(sum_by_cluster(mat, codes, g), fns, resamples=resamples, seed=seed)
                return {m.name: clustered_interval(m, mat[:, cols[m.name]], boot[m.name], codes, g, resamples)
                        for m in metrics}
        props = {m.name: p for m in metrics if (p := proportion(m, mat[:, cols[m.name]])) is not None}
        rest = {m.name: fns[m.name] for m in metrics
                if m.name not in props and not bounded_ratio(m, mat[:, cols[m.name]])}
        boot = bootstrap_many(mat, rest, resamples=resamples, seed=seed) if rest else {}
        return {m.name: interval(m, mat[:, cols[m.name]], boot.get(m.name), props.get(m.name), resamples)
                for m in metrics}

    overall = estimates(np.arange(len(samples)))
    out: dict[str, Any] = {"overall": overall, "groups": {}}
    for key in group_by:
        buckets: dict[str, list[int]] = defaultdict(list)
        for i, s in enumerate(samples):
            buckets[str(s.meta.get(key, "unknown"))].append(i)
        # A group holding every sample (a dataset with one category) has the overall figures: the
        # same rows, the same resamples (the draws depend only on the item count and the seed).
        out["groups"][key] = {value: ({k: dict(v) for k, v in overall.items()} if len(b) == len(samples) else estimates(np.array(b, dtype=np.int64)))
                              for value, b in sorted(buckets.items())}
    if cluster:
        out["clusters"] = cluster_summary(cluster, samples, of_item)
    return out


def _item_clusters(samples: Sequence[Scored], item: np.ndarray, key: str) -> np.ndarray:
    """Each item code's cluster (an object array of hashable keys): the value of meta `key`, or the
    item itself when its meta has no such value (a cluster of one)."""
    import numpy as np
    out = np.empty(int(item.max()) + 1 if len(item) else 0, dtype=object)
    for code, s in zip(item.tolist(), samples):
        v = s.meta.get(key)
        out[code] = ("value", str(v)) if v is not None and v != "" else ("item", s.item_id)
    return out


def cluster_summary(key: str, samples: Sequence[Scored], of_item: np.ndarray | None) -> dict[str, Any]:
    """results.json's `scores.clusters`: the key, the overall counts and which intervals they gave."""
    n = len(of_item) if of_item is not None else 0
    g = len(set(of_item.tolist())) if of_item is not None else 0
    missing = sum(1 for c in (of_item.tolist() if of_item is not None else ()) if c[0] == "item")
    used = g < n
    return {"key": key, "clusters": g, "items": n, "items_without_key": missing,
            "method": ("Wilson on the effective number of items (clustered SE, CR1) with t at clusters - 1 "
                       "degrees of freedom for ratio metrics; the cluster bootstrap (clusters resampled, marked: "
                       "coverage below 93%) for other metrics") if used else
                      "every item is its own cluster: intervals as for independent items"}


CI_METHODS = {
    "wilson": "Wilson score interval (a proportion of 0/1 items)",
    "bootstrap": "percentile bootstrap over items",
    "wilson_fallback": "Wilson score interval on the item count (the bootstrap collapsed: every resample gave one value)",
    "none": "no interval (--resamples 0)",
    "cluster_bootstrap": "percentile bootstrap over clusters (a metric that is not a ratio of sums in [0, 1])",
    "wilson_effective": "Wilson score interval on the effective number of items (SE over clusters, CR1, or "
                        "over items) with Student's t at G - 1 degrees of freedom (G clusters, or items)",
    "wilson_clusters_fallback": "Wilson score interval on the cluster count (the cluster bootstrap collapsed)",
}


def proportion(metric: Metric, rows: np.ndarray) -> tuple[float, float] | None:
    """(successes, trials) when `metric` is a proportion of 0/1 items over these per-item rows: a
    ratio metric whose every item has a denominator of 0 or 1 and a numerator of 0 or 1 (not above
    it). Repeats summed per item give denominators above 1: such a per-item value is a mean over
    repeats, not a 0/1 outcome, and gets the bootstrap (docs/metrics.md)."""
    if not isinstance(metric, RatioMetric) or len(rows) == 0:
        return None
    num, den = rows[:, 0], rows[:, 1]
    if not (((den == 0) | (den == 1)).all() and ((num == 0) | (num == 1)).all() and (num <= den).all()):
        return None
    return float(num.sum()), float(den.sum())


def bounded_ratio(metric: Metric, rows: np.ndarray) -> bool:
    """Whether `metric` is a ratio of sums whose every item's value lies in [0, 1] (0 ≤ numerator ≤
    denominator: word accuracy, F1 sums, a mean over repeats), with some denominator: the metrics
    whose interval is `wilson_effective` (a proportion of 0/1 independent items keeps Wilson's)."""
    if not isinstance(metric, RatioMetric) or len(rows) == 0:
        return False
    num, den = rows[:, 0], rows[:, 1]
    return bool(((num >= 0) & (num <= den)).all() and den.sum() > 0)


def effective_estimate(metric: Metric, rows: np.ndarray, codes: np.ndarray, n_clusters: int) -> dict[str, Any]:
    """value, ci_low, ci_high (on the metric's scale), `ci_method: wilson_effective` and `n_effective`
    of a `bounded_ratio` metric over items in clusters (`codes`; independent items: each its own):
    Wilson on the effective number of items with t at G − 1 degrees of freedom, G the clusters that
    carry a denominator (`glotbench.stats.cluster.effective_wilson`), at every value: where every unit
    scores alike (0%, 100%, an SE of 0) Wilson on the G units with the same t. Its measured coverage
    is at least 93% from G = 2 (docs/metrics.md), so it is marked `too_few_units` at one unit only,
    whatever the value."""
    f = 100.0 if metric.scale == "points" else 1.0
    total = rows.sum(axis=0)
    value = float(metric.score(total))
    se = clustered_se(rows[:, 0], rows[:, 1], codes, n_clusters)["se_clustered"]
    g = len(set(codes[rows[:, 1] > 0].tolist()))
    lo, hi, n_eff = effective_wilson(value / f, se, g, float(total[1]))
    return {"value": value, "ci_low": f * lo, "ci_high": f * hi, "ci_method": "wilson_effective", "n_effective": n_eff,
            **({"too_few_units": True} if g < MIN_EFFECTIVE_UNITS else {})}


def interval(metric: Metric, rows: np.ndarray, boot: Any, prop: tuple[float, float] | None,
             resamples: int) -> dict[str, Any]:
    """One estimate as results.json holds it: value, ci_low, ci_high, n (items), ci_method.

    - `wilson`: a proportion of 0/1 items (`proportion`) gets the Wilson score interval, which
      does not collapse at 0% or 100% as the percentile bootstrap does (0 of 164: 0.0–2.3).
    - `bootstrap`: every other metric, the percentile bootstrap over items (`boot`).
    - `wilson_fallback`: a bootstrap that collapsed to one value (every item scored the same: all
      BLEU 0, every word wrong) is replaced by the Wilson interval of that value as a proportion
      over the items that carry the metric's statistics, on the metric's scale (0–1 or 0–100). Each
      item's value then lies in [0, 1], whose variance is at most p(1 − p): the interval is, if
      anything, wide.
    - `wilson_effective`: a ratio of sums whose every item's value lies in [0, 1] but is not 0/1
      (word accuracy, F1 sums, a proportion with repeats): Wilson's interval on the effective number
      of items value(1 − value) / SE² (the HC1 SE over items) with t at n − 1 degrees of freedom
      (`effective_estimate`; Wilson on the items with the same t at 0, 1 or an SE of 0); measured
      coverage at least 93% from 2 items (docs/metrics.md), where the percentile bootstrap needed 100:
      marked only on one item (`MIN_EFFECTIVE_UNITS`);
    - `none`: `--resamples 0` and not a proportion.

    Below `MIN_INDEPENDENT_UNITS` items (30; `MIN_BOOTSTRAP_UNITS`, 100, for the bootstrap) the others
    under-cover for some proportion (measured: bench/ci_coverage.py); the estimate is then marked
    `too_few_units: true`, shown as † in every view."""
    import numpy as np
    f = 100.0 if metric.scale == "points" else 1.0
    n = len(rows)
    if prop is None and bounded_ratio(metric, rows):
        eff = effective_estimate(metric, rows, np.arange(n), n)
        est: dict[str, Any] = {"value": eff.pop("value"), "ci_low": eff.pop("ci_low"), "ci_high": eff.pop("ci_high"), "n": n, **eff}
        return {k: (None if isinstance(v, float) and v != v else v) for k, v in est.items()}
    if prop is not None:
        k, trials = prop
        value = float(metric.score(rows.sum(axis=0)))
        lo, hi = wilson(k, trials)
        est = {"value": value, "ci_low": f * lo, "ci_high": f * hi, "n": n, "ci_method": "wilson"}
    else:
        est = {**boot.to_dict(), "ci_method": "bootstrap" if resamples > 0 and n > 0 else "none"}
        value, lo, hi = est["value"], est["ci_low"], est["ci_high"]
        carrying = int((rows != 0).any(axis=1).sum())
        fallback = collapse_fallback(value, lo, hi, carrying, f) if est["ci_method"] == "bootstrap" else None
        if fallback is not None:
            est.update(ci_low=fallback[0], ci_high=fallback[1], ci_method="wilson_fallback")
    if est["ci_method"] != "none" and n < (MIN_BOOTSTRAP_UNITS if est["ci_method"] == "bootstrap" else MIN_INDEPENDENT_UNITS):
        est["too_few_units"] = True
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in est.items()}


def clustered_interval(metric: Metric, rows: np.ndarray, boot: Any, codes: np.ndarray, n_clusters: int,
                       resamples: int) -> dict[str, Any]:
    """One estimate over clustered items: value, ci_low, ci_high, n (items), clusters, ci_method,
    and for a ratio metric the analytic `se_clustered`, `se_iid` and `design_effect`
    (glotbench.stats.cluster), on the metric's scale.

    - `wilson_effective`: a ratio of sums whose value lies in [0, 1] (accuracy, exact match, word
      accuracy, F1 sums): Wilson's interval on the effective number of items value(1 − value) / SE²
      (the CR1 clustered SE), with Student's t at G − 1 degrees of freedom (G clusters carrying the
      metric) in place of z; Wilson on the clusters with the same t where every cluster scores alike
      (`stats.cluster.effective_wilson`). Measured coverage at least 93% from 2 clusters up, but in one
      cell of the grid (docs/metrics.md): marked only on one cluster; the cluster bootstrap it replaces covered 49-88% at 2-10
      clusters;
    - `cluster_bootstrap`: every other metric, the percentile bootstrap over clusters (`boot`);
      its coverage is below 93% up to 200 clusters in the simulation, so it is always marked
      `too_few_units`; `wilson_clusters_fallback` where it collapsed;
    - `none`: `--resamples 0` on a metric that is not such a ratio."""
    f = 100.0 if metric.scale == "points" else 1.0
    n = len(rows)
    est: dict[str, Any] = {**(boot.to_dict() if boot is not None else {}), "n": n, "clusters": n_clusters,
                           "ci_method": "cluster_bootstrap" if resamples > 0 and n else "none"}
    carrying = len(set(codes[(rows != 0).any(axis=1)].tolist()))
    if isinstance(metric, RatioMetric):
        est.update(clustered_se(rows[:, 0], rows[:, 1], codes, n_clusters, scale=f))
        if bounded_ratio(metric, rows):
            est.update(effective_estimate(metric, rows, codes, n_clusters))
            return {k: (None if isinstance(v, float) and v != v else v) for k, v in est.items()}
    value, lo, hi = est.get("value"), est.get("ci_low"), est.get("ci_high")
    if (est["ci_method"] == "cluster_bootstrap" and value is not None and lo is not None and hi is not None
            and hi - lo <= 1e-12 * max(1.0, abs(value)) and 0.0 <= value / f <= 1.0 and carrying):
        lo, hi = wilson(value / f * carrying, carrying)
        est.update(ci_low=f * lo, ci_high=f * hi, ci_method="wilson_clusters_fallback")
    if est["ci_method"] != "none":
        est["too_few_units"] = True
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in est.items()}


@dataclass(frozen=True, slots=True)
class MacroMetric:
    """The unweighted mean over groups (e.g. subjects) of each group's ratio: items carry
    `<num>:<group>` and `<den>:<group>` statistics; groups with no items are left out. Over gold
    classes it is balanced accuracy (sklearn's `balanced_accuracy_score`: a class with no gold item is
    left out, a prediction outside the classes is a miss); with `normalised`, SEA-HELM's
    `normalized_accuracy`: normalise_to_floor(mean, 1 / k), k the groups with items (SEA-HELM's
    label set is the labels present in the data)."""

    name: str
    groups: tuple[str, ...]
    numerator: str = "correct"
    denominator: str = "n"
    description: str = ""
    show_ci: bool = True
    label: str = ""
    scale: Scale = "points"
    normalised: bool = False
    lower_is_better: bool = False

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for g in self.groups for k in (f"{self.numerator}:{g}", f"{self.denominator}:{g}"))

    def needed(self, stats: Mapping[str, float]) -> tuple[str, ...]:
        """A sample carries the pair of its own group; one with no group pair at all is an error."""
        prefix = f"{self.denominator}:"
        own = [k[len(prefix):] for k in stats if k.startswith(prefix)]
        if not own:
            return (f"{self.denominator}:<group>",)
        return tuple(k for g in own for k in (f"{self.numerator}:{g}", f"{self.denominator}:{g}"))

    def credit(self, stats: Mapping[str, float]) -> tuple[str, ...]:
        return tuple(k for k in stats if k.startswith(f"{self.numerator}:"))

    def sentence_mean(self) -> None:
        return None

    def score(self, row: np.ndarray) -> float:
        import numpy as np
        parts = [row[2 * i] / row[2 * i + 1] for i in range(len(self.groups)) if row[2 * i + 1] > 0]
        if not parts:
            return float("nan")
        mean = float(np.mean(parts))
        if self.normalised:
            mean = normalise_to_floor(mean, 1 / len(parts))
        return mean * (100.0 if self.scale == "points" else 1.0)


def normalise_to_floor(score: float, floor: float, top: float = 1.0, *, clamp: bool = True) -> float:
    """SEA-HELM's normalisation of a score against its floor: (score - floor) / (top - floor), below the
    floor 0 (`clamp`), a floor equal to the top 0 (SEA-HELM's `SeaHelmMetric.normalize_score`). The
    floor is a task's random-choice or input-unchanged score, in the score's own units; NaN stays NaN."""
    if top == floor:
        return 0.0
    out = (score - floor) / (top - floor)
    return max(out, 0.0) if clamp and out == out else out


def _bind(metric: Metric, cols: list[int]):
    def fn(row: np.ndarray) -> float:
        return metric.score(row[cols])
    score_many = getattr(metric, "score_many", None)
    if score_many is not None:  # the bootstrap scores a whole block of resamples at once
        fn.many = lambda rows: score_many(rows[:, cols])  # type: ignore[attr-defined]
    return fn


def repeat_stability(metric: Metric, samples: Sequence[Scored]) -> dict[str, Any] | None:
    """Stability over repeats: the headline's mean and spread across repeats, per-item agreement
    (share of repeats giving the item's most common answer), and the share of items whose outcome
    flips (correct in some repeats, wrong in others)."""
    import numpy as np
    repeats = sorted({s.repeat for s in samples})
    if len(repeats) < 2:
        return None
    check_statistics([metric], samples)
    per_repeat = []
    for r in repeats:
        sub = [s for s in samples if s.repeat == r]
        row = np.array([sum(float(s.score.stats.get(k, 0)) for s in sub) for k in metric.keys])
        v = metric.score(row)
        per_repeat.append(v if math.isfinite(v) else None)  # a repeat with nothing to score: undefined
    by_item: dict[str, list[Scored]] = defaultdict(list)
    for s in samples:
        by_item[s.item_id].append(s)
    agreements, flips = [], 0
    for group in by_item.values():
        answers = Counter(s.answer_key for s in group)
        agreements.append(answers.most_common(1)[0][1] / len(group))
        outcomes = {v if math.isfinite(v) else None
                    for v in (metric.score(np.array([float(s.score.stats.get(k, 0)) for k in metric.keys]))
                              for s in group)}
        flips += len(outcomes) > 1
    defined = [v for v in per_repeat if v is not None]
    return {
        "metric": metric.name,
        "repeats": len(repeats),
        "per_repeat": per_repeat,
        "mean": statistics.fmean(defined) if defined else None,
        "std": statistics.stdev(defined) if len(defined) >= 2 else None,
        "min": min(defined, default=None),
        "max": max(defined, default=None),
        "mean_item_agreement": statistics.fmean(agreements),
        "flip_rate": flips / len(by_item),
    }
