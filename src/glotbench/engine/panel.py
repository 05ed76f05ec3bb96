"""The judge panel's runs: each judge the panel kept (judges/panel.py `select_judges`) runs as an
ordinary phase over a Dataset held in memory, with the run's concurrency, timeout, cache and
retries, in its own run directory `OUT/judge-SPEC`; and the judged run's one record, `OUT/results.json`."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from glotbench.core import Dataset, RunResult
from glotbench.engine.evaluate import RunOptions, evaluate_async
from glotbench.errors import GlotbenchError
from glotbench.judges.panel import build_judge
from glotbench.rundir import RESULTS, slug, write_json_atomic
from glotbench.rundir.schema import RESULTS_FORMAT


async def run_panel(bench: Any, dataset: Dataset, judges: Sequence[str], options: RunOptions,
                    out: Path) -> dict[str, RunResult]:
    """Run every judge (those `select_judges` kept) over `dataset`; one run directory per judge under `out`."""
    runs: dict[str, RunResult] = {}
    phase = replace(options, data=None, limit=None)
    for spec in judges:
        runs[spec] = await evaluate_async(bench, build_judge(spec, options),
                                          replace(phase, out=str(out / f"judge-{slug(spec)}"), phase=f"judge {spec}"), dataset=dataset)
    return runs


def check_judged_options(name: str, options: RunOptions) -> None:
    """The run settings a judged benchmark with its own phases (arena, AraGen) refuses (each phase sets its own)."""
    if options.subset is not None:
        raise GlotbenchError(f"{name} takes --limit N (the first N items), not --subset")
    if options.repeats != 1:
        raise GlotbenchError(f"{name} judges one answer per item: --repeats must be 1, got {options.repeats}")


def phase_options(options: RunOptions) -> RunOptions:
    """The run's options as its phases take them: the benchmark's own options and the judges are the
    judged run's, not a phase's (a phase is a plain run)."""
    return replace(options, bench_options=(), judges=(), judge_cards=None)


def write_judged(out: Path, kind: str, summary: Mapping[str, Any], base: Mapping[str, Any],
                 phases: Mapping[str, str]) -> dict[str, Any]:
    """The judged run's results.json (a rubric task, an arena, AraGen): the candidate's run as every
    reader reads one (`report.rundata.view_of`: the mean of judges its headline, the candidate's
    model, counts and tokens from its answers' results `base`), with the judges, each phase's
    directory (relative to `out`) and the kind's `summary` in its `judged` section
    (rundir.schema.JudgedSection). Written once every phase has finished: a complete run."""
    from glotbench.report.rundata import view_of

    view, _ = view_of(kind, summary, base)
    record = {"format": RESULTS_FORMAT, **view, "status": "complete",
              "finished": datetime.now(timezone.utc).isoformat(),
              "judged": {**view["judged"], "phases": dict(phases), "summary": dict(summary)}}
    write_json_atomic(out / RESULTS, record)
    return record
