"""The async runner: bounded concurrency over lazily created work, retries with backoff, the cache.

Work units (item, repeat) are prepared one at a time; those the call cache answers are finished by
the producer, the rest go into a bounded queue that `concurrency` workers drain, so 100k items never
mean 100k tasks. A failing item gets an error record and the benchmark's
failure score; the run goes on. Only an authentication failure stops it (every call would fail).

Over 400 lines on purpose: the producer, the workers, retries, the gate and the cost cap share one
run's queue and counters; the retry policy and the units are the small classes at the top.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Callable, Iterable, Mapping, Sequence

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Sample, TokenCounts
from glotbench.engine.cache import CallCache, cache_key, cache_key_head, score_key
from glotbench.scoring import check_reply, sample_from_record, score_output, score_record
from glotbench.extract import Extraction
from glotbench.errors import GlotbenchError
from glotbench.items import Item
from glotbench.models.base import (
    INVALID_UNICODE,
    AuthError,
    GenerateConfig,
    Model,
    ModelError,
    ModelTimeout,
    Prompt,
    Response,
    Usage,
)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Which failures are retried and how long to wait, run by tenacity: a retryable ModelError
    is tried again up to `max_retries` times; the wait honours the server's Retry-After (cut to
    `max_retry_after_s`, plus up to 10% jitter), else full-jitter exponential backoff."""

    max_retries: int = 5
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    max_retry_after_s: float = 120.0  # a Retry-After longer than this is cut to it

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry `attempt + 1` (attempt 0 is the first retry)."""
        if retry_after is not None:
            wait = min(max(retry_after, 0.0), self.max_retry_after_s)
            return wait + random.uniform(0, 0.1 * max(wait, 0.1))
        from tenacity import RetryCallState, Retrying, wait_random_exponential

        state = RetryCallState(Retrying(), None, (), {})  # only its attempt number is read
        state.attempt_number = attempt + 1
        return wait_random_exponential(multiplier=self.backoff_base_s, max=self.backoff_max_s)(state)

    def retrying(self, before_sleep: Callable[[Any], None] | None = None, *, done: int = 0) -> Any:
        """A tenacity AsyncRetrying for the retries left after `done` of them; the last failure is
        re-raised as itself."""
        from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

        def wait(state: Any) -> float:
            exc = state.outcome.exception() if state.outcome is not None else None
            return self.delay(done + state.attempt_number - 1, getattr(exc, "retry_after", None))

        return AsyncRetrying(stop=stop_after_attempt(self.max_retries + 1 - done), wait=wait, reraise=True,
                             retry=retry_if_exception(retryable), before_sleep=before_sleep)


def retryable(exc: BaseException) -> bool:
    return bool(getattr(exc, "retryable", False))


@dataclass
class RunCounters:
    """Live counts, read by the progress display and written into results.json."""

    total: int = 0
    done: int = 0
    errors: int = 0  # samples that failed, of any kind: shown as "failures" (results.json: counts.failed)
    retries: int = 0
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    new_prompt_tokens: int = 0  # tokens of calls made in this run (not from the cache): the bill
    new_completion_tokens: int = 0
    not_sent: int = 0  # units left unsent because the cost cap was reached (--max-cost)
    failures: Counter = field(default_factory=Counter)
    call_failures: Counter = field(default_factory=Counter)  # samples with no reply, by error kind
    call_failure_status: Counter = field(default_factory=Counter)  # ... and by HTTP status, where one came
    flags: Counter = field(default_factory=Counter)
    first_call_at: float | None = None  # perf_counter of the first model call of this run
    tokens_not_counted: int = 0  # log-likelihood replies of a backend that cannot count their tokens
    last_answered_at: float | None = None  # ... of the last sample the model answered (not the cache)
    # ... when the first round of calls (as many as the concurrency, or every unit) was all out: the
    # first round's time is counted from here by the ETA (engine/progress.py), not from the first
    # call: a run's first requests go out over a stall (connections opened, the loop busy)
    round_sent_at: float | None = None
    calls_started: int = 0  # units whose first call went out (the first round's count)


@dataclass(frozen=True, slots=True)
class Unit:
    item: Item
    repeat: int


@dataclass(frozen=True, slots=True)
class Reply:
    """A model's reply and, for a benchmark that retries malformed replies, its extraction."""

    response: Response
    extraction: Extraction | None = None


