"""Multiple choice by test-taking tricks: OpenCompass's CircularEval for every option task, the
`permute=circular` run setting (benchmarks/settings.py applies it: `Benchmark.expand`, `combined`,
`run_metrics`, `run_aggregate`).

`--bench-opt permute=circular` asks each item once per rotation of its options (k options: the k
circular shifts, ABCD, BCDA, CDAB, DABC: in rotation r the option shown at position i is the
original option (i + r) mod k, and the gold letter moves with its text). Rotation 0 is the item as
it always is (same id, same prompt: a plain run's cached reply serves it); rotation r > 0 is item
`ID#rotR`. The rotations are in the signature (`|permute:circular`) and, through the prompt (the
options' order), in every request's cache key.

The run's scores are per original item: each statistic of the benchmark is taken from the
rotation with the lowest headline outcome, so the headline (labelled `circular ...`) counts an item
right only when it is right in every rotation. Beside it, from the same rotations:
`plain_accuracy` (rotation 0: what a run without rotations scores), `rotation_accuracy` (the mean
over rotations), `follows_position` (the share of items answered with the same letter in every
rotation: the answer follows a position, not an option) and `consistent` (the same option, by its
text, chosen in every rotation).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any, Mapping, Sequence

from glotbench.core import Dataset
from glotbench.errors import SpecError
from glotbench.items import Item
from glotbench.metrics import MacroMetric, Metric, RatioMetric, ScoredSample

LETTERS = "ABCDEFGHIJ"
SEP = "#rot"
EXTRA = (("plain_accuracy", "circular:plain", "accuracy with the options in their original order (rotation 0)"),
         ("rotation_accuracy", "circular:mean", "accuracy over all rotations (mean)"),
         ("follows_position", "circular:position", "share of items answered with the same letter in every rotation"),
         ("consistent", "circular:consistent", "share of items whose chosen option (by its text) is the same in every rotation"))


def _options_of(item: Item) -> tuple[str, int] | None:
    """("options" or "choices", k) for an item with k >= 2 options."""
    opts = item.public.get("options")
    if isinstance(opts, Mapping) and len(opts) >= 2 and all(k in LETTERS for k in opts):
        return "options", len(opts)
    choices = item.public.get("choices")
    if isinstance(choices, (list, tuple)) and len(choices) >= 2:
        return "choices", len(choices)
    return None


def rotate(item: Item, r: int) -> Item:
    """The item with its options shifted by `r` (rotation 0 is the item itself, meta added)."""
    found = _options_of(item)
    if found is None:
        raise SpecError(f"item {item.id!r} has no options to rotate (permute=circular is for option tasks)")
    field, k = found
    public = dict(item.public)
    if field == "options":
        keys = list(item.public["options"])
        values = [item.public["options"][key] for key in keys]
        public["options"] = {keys[i]: values[(i + r) % k] for i in range(k)}
        letters = keys
    else:
        values = list(item.public["choices"])
        public["choices"] = [values[(i + r) % k] for i in range(k)]
        letters = list(LETTERS[:k])
    gold = dict(item.gold)
    old = gold.get("answer")
    if old in letters:
        gold["answer"] = letters[(letters.index(old) - r) % k]
    meta = {**item.meta, "circular_item": item.id, "rotation": r}
    return Item.create(item.id if r == 0 else f"{item.id}{SEP}{r}", public, gold, meta)


def expand(items: Dataset) -> Dataset:
    """Every item in each of its rotations, rotations of one item together."""
    out = []
    for it in items:
        found = _options_of(it)
        if found is None:
            raise SpecError(f"item {it.id!r} has no options to rotate (permute=circular is for option tasks)")
        out += [rotate(it, r) for r in range(found[1])]
    return dataclasses.replace(items, items=tuple(out))


def unrotate(letter: str | None, r: int, k: int) -> str | None:
    """The original option's letter of the letter chosen in rotation `r`."""
    if letter is None or letter not in LETTERS[:k]:
        return None
    return LETTERS[(LETTERS.index(letter) + r) % k]


def _outcome(stats: Mapping[str, float], pairs: Sequence[tuple[str, str]]) -> float:
    num = sum(float(stats.get(n, 0.0)) for n, _ in pairs)
    den = sum(float(stats.get(d, 0.0)) for _, d in pairs)
    return num / den if den > 0 else 0.0


def sizes_of(dataset: Any) -> dict[str, int] | None:
    """Each original item's rotation count (its option count), from the run's unrotated items."""
    if dataset is None:
        return None
    return {str(it.id): found[1] for it in dataset if (found := _options_of(it)) is not None}


def _option_texts(item: Item) -> dict[str, str]:
    """The item's options by letter, their texts with whitespace and case folded."""
    found = _options_of(item)
    if found is None:
        return {}
    field, _ = found
    opts = item.public[field]
    pairs = opts.items() if field == "options" else zip(LETTERS, opts)
    return {k: " ".join(str(v).split()).casefold() for k, v in pairs}


def duplicates_of(dataset: Any) -> dict[str, dict[str, str]]:
    """Items two of whose options share a text: each letter mapped to the first letter with its text
    (the canonical copy). CircularEval moves the gold with one copy, so naming the other copy is
    wrong in some rotations: such items are named in the aggregate, and `consistent` compares
    options by text through this map."""
    out: dict[str, dict[str, str]] = {}
    for it in dataset or ():
        texts = _option_texts(it)
        first: dict[str, str] = {}
        canon = {k: first.setdefault(t, k) for k, t in texts.items()}
        if len(first) < len(texts):
            out[str(it.id)] = canon
    return out


