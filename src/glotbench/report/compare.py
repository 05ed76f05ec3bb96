"""`glotbench compare RUN_A RUN_B`: paired comparison of two runs over the same items."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from glotbench.core import Dataset
from glotbench.rundir.selection import comparability, describe_item_set
from glotbench.rundir.validity import notes
from glotbench.rundir.schema import SampleRow
from glotbench.errors import GlotbenchError
from glotbench.metrics.learned import stored_metric
from glotbench.report.clusters import paired_rows
from glotbench.rundir import SAMPLES, read_results, sample_rows
from glotbench.rundir.files import samples_counted
from glotbench.stats import MIN_BOOTSTRAP_UNITS, paired_test, paired_too_few

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark


def _rebuild(results: dict[str, Any]) -> tuple[Any, Dataset]:
    """The run's benchmark with its recorded `--bench-opt` settings, and its dataset (same hash)."""
    from glotbench.report.rundata import rebuild

    bench, dataset, _ = rebuild(results)
    return bench, dataset


def _item_stats(run_dir: Path, bench: Benchmark, dataset: Dataset) -> dict[str, dict[str, float]]:
    """Per-item statistics summed over repeats: each recorded reply re-scored through the one
    scoring path (a model failure keeps its recorded kind)."""
    from glotbench.metrics import check_statistics
    from glotbench.metrics.learned import check_samples, sample_stats
    from glotbench.scoring import score_output

    items = bench.expand(dataset).by_id()  # a circular run asked every rotation
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    samples = []
    lines = sample_rows(run_dir, SampleRow)
    check_samples([rec for _, rec in lines], str(run_dir / SAMPLES))
    for n, rec in lines:
        item = items.get(rec["id"])
        if item is None:
            raise GlotbenchError(f"{run_dir / SAMPLES}:{n}: id: item {rec['id']!r} is not in the run's data")
        out = rec.get("output")
        smp = score_output(bench, item, out, repeat=rec.get("repeat", 0),
                           model_failure=None if out is not None else (rec.get("failure") or "no_output"),
                           truncated=rec.get("finish_reason") == "length")
        samples.append(smp)
        for k, v in smp.stats.items():
            rows[item.id][k] += float(v)
        for k, v in sample_stats(rec).items():  # the learned metric's stored score (run --metric-checkpoint)
            rows[item.id][k] += v
    samples_counted(run_dir, len(samples))
    scored: Sequence[Any] = samples
    if bench.permute is not None:  # per original item, as the run's aggregate (benchmarks/circular.py)
        scored, rows = _combined(bench, dataset, samples)
    check_statistics(bench.run_metrics(dataset), scored)
    return rows


def _combined(bench: Benchmark, dataset: Dataset, samples: list) -> tuple[Sequence[Any], dict[str, dict[str, float]]]:
    combined = bench.combined(samples, dataset)
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for c in combined:
        for k, v in c.score.stats.items():
            rows[c.item_id][k] += float(v)
    return combined, rows


def compare_runs(run_a: str, run_b: str, *, resamples: int = 1000, seed: int = 12345,
                 correction: str = "holm") -> dict[str, Any]:
    """B − A over the items both runs scored (one pair: its adjusted p-values equal the raw ones)."""
    return compare_many([run_a, run_b], resamples=resamples, seed=seed, correction=correction)["pairs"][0]


def _label(i: int) -> str:
    """A, B, C, ... (run 27, run 28, ... after Z)."""
    return chr(ord("A") + i) if i < 26 else f"run {i + 1}"


def check_comparable(paths: list[str], results: list[dict[str, Any]]) -> None:
    """Refuse runs whose item sets or signatures differ from the first run's (labels A, B, C, ...)."""
    ra = results[0]
    for i, rb in enumerate(results[1:], 1):
        path = _label(i)
        if comparability(ra)[1] != comparability(rb)[1]:
            raise GlotbenchError("the runs scored different item sets, so their numbers are not comparable: "
                                 f"A: {describe_item_set(ra)}; {path}: {describe_item_set(rb)}. Run both on the same "
                                 "items (the same data, --subset and --limit)")
        if ra["signature"] != rb["signature"]:
            from glotbench.report.rundata import signature_difference

            # only the parts that differ (A's value ≠ the other run's): two full signatures side by
            # side hide a one-part difference in 300 characters
            raise GlotbenchError("the runs have different signatures, so their numbers are not comparable: "
                                 f"A ≠ {path} in {signature_difference(ra['signature'], rb['signature'])}")


