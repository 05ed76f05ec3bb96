"""What the table, the report and the board say about clustered intervals (docs/metrics.md, "Clustered
items"): which items form clusters, that the CIs resample clusters, and the analytic clustered SE
beside them."""

from __future__ import annotations

from typing import Any, Mapping

MARK = "‡"  # a cell whose interval resampled clusters


def _se(est: Mapping[str, Any], f: float) -> str:
    parts = []
    if est.get("se_clustered") is not None:
        parts.append(f"clustered SE ±{f * est['se_clustered']:.1f}")
    if est.get("se_iid") is not None:
        parts.append(f"independent-items SE ±{f * est['se_iid']:.1f}")
    if est.get("design_effect") is not None:
        parts.append(f"design effect {est['design_effect']:.2f}")
    return ", ".join(parts)


def cluster_line(results: Mapping[str, Any]) -> str | None:
    """`clusters (passage): 488 for 900 items; 95% CIs resample clusters (cluster bootstrap); accuracy:
    clustered SE ±1.5, independent-items SE ±1.1, design effect 1.86`, or None for a run without a
    cluster field."""
    c = (results.get("scores") or {}).get("clusters")
    if not isinstance(c, Mapping):
        return None
    head = f"clusters ({c.get('key')}): {c.get('clusters')} for {c.get('items')} items"
    if c.get("items_without_key"):
        head += f" ({c['items_without_key']} without a {c.get('key')}: a cluster each)"
    if c.get("clusters") == c.get("items"):
        return head + "; every item its own cluster: intervals as for independent items"
    line = head + (f"; 95% CIs count clusters, not items ({MARK}: items‡clusters): Wilson on the effective items "
                   "with t at clusters − 1 df for ratio metrics, the cluster bootstrap (†) for others")
    name = results.get("headline")
    est = ((results.get("scores") or {}).get("overall") or {}).get(name) or {}
    f = 100.0 if (results.get("metrics") or {}).get(name, {}).get("scale", "fraction") == "fraction" else 1.0
    se = _se(est, f) if est.get("ci_method") in ("cluster_bootstrap", "wilson_clusters_fallback", "wilson_effective") else ""
    return line + (f"; {name}: {se}" if se else "")


def cell_fields(est: Mapping[str, Any]) -> dict[str, Any]:
    """The clustering facts a board cell keeps from its estimate (none for independent items)."""
    return {k: est[k] for k in ("clusters", "se_clustered", "se_iid", "design_effect", "too_few_units")
            if est.get(k) is not None}


def paired_rows(a: Any, b: Any, ids: list[str], cluster_of: Mapping[str, Any] | None) -> tuple[Any, Any, int | None]:
    """Two systems' per-item statistic rows (same order as `ids`) summed per cluster when the items
    carry clusters (`cluster_of`: item id -> cluster value; an item without one is its own), so a
    paired test resamples (bootstrap) or swaps (randomisation) whole clusters; with the cluster
    count, or None when no cluster holds two items (the rows are returned as they are)."""
    if not cluster_of:
        return a, b, None
    from glotbench.stats.cluster import cluster_codes, sum_by_cluster

    codes, g = cluster_codes((("value", str(v)) if (v := cluster_of.get(i)) not in (None, "") else ("item", i))
                             for i in ids)
    if g >= len(ids):
        return a, b, None
    return sum_by_cluster(a, codes, g), sum_by_cluster(b, codes, g), g
