"""What the service releases: the benchmark's aggregate, projected to a headline and subdomain cells,
then passed through the Ladder (Blum & Hardt, ICML 2015) per key.

`aggregate()` turns per-item scores into numbers (headline, CI, one value per subdomain) plus the
per-item values behind each number. `release()` decides, per key and per number, what is released:
a key's released value changes only when a submission beats that key's best by more than a step
plus a secret random margin, and released values are rounded to that step. The step is either fixed
(`step` points) or, parameter-free, `50 / sqrt(m)` (the largest standard error a 0-100 score over m
items can have), never less than one item's weight (`100 / m`), rounded up to the next of 0.1, 0.2,
0.25, 0.5, 1, 2, 2.5, 5, 10, ... (a step that divides 100). It depends on m alone: a step taken from
the paired difference between two submissions told how many answers changed (issue 31).

The release decision is randomised as Thresholdout randomises its holdout comparison: a submission
is released when its score exceeds the key's best by `step * (1 + DECISION_NOISE * u)`, with `u`
uniform in [0, 1) drawn from the key's secret and the submission (`decide`), fresh for every
submission. Two scores one item (`w` points) apart are then decided differently with probability at
most `w / (DECISION_NOISE * step)`, wherever they lie. Each key rounds with its own secret offset
(`rounded`), so many keys do not share one set of rounding boundaries either.

Every released value is the score plus secret Gaussian noise, fresh per key and submission (`noise`,
drawn from the key's secret: service/keys.py, `release_noise`), then rounded, as the reusable holdout
adds noise to what it answers (Dwork et al. 2015). Its size depends on m alone (`Step.noise_sd`): a set of
m items whose items each lie in at most J released numbers (the headline, and one subdomain cell when
cells are shown) has noise `RELEASE_NOISE * sqrt(J * m) / m_x` on a number over m_x items, so every
item's total signal-to-noise over one reply, `sum (100 / m_x)^2 / sd^2`, is `10^4 / (RELEASE_NOISE^2 m)`
whatever the cells: `RELEASE_NOISE / sqrt(m)` on the headline alone. Without it each key's first
release was an unbiased reading of its score with only the rounding's noise, and a regression over
about 10 fresh keys per label read the labels (issue 31; tests/test_service_collusion.py).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from glotbench.stats import bootstrap_many

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark


HEADLINE = ""  # the cell name of the headline number in the Ladder's state
DECISION_NOISE = 2.0  # the release margin is uniform in [1, 1 + DECISION_NOISE) steps
RELEASE_NOISE = 210.0  # a released headline's Gaussian noise is RELEASE_NOISE / sqrt(m) points (no cells shown)
# Below this many items the released interval (`released_ci`) would be marked `too_few_units` (†): its
# measured coverage of the true score is at least 93% from one item (bench/service_ci_coverage.py,
# docs/metrics.md), since the release noise and the 50²/m bound on the sampling variance widen it
# beyond the sampling error; so no released interval is marked today.
MIN_RELEASED_ITEMS = 1


@dataclass(frozen=True)
class Number:
    """One aggregate number (0-100 for fraction metrics) and the per-item values it averages."""

    value: float
    per_item: np.ndarray
    ci95: tuple[float, float] | None = None


@dataclass(frozen=True)
class Aggregate:
    metric: str
    items: int
    answered: int
    headline: Number
    cells: Mapping[str, Number]


def groups_of(bench: Benchmark, items: Sequence[Any]) -> dict[str, np.ndarray]:
    """Item positions per subdomain (the last `group_by` key), in name order."""
    group_key = bench.group_by[-1] if bench.group_by else None
    groups: dict[str, list[int]] = defaultdict(list)
    if group_key:
        for i, it in enumerate(items):
            groups[str(it.meta.get(group_key, "unknown"))].append(i)
    return {g: np.asarray(idx) for g, idx in sorted(groups.items())}


def aggregate(bench: Benchmark, dataset: Any, samples: Mapping[str, Any], *, resamples: int = 1000,
              groups: Mapping[str, np.ndarray] | None = None) -> Aggregate:
    """The benchmark's own aggregate over every item (a missing id takes the failure score
    "missing"), projected to its headline (with CI) and one cell per subdomain (the last `group_by`
    key; all cells, however small), each with the per-item values behind it. `samples` maps an item
    id to its scored Sample; `groups` may be given (cached per set)."""
    from glotbench.scoring import score_output

    rows = [samples.get(it.id) or score_output(bench, it, None, model_failure="missing") for it in dataset]
    agg = bench.run_aggregate(rows, dataset, resamples=0)  # the numbers; the one CI released is computed below
    metric = bench.run_metrics(dataset)[0]
    f = 100.0 if metric.scale == "fraction" else 1.0
    stats = [r.stats for r in rows]
    mat = np.empty((len(rows), len(metric.keys)), dtype=np.float64)
    for j, k in enumerate(metric.keys):  # column by column: a headline metric reads a few statistics
        mat[:, j] = np.fromiter((float(st.get(k, 0.0)) for st in stats), dtype=np.float64, count=len(stats))
    vec = per_item_values(metric, mat) * f
    est = agg["overall"].get(metric.name)
    if est is not None:  # the headline's CI: the same resamples (seed, items) the benchmark's aggregate draws
        ci = bootstrap_many(mat, {"m": metric.score}, resamples=resamples, values={"m": est["value"]})["m"]
        head = Number(f * _safe(est["value"]), vec, (f * _safe(ci.ci_low), f * _safe(ci.ci_high)))
    else:  # per-group benchmarks (DeepSEA per language): the benchmark's mean over its groups
        sea = agg.get("resource_groups", {}).get("southeast_asia", {}).get("value")
        per = [g[metric.name]["value"] for g in agg["groups"].get(bench.group_by[0], {}).values()
               if g[metric.name]["value"] is not None]
        value = sea if sea is not None else (sum(per) / len(per) if per else None)
        head = Number(f * _safe(value), vec, None)
    group_key = bench.group_by[-1] if bench.group_by else None
    by_group = agg["groups"].get(group_key, {}) if group_key else {}
    groups = groups_of(bench, dataset) if groups is None else groups
    cells = {g: Number(f * _safe(by_group[g][metric.name]["value"]), vec[idx])
             for g, idx in groups.items() if g in by_group}
    answered = sum(1 for it in dataset if it.id in samples)
    return Aggregate(metric.name, len(dataset), answered, head, cells)


def judged_aggregate(results: Mapping[str, Any], values: Mapping[str, float], dataset: Sequence[Any], answered: int,
                     groups: Mapping[str, np.ndarray]) -> Aggregate:
    """A judged set's aggregate, read from its judged run (`report.rundata.judged_view`): the headline
    is the run's judged score with its interval (the mean of judges, as `glotbench run` reports it);
    each item's value is its mean over the judges that judged it (`values`; an item no judge judged
    counts 0, as an unanswered one does), and a cell is the mean of its items' values."""
    head = results["headline"]
    est = results["scores"]["overall"][head]
    vec = np.array([100.0 * _safe(values.get(it.id)) for it in dataset], dtype=np.float64)
    ci = (100.0 * _safe(est["ci_low"]), 100.0 * _safe(est["ci_high"])) if est.get("ci_low") is not None else None
    cells = {g: Number(float(vec[idx].mean()), vec[idx]) for g, idx in groups.items() if len(idx)}
    return Aggregate(head, len(dataset), answered, Number(100.0 * _safe(est["value"]), vec, ci), cells)


