"""A panel of judges, shared by the arena and AraGen.

Several judges score the same samples; a judge that is the candidate (same model, or with
`same_family`, the same model family) is skipped, since models prefer their own answers; malformed
verdicts are retried (the judge is wrapped so that a reply failing the verdict parser is a
retryable error); each judge runs as an ordinary phase with the run's concurrency, timeout, cache
and retries, over a Dataset held in memory; the panel's score is the mean of the judges' scores,
with a bootstrap CI that resamples items for all judges together.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from glotbench.core import Dataset, RunResult
from glotbench.models.base import Model
from glotbench.models.family import model_family  # noqa: F401 - families are parsed in one place
from glotbench.stats import DEFAULT_SEED, Estimate, bootstrap_many


def same_model(a: Model, b: Model) -> bool:
    """The same model: the same cache id, or the same named model (backends without a model name,
    such as python: callables, are compared by cache id alone)."""
    name_a, name_b = a.description().get("model"), b.description().get("model")
    return a.cache_id == b.cache_id or (name_a is not None and name_a == name_b)


def build_judge(spec: str, options: Any) -> Model:
    """A judge model built with the run's concurrency, timeout and key variable (not a default pool).
    A malformed verdict is retried by the runner: the judge benchmarks name their `retry_failures`."""
    from glotbench.registry import load_model

    opts: dict[str, Any] = {"timeout_s": options.timeout_s}
    if options.concurrency is not None:
        opts["concurrency"] = options.concurrency
    if options.api_key_env is not None:
        opts["api_key_env"] = options.api_key_env
    return load_model(spec, **opts)


@dataclass(frozen=True)
class PanelRun:
    """Each judge's run (in memory) and the judges skipped as the candidate."""

    runs: dict[str, RunResult]
    skipped: list[str]


async def run_panel(bench: Any, dataset: Dataset, judges: Sequence[str], options: Any, out: Path, *,
                    skip: Callable[[str, Model], bool] = lambda spec, m: False) -> PanelRun:
    """Run every judge not skipped over `dataset`; one run directory per judge under `out`."""
    from glotbench.engine.evaluate import _slug, evaluate_async

    runs: dict[str, RunResult] = {}
    skipped: list[str] = []
    phase = replace(options, data=None, limit=None)
    for spec in judges:
        judge = build_judge(spec, options)
        if skip(spec, judge):
            skipped.append(spec)
            await judge.aclose()
            continue
        runs[spec] = await evaluate_async(bench, judge, replace(phase, out=str(out / f"judge-{_slug(spec)}")),
                                          dataset=dataset)
    return PanelRun(runs, skipped)


def mean_of_judges(values: Mapping[str, Mapping[str, Sequence[float]]], ids: Sequence[str], *,
                   resamples: int = 1000, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """`values[judge][item]` holds the values a judge gave an item (orders, repeats). Per judge and
    item they are averaged; a judge's score is the mean over the items it judged; the final score is
    the mean over judges. CIs resample items (all judges together)."""
    judges = list(values)
    if not judges:
        raise ValueError("no judge produced a verdict")
    rows = np.zeros((len(ids), 2 * len(judges)))
    for p, pid in enumerate(ids):
        for j, judge in enumerate(judges):
            v = values[judge].get(pid) or []
            if v:
                rows[p, 2 * j] = sum(v) / len(v)
                rows[p, 2 * j + 1] = 1.0

    def judge_fn(j: int) -> Callable[[np.ndarray], float]:
        return lambda r: float(r[2 * j] / r[2 * j + 1]) if r[2 * j + 1] > 0 else float("nan")

    def final(r: np.ndarray) -> float:
        per = [r[2 * j] / r[2 * j + 1] for j in range(len(judges)) if r[2 * j + 1] > 0]
        return float(np.mean(per)) if per else float("nan")

    fns = {"final": final, **{judge: judge_fn(j) for j, judge in enumerate(judges)}}
    est: dict[str, Estimate] = bootstrap_many(rows, fns, resamples=resamples, seed=seed)
    coverage = {judge: int(rows[:, 2 * j + 1].sum()) for j, judge in enumerate(judges)}
    return {"final": est["final"].to_dict(), "judges": {j: est[j].to_dict() for j in judges},
            "prompts_judged": coverage, "prompts": len(ids)}
