"""`glotbench compare RUN_A RUN_B`: paired comparison of two runs over the same items."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from glotbench.core import Dataset
from glotbench.rundir.selection import comparability, describe_item_set
from glotbench.rundir.validity import notes
from glotbench.rundir.schema import SampleRow
from glotbench.errors import GlotbenchError
from glotbench.registry import get_benchmark
from glotbench.rundir import read_results, sample_rows
from glotbench.stats import paired_test


def _rebuild(results: dict[str, Any]) -> tuple[Any, Dataset]:
    """The run's benchmark with its recorded `--bench-opt` settings, and its dataset (same hash)."""
    b = results["benchmark"]
    bench = get_benchmark(b.get("spec") or b["name"], **(results.get("config", {}).get("bench_options") or {}))
    data_path = b.get("data_path")
    if data_path is None and not str(b.get("data", "")).startswith("bundled"):
        data_path = b.get("data")
    dataset = bench.load(data_path)
    if b.get("data_sha256") and dataset.sha256 != b["data_sha256"]:
        raise GlotbenchError(f"the run's data ({b.get('data')}) has changed since the run: sha256 "
                             f"{dataset.sha256} is not the recorded {b['data_sha256']}")
    return bench, dataset


def _item_stats(run_dir: Path, bench: Any, dataset: Dataset) -> dict[str, dict[str, float]]:
    """Per-item statistics summed over repeats: each recorded reply re-scored through the one
    scoring path (a model failure keeps its recorded kind)."""
    from glotbench.scoring import score_output
    from glotbench.metrics import check_statistics

    items = dataset.by_id()
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    samples = []
    for n, rec in sample_rows(run_dir, SampleRow):
        item = items.get(rec["id"])
        if item is None:
            raise GlotbenchError(f"{run_dir / 'samples.jsonl'}:{n}: id: item {rec['id']!r} is not in the run's data")
        out = rec.get("output")
        smp = score_output(bench, item, out, repeat=rec.get("repeat", 0),
                           model_failure=None if out is not None else (rec.get("failure") or "no_output"),
                           truncated=rec.get("finish_reason") == "length")
        samples.append(smp)
        for k, v in smp.stats.items():
            rows[item.id][k] += float(v)
    check_statistics(bench.metrics_for(dataset), samples)
    return rows


def compare_runs(run_a: str, run_b: str, *, resamples: int = 1000, seed: int = 12345) -> dict[str, Any]:
    ra, rb = read_results(run_a), read_results(run_b)
    if comparability(ra)[1] != comparability(rb)[1]:
        raise GlotbenchError("the runs scored different item sets, so their numbers are not comparable: "
                             f"A: {describe_item_set(ra)}; B: {describe_item_set(rb)}. Run both on the same "
                             "items (the same data, --subset and --limit)")
    if ra["signature"] != rb["signature"]:
        raise GlotbenchError("the runs have different signatures, so their numbers are not comparable: "
                             f"A: {ra['signature']} B: {rb['signature']}")
    bench, dataset = _rebuild(ra)
    sa, sb = _item_stats(Path(run_a), bench, dataset), _item_stats(Path(run_b), bench, dataset)
    meta = {it.id: it.meta for it in dataset}
    common = sorted(set(sa) & set(sb))
    if not common:
        raise GlotbenchError("the runs share no items")
    # Benchmarks whose metrics only make sense within a group (translation per direction) compare per group.
    if bench.pooled_overall:
        groups = {"overall": common}
    else:
        key = bench.group_by[0]
        groups = defaultdict(list)
        for i in common:
            groups[f"{key}={meta[i].get(key)}"].append(i)
    out: dict[str, Any] = {"a": ra["model"]["spec"], "b": rb["model"]["spec"], "items": len(common),
                           "only_a": len(set(sa) - set(sb)), "only_b": len(set(sb) - set(sa)),
                           "signature": ra["signature"], "item_set": describe_item_set(ra),
                           "notes": {"a": notes(ra), "b": notes(rb)}, "metrics": {}}
    for gname, ids in sorted(groups.items()):
        for m in bench.metrics_for(dataset):
            a = np.array([[sa[i].get(k, 0.0) for k in m.keys] for i in ids])
            b = np.array([[sb[i].get(k, 0.0) for k in m.keys] for i in ids])
            res = paired_test(a, b, m.score, resamples=resamples, trials=resamples, seed=seed)
            name = m.name if gname == "overall" else f"{gname} {m.name}"
            out["metrics"][name] = {**res.to_dict(), "scale": m.scale}
    return out


def print_comparison(cmp: dict[str, Any]) -> None:
    from rich import box
    from rich.table import Table

    from glotbench.report.terminal import console as make_console
    from glotbench.report.terminal import fit

    table = Table(title=f"B − A over {cmp['items']} shared items", box=box.SIMPLE_HEAD,
                  caption="percent or points; paired bootstrap CI and p; approximate randomisation p")
    for col in ("metric", "A", "B", "B − A", "95% CI", "p boot", "p rand"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for name, r in cmp["metrics"].items():
        f = 100 if r["scale"] == "fraction" else 1
        table.add_row(name, f"{f * r['a']:.1f}", f"{f * r['b']:.1f}", f"{f * r['delta']:+.1f}",
                      f"{f * r['ci_low']:+.1f} – {f * r['ci_high']:+.1f}", f"{r['p_bootstrap']:.3f}",
                      f"{r['p_randomization']:.3f}")
    console = make_console()
    fit(console, table)
    console.print("\n".join(f"{k.upper()}: {cmp[k]}" + "".join(f"\n   {t}" for t in cmp.get("notes", {}).get(k, ()))
                            for k in ("a", "b")), soft_wrap=True)
    console.print(table)
    if cmp["only_a"] or cmp["only_b"]:
        console.print(f"items only in A: {cmp['only_a']}, only in B: {cmp['only_b']} (left out)")
    console.print(f"signature: {cmp['signature']}\nitems: {cmp.get('item_set')}", soft_wrap=True)
