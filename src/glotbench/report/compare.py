"""`glotbench compare RUN_A RUN_B`: paired comparison of two runs over the same items."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from glotbench.benchmarks.registry import get_benchmark
from glotbench.errors import GlotbenchError
from glotbench.report.terminal import load_results
from glotbench.stats import paired_test


def _item_stats(run_dir: Path) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, Any]]]:
    """Per-item statistics summed over repeats, and each item's meta, from samples.jsonl."""
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    meta: dict[str, dict[str, Any]] = {}
    with (run_dir / "samples.jsonl").open(encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            meta[rec["id"]] = rec.get("meta") or {}
            for k, v in rec["score"].items():
                rows[rec["id"]][k] += float(v)
    return rows, meta


def compare_runs(run_a: str, run_b: str, *, resamples: int = 1000, seed: int = 12345) -> dict[str, Any]:
    ra, rb = load_results(run_a), load_results(run_b)
    if ra["signature"] != rb["signature"]:
        raise GlotbenchError("the runs have different signatures, so their numbers are not comparable: "
                             f"A: {ra['signature']} B: {rb['signature']}")
    bench = get_benchmark(ra["benchmark"]["name"])
    (sa, meta), (sb, _) = _item_stats(Path(run_a)), _item_stats(Path(run_b))
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
                           "signature": ra["signature"], "metrics": {}}
    for gname, ids in sorted(groups.items()):
        for m in bench.metrics:
            a = np.array([[sa[i].get(k, 0.0) for k in m.keys] for i in ids])
            b = np.array([[sb[i].get(k, 0.0) for k in m.keys] for i in ids])
            res = paired_test(a, b, m.score, resamples=resamples, trials=resamples, seed=seed)
            name = m.name if gname == "overall" else f"{gname} {m.name}"
            out["metrics"][name] = {**res.to_dict(), "scale": m.scale}
    return out


def print_comparison(cmp: dict[str, Any]) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"B − A over {cmp['items']} shared items", box=box.SIMPLE_HEAD,
                  caption="percent or points; paired bootstrap CI and p; approximate randomisation p")
    for col in ("metric", "A", "B", "B − A", "95% CI", "p boot", "p rand"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for name, r in cmp["metrics"].items():
        f = 100 if r["scale"] == "fraction" else 1
        table.add_row(name, f"{f * r['a']:.1f}", f"{f * r['b']:.1f}", f"{f * r['delta']:+.1f}",
                      f"{f * r['ci_low']:+.1f} – {f * r['ci_high']:+.1f}", f"{r['p_bootstrap']:.3f}",
                      f"{r['p_randomization']:.3f}")
    console = Console()
    console.print(f"A: {cmp['a']}\nB: {cmp['b']}", markup=False)
    console.print(table)
    if cmp["only_a"] or cmp["only_b"]:
        console.print(f"items only in A: {cmp['only_a']}, only in B: {cmp['only_b']} (left out)")
    console.print(f"signature: {cmp['signature']}", markup=False, soft_wrap=True)