@dataclass(frozen=True, slots=True)
class Pending:
    """A unit ready to send: its prompt, the config sent, its cache key, and the cached reply if any."""

    item: Item
    repeat: int
    prompt: Prompt
    config: GenerateConfig
    key: str
    cached: Response | None


def effective_config(prompt: Prompt, config: GenerateConfig, form: str) -> GenerateConfig:
    """The config actually sent: text-form prompts add their stop sequences and reply cap."""
    if form != "text":
        return config
    max_tokens = config.max_tokens
    if prompt.text_max_tokens is not None:
        max_tokens = min(max_tokens, prompt.text_max_tokens)
    return dataclasses.replace(config, stop=tuple(dict.fromkeys(config.stop + prompt.text_stop)),
                               max_tokens=max_tokens)


def prompt_form(benchmark: Benchmark, model: Model) -> str:
    """The form a run sends its prompts in: plain text for the log-likelihood method, else the model's."""
    return "text" if benchmark.method == "loglik" else model.prompt_form()


def prompt_payload(prompt: Prompt, form: str, config: GenerateConfig, loglik: bool = False,
                   detail: bool = False) -> Any:
    if loglik:  # `detail`: the reply holds every choice's log-probability and token count
        return {"text": prompt.text, "loglik_choices": list(prompt.choices or ()), **({"detail": 1} if detail else {}),
                **({} if prompt.loglik_encoding == "joint" else {"encoding": prompt.loglik_encoding})}
    payload: dict[str, Any] = {"text": prompt.text} if form == "text" else {
        "messages": [dict(m) for m in prompt.messages]}
    if config.structured_output and prompt.json_schema is not None:
        payload["json_schema"] = dict(prompt.json_schema)
    return payload


# Units prepared together, their cached replies read in one query: 64 renders and keys (under a
# millisecond) before the first request, and a PostgreSQL cache asked once per 64 units, not per unit.
_PREPARED_AT_ONCE = 64


