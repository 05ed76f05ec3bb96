"""`run --metric-checkpoint DIR`: a learned translation metric (metrics/learned.py: COMET-22-style or
MetricX-24, from a local checkpoint, never downloaded) scored at the end of a run.

The checkpoint is opened and loaded, and the benchmark checked to be a translation benchmark (a
declared source field and a corpus metric: `checks.rescore.learned_plan`), before any model is
loaded or called. Each sample's score comes from `checks.rescore.learned_segments`, the path
`rescore --metric-checkpoint` takes (a failed or zeroed reply: the metric's worst or its own score,
whichever is worse). The scores are aggregated as every metric is (`metrics.ratio.aggregate`: per
group, the benchmark's intervals), and written to results.json beside the benchmark's metrics; the
metric's signature (the checkpoint's SHA-256) is a part of the run's signature (`learned:`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset, ItemScore, Sample
from glotbench.errors import GlotbenchError
from glotbench.metrics.ratio import ScoredSample
from glotbench.signature import Signature

LABELS = {"comet22": "COMET-22", "xcomet": "xCOMET", "metricx24": "MetricX-24"}


def open_learned(bench: Benchmark, checkpoint: str | None, *, weights: bool = True) -> Any:
    """The loaded metric of `--metric-checkpoint DIR` (None without one), or one GlotbenchError line:
    a benchmark that is not a translation benchmark, a missing, malformed or incompatible directory.
    `weights=False` (`--dry-run`, a sweep's expansion): the directory's layout and files checked and the
    weights' header read (names, shapes, a truncated file), the model built on the meta device:
    nothing loaded (`metrics.learned.check`)."""
    if checkpoint is None:
        return None
    from glotbench.checks.rescore import learned_plan

    try:
        learned_plan(bench)
    except GlotbenchError as e:
        raise GlotbenchError(f"--metric-checkpoint: {e}") from None
    from glotbench.metrics.learned import check, load

    return load(checkpoint) if weights else check(checkpoint)


def learned_metric(learned: Any) -> Any:
    """The learned metric as the mean of its segment scores (`metrics.learned.MeanScore`): COMET reads
    as a fraction, MetricX-24's error points (0-25, lower is better) as points."""
    from glotbench.metrics.learned import MeanScore

    kind = learned.checkpoint.kind
    higher = learned.checkpoint.higher_is_better
    return MeanScore(kind, f"{kind}.score", f"{kind}.n",
                       description=f"{LABELS.get(kind, kind)} from the local checkpoint {learned.checkpoint.path} "
                                   + ("(mean segment score; higher is better)" if higher else
                                      "(mean segment error, 0-25 points: 0 best, lower is better)"),
                       label=LABELS.get(kind, kind), scale="fraction" if higher else "points",
                       lower_is_better=not higher)


def learned_results(bench: Benchmark, learned: Any, samples: Sequence[Sample], items: Dataset,
                    resamples: int) -> tuple[dict[str, Any], dict[str, Any], Callable[[str, int], dict[str, Any] | None]]:
    """(scores, metric info, per sample): the learned metric's estimates overall and per group, as
    `Benchmark.aggregate` lays them out, its results.json `metrics` entry, and each sample's
    samples.jsonl field (`learned`: `metrics.learned.sample_field`, what compare and the board's paired
    tests read)."""
    from glotbench.metrics.learned import sample_field

    from glotbench.checks.rescore import learned_plan, learned_segments
    from glotbench.metrics.ratio import aggregate

    metric = learned_metric(learned)
    gold = {it.id: it.gold for it in items}
    segments = learned_segments(learned, learned_plan(bench), bench, [s.to_record() for s in samples], gold)
    scored = [ScoredSample(s.id, s.repeat, s.meta, ItemScore({metric.numerator: x, metric.denominator: 1.0}))
              for s, x in zip(samples, segments)]
    scores = aggregate([metric], scored, bench.group_by, resamples=resamples, cluster=bench.cluster_by)
    if not bench.pooled_overall:
        scores["overall"] = {}
    info = {"description": metric.description, "show_ci": True, "label": metric.label, "keys": list(metric.keys),
            "scale": metric.scale, **({"lower_is_better": True} if metric.lower_is_better else {}),
            "signature": learned.signature()}
    by_sample = {(s.id, s.repeat): sample_field(metric.name, x) for s, x in zip(samples, segments)}
    return scores, info, lambda sid, repeat: by_sample.get((sid, repeat))


def merged(scores: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """The run's aggregate with the learned metric's estimates added to each of its groups."""
    out = {**scores, "overall": {**scores.get("overall", {}), **extra.get("overall", {})}}
    groups = {k: {g: dict(v) for g, v in per.items()} for k, per in scores.get("groups", {}).items()}
    for key, per in extra.get("groups", {}).items():
        for g, est in per.items():
            groups.setdefault(key, {}).setdefault(g, {}).update(est)
    out["groups"] = groups
    return out


def signed(signature: str, learned: Any) -> str:
    """The run's signature with the learned metric's (its checkpoint's SHA-256) as its `learned:` part."""
    return Signature.parse(signature).plus(learned=Signature.parse(learned.signature()).nested()).format()
