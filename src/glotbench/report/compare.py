"""`glotbench compare RUN_A RUN_B`: paired comparison of two runs over the same items."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from glotbench.errors import GlotbenchError
from glotbench.report.terminal import load_results
from glotbench.stats import PairedResult, paired_test, ratio_fn


def _item_stats(run_dir: Path) -> dict[str, dict[str, float]]:
    """Per-item statistics summed over repeats, from samples.jsonl."""
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    with (run_dir / "samples.jsonl").open(encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            for k, v in rec["score"].items():
                rows[rec["id"]][k] += float(v)
    return rows


def compare_runs(run_a: str, run_b: str, *, resamples: int = 1000, seed: int = 12345) -> dict[str, Any]:
    ra, rb = load_results(run_a), load_results(run_b)
    if ra["signature"] != rb["signature"]:
        raise GlotbenchError("the runs have different signatures, so their numbers are not comparable:\n"
                             f"  A: {ra['signature']}\n  B: {rb['signature']}".replace("\n", " "))
    sa, sb = _item_stats(Path(run_a)), _item_stats(Path(run_b))
    common = sorted(set(sa) & set(sb))
    if not common:
        raise GlotbenchError("the runs share no items")
    out: dict[str, Any] = {"a": ra["model"]["spec"], "b": rb["model"]["spec"], "items": len(common),
                           "only_a": len(set(sa) - set(sb)), "only_b": len(set(sb) - set(sa)),
                           "signature": ra["signature"], "metrics": {}}
    for name, m in ra["metrics"].items():
        if not isinstance(m, dict) or "numerator" not in m:
            raise GlotbenchError(f"{run_a}/results.json lacks the metric definitions (written by an older "
                                 "glotbench); run it again to compare")
        num, den = m["numerator"], m["denominator"]
        a = np.array([[sa[i].get(num, 0.0), sa[i].get(den, 0.0)] for i in common])
        b = np.array([[sb[i].get(num, 0.0), sb[i].get(den, 0.0)] for i in common])
        res: PairedResult = paired_test(a, b, ratio_fn(0, 1), resamples=resamples, trials=resamples, seed=seed)
        out["metrics"][name] = res.to_dict()
    return out


def print_comparison(cmp: dict[str, Any]) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"B − A over {cmp['items']} shared items", box=box.SIMPLE_HEAD,
                  caption="percent; paired bootstrap CI and p; approximate randomisation p")
    for col in ("metric", "A", "B", "B − A", "95% CI", "p boot", "p rand"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for name, r in cmp["metrics"].items():
        table.add_row(name, f"{100 * r['a']:.1f}", f"{100 * r['b']:.1f}", f"{100 * r['delta']:+.1f}",
                      f"{100 * r['ci_low']:+.1f} – {100 * r['ci_high']:+.1f}", f"{r['p_bootstrap']:.3f}",
                      f"{r['p_randomization']:.3f}")
    console = Console()
    console.print(f"A: {cmp['a']}\nB: {cmp['b']}", markup=False)
    console.print(table)
    if cmp["only_a"] or cmp["only_b"]:
        console.print(f"items only in A: {cmp['only_a']}, only in B: {cmp['only_b']} (left out)")
    console.print(f"signature: {cmp['signature']}", markup=False, soft_wrap=True)