def compare_many(paths: list[str], *, resamples: int = 1000, seed: int = 12345,
                 correction: str = "holm") -> dict[str, Any]:
    """Every pair of runs (earlier as A, later as B) compared on the items both scored, per metric,
    with the paired bootstrap and approximate randomisation; each metric's p-values adjusted over the
    pairs (`correction`: stats/multitest.py), raw and adjusted both kept. The runs must share the
    signature and the item set (rundir/selection.py); every run is scored once."""
    from itertools import combinations

    from glotbench.stats.multitest import NAMES, adjust, check_correction

    check_correction(correction)
    if len(paths) < 2:
        raise GlotbenchError("compare needs two or more run directories")
    from glotbench.report.export import is_eee_file

    for p in paths:
        if is_eee_file(Path(p)):
            raise GlotbenchError(f"{p} is an EEE record: it holds aggregates, and a paired test needs each item's "
                                 "score in both runs (the run directory's samples.jsonl); `glotbench board` shows it")
    from glotbench.report.rundata import judged_kind, judged_pairing_or_why, judged_phase, judged_view

    for p in paths:  # a judge's or a candidate's phase is never a contestant: its judged run stands for it
        if judged_kind(p) is None and judged_phase(p):
            raise GlotbenchError(f"{p} is a phase of the judged run {Path(p).resolve().parent}: compare judged runs by "
                                 "their directories (a judge's phase holds its verdicts, not a score of the judge)")
    judged = [judged_kind(p) is not None for p in paths]
    untested: dict[str, str] = {}
    if any(judged):  # judged runs: each item's judged value (the mean of judges), the judged headline
        views = [judged_view(p) if j else (read_results(p), []) for p, j in zip(paths, judged)]
        results = [v[0] for v in views]
        check_comparable(paths, results)  # a plain run beside a judged one: their signatures differ
        paired = judged_pairing_or_why(results)
        if isinstance(paired, str):  # a run before `judged.rule`, rules that differ: each item's mean over its judges
            stats = [{row["id"]: dict(row["score"]) for row in v[1]} for v in views]
            metrics: list[Any] = [_JudgedMetric(results[0], ("value", "judged"), _item_ratio, f"{ITEM_MEANS} ({paired})")]
        else:
            stats = paired.rows
            metrics = [_JudgedMetric(results[0], paired.keys, paired.score, paired.paired_on)]
        meta: dict[str, Any] = {}
        group_key, cluster_of = None, None
    else:
        results = [read_results(p) for p in paths]
        check_comparable(paths, results)
        bench, dataset = _rebuild(results[0])
        stats = [_item_stats(Path(p), bench, dataset) for p in paths]
        meta = {it.id: it.meta for it in dataset}
        cluster_of = {i: m.get(bench.cluster_by) for i, m in meta.items()} if bench.cluster_by else None
        metrics = list(bench.run_metrics(dataset))
        group_key = None if bench.pooled_overall else bench.group_by[0]
        learned = stored_metric(results[0])  # the runs share their signature, so its `learned:` part
        if learned is not None:
            lacking = [_label(i) for i, st in enumerate(stats) if not any(learned.numerator in r for r in st.values())]
            if lacking:  # a run written before samples.jsonl kept each sample's learned score
                untested[learned.name] = (f"not tested: samples.jsonl of {', '.join(lacking)} holds no per-sample "
                                          f"{learned.label} score (a run before its `learned` field); run it again "
                                          "with --metric-checkpoint (the cache makes no model call)")
            else:
                metrics.append(learned)
    pairs = [_compare_pair(results[i], results[j], stats[i], stats[j], metrics, group_key, meta, cluster_of,
                           resamples=resamples, seed=seed) for i, j in combinations(range(len(paths)), 2)]
    for name in dict.fromkeys(k for pr in pairs for k in pr["metrics"]):
        family = [pr["metrics"][name] for pr in pairs if name in pr["metrics"]]
        for kind in ("p_bootstrap", "p_randomization"):
            for r, adj in zip(family, adjust([r[kind] for r in family], correction)):
                r[f"{kind}_adjusted"] = adj
    for pr, (i, j) in zip(pairs, combinations(range(len(paths)), 2)):
        if any(judged):
            _headline_beside(pr, metrics[0], results[i], results[j])
        pr["paths"] = {"a": paths[i], "b": paths[j]}
        pr["correction"] = correction
        if untested:
            pr["untested"] = dict(untested)
    return {"runs": [r["model"]["spec"] for r in results], "paths": list(paths), "pairs": pairs,
            "correction": correction, "correction_name": NAMES[correction],
            "family": f"each metric's {len(pairs)} pairwise test(s)"}


