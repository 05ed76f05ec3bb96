"""English pivot, read back: native against pivot on the items both scored (engine/pivot.py runs
the phases; results.json `checks.pivot` holds this comparison)."""

from __future__ import annotations

from typing import Any

from glotbench.benchmarks.base import Benchmark


def paired(bench: Benchmark, metrics: Any, native: Any, pivot: Any, resamples: int = 1000) -> dict[str, Any]:
    """Native against pivot on the items both scored: the headline of each, the difference (pivot -
    native) with its paired-bootstrap CI and p, and approximate randomisation's p; per group too."""
    import numpy as np

    from glotbench.stats import paired_test, paired_too_few

    head = metrics[0]
    keys = list(head.keys)

    def rows(samples: Any) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for s in samples:
            r = out.setdefault(s.id, {})
            for k in keys:
                r[k] = r.get(k, 0.0) + float(s.score.stats.get(k, 0.0))
        return out

    a, b = rows(native), rows(pivot)
    meta = {s.id: s.meta for s in native}

    def test(ids: list[str]) -> dict[str, Any]:
        A = np.array([[a[i][k] for k in keys] for i in ids]).reshape(len(ids), len(keys))
        B = np.array([[b[i][k] for k in keys] for i in ids]).reshape(len(ids), len(keys))
        return {**paired_test(A, B, head.score, resamples=resamples, trials=resamples).to_dict(), "items": len(ids),
                **({"too_few_units": True} if paired_too_few(len(ids)) else {})}  # the † of compare and diff

    common = [i for i in a if i in b]
    out: dict[str, Any] = {"metric": head.name, "scale": getattr(head, "scale", "fraction"),
                           "overall": test(common) if bench.pooled_overall else None, "groups": {}}
    for key in bench.group_by[:1]:
        vals: dict[str, list[str]] = {}
        for i in common:
            vals.setdefault(str(meta[i].get(key, "unknown")), []).append(i)
        out["groups"][key] = {v: test(ids) for v, ids in sorted(vals.items())}
    return out
