"""The judge panel's runs: each judge the panel kept (judges/panel.py `select_judges`) runs as an
ordinary phase over a Dataset held in memory, with the run's concurrency, timeout, cache and
retries, in its own run directory `OUT/judge-SPEC`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from glotbench.core import Dataset, RunResult
from glotbench.engine.evaluate import RunOptions, evaluate_async
from glotbench.judges.panel import build_judge
from glotbench.rundir import slug


async def run_panel(bench: Any, dataset: Dataset, judges: Sequence[str], options: RunOptions,
                    out: Path) -> dict[str, RunResult]:
    """Run every judge (those `select_judges` kept) over `dataset`; one run directory per judge under `out`."""
    runs: dict[str, RunResult] = {}
    phase = replace(options, data=None, limit=None)
    for spec in judges:
        runs[spec] = await evaluate_async(bench, build_judge(spec, options),
                                          replace(phase, out=str(out / f"judge-{slug(spec)}")), dataset=dataset)
    return runs