def incomplete(samples: Sequence[Any], sizes: Mapping[str, int] | None) -> list[str]:
    """The original items (and repeats, as ID or ID@repeat) asked in only some of their rotations: a
    run stopped by --max-cost (or killed) between an item's rotations. Right in the rotations asked
    is not right in every rotation, so `combine` leaves them out and the aggregate names them."""
    if not sizes:
        return []
    seen: dict[tuple[str, int], set[int]] = defaultdict(set)
    for s in samples:
        seen[(str(s.meta.get("circular_item", s.item_id)), s.repeat)].add(int(s.meta.get("rotation", 0)))
    return [orig if repeat == 0 else f"{orig}@{repeat}" for (orig, repeat), rots in seen.items()
            if orig in sizes and rots != set(range(sizes[orig]))]


def combine(samples: Sequence[Any], pairs: Sequence[tuple[str, str]],
            sizes: Mapping[str, int] | None = None, canon: Mapping[str, Mapping[str, str]] | None = None) -> list[ScoredSample]:
    """One sample per original item and repeat (see the module): the worst rotation's statistics
    plus the `circular:` ones. With `sizes` (each item's option count), an item not asked in every
    rotation is left out (`incomplete`); without, the rotations present are taken as all of them."""
    groups: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for s in samples:
        orig = s.meta.get("circular_item", s.item_id)
        groups[(str(orig), s.repeat)].append(s)
    out = []
    for (orig, repeat), rots in groups.items():
        rots = sorted(rots, key=lambda s: int(s.meta.get("rotation", 0)))
        k = len(rots)
        if sizes and orig in sizes and [int(s.meta.get("rotation", 0)) for s in rots] != list(range(sizes[orig])):
            continue  # some rotations never asked (a stopped run): not scored as circular
        outcomes = [_outcome(s.score.stats, pairs) for s in rots]
        worst = rots[min(range(k), key=lambda i: (outcomes[i], i))]
        letters = [s.answer_key if isinstance(s.answer_key, str) and len(s.answer_key) == 1 else None for s in rots]
        contents = [unrotate(a, int(s.meta.get("rotation", 0)), k) for a, s in zip(letters, rots)]
        same = (canon or {}).get(orig)
        if same:  # two options share a text: the same text is the same choice
            contents = [same.get(c, c) if c is not None else None for c in contents]
        stats = {**worst.score.stats, "circular:items": 1.0, "circular:plain": outcomes[0],
                 "circular:mean": sum(outcomes) / k,
                 "circular:position": float(k > 1 and None not in letters and len(set(letters)) == 1),
                 "circular:consistent": float(None not in contents and len(set(contents)) == 1)}
        meta = {key: v for key, v in rots[0].meta.items() if key not in ("circular_item", "rotation")}
        score = dataclasses.replace(worst.score, stats=stats)
        out.append(ScoredSample(orig, repeat, meta, score, "|".join(str(c) for c in contents)))
    return out



def _relabelled(m: Metric) -> Metric:
    """A headline-like metric (one with an interval) named as the circular figure it becomes."""
    if not (m.show_ci and dataclasses.is_dataclass(m)):
        return m
    return dataclasses.replace(m, label=f"circular {m.label or m.name}",
                               description=f"circular (right in every rotation): {m.description}")

def pairs(metric: Any) -> list[tuple[str, str]]:
    """The (numerator, denominator) statistics of a ratio or macro metric; [] for a corpus metric."""
    if isinstance(metric, RatioMetric):
        return [(metric.numerator, metric.denominator)]
    if isinstance(metric, MacroMetric):
        keys = metric.keys
        return [(keys[i], keys[i + 1]) for i in range(0, len(keys), 2)]
    return []


def per_item(inner: Sequence[Metric], samples: Sequence[Any], dataset: Dataset | Sequence[Item] | None) -> list[ScoredSample]:
    """One sample per original item and repeat (`combine`), as the aggregate scores them; `inner`:
    the benchmark's own metrics (its headline decides the worst rotation)."""
    return combine(samples, pairs(inner[0]), sizes_of(dataset), duplicates_of(dataset))


def metrics(inner: Sequence[Metric]) -> tuple[Metric, ...]:
    """A circular run's metrics: the benchmark's own, the headline-like ones relabelled `circular`,
    then the rotation figures (EXTRA)."""
    return tuple(_relabelled(m) for m in inner) + tuple(
        RatioMetric(name, key, "circular:items", desc, show_ci=name != "consistent", label=name.replace("_", " "))
        for name, key, desc in EXTRA)


def block(samples: Sequence[Any], combined: Sequence[ScoredSample], dataset: Dataset | Sequence[Item] | None) -> dict[str, Any]:
    """results.json's `scores.circular`: items, samples, rotations per item, and the items named
    apart (two options sharing a text; not asked in every rotation)."""
    rotations: defaultdict[str, int] = defaultdict(int)
    for s in samples:
        rotations[str(s.meta.get("circular_item", s.item_id))] += 1
    out: dict[str, Any] = {"items": len({c.item_id for c in combined}), "samples": len(samples),
                           "rotations": dict(sorted(_count(rotations.values()).items()))}
    asked = {c.item_id for c in combined}
    if dup := [i for i in duplicates_of(dataset) if i in asked]:
        out["duplicate_options"] = {
            "items": len(dup), "ids": dup[:20],
            "why": "two options share a text: the gold moves with one copy, so naming the other is scored "
                   "wrong in some rotations (a defect of the item; 'consistent' compares texts)"}
    if partial := incomplete(samples, sizes_of(dataset)):
        out["incomplete"] = {"items": len(partial), "ids": partial[:20],
                             "why": "not asked in every rotation (a stopped run): not scored"}
    return out


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for v in values:
        out[str(v)] += 1
    return out
