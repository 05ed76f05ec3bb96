"""A circular run read back (`permute=circular`, benchmarks/circular.py): each original item's
statistics from its rotations' samples.jsonl rows, as the run's aggregate counted them (the board's
and compare's paired tests). `rotate` and `unrotate` are benchmarks/circular.py's, named here too."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping, Sequence

from glotbench.benchmarks.circular import combine, rotate, unrotate
from glotbench.metrics import ScoredSample
from glotbench.signature import Signature

__all__ = ["item_stats", "rotate", "unrotate"]


def item_stats(results: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]] | None:
    """Per original item statistics of a circular run's samples.jsonl rows, summed over repeats, as
    the run's aggregate computed them (for paired tests on the board and in compare); None for a
    run without rotations."""
    if Signature.parse(str(results.get("signature", ""))).get("permute") != "circular":
        return None
    keys = list(results["metrics"][results["headline"]]["keys"])
    pair = [(keys[i], keys[i + 1]) for i in range(0, len(keys) - 1, 2)]
    from glotbench.metrics import ItemScore

    rows = [ScoredSample(str(r["id"]), int(r.get("repeat", 0)), r.get("meta") or {},
                         ItemScore(dict(r.get("score") or {}), (), r.get("failure")),
                         r.get("answer") if isinstance(r.get("answer"), str) else None) for r in samples]
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for c in combine(rows, pair):
        for k, v in c.score.stats.items():
            out[c.item_id][k] += float(v)
    return out
