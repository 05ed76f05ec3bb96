"""THE scoring path: (benchmark, item, raw output) -> a scored Sample.

The runner, `deepsea score`, the service's answer submissions and `compare` all call `score_output`,
so one reply is scored the same way wherever it comes from. Order: a model failure takes the
benchmark's failure score; otherwise think blocks are stripped (an unclosed one is no answer), the
benchmark extracts with the item's public part, then scores with its gold. An exception raised by
`extract` or `score` is a recorded failure of kind `scorer_error` with its message: one bad item
never ends a run.
"""

from __future__ import annotations

import json
from typing import Any

from glotbench.contract import ScoredBenchmark
from glotbench.core import Sample
from glotbench.extract import Extraction, strip_think
from glotbench.items import Item
from glotbench.metrics import ItemScore
from glotbench.models.base import RejectedReply

SCORER_ERROR = "scorer_error"


def _failure(bench: ScoredBenchmark, failure: str, item: Item) -> ItemScore:
    score = bench.run_failure_score(failure, item)
    return score if score.failure == failure else ItemScore(score.stats, score.flags, failure)


def extract_output(bench: ScoredBenchmark, item: Item, output: str) -> Extraction:
    """The answer in a reply: think blocks stripped (an unclosed one is no answer), then the
    benchmark's extraction with the item's public part."""
    body, ok = strip_think(output)
    if not ok:
        return Extraction(None, "think_unclosed", "unclosed think block")
    return bench.run_extract(body, item.to_public())


def check_reply(bench: ScoredBenchmark, item: Item, output: str) -> Extraction | None:
    """A fresh reply to a benchmark that retries some extraction failures (`retry_failures`, a
    judge's malformed verdict), extracted once: a failure of such a kind (before any ":") raises
    `RejectedReply` (a failure of the model's output, never of the call: it does not make a run
    invalid), so the runner's retry policy asks again and the reply is never cached (when the
    retries run out the item fails as `bad_response`, the error naming the failure and why); a reply
    that passes returns its extraction, which `score_output` then takes instead of extracting
    again. None when the benchmark retries nothing, or its extraction raised (scored as usual)."""
    kinds = bench.retry_failures
    if not kinds:
        return None
    try:
        ext = extract_output(bench, item, output)
    except Exception:  # noqa: BLE001 - a scorer bug: score_output records it on the item
        return None
    if ext.answer is None and (ext.failure or "format").split(":", 1)[0] in kinds:
        raise RejectedReply(f"malformed {bench.reply_name} ({ext.failure}): {ext.detail or 'no answer'}")
    return ext


def score_output(bench: ScoredBenchmark, item: Item, output: str | None, *, repeat: int = 0,
                 model_failure: str | None = None, truncated: bool = False, answer_given: bool = False,
                 extraction: Extraction | None = None, **fields: Any) -> Sample:
    """Score one reply. `model_failure`: the call failed with this kind (no output). `truncated`:
    the reply hit the token limit, so a format failure is counted as `truncated`. `answer_given`:
    `output` is already an extracted answer (the service's answer files), so extraction is skipped.
    `extraction`: what `extract_output` already gave for this output (the runner's check of a
    fresh reply), so the reply is not extracted twice. Extra `fields` (latency, tokens,
    retries...) are stored on the Sample."""
    answer: Any = None
    error = fields.pop("error", None)
    flags = ["truncated"] if truncated else []
    try:
        if model_failure is not None or output is None:
            score = _failure(bench, model_failure or "no_output", item)
        else:
            if answer_given:
                ext_answer, ext_failure = output.strip(), None
            else:
                ext = extraction if extraction is not None else extract_output(bench, item, output)
                ext_answer, ext_failure = ext.answer, ext.failure
            if ext_answer is None:
                failure = "truncated" if truncated and ext_failure in (None, "format") else (ext_failure or "format")
                score = _failure(bench, failure, item)
            else:
                answer = ext_answer
                score = bench.run_score(answer, item)
    except Exception as e:  # noqa: BLE001 - a scorer bug fails this item only, recorded with its message
        answer = None
        error = f"{SCORER_ERROR}: {type(e).__name__}: {e}"
        try:
            score = _failure(bench, SCORER_ERROR, item)
        except Exception:  # noqa: BLE001 - the failure score itself is broken: no statistics to give
            score = ItemScore({}, failure=SCORER_ERROR)
    flags.extend(f for f in score.flags if f not in flags)
    key = None
    if answer is not None:
        try:
            key = bench.answer_key(answer)
        except Exception:  # noqa: BLE001
            key = None
    return Sample(id=item.id, repeat=repeat, meta=item.meta, score=score, answer=answer, answer_key=key,
                  output=output, error=error, flags=tuple(flags), **fields)


def _plain_text(value: Any) -> bool:
    """A str that JSON gives back unchanged: one UTF-8 can carry (two lone surrogates that make a pair
    come back from `\\u` escapes as one character)."""
    if type(value) is not str:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def score_record(sample: Sample) -> dict[str, Any] | None:
    """What the call cache keeps of a scored reply: the extraction and the score. None when it
    cannot be kept faithfully (a scorer error, or an answer that does not survive JSON)."""
    if sample.error is not None:
        return None
    try:  # a text (the usual answer) without surrogates comes back from JSON as it went in: not round-tripped
        if not _plain_text(sample.answer) and json.loads(json.dumps(sample.answer)) != sample.answer:
            return None
    except (TypeError, ValueError):
        return None
    s = sample.score
    return {"answer": sample.answer, "answer_key": sample.answer_key, "stats": dict(s.stats),
            "score_flags": list(s.flags), "failure": s.failure, "flags": list(sample.flags)}


def sample_from_record(record: dict[str, Any], item: Item, output: str | None, *, repeat: int,
                       **fields: Any) -> Sample:
    """The Sample `score_output` gave for this reply, rebuilt from its cached record."""
    score = ItemScore(record["stats"], tuple(record["score_flags"]), record["failure"])
    fields.pop("error", None)
    return Sample(id=item.id, repeat=repeat, meta=item.meta, score=score, answer=record["answer"],
                  answer_key=record["answer_key"], output=output, error=None, flags=tuple(record["flags"]),
                  **fields)