ITEM_MEANS = "each item's mean over the judges that judged it"


def _item_ratio(row: np.ndarray) -> float:
    return float(row[0] / row[1]) if row[1] > 0 else 0.0


@dataclass(frozen=True)
class _JudgedMetric:
    """A judged run's headline metric as compare pairs it: its per-item statistics' keys, the score of
    their sum, and what it is paired on (`paired_on`, shown beside the figure)."""

    name: str
    keys: tuple[str, ...]
    scale: str
    score: Callable[[np.ndarray], float]
    paired_on: str

    def __init__(self, results: dict[str, Any], keys: tuple[str, ...], score: Callable[[np.ndarray], float],
                 paired_on: str) -> None:
        head = results["headline"]
        object.__setattr__(self, "name", head)
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "scale", results["metrics"][head].get("scale", "fraction"))
        object.__setattr__(self, "score", score)
        object.__setattr__(self, "paired_on", paired_on)


def _headline_beside(pr: dict[str, Any], metric: _JudgedMetric, ra: dict[str, Any], rb: dict[str, Any]) -> None:
    """What a judged pair is paired on, and each run's headline where the paired figure is not it
    (items only one run has; AraGen's 4-decimal rounding in its "3c3h" parse mode; an older run)."""
    r = pr["metrics"].get(metric.name)
    if r is None:
        return
    r["paired_on"] = metric.paired_on
    head = {k: ((run.get("scores") or {}).get("overall") or {}).get(metric.name, {}).get("value")
            for k, run in (("a", ra), ("b", rb))}
    if any(head[k] is None or abs(float(head[k]) - r[k]) > 1e-9 for k in ("a", "b")):
        r["headline"] = head


def _compare_pair(ra: dict[str, Any], rb: dict[str, Any], sa: dict[str, dict[str, float]], sb: dict[str, dict[str, float]],
                  metrics: list[Any], group_key: str | None, meta: dict[str, Any], cluster_of: dict[str, Any] | None, *,
                  resamples: int, seed: int) -> dict[str, Any]:
    common = sorted(set(sa) & set(sb))
    if not common:
        raise GlotbenchError("the runs share no items")
    # Benchmarks whose metrics only make sense within a group (translation per direction) compare per group.
    if group_key is None:
        groups = {"overall": common}
    else:
        groups = defaultdict(list)
        for i in common:
            groups[f"{group_key}={meta[i].get(group_key)}"].append(i)
    out: dict[str, Any] = {"a": ra["model"]["spec"], "b": rb["model"]["spec"], "items": len(common),
                           "only_a": len(set(sa) - set(sb)), "only_b": len(set(sb) - set(sa)),
                           "signature": ra["signature"], "item_set": describe_item_set(ra),
                           "notes": {"a": notes(ra), "b": notes(rb)}, "metrics": {}}
    for gname, ids in sorted(groups.items()):
        for m in metrics:
            a = np.array([[sa[i].get(k, 0.0) for k in m.keys] for i in ids]).reshape(len(ids), len(m.keys))
            b = np.array([[sb[i].get(k, 0.0) for k in m.keys] for i in ids]).reshape(len(ids), len(m.keys))
            a, b, clusters = paired_rows(a, b, ids, cluster_of)
            res = paired_test(a, b, m.score, resamples=resamples, trials=resamples, seed=seed)
            name = m.name if gname == "overall" else f"{gname} {m.name}"
            down = bool(((ra.get("metrics") or {}).get(m.name) or {}).get("lower_is_better"))  # as the run recorded it
            out["metrics"][name] = {**res.to_dict(), "n": len(ids), "scale": m.scale, "lower_is_better": down,
                                    **({"clusters": clusters} if clusters else {}),
                                    "too_few_units": paired_too_few(len(ids), clusters)}
    return out


