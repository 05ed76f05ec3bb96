"""What the service keeps of a test set in memory and what a set needs: its items, valid answers
and subdomains (`LoadedSet`, cached per process), and the largest answers body a submission to it
can need (`body_budget`, which sizes the request limit)."""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass, field
from pathlib import PurePath
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset
from glotbench.errors import GlotbenchError
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


def public_spec(spec: str) -> str:
    """What the service shows of a model spec its operator named (a judge, a baseline): the spec
    without its endpoint (`openai:NAME@URL` -> `openai:NAME`), a local file or folder by its name
    only (`replay:/srv/base.jsonl` -> `replay:base.jsonl`)."""
    head = spec.split("@", 1)[0]
    kind, sep, rest = head.partition(":")
    if sep and rest.startswith(("/", ".", "~")):
        return f"{kind}:{PurePath(rest).name}"
    return head


def public_scoring(judges: Iterable[str], options: Mapping[str, Any]) -> dict[str, Any]:
    """How a set is scored, as anyone may see it (GET /api/sets) and a submission may pin it: its
    judges and its benchmark options, with no endpoint and no server path in them: a model spec
    by `public_spec`, a file (`/srv/x`, `@/srv/prompt.txt`) by its name."""
    def value(v: Any) -> str:
        v = str(v)
        if v.startswith("@"):
            return "@" + PurePath(v[1:]).name
        return PurePath(v).name if v.startswith(("/", ".", "~")) else public_spec(v)

    return {"judges": [public_spec(j) for j in judges], "bench_options": {k: value(v) for k, v in sorted(options.items())}}


def judged_set(bench: Benchmark, benchmark: str, options: Mapping[str, str], judges: Sequence[str]) -> tuple[str, ...]:
    """The judges a set keeps (those named, else the benchmark's own: a task file's scorer.judges),
    checked before the set is stored: a judged benchmark has judges and every model its options name
    (the arena's baseline); a benchmark not scored by judges takes none. Each judge spec is built
    (a malformed one fails here, as it would at a run's start) and closed."""
    import asyncio

    from glotbench.engine.options import RunOptions
    from glotbench.judges.panel import build_judge
    from glotbench.rundir import slug

    if not bench.judged:
        if judges:
            raise GlotbenchError(f"--judge: {benchmark} is not scored by judges")
        return ()
    kept = ((judges,) if isinstance(judges, str) else tuple(judges)) or tuple(bench.default_judges)  # one spec: one judge
    if not kept:
        raise GlotbenchError(f"{benchmark} is scored by judges: name them (--judge SPEC, once per judge)")
    missing = [n for n in bench.model_options if not options.get(n)]
    if missing:
        raise GlotbenchError(f"{benchmark} needs a {missing[0]}: --bench-opt {missing[0]}=SPEC")
    if len({slug(j) for j in kept}) < len(kept) or len({public_spec(j) for j in kept}) < len(kept):
        raise GlotbenchError(f"--judge: two judges are one model, or show as one (GET /api/sets shows a judge without its "
                             f"endpoint): {', '.join(kept)}")

    async def build_all() -> None:
        for spec in kept:
            await build_judge(spec, RunOptions(progress=False)).aclose()

    asyncio.run(build_all())
    return kept


def pinned(what: str, given: Any, expected: Any) -> str | None:
    """Why a submission's pin (`judges`, `bench_options`: what the submitter expects the set to be
    scored with) is refused: the set's are fixed by its operator, shown at GET /api/sets; a pin
    that differs is refused before anything is charged or sent. None: no pin, or the set's."""
    if given is None or given == expected:
        return None
    return (f"{what}: this set is scored with {what} {json.dumps(expected, ensure_ascii=False)} fixed by its "
            "operator (GET /api/sets); a submission may name them only as they are; nothing was charged")


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
    judges: tuple[str, ...] = ()  # a judged set's judges (model specs; TestSet.judges)
    bench_options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))  # the benchmark's options (TestSet.options)

    def public(self) -> dict[str, Any]:
        """How the set is scored, as anyone may see it and a submission may pin it (`public_scoring`)."""
        return public_scoring(self.judges, self.bench_options)

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
    """What a cached set is known by (`LoadedSet.identity`): id, name, benchmark, options (JSON, the
    fourth), data hash and judges."""
    return (ts.id, ts.name, ts.benchmark, json.dumps(ts.options, sort_keys=True), ts.data_sha256,
            json.dumps(ts.judges or []))


def row_count(data: str | None) -> int | None:
    """Rows in a local data file (any format `glotbench.data` reads), or None when it cannot tell."""
    from glotbench.data import raw_rows

    try:
        return sum(1 for _ in raw_rows(data)) if data and not data.startswith("hub:") else None
    except Exception:  # noqa: BLE001 - a task file (one JSON object), a hub spec: not counted
        return None
