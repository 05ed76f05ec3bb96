"""What the service keeps of a test set in memory and what a set needs: its items, valid answers
and subdomains (`LoadedSet`, cached per process), and the largest answers body a submission to it
can need (`body_budget`, which sizes the request limit)."""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset
from glotbench.items import Item
from glotbench.service.db import TestSet


def answer_cap(bench: Benchmark, items: Iterable[Item]) -> int:
    """The longest answer (characters) a submission to the set may give, one figure for the whole set
    (a per-item cap would tell each reference's length): for options, 64; for free text, twice the
    set's longest gold text (its references) plus 64, and 2,000 more when answers are model outputs.
    A longer answer is refused before anything is scored (issue 31: a refused 100-item CrossSum
    submission with ~37k-character answers cost seconds of CPU)."""
    longest, free = 0, False
    for it in items:
        opts = it.public.get("options")
        if isinstance(opts, Mapping) and not bench.answers_are_outputs:
            continue
        free = True
        longest = max(longest, max((len(v) for v in _strings(it.gold)), default=0))
    if not free:
        return 64
    return 2 * longest + 64 + (2000 if bench.answers_are_outputs else 0)


def body_budget(bench: Benchmark, items: Iterable[Item]) -> tuple[int, int]:
    """(items, bytes): the largest answers body a set can need. Per item: its id as JSON, an answer
    as long as its longest option label or, for free text, the set's answer cap (`answer_cap`) at 6
    bytes a character (`\\uXXXX`, what `json.dumps` writes by default), and 16 bytes of separators
    and whitespace; plus the other fields."""
    items = list(items)
    cap = answer_cap(bench, items)
    n, total = 0, 6 * (300 + 2000 + 2 * 100 + 2000 + 4096) + 512  # model, description, set, benchmark, endpoint, key
    for it in items:
        opts = it.public.get("options")
        if isinstance(opts, Mapping) and not bench.answers_are_outputs:
            answer = max((len(json.dumps(str(k))) for k in opts), default=3)
        else:
            answer = 6 * cap
        total += len(json.dumps(it.id)) + answer + 16
        n += 1
    return n, total


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def answer_options(items: Iterable[Item]) -> dict[str, frozenset[str] | None]:
    """Per item, the valid answers when it has options (else any answer the benchmark can read)."""
    out: dict[str, frozenset[str] | None] = {}
    for it in items:
        options = it.public.get("options")
        out[it.id] = frozenset(options) if isinstance(options, Mapping) else None
    return out


def count_unreadable(samples: Mapping[str, Any], options: Mapping[str, frozenset[str] | None]) -> int:
    """Answers that are no answer: a failure of extraction (format, empty, think block left open,
    scorer error) or, for an item with options, not one of them. Such an answer scores as a known
    zero, which would let a "complete" submission score one answer alone."""
    bad = 0
    for i, smp in samples.items():
        opts = options[i]
        bad += smp.failure is not None or (opts is not None and str(smp.answer) not in opts)
    return bad


def settle_heap() -> None:
    """Collect, then move every object alive now out of the collector's generations (`gc.freeze`).

    The server calls this once started and after it caches a set: the cached set (~100,000 objects
    for 10,000 items) lives as long as the process, and without this every full collection rescans
    it, which a 10,000-answer submission (~50,000 short-lived objects) triggers every other time
    (~100 ms each). Frozen objects are still freed by reference counting; only cyclic garbage alive
    at the moment of freezing is kept."""
    gc.collect()
    gc.freeze()


@dataclass(frozen=True)
class LoadedSet:
    """A set as scoring needs it, built once per process: the benchmark, its Dataset, items by id,
    each item's valid answers, and the item positions per subdomain."""

    identity: tuple[Any, ...]
    bench: Benchmark
    dataset: Dataset
    by_id: Mapping[str, Item]
    options: Mapping[str, frozenset[str] | None]
    groups: Mapping[str, np.ndarray]
    answer_cap: int

    def admissible(self, answers: Mapping[str, str]) -> bool:
        """Whether a submission may be scored at all: exactly the set's ids, each with a non-blank
        answer no longer than the cap and, for an item with options (answers given as answers, not
        model outputs), one of them. Decided before any scoring, with the same work for every answer
        (a lookup, a length, a strip; no early exit), so neither the reply nor its time tells known
        ids from made-up ones (issue 31)."""
        by_id, cap, ok = self.by_id, self.answer_cap, 0
        options = {} if self.bench.answers_are_outputs else self.options
        for i, a in answers.items():
            opts, s = options.get(i), a.strip()
            ok += (i in by_id) & (len(a) <= cap) & (bool(s) if opts is None else s in opts)
        return ok == len(answers) == len(self.dataset)


def identity(ts: TestSet) -> tuple[Any, ...]:
    return (ts.id, ts.name, ts.benchmark, json.dumps(ts.options, sort_keys=True), ts.data_sha256)


def row_count(data: str | None) -> int | None:
    """Rows in a local data file (any format `glotbench.data` reads), or None when it cannot tell."""
    from glotbench.data import raw_rows

    try:
        return sum(1 for _ in raw_rows(data)) if data and not data.startswith("hub:") else None
    except Exception:  # noqa: BLE001 - a task file (one JSON object), a hub spec: not counted
        return None