def print_comparison(cmp: dict[str, Any]) -> None:
    """One pair (`compare_runs`)."""
    print_many({"runs": [cmp["a"], cmp["b"]], "pairs": [cmp], "correction": cmp.get("correction", "none"),
                "correction_name": "", "family": ""})


def print_many(res: dict[str, Any]) -> None:
    from rich import box
    from rich.table import Table

    from glotbench.report.terminal import ci_text, fit, n_text
    from glotbench.report.terminal import console as make_console

    console = make_console()
    many = len(res["pairs"]) > 1
    for cmp in res["pairs"]:
        caption = "percent or points; paired bootstrap CI and p; approximate randomisation p"
        if many:
            caption += f"; p adj: {res['correction_name']} over {res['family']}"
        if any("clusters" in r for r in cmp["metrics"].values()):
            caption += "; clusters resampled and swapped whole (the benchmark names a cluster field)"
        if any("headline" in r for r in cmp["metrics"].values()):
            caption += "; ‡: the paired figure is not the run's headline (below)"
        if any(r.get("too_few_units") for r in cmp["metrics"].values()):
            caption += (f"; †: too few units for this interval's measured coverage (under {MIN_BOOTSTRAP_UNITS} items, "
                        "or clusters: docs/metrics.md)")
        table = Table(title=f"B − A over {cmp['items']} shared items", box=box.SIMPLE_HEAD, caption=caption)
        cols = ["metric", "A", "B", "B − A", "95% CI", "p boot", "p rand"] + (["p boot adj", "p rand adj"] if many else [])
        for col in cols:
            table.add_column(col, justify="left" if col == "metric" else "right")
        for name, r in cmp["metrics"].items():
            f = 100 if r["scale"] == "fraction" else 1
            mark = " ‡" if "headline" in r else ""
            row = [(f"{name} (lower is better)" if r.get("lower_is_better") else name) + mark,
                   f"{f * r['a']:.1f}", f"{f * r['b']:.1f}", f"{f * r['delta']:+.1f}",
                   f"{ci_text(r, r['scale'], signed=True)} n={n_text(r)}", f"{r['p_bootstrap']:.3f}",
                   f"{r['p_randomization']:.3f}"]
            if many:
                row += [f"{r['p_bootstrap_adjusted']:.3f}", f"{r['p_randomization_adjusted']:.3f}"]
            table.add_row(*row)
        fit(console, table)
        console.print("\n".join(f"{k.upper()}: {cmp[k]}" + "".join(f"\n   {t}" for t in cmp.get("notes", {}).get(k, ()))
                                for k in ("a", "b")), soft_wrap=True)
        console.print(table)
        if cmp["only_a"] or cmp["only_b"]:
            console.print(f"items only in A: {cmp['only_a']}, only in B: {cmp['only_b']} (left out)")
        for name, r in cmp["metrics"].items():
            if "paired_on" in r:
                console.print(paired_note(name, r), soft_wrap=True)
        for name, why in (cmp.get("untested") or {}).items():
            console.print(f"{name}: {why}", soft_wrap=True)
    last = res["pairs"][-1]
    console.print(f"signature: {last['signature']}\nitems: {last.get('item_set')}", soft_wrap=True)


def paired_note(name: str, r: dict[str, Any]) -> str:
    """A judged metric's line beside its paired figure: what it is paired on, and each run's headline
    where the paired figure is not it (‡)."""
    f = 100 if r["scale"] == "fraction" else 1
    text = f"{name}: paired on {r['paired_on']}, over the {r['n']} shared items"
    head = r.get("headline")
    if head is None:
        return text + " (the runs' headlines)"

    def fig(v: Any) -> str:
        return "none" if v is None else f"{f * v:.1f}"
    return (text + f"; ‡ not the runs' headlines: A {fig(head['a'])} (paired {f * r['a']:.1f}), "
            f"B {fig(head['b'])} (paired {f * r['b']:.1f})")
