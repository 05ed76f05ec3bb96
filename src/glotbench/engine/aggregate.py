"""A run's aggregate (`Benchmark.run_aggregate`: scores per group, CIs, stability), read from the call
cache when every sample's score is stored there and this exact aggregate was computed before
(engine/cache.py `aggregate_key`: a fully cached re-run imports no numpy and draws no bootstrap),
else computed, and stored when it can be."""

from __future__ import annotations

import json
import logging
from typing import Any

from glotbench.benchmarks import circular
from glotbench.benchmarks import settings as run_settings
from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset, Sample, jsonable
from glotbench.engine.cache import aggregate_key
from glotbench.keys import code_fingerprint, storable
from glotbench.engine.options import RunOptions
from glotbench.engine.runner import Runner
from glotbench.metrics.ratio import aggregate as aggregate_metrics
from glotbench.metrics.ratio import interval
from glotbench.stats import DEFAULT_SEED, bootstrap_many, wilson
from glotbench.stats.cluster import clustered_se

# The code an aggregate depends on besides the benchmark's and its metrics' classes: the files that
# define these are hashed into the aggregate's cache key (`code_fingerprint`), so an aggregate made
# with other interval code (the percentile bootstrap before Wilson) is never served; and the run
# settings' code (benchmarks/settings.py, circular.py), which the aggregate of a setting runs.
AGGREGATE_CODE = (bootstrap_many, wilson, aggregate_metrics, interval, clustered_se, run_settings.aggregate,
                  circular.per_item)


def sacrebleu_version() -> str | None:
    """sacrebleu's installed version, imported or not (a cached re-run does not import it)."""
    from importlib import metadata

    try:
        return metadata.version("sacrebleu")
    except metadata.PackageNotFoundError:
        return None


def aggregate_run(bench: Benchmark, full: Dataset, samples: list[Sample], metrics: Any, runner: Runner,
                  options: RunOptions, versions: dict[str, str]) -> dict[str, Any]:
    """The benchmark's aggregate, read from the call cache when every sample's score is stored there
    and this exact aggregate was computed before (engine/cache.py `aggregate_key`), else computed
    (and stored when it can be)."""
    cache = runner.cache
    keys = runner.score_keys
    if cache is None or runner.scorer_id is None or len(keys) != len(samples):
        return bench.run_aggregate(samples, full, resamples=options.bootstrap_resamples)
    code = code_fingerprint(type(bench), *(type(mt) for mt in metrics), *AGGREGATE_CODE)
    # What the aggregate reads: each sample (its score key names the request, the reply and the
    # scorer, so everything the sample holds but its item's meta: engine/cache.py `score_key`), the
    # dataset (an in-memory one, a judge phase's games, has no file hash), the benchmark's
    # settings (an object's attributes, the content of a file an option names: DeepSEA's groups), its
    # metrics, and the numeric libraries (the bootstrap's draws, sacrebleu's formulas).
    settings = {"resamples": options.bootstrap_resamples, "seed": DEFAULT_SEED, "confidence": 0.95,
                "bench": type(bench).__module__ + ":" + type(bench).__qualname__,
                "options": sorted(options.bench_options),
                "state": jsonable({k: v for k, v in vars(bench).items() if not k.startswith("_")}),
                "group_by": list(bench.group_by), "pooled_overall": bench.pooled_overall, "cluster": bench.cluster_by,
                "metrics": [[type(mt).__qualname__, jsonable(mt)] for mt in metrics],
                "versions": [versions.get("python"), versions.get("numpy"), sacrebleu_version()],
                "dataset": [full.source, full.sha256, len(full), jsonable(full.facts)]}
    content = ([keys[(s.id, s.repeat)], s.repeat, dict(s.meta)] for s in samples)
    key = None if code is None else aggregate_key(runner.scorer_id, content, settings, code)
    if key is None or " object at 0x" in json.dumps(settings, default=repr):  # code or state with no stable text
        return bench.run_aggregate(samples, full, resamples=options.bootstrap_resamples)
    stored = cache.get_aggregate(key)
    if isinstance(stored, dict):
        return stored
    scores = bench.run_aggregate(samples, full, resamples=options.bootstrap_resamples)
    blob = storable(scores)
    if blob is not None:
        try:
            cache.put_aggregate(key, blob)
        except Exception as e:  # noqa: BLE001 - a locked or read-only cache: recomputed next time
            logging.getLogger(__name__).debug("aggregate not stored: %s", e)
    return scores