def per_item_values(metric: Any, mat: np.ndarray) -> np.ndarray:
    """Each item's own metric value (a ratio metric: numerator / denominator, vectorised)."""
    from glotbench.metrics.ratio import RatioMetric

    if isinstance(metric, RatioMetric):
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(mat[:, 1] > 0, mat[:, 0] / np.where(mat[:, 1] > 0, mat[:, 1], 1.0), 0.0)
        return v * (100.0 if metric.scale == "points" else 1.0)
    return np.array([_safe(metric.score(r)) for r in mat], dtype=np.float64)


def _safe(x: float | None) -> float:
    return 0.0 if x is None or x != x else float(x)


@dataclass(frozen=True)
class Step:
    """The Ladder's step: `points` > 0 is fixed; 0 is the parameter-free rule. `noise`: the release
    noise's scale (`noise_sd`; 0 turns it off, for a service whose keys are all trusted)."""

    points: float = 0.0
    noise: float = RELEASE_NOISE

    def size(self, m: int) -> float:
        """The step for a number over m items: fixed, or `50 / sqrt(m)` (at least one item's weight,
        `100 / m`) rounded up to a step that divides 100. It depends on m alone, for every release
        of every key: a step that depends on the answers is a rounding boundary every key shares
        (with the sample standard deviation, 46-54 right answers of 100 gave 10, any other count 5),
        and one taken from the paired difference of two submissions told how many answers changed
        between them (issue 31)."""
        m = max(1, m)
        if self.points > 0:
            return self.points
        return nice_ceil(max(50.0 / math.sqrt(m), 100.0 / m))

    def hides_one_item(self, m: int) -> bool:
        """A cell of m items may be released only if one item (100/m points) stays within a step."""
        return self.points <= 0 or 100.0 / max(m, 1) <= self.points

    def noise_sd(self, m_x: int, m: int, numbers: int) -> float:
        """The standard deviation (points) of the noise on a released number over m_x items, in a set
        of m items each of which lies in at most `numbers` released numbers: `noise * sqrt(numbers * m)
        / m_x`. It depends on the counts alone; per item, the numbers of one reply together carry the
        signal of one headline with noise `noise / sqrt(m)`."""
        return self.noise * math.sqrt(max(1, numbers) * max(1, m)) / max(1, m_x)


