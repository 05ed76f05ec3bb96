"""How much of a score is the answer parser? Bounds and a lenient re-reading, from stored outputs.

For a benchmark whose answers are extracted from replies (letters, numbers, spans, JSON fields):

- `strict`: the headline as the benchmark's rule scored it (the run's number);
- `unread`: replies the rule could not read (an extraction failure on a reply that exists: `format`,
  `no_letter`, `no_number`, `no_answer`, `truncated`, `think_unclosed`, `empty`, ...; failed calls
  are not the parser's and are counted apart);
- `lower` / `upper`: the headline if every unread reply were wrong (each scored as the failure
  rule scores it: the strict score itself for 0-scored failures) / right (each unread sample's
  numerator set to its denominator: every ratio pair of the headline, a macro average's per-group
  pairs too; a corpus metric has no per-item "right", so no bounds);
- `lenient`: the headline with each unread reply read again by a lenient rule for its kind of answer
  (letter: the answer-phrase reader, then the first standalone letter of any case, then the one
  option named; number: the last number anywhere; text: the reply's JSON string value or the reply
  itself) and scored by the benchmark's own `score`. A task file that defines several pipelines
  already reports each (`accuracy[PIPELINE]`); its lenient figure is given too.

The range [lower, upper] is what the parser alone could move the number by. A `permute=circular`
run's figures are of its headline, per original item (right in every rotation): the unread replies
are counted per rotation, each figure after combining the rotations.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from glotbench.benchmarks.base import AnswerKind, Benchmark
from glotbench.benchmarks.circular import pairs
from glotbench.core import Sample
from glotbench.extract import json_object, last_number, mc_letter, strip_think
from glotbench.items import Item
from glotbench.metrics import aggregate

# Failures of the call (no reply to read) and checks that are not the parser's.
NOT_PARSER = frozenset({"rate_limited", "server_error", "timeout", "connection", "bad_response", "client_error",
                        "auth", "exception", "no_output", "scorer_error", "not_sent", "wrong_language"})

def answer_kind(bench: Benchmark) -> AnswerKind | None:
    """"letter", "number" or "text" for a benchmark whose answers are extracted (its declared
    `answer_kind`); None otherwise (translation and summaries take the reply as it is; judged tasks;
    log-likelihood)."""
    return bench.answer_kind if bench.method == "generate" else None


def unread(sample: Sample) -> bool:
    """A reply exists and the rule found no answer in it."""
    return sample.output is not None and sample.failure is not None and sample.failure not in NOT_PARSER


def _options(fields: Mapping[str, Any]) -> dict[str, str]:
    if isinstance(fields.get("options"), Mapping):
        return {str(k): str(v) for k, v in fields["options"].items()}
    choices = fields.get("choices")
    if isinstance(choices, (list, tuple)):
        return {"ABCDEFGHIJ"[i]: str(c) for i, c in enumerate(choices[:10])}
    return {}


def lenient_read(kind: str, text: str, fields: Mapping[str, Any]) -> str | None:
    """The lenient rule of `kind` (see the module) on a reply; None when even it reads nothing."""
    body, ok = strip_think(text)
    if not ok or not body.strip():
        return None
    if kind == "letter":
        opts = _options(fields)
        for got in (mc_letter(body, opts), mc_letter(body, rule="first_standalone", case="upper_first")):
            if got.answer is not None and (not opts or got.answer in opts):
                return got.answer
        return None
    if kind == "number":
        n = last_number(body)
        return None if n is None else str(n)
    obj, _ = json_object(body, next(iter(_json_keys(body)), "text"))
    if obj is not None:
        value = next((v for v in obj.values() if isinstance(v, str) and v.strip()), None)
        if value is not None:
            return value
    return body.strip()


def _json_keys(body: str) -> list[str]:
    import re

    return re.findall(r'"([A-Za-z_][\w]*)"\s*:\s*"', body)


def _value(metric: Any, samples: Sequence[Sample], group_by: Sequence[str]) -> tuple[float | None, dict[str, Any]]:
    agg = aggregate([metric], samples, group_by, resamples=0)
    groups = {k: {v: e[metric.name]["value"] for v, e in vals.items()} for k, vals in agg["groups"].items()}
    return agg["overall"][metric.name]["value"], groups


def _with_stats(s: Sample, stats: Mapping[str, float]) -> Sample:
    return dataclasses.replace(s, score=dataclasses.replace(s.score, stats=dict(stats)))


def extraction_check(bench: Benchmark, samples: Sequence[Sample], items: Mapping[str, Item],
                     metrics: Sequence[Any]) -> dict[str, Any] | None:
    """The bounds and the lenient figure of a run (see the module); None for a benchmark whose
    answers are not extracted."""
    kind = answer_kind(bench)
    if kind is None or not samples:
        return None
    head = metrics[0]
    group_by = tuple(bench.group_by)
    bad = [s for s in samples if unread(s)]
    by_kind: dict[str, int] = {}
    for s in bad:
        if s.failure is not None:  # always, for an unread sample
            by_kind[s.failure] = by_kind.get(s.failure, 0) + 1
    def per_item(ss: Sequence[Sample]) -> Sequence[Any]:  # permute=circular: the headline is per original item
        return bench.combined(ss, list(items.values()))

    strict, strict_groups = _value(head, per_item(samples), group_by)
    out: dict[str, Any] = {
        "kind": kind, "metric": head.name, "samples": len(samples), "unread": len(bad),
        "unread_share": len(bad) / len(samples), "unread_by_failure": dict(sorted(by_kind.items())),
        "call_failures": sum(1 for s in samples if s.failure in NOT_PARSER and s.failure != "wrong_language"),
        "strict": strict, "scale": getattr(head, "scale", "fraction")}
    ps = pairs(head)
    if ps:
        def right(s: Sample) -> Sample:
            st = dict(s.score.stats)
            for num, den in ps:
                if den in st:
                    st[num] = st[den]
            return _with_stats(s, st)

        if not bad:  # every reply read: the upper bound is the strict figure, overall and per group
            out["lower"] = out["upper"] = strict
            out["groups"] = {k: {v: {"strict": x, "upper": x} for v, x in vals.items()}
                             for k, vals in strict_groups.items()}
        else:
            upper_samples = per_item([right(s) if unread(s) else s for s in samples])
            out["lower"], out["upper"] = strict, _value(head, upper_samples, group_by)[0]
            out["groups"] = {k: {v: {"strict": x, "upper": _value(head, [u for u in upper_samples
                                                                        if str(u.meta.get(k, "unknown")) == v],
                                                                  ())[0]}
                                 for v, x in vals.items()} for k, vals in strict_groups.items()}
    else:
        out["lower"] = out["upper"] = None
        out["bounds_note"] = f"{head.name} is a corpus metric: no per-item 'right' to bound with"
    reread, lenient_samples = 0, []
    for s in samples:
        if not unread(s) or s.output is None or s.id not in items:
            lenient_samples.append(s)
            continue
        item = items[s.id]
        raw = lenient_read(kind, s.output, item.public)
        if raw is None:
            lenient_samples.append(s)
            continue
        try:
            score = bench.run_score(bench.answer_from_text(raw), item)  # a task: every pipeline's
        except Exception:  # noqa: BLE001 - a reading the benchmark cannot score counts as unread
            lenient_samples.append(s)
            continue
        reread += 1
        lenient_samples.append(dataclasses.replace(s, score=dataclasses.replace(score, failure=None)))
    # nothing unread, nothing read again: the lenient figure is the strict one (the same samples;
    # 2 of the check's 4 aggregates, measured: docs/performance.md)
    out["lenient"] = strict if not bad else _value(head, per_item(lenient_samples), ())[0]
    out["lenient_read"] = reread
    out["lenient_rule"] = LENIENT_RULES[kind]
    return out


LENIENT_RULES = {
    "letter": "answer phrase, then the first standalone letter (either case), then the one option named",
    "number": "the last number anywhere in the reply (native digits read, grouped thousands)",
    "text": "the reply's JSON string value, else the whole reply (think blocks removed)",
}


def overlaps(cell: Mapping[str, Any], other_value: float | None) -> bool:
    """Whether a run's extraction bounds contain another model's strict score (the board's flag)."""
    lo, hi = cell.get("lower"), cell.get("upper")
    return other_value is not None and lo is not None and hi is not None and lo <= other_value <= hi

