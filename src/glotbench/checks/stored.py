"""A finished run's checks computed again from what it stored: samples.jsonl (the replies, answers
and scores) and its data, re-read and SHA-256 checked (the gold the checks compare with is never in
samples.jsonl). No model is called, so it works with the endpoint gone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from glotbench.errors import GlotbenchError


def checks_of_run(run_dir: str | Path) -> dict[str, Any]:
    from glotbench.checks import RunChecks
    from glotbench.core import Sample
    from glotbench.report import rundata

    data = rundata.load_run(run_dir)
    if data.kind != "run":
        raise GlotbenchError(f"{run_dir}: a judged run; its phases are runs of their own")
    bench, dataset, units = rundata.rebuild(data.results)
    samples = [Sample.from_record(r) for r in rundata.iter_samples(data.path)]
    return RunChecks(bench, units).summary(samples, bench.run_metrics(dataset))


def write_checks(run_dir: str | Path, block: dict[str, Any], **replace: Any) -> None:
    """results.json with `checks` (and any other top-level key given) replaced, written atomically."""
    from glotbench.rundir import RESULTS, write_json_atomic

    path = Path(run_dir) / RESULTS
    results = json.loads(path.read_text(encoding="utf-8"))
    results["checks"] = block
    results.update(replace)
    write_json_atomic(path, results)