_NICE = (1.0, 2.0, 2.5, 5.0, 10.0)


def nice_ceil(x: float) -> float:
    """The smallest of ..., 0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10, 20, 25, 50, 100 that is >= x: a step
    that divides 100, so a perfect score stays 100 and released values read plainly."""
    if x <= 0:
        return 0.0
    scale = 10.0 ** math.floor(math.log10(x))
    for n in _NICE:
        if n * scale >= x - 1e-12:
            return min(100.0, round(n * scale, 10))
    return min(100.0, 10 * scale)


def rounded(v: float, step: float, digits: int, offset: float = 0.0) -> float:
    """`v` rounded to a multiple of the step, then to the display precision. `offset` in [-0.5, 0.5)
    of a step (the key's secret, service/keys.py) shifts where the rounding boundaries lie: the
    released value is `step * round(v / step + offset)`, a multiple of the step within one step of
    `v`. Over keys (offsets uniform) it is unbiased: `v` is released as the multiple above it with
    probability equal to its fraction of the way there. For one key, a boundary an attacker cannot
    see: two scores `d` apart are released differently for a fraction `d / step` of keys only."""
    if step <= 0:
        return round(v, digits)
    return round(round(v / step + offset) * step, digits) + 0.0  # + 0.0: never -0.0


Offsets = Callable[[str, str], float]  # (cell, "value" | "ci") -> the key's offset for that number
Decide = Callable[[str], float]  # cell -> u in [0, 1), fresh per key and submission: the release margin
Noise = Callable[[str], float]  # cell -> z standard normal, fresh per key and submission: the released value's noise


def _no_offset(cell: str, what: str) -> float:
    return 0.0


def _no_noise(cell: str) -> float:
    return 0.0


def noised(value: float, sd: float, z: float, step: float, digits: int, offset: float) -> float:
    """The released value: `value + sd * z` (z the key's secret standard normal draw for this
    submission and number) rounded to the step with the key's offset, kept within 0-100."""
    return min(100.0, max(0.0, rounded(value + sd * z, step, digits, offset)))


