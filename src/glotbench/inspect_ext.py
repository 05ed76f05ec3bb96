"""glotbench's scorer as an Inspect extension (inspect_ai 0.3.285): `[project.entry-points.inspect_ai]`
in pyproject.toml names this module, so Inspect imports it (and only Inspect: glotbench never does, and
needs no inspect_ai) when a name `glotbench/...` is looked up:

    glotbench/score(task, options)   a reply scored as the glotbench task scores it: its extraction and
                                     its scorer (`glotbench.scoring.score_output`), the item's gold from
                                     the row's `glotbench` column (a derived dataset: `tasks check
                                     --eval-yaml`); each sample's statistics in its score's metadata
    glotbench/task_metrics()         the task's own aggregate over those statistics (`aggregate` of the
                                     benchmark): a corpus metric (chrF++, BLEU) from summed statistics, a
                                     mean, an entity F1 pooled over items; one value per metric

Inspect's eval.yaml cannot name it (0.3.285's HFScorer accepts ten built-in names only), so a derived
eval.yaml of a task Inspect cannot score names the scorer in its header and under `glotbench:`, and
Inspect scores its log with it: `inspect score LOG --scorer glotbench/score -S task=NAME --action
overwrite` (docs/tasks.md, "Inspect's eval.yaml").
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from inspect_ai._util.package import get_installed_package_name
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from glotbench.tasks.inspect_derived import derived_item, options_key
from glotbench.tasks.inspect_yaml import GLOTBENCH_COLUMN as COLUMN  # the derived row's item, JSON text

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark


def _namespace() -> str:
    """The prefix that makes Inspect register `glotbench/score` however glotbench was found.

    Inspect prefixes a name with its package only when the module is in site-packages or an editable
    install it can read (inspect_ai/_util/package.py); run from a source tree on PYTHONPATH, or beside a
    stale `src/glotbench.egg-info`, it registered a bare `score`, and an eval.yaml's `glotbench/score`
    was not found. Here the name is given whole where Inspect would not prefix it.
    """
    return "" if get_installed_package_name(_namespace) == "glotbench" else "glotbench/"


@lru_cache(maxsize=16)
def _bench(task: str, options: str) -> Benchmark:
    from glotbench.registry import get_benchmark

    return get_benchmark(task, **json.loads(options))


def _key(options: Any) -> str:
    if options is not None and not isinstance(options, dict):
        raise ValueError(f"glotbench/score: options is a mapping of the task's options, not {type(options).__name__}")
    return options_key(options)


def _item(bench: Benchmark, metadata: dict[str, Any], sample_id: Any) -> Any:
    """The sample's item, checked as glotbench's import checks a derived row (`derived_item`)."""
    from glotbench.errors import DataError

    raw = metadata.get(COLUMN)
    if not isinstance(raw, str):
        raise ValueError(f"sample {sample_id}: no {COLUMN!r} metadata (the derived rows' column: field_spec.metadata)")
    try:
        return derived_item(raw, bench, f"sample {sample_id}", COLUMN, need_task=False)
    except DataError as e:
        raise ValueError(f"{e} (-S task=... -S options=...)" if "derived from task" in str(e) else str(e)) from None


@metric(name=_namespace() + "task_metrics")
def task_metrics() -> Metric:
    """Each metric of the task over every scored sample, as the task's run aggregates them."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        from glotbench.core import Sample
        from glotbench.metrics import ItemScore

        metas = [s.score.metadata or {} for s in scores]
        if not metas:
            return {}
        if any("stats" not in m for m in metas):  # e.g. epochs reduced into one score: its metadata dropped
            raise ValueError("glotbench/task_metrics: a score without glotbench/score's statistics (its metadata); "
                             "score each sample once (epochs 1)")
        bench = _bench(metas[0]["task"], metas[0]["options"])
        rows = [Sample(str(m["item"]), 0, m.get("meta") or {}, ItemScore(m["stats"])) for m in metas]
        overall = bench.aggregate(rows, None, resamples=0)["overall"]
        return {name: float(est["value"]) for name, est in overall.items()
                if isinstance(est, dict) and est.get("value") is not None}

    return compute


@scorer(metrics=[task_metrics()], name=_namespace() + "score")
def score(task: str, options: dict[str, Any] | None = None) -> Scorer:
    """The glotbench task `task` (a library name or a task file) with its `options` (`--bench-opt`)."""
    key = _key(options)
    bench = _bench(task, key)

    async def do(state: TaskState, target: Target) -> Score:
        import numpy as np

        from glotbench.core import jsonable
        from glotbench.scoring import score_output

        item = _item(bench, state.metadata or {}, state.sample_id)
        out = score_output(bench, item, state.output.completion,
                           truncated=state.output.stop_reason == "max_tokens")
        stats = {k: float(v) for k, v in out.score.stats.items()}
        head = bench.metrics_for(None)[0]
        value = float(head.score(np.array([stats.get(k, 0.0) for k in head.keys], dtype=np.float64)))
        # An item the headline has no per-item value for (entity F1 of a sentence with no entity: 0/0) is
        # 0 here: Inspect leaves a NaN score out of its metrics, and task_metrics must see every item's
        # statistics (its no-answer rate counts that item).
        value = value if np.isfinite(value) else 0.0
        return Score(value=value, answer=None if out.answer is None else json.dumps(jsonable(out.answer), ensure_ascii=False),
                     explanation=out.score.failure or out.error,
                     metadata={"task": task, "options": key, "item": item.id, "meta": dict(item.meta), "stats": stats})

    return do
