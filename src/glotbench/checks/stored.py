"""A finished run's checks computed again from what it stored: samples.jsonl (the replies, answers
and scores) and its data, re-read and SHA-256 checked (the gold the checks compare with is never in
samples.jsonl). No model is called, so it works with the endpoint gone."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from glotbench.errors import GlotbenchError


def rebuild(results: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The run's benchmark with its recorded `--bench-opt`s, its dataset (the same data) and the items it asked."""
    from glotbench.checks.wrap import expand_units
    from glotbench.registry import get_benchmark

    b = results["benchmark"]
    bench = get_benchmark(b.get("spec") or b["name"], **((results.get("config") or {}).get("bench_options") or {}))
    path = b.get("data_path")
    if path is None and not str(b.get("data", "")).startswith("bundled"):
        path = b.get("data")
    dataset = bench.load(path)
    if b.get("data_sha256") and dataset.sha256 != b["data_sha256"]:
        raise GlotbenchError(f"the run's data ({b.get('data')}) has changed since the run: sha256 {dataset.sha256} "
                             f"is not the recorded {b['data_sha256']}")
    return bench, dataset, expand_units(bench, dataset)


def checks_of_run(run_dir: str | Path) -> dict[str, Any]:
    from glotbench.checks import RunChecks
    from glotbench.core import Sample
    from glotbench.report import rundata

    data = rundata.load_run(run_dir)
    if data.kind != "run":
        raise GlotbenchError(f"{run_dir}: a judged run; its phases are runs of their own")
    bench, dataset, units = rebuild(data.results)
    samples = [Sample.from_record(r) for r in rundata.iter_samples(data.path)]
    return RunChecks(bench, units).summary(samples, bench.metrics_for(dataset))


def write_checks(run_dir: str | Path, block: dict[str, Any], **replace: Any) -> None:
    """results.json with `checks` (and any other top-level key given) replaced, written atomically."""
    path = Path(run_dir) / "results.json"
    results = json.loads(path.read_text(encoding="utf-8"))
    results["checks"] = block
    results.update(replace)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, ensure_ascii=False, indent=2), encoding="utf-8")
    os.replace(tmp, path)