def released_ci(released: float, sd: float, step: float, m_x: int, digits: int) -> list[float]:
    """The 95% interval shown with a released value: `released ± 1.96 sqrt(sd² + step²/12 + 50²/m_x)`
    (the release's noise, its rounding, and the largest sampling error of a mean of m_x values in
    0-100), widened to a multiple of the step. It depends on the released value and the counts alone:
    an interval from the submission's own answers (a bootstrap) would be a second, noiseless reading."""
    half = 1.96 * math.sqrt(sd * sd + step * step / 12.0 + 2500.0 / max(1, m_x))
    h = step * math.ceil(half / step - 1e-9) if step > 0 else half
    return [round(max(0.0, released - h), digits) + 0.0, round(min(100.0, released + h), digits) + 0.0]


@dataclass
class Rung:
    """A key's Ladder state for one number."""

    best: float
    released: float
    step: float
    ci95: list[float] | None
    vector: np.ndarray


def climb(rung: Rung | None, n: Number, step: Step, digits: int, cell: str = HEADLINE,
          offsets: Offsets = _no_offset, decide: Decide = _no_noise, noise: Noise = _no_noise,
          sd: float = 0.0) -> tuple[Rung, bool]:
    """One Ladder round. Returns the (possibly new) state and whether the released value moved: a
    first submission is released; a later one when it beats the best by more than the step plus the
    secret margin `step * DECISION_NOISE * decide(cell)`. A released value is the score plus `sd`
    times the secret draw `noise(cell)`, rounded (`noised`)."""
    m = len(n.per_item)
    s = step.size(m)
    if rung is not None and not n.value > rung.best + s * (1.0 + DECISION_NOISE * decide(cell)) + 1e-9:
        return rung, False
    value = noised(n.value, sd, noise(cell), s, digits, offsets(cell, "value"))
    ci = released_ci(value, sd, s, m, digits) if n.ci95 else None
    return Rung(n.value, value, s, ci, n.per_item.astype(np.float32)), True


NOT_IMPROVED = ("not released: this submission did not beat the key's best by the step and a secret random "
                "margin, so `score` is the key's earlier released score, not this submission's")


def release(agg: Aggregate, rungs: Mapping[str, Rung], *, step: Step, min_group: int, digits: int,
            offsets: Offsets = _no_offset, decide: Decide = _no_noise,
            noise: Noise = _no_noise) -> tuple[dict[str, Any], dict[str, Rung]]:
    """The reply for one submission and the states to store. Cells smaller than `min_group`, or too
    small for a fixed step to hide one item, are neither released nor tracked. `offsets`: the
    key's secret rounding offsets; `decide`: the secret release margins of this key and submission;
    `noise`: its secret standard normal draws (service/keys.py); none by default. The noise's size
    (`Step.noise_sd`) counts the numbers each item lies in: 2 when any cell is shown, else 1."""
    new: dict[str, Rung] = {}
    m = len(agg.headline.per_item)
    shown = {g: n for g, n in agg.cells.items()
             if len(n.per_item) >= min_group and step.hides_one_item(len(n.per_item))}
    numbers = 2 if shown else 1
    head, moved = climb(rungs.get(HEADLINE), agg.headline, step, digits, HEADLINE, offsets, decide, noise,
                        step.noise_sd(m, m, numbers))
    new[HEADLINE] = head
    cells = {}
    for g, n in shown.items():
        new[g], _ = climb(rungs.get(g), n, step, digits, g, offsets, decide, noise,
                          step.noise_sd(len(n.per_item), m, numbers))
        cells[g] = new[g].released
    # n: the units of `ci95`, the set's item count (public: the set listing gives it); † by the
    # measured rule (MIN_RELEASED_ITEMS), from the count alone, as the interval is
    out = {"metric": agg.metric, "score": head.released, "ci95": head.ci95, "n": agg.items,
           "too_few_units": bool(head.ci95) and agg.items < MIN_RELEASED_ITEMS, "improved": moved,
           "ladder_step": round(head.step, 4), "noise_sd": round(step.noise_sd(m, m, numbers), 4), "items": agg.items,
           "coverage": round(agg.answered / agg.items, 4) if agg.items else 0.0,
           "subdomains": cells, "subdomains_hidden_below": min_group}
    if not moved:
        out["note"] = NOT_IMPROVED
    return out, new