class Runner:
    def __init__(
        self,
        benchmark: Benchmark,
        model: Model,
        config: GenerateConfig,
        *,
        concurrency: int,
        repeats: int = 1,
        cache: CallCache | None = None,
        retry: RetryPolicy = RetryPolicy(),
        timeout_s: float | None = None,
        on_sample: Callable[[Sample, Mapping[str, Any] | None], None] | None = None,
        on_progress: Callable[[RunCounters], None] | None = None,
        on_flush: Callable[[], None] | None = None,
        on_first_call: Callable[[], None] | None = None,
        scorer_id: str | None = None,
        prompt_record: Callable[[Prompt, Any], dict[str, Any]] | None = None,
        gate: Any = None,
        budget: Any = None,
    ):
        self.benchmark = benchmark
        self.model = model
        self.config = config
        self.concurrency = max(1, concurrency)
        self.repeats = max(1, repeats)
        self.cache = cache
        self.retry = retry
        self.timeout_s = timeout_s
        self.on_sample = on_sample
        self.on_progress = on_progress
        self.on_flush = on_flush
        self.on_first_call = on_first_call  # once, when the first real model call goes out
        self.scorer_id = scorer_id  # set: scores are kept with the cached replies under this scorer
        self.prompt_record = prompt_record  # (prompt, loglik choices) -> what a sample keeps of it
        # `--concurrency auto`: every attempt passes this gate (engine/concurrency.AdaptiveLimit);
        # `concurrency` is then the most workers, --max-concurrency.
        self.gate = gate
        # `--max-cost`: a unit is sent only when its worst case fits (engine/cost.CostCap)
        self.budget = budget
        # (item id, repeat) -> key of the score stored for that sample (read or written this run)
        self.score_keys: dict[tuple[str, int], str] = {}
        self._key_heads: dict[tuple[GenerateConfig, type], str] = {}
        # The hashes of the keys this run has stored a reply for: a unit prepared before a reply to
        # the same request came back (`prepare_many` looks 64 units up at once) reads it when its turn
        # comes, instead of asking again; a hash, not the key: 10,000 take 0.88 MB, and a collision
        # costs one look-up that finds nothing.
        self._answered: set[int] = set()
        self.first_call_at: float | None = None  # perf_counter of the first real model call
        self.last_done_at: float | None = None
        self.counters = RunCounters()
        self.samples: list[Sample] = []
        self.structured_modes: Counter = Counter()
        self._loglik_mode = benchmark.method == "loglik"
        # Task benchmarks score every normalisation from the choices' log-probabilities and token
        # counts (glotbench.tasks.loglik); the built-ins take the choice with the highest sum.
        self._loglik_detail = self._loglik_mode and benchmark.loglik_detail
        self._retries_failures = bool(benchmark.retry_failures)
        self._form = prompt_form(benchmark, model)
        self.max_tokens_sent: Counter = Counter()  # the reply caps of the units (run.json's max_tokens)
        self._loglik_done_at: float | None = None  # when the last log-likelihood reply came back
        self._ready = False
        self._ready_lock = asyncio.Lock()

    async def _ensure_ready(self) -> None:
        """Check (or load) the model before its first real call, not before the run: a fully
        cached run needs no endpoint, no API key and no model weights."""
        if self._ready:
            return
        async with self._ready_lock:
            if not self._ready:
                await self.model.check()
                self._ready = True

    async def run(self, items: Iterable[Item], n_items: int) -> list[Sample]:
        self.counters.total = n_items * self.repeats
        queue: asyncio.Queue[Pending | None] = asyncio.Queue(maxsize=2 * self.concurrency)

        async def produce() -> None:
            """Prepares the units (prompt, cache key), `_PREPARED_AT_ONCE` at a time with one cache
            look-up; a unit the cache answers is finished here, in order, without a trip through the
            queue (a fully cached re-run is all look-ups), yielding to the loop every 256 of them;
            the others go to the workers."""
            hits = 0
            units = (Unit(item, r) for item in items for r in range(self.repeats))
            while chunk := list(islice(units, _PREPARED_AT_ONCE)):
                for unit in self.prepare_many(chunk):
                    if unit.cached is None:
                        await queue.put(unit)
                        continue
                    self._finish(unit, unit.cached, None, 0)
                    hits += 1
                    if hits % 256 == 0:
                        await asyncio.sleep(0)
            for _ in range(self.concurrency):
                await queue.put(None)

        async def work() -> None:
            while (unit := await queue.get()) is not None:
                if (self.cache is not None and hash(unit.key) in self._answered
                        and (found := self.cache.get(unit.key)) is not None):
                    # the same request answered since this unit was prepared (an item repeated in
                    # the data): its reply is read, as the look-up would have found it then
                    self._finish(dataclasses.replace(unit, cached=found), found, None, 0)
                    continue
                # no cap: no reservation around the call
                await (self._call_and_finish(unit) if self.budget is not None else self._send_and_finish(unit))

        def flush() -> None:
            if self.cache is not None:
                self.cache.flush()
            if self.on_flush is not None:
                self.on_flush()

        async def flush_periodically() -> None:
            while True:
                await asyncio.sleep(0.05)
                flush()

        producer = asyncio.create_task(produce())
        workers = [asyncio.create_task(work()) for _ in range(self.concurrency)]
        flusher = asyncio.create_task(flush_periodically())
        try:
            await asyncio.gather(producer, *workers)
        except AuthError as e:
            raise GlotbenchError(f"the endpoint rejected the request ({e}); stopping the run") from None
        finally:
            for t in [producer, *workers, flusher]:
                t.cancel()
            flush()
        return self.samples

    async def _loglik(self, prompt: Prompt) -> Response:
        """The log-likelihood method: the choice with the highest log-probability is the reply."""
        fn = getattr(self.model, "loglikelihood", None)
        if fn is None:
            raise GlotbenchError(f"the log-likelihood method needs a local model (local, hf:, vllm:); "
                                 f"{self.model.spec} only generates")
        t0 = time.perf_counter()
        choices = prompt.choices or ()
        # lm-eval's tokenisation where the task asks for it; a backend without it refuses the call
        how = {} if prompt.loglik_encoding == "joint" else {"encoding": prompt.loglik_encoding}
        if self._loglik_detail:
            from glotbench.tasks.loglik import reply_text

            counted = getattr(self.model, "loglikelihood_tokens", None)
            if counted is not None:
                pairs = await counted(prompt.text or "", choices, **how)
                logprobs, tokens = [p[0] for p in pairs], [p[1] for p in pairs]
            else:  # a backend without token counts: the per-token normalisation has none to divide by
                logprobs, tokens = await fn(prompt.text or "", choices, **how), None
            return Response(text=reply_text(choices, logprobs, tokens), finish_reason="stop",
                            latency_s=self._loglik_latency(t0), usage=self._loglik_usage(prompt))
        scores = await fn(prompt.text or "", choices, **how)
        best = max(range(len(choices)), key=lambda i: scores[i])
        return Response(text=choices[best].strip(), finish_reason="stop", latency_s=self._loglik_latency(t0),
                        usage=self._loglik_usage(prompt),
                        raw={"loglikelihoods": dict(zip((c.strip() for c in choices), scores))})

    def _loglik_latency(self, t0: float) -> float:
        """LOGLIK_LATENCY: the time since the later of this request and the previous reply. The time
        from the request alone counts the wait behind every other request in flight in the local
        engine (it grew to the whole phase, 111-182 s an item); these times add up to the phase."""
        now = time.perf_counter()
        start = t0 if self._loglik_done_at is None else max(t0, self._loglik_done_at)
        self._loglik_done_at = now
        return now - start

    def _loglik_usage(self, prompt: Prompt) -> Usage:
        """The tokens a log-likelihood request puts through the model (context + each choice, as the
        dry run counts them; nothing is generated), by the backend's tokenizer; zero and counted
        apart (`tokens_not_counted`) for a backend that has none."""
        count = getattr(self.model, "count_prompt_tokens", None)
        text_tokens = getattr(self.model, "count_text_tokens", None)  # vllm: without special tokens
        try:
            if count is not None:
                return Usage(count(prompt, self.config, loglik=True), 0)
            if text_tokens is not None:
                return Usage(sum(text_tokens((prompt.text or "") + c) for c in (prompt.choices or ())), 0)
        except Exception:  # noqa: BLE001 - a count that fails never fails the reply: counted apart
            pass
        self.counters.tokens_not_counted += 1
        return Usage()

    async def _attempt(self, prompt: Prompt, config: GenerateConfig, unit: Unit) -> Reply:
        self.counters.calls += 1
        if self._loglik_mode:
            coro = self._loglik(prompt)
        else:
            coro = self.model.generate(prompt, config, item_id=unit.item.id, repeat=unit.repeat)
        # no gate and no timeout of the runner's own (a plain run: the backend times its calls out):
        # the model's coroutine itself, one frame less on each of a request's resumptions
        resp = await (self._gated(coro) if self.gate is not None else
                      self._timed(coro) if self.timeout_s is not None else coro)
        # A benchmark that retries malformed replies has each fresh one extracted here, once (outside
        # the adaptive gate: a malformed verdict is no congestion signal).
        return Reply(resp, check_reply(self.benchmark, unit.item, resp.text) if self._retries_failures else None)

    async def _timed(self, coro: Any) -> Response:
        if self.timeout_s is None:
            return await coro
        try:  # asyncio.timeout, not wait_for: no task of its own per call (5 µs a call less, measured)
            async with asyncio.timeout(self.timeout_s):
                return await coro
        except asyncio.TimeoutError:
            raise ModelTimeout(f"no reply within {self.timeout_s:g} s") from None

    async def _gated(self, coro: Any) -> Response:
        """One attempt through the adaptive gate, its outcome reported (a 429 or a timeout is a
        congestion signal)."""
        try:
            token = await self.gate.acquire()
        except BaseException:
            coro.close()
            raise
        kind: str | None = "exception"
        try:
            resp = await self._timed(coro)
            kind = None
            return resp
        except Exception as e:
            kind = getattr(e, "kind", "exception")
            raise
        finally:
            self.gate.release(token, kind)

    async def _call(self, prompt: Prompt, config: GenerateConfig, unit: Unit) -> tuple[Reply | None, ModelError | Exception | None, int]:
        """One call with the retry policy: (reply, None, retries) or (None, last error, retries).
        The first try is made directly (most calls succeed: no retry machinery on the hot path);
        after a retryable failure tenacity runs the retries. An authentication failure or a usage
        error stops the run; any other exception (a backend bug, e.g. in a python: callable) fails
        this item only."""
        try:
            return await self._attempt(prompt, config, unit), None, 0
        except (AuthError, GlotbenchError):
            raise
        except Exception as e:  # noqa: BLE001 - recorded on the item
            if not retryable(e) or self.retry.max_retries < 1:
                return None, e, 0
            first = e
        retries = 0

        def count_retry(_: Any = None) -> None:
            nonlocal retries
            retries += 1
            self.counters.retries += 1
            if self.on_progress:
                self.on_progress(self.counters)

        count_retry()
        await asyncio.sleep(self.retry.delay(0, getattr(first, "retry_after", None)))
        try:
            async for attempt in self.retry.retrying(count_retry, done=1):
                with attempt:
                    reply = await self._attempt(prompt, config, unit)
            return reply, None, retries
        except (AuthError, GlotbenchError):
            raise
        except Exception as e:  # noqa: BLE001 - recorded on the item
            return None, e, retries

    def prepare(self, unit: Unit) -> "Pending":
        """A unit's prompt, the config sent, its cache key and cached reply (the dry run's too)."""
        return self.prepare_many([unit])[0]

    def prepare_many(self, units: Sequence[Unit]) -> list["Pending"]:
        """`prepare` for several units, their cached replies read in one look-up (`get_many`)."""
        keyed = [self._keyed(u) for u in units]
        found = self.cache.get_many([k[2] for k in keyed]) if self.cache is not None else {}
        return [Pending(u.item, u.repeat, prompt, config, key, found.get(key))
                for u, (prompt, config, key) in zip(units, keyed)]

    def _keyed(self, unit: Unit) -> tuple[Prompt, GenerateConfig, str]:
        """A unit's prompt, the config sent and its cache key."""
        prompt = self.benchmark.render(unit.item.to_public())
        config = effective_config(prompt, self.config, self._form)
        if not self._loglik_mode:
            self.max_tokens_sent[config.max_tokens] += 1
        # One head per distinct config (one, for chat models): not re-encoded per unit. The type of
        # the temperature is part of the lookup: 0 == 0.0, but their JSON differs.
        which = (config, type(config.temperature))
        head = self._key_heads.get(which)
        if head is None:
            head = self._key_heads[which] = cache_key_head(self.model.cache_id, config.to_dict())
        key = cache_key(self.model.cache_id, prompt_payload(prompt, self._form, config, self._loglik_mode,
                                                            self._loglik_detail),
                        {}, unit.repeat, head=head)
        return prompt, config, key

    async def _call_and_finish(self, unit: "Pending") -> None:
        reserved = None
        if self.budget is not None:
            reserved = self.budget.reserve(unit.prompt, unit.config)
            if reserved is None:  # the cap is reached: not sent (a re-run sends it)
                self.counters.not_sent += 1
                if self.on_progress is not None:
                    self.on_progress(self.counters)
                return
        try:
            await self._send_and_finish(unit)
        finally:
            if reserved is not None:
                self.budget.settle(unit.prompt, reserved)

    async def _send_and_finish(self, unit: "Pending") -> None:
        await self._ensure_ready()
        c = self.counters
        if self.first_call_at is None:
            self.first_call_at = c.first_call_at = time.perf_counter()
            if self.on_first_call is not None:
                self.on_first_call()
        c.calls_started += 1
        if c.calls_started == min(self.concurrency, c.total):
            c.round_sent_at = time.perf_counter()
        reply, err, attempts = await self._call(unit.prompt, unit.config, Unit(unit.item, unit.repeat))
        resp = reply.response if reply is not None else None
        if resp is not None:
            self.counters.new_prompt_tokens += resp.usage.prompt_tokens
            self.counters.new_completion_tokens += resp.usage.completion_tokens
            if self.budget is not None:
                self.budget.spend(unit.prompt, unit.config, resp.usage)
            if self.cache is not None:
                self.cache.put(unit.key, self.model.cache_id, resp)
                self._answered.add(hash(unit.key))
        self._finish(unit, resp, err, attempts, reply.extraction if reply is not None else None)

    def _finish(self, unit: "Pending", resp: Response | None, err: Exception | None, attempts: int,
                extraction: Extraction | None = None) -> None:
        """Score a reply (or record the failure) into a sample; a cached reply's stored score is
        read instead of scoring again when the scorer is unchanged; `extraction`: the reply's, made
        by `check_reply` (not made again)."""
        item, c = unit.item, self.counters
        cached = unit.cached is not None
        prompt = None if self.prompt_record is None else self.prompt_record(
            unit.prompt, unit.prompt.choices or () if self._loglik_mode else None)
        if cached:
            c.cache_hits += 1
        if resp is None and not getattr(err, "model_output", False):  # no reply at all: the call failed
            c.call_failures[getattr(err, "kind", "exception")] += 1
            if getattr(err, "status", None) is not None:
                c.call_failure_status[str(err.status)] += 1  # type: ignore[union-attr]
        if resp is None:
            sample = score_output(self.benchmark, item, None, repeat=unit.repeat,
                                  model_failure=getattr(err, "kind", "exception"), input=item.public,
                                  prompt_form=self._form, retries=attempts, cached=cached,
                                  error=f"{getattr(err, 'kind', type(err).__name__)}: {err}")
        else:
            u = resp.usage
            c.prompt_tokens += u.prompt_tokens
            c.completion_tokens += u.completion_tokens
            if resp.structured_output:
                self.structured_modes[resp.structured_output] += 1
            fields: dict[str, Any] = {"finish_reason": resp.finish_reason, "latency_s": resp.latency_s,
                      "tokens": TokenCounts(u.prompt_tokens, u.completion_tokens),
                      "input": item.public, "prompt_form": self._form, "retries": attempts,
                      "cached": cached,
                      "error": None}
            cache, skey = self.cache, None
            if cache is not None and self.scorer_id is not None:
                skey = score_key(unit.key, self.scorer_id, item, resp)
            record = cache.get_score(skey) if cache is not None and cached and skey is not None else None
            if record is not None:
                sample = sample_from_record(record, item, resp.text, repeat=unit.repeat, **fields)
                self.score_keys[(item.id, unit.repeat)] = skey  # type: ignore[assignment]
            else:
                sample = score_output(self.benchmark, item, resp.text, repeat=unit.repeat,
                                      truncated=resp.finish_reason == "length", extraction=extraction, **fields)
                if cache is not None and skey is not None and (rec := score_record(sample)) is not None:
                    cache.put_score(skey, rec)
                    self.score_keys[(item.id, unit.repeat)] = skey
            if resp.replaced_chars:  # text no writer could encode, repaired where it entered (models/base.py)
                sample = dataclasses.replace(sample, flags=(*sample.flags, INVALID_UNICODE))
        if sample.failure:
            c.failures[sample.failure] += 1
            c.errors += 1
        for f in sample.flags:
            c.flags[f] += 1
        c.done += 1
        self.last_done_at = time.perf_counter()
        if not cached:
            c.last_answered_at = self.last_done_at
        if self.on_sample is not None:
            self.on_sample(sample, prompt)
        # Kept for the end of the run without its prompt record: the line written holds it (the
        # sample and its prompt record are given to `on_sample` apart), and nothing after reads it
        # (about 250 bytes a sample: 2.5 MB at 10,000; docs/performance.md).
        self.samples.append(sample)
        if self.on_progress is not None:
            self.on_progress(c)
