"""A true ETA (issue 32): from the first completed batch on, within ±50% of the real remaining time,
for a batched local backend and for an endpoint. Scripted models of known speed run through
evaluate() on a fake clock (the runner's and the progress line's `time`), so nothing sleeps and the
figures do not depend on the machine's load: a batch of the local model takes T seconds of the
clock whatever its size; each endpoint request takes its scripted latency, the clock moving to the
next reply only when every task the last one woke has run."""

from __future__ import annotations

import asyncio
import heapq
import random
import types

import pytest

import glotbench.engine.progress as progress_mod
import glotbench.engine.runner as runner_mod
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.models.base import (
    REQUEST_LATENCY,
    GenerateConfig,
    ModelBase,
    Prompt,
    Response,
)
from glotbench.models.batching import BATCH_LATENCY, MicroBatcher, batch_latency

REPLY = '{"restored_text": "x"}'


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def module(self) -> types.SimpleNamespace:
        return types.SimpleNamespace(perf_counter=lambda: self.now, time=lambda: self.now)


class LocalBatches(ModelBase):
    """A batched in-process backend: every batch (up to `size` prompts) takes `seconds` of the clock."""

    def __init__(self, clock: Clock, seconds: float, size: int):
        super().__init__("local-batches", spec="python:local-batches", concurrency=size)
        self.clock, self.seconds = clock, seconds
        self._batcher = MicroBatcher(lambda _k, reqs: self._batch(reqs), lambda _r: 0, batch_size=size,
                                     window_s=0.001)

    def description(self):
        return {"backend": "test", "latency": BATCH_LATENCY}

    def _batch(self, reqs):
        self.clock.now += self.seconds
        latency, raw = batch_latency(self.seconds, len(reqs))
        return [Response(text=REPLY, finish_reason="stop", latency_s=latency, raw=raw) for _ in reqs]

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0):
        return await self._batcher.submit(prompt)

    async def aclose(self):
        self._batcher.close()


class Endpoint(ModelBase):
    """An endpoint with `concurrency` requests in flight, request i taking `latencies[i]` of the clock.
    The clock moves to the earliest reply once every request the runner can have in flight was sent,
    and only after the event loop ran what was already waiting (the last reply's bookkeeping)."""

    def __init__(self, clock: Clock, latencies: list[float], concurrency: int, send_stall: float = 0.0):
        super().__init__("endpoint", spec="python:endpoint", concurrency=concurrency)
        self.clock, self.latencies, self.concurrency = clock, latencies, concurrency
        self.send_stall = send_stall  # clock time the first round takes to go out (connections opened)
        self.waiting: list[tuple[float, int, asyncio.Future]] = []
        self.sent = self.answered = 0
        self.scheduled = False

    def description(self):
        return {"backend": "test", "latency": REQUEST_LATENCY}

    def _advance(self) -> None:
        self.scheduled = False
        if self.waiting and len(self.waiting) >= min(self.concurrency, len(self.latencies) - self.answered):
            t, _, fut = heapq.heappop(self.waiting)
            self.clock.now = t
            self.answered += 1
            fut.set_result(Response(text=REPLY, finish_reason="stop", latency_s=0.0))

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0):
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        if self.sent < self.concurrency:
            self.clock.now += self.send_stall / self.concurrency
        heapq.heappush(self.waiting, (self.clock.now + self.latencies[self.sent], self.sent, fut))
        self.sent += 1
        if not self.scheduled:
            self.scheduled = True
            loop.call_soon(self._advance)
        resp = await fut
        if not self.scheduled:  # the next reply, once this one's sample is done and counted
            self.scheduled = True
            loop.call_soon(loop.call_soon, self._advance)
        return resp


def run_and_watch(model, n: int, clock: Clock, monkeypatch, tmp_path) -> tuple[list[tuple[float, int, float | None]], float]:
    """(clock time, samples done, ETA) at every reading of the counters, and the run's end time."""
    monkeypatch.setattr(runner_mod, "time", clock.module())
    monkeypatch.setattr(progress_mod, "time", clock.module())
    seen = []
    commit = progress_mod.ProgressBar._commit

    def watched(bar):
        commit(bar)
        seen.append((clock.now, bar._counters.done, bar.eta(clock.now)))

    monkeypatch.setattr(progress_mod.ProgressBar, "_commit", watched)
    res = evaluate("vi-diacritics", model, RunOptions(limit=n, progress=False, use_cache=False, out=str(tmp_path / "r")))
    assert res.results["counts"]["samples"] == n
    return seen, clock.now


def within_half(seen, end: float, granularity: float) -> list[tuple[float, float | None, float]]:
    """The readings whose ETA is off by more than ±50%, among those with more than one batch (or one
    request's latency) of real time left: in the last round, the replies of the round before still
    coming in, the run's end is one reply away or one round away."""
    bad = []
    for now, done, eta in seen:
        real = end - now
        if real > granularity + 1e-9 and (eta is None or abs(eta - real) > 0.5 * real):
            bad.append((now, eta, real))
    return bad


@pytest.mark.parametrize("n, size", [(30, 16), (30, 8), (100, 4), (64, 16)])
def test_a_batched_local_run_has_a_true_eta_from_its_first_batch(n, size, monkeypatch, tmp_path):
    """The issue's case: 30 items in batches of 16 said `1/30 done … ETA 1:25:06` (29 batches' time)
    after one reply of the first batch, for a run of 2 batches."""
    clock, seconds = Clock(), 60.0
    seen, end = run_and_watch(LocalBatches(clock, seconds, size), n, clock, monkeypatch, tmp_path)
    answered = [(t, d, e) for t, d, e in seen if d]
    assert all(d % size == 0 or d == n for _, d, _ in answered), answered  # a batch counts all at once
    assert answered[0][1] == min(size, n) and answered[0][2] is not None  # from the first batch on
    assert within_half(seen, end, seconds) == []
    assert end - 1000.0 == pytest.approx(seconds * -(-n // size))


@pytest.mark.parametrize("jitter", [0.0, 0.6])
@pytest.mark.parametrize("n, concurrency", [(160, 8), (150, 32)])  # vi-diacritics has 164 items
def test_an_endpoint_run_has_a_true_eta_from_its_first_round(n, concurrency, jitter, monkeypatch, tmp_path):
    """Requests of 2 s (± jitter/2), `concurrency` in flight: the ETA from the first round of
    replies on, to within ±50% while at least one request's latency is left."""
    rng = random.Random(11)
    latencies = [2.0 * (1 - jitter / 2 + jitter * rng.random()) for _ in range(n)]
    clock = Clock()
    seen, end = run_and_watch(Endpoint(clock, latencies, concurrency), n, clock, monkeypatch, tmp_path)
    first_round = next(i for i, (_, d, _) in enumerate(seen) if d >= concurrency)
    assert all(e is not None for _, d, e in seen[first_round:]), seen[first_round:first_round + 3]
    assert within_half(seen[first_round:], end, max(latencies)) == []


def test_the_eta_of_a_partial_batch_was_what_the_issue_saw():
    """The old reading (the counters after one reply of a batch, no first round) against the new."""
    from glotbench.engine.progress import eta_seconds
    from glotbench.engine.runner import RunCounters

    c = RunCounters(total=30, done=1, first_call_at=0.0, last_answered_at=176.0)
    assert eta_seconds(c, 176.0) == pytest.approx(29 * 176.0)  # 1:25:04: what a plain line printed
    assert eta_seconds(c, 176.0, wave=16) is None  # one reply is not yet the first batch
    c.done = 16
    assert eta_seconds(c, 176.0, wave=16) == pytest.approx(14 * 176.0 / 16)


def test_a_first_round_sent_over_a_stall_is_timed_from_when_it_was_all_out(monkeypatch, tmp_path):
    """The first requests of a real run go out over a stall (16 connections opened while the loop is
    busy: 0.04-0.16 s of a 0.1-s endpoint's first round, measured at load 9). Timed from the first
    call, the first round's ETA counted that stall as if every round had it: 1.8 times too long here."""
    latencies = [2.0] * 160
    clock = Clock()
    seen, end = run_and_watch(Endpoint(clock, latencies, 16, send_stall=1.6), 160, clock, monkeypatch, tmp_path)
    first_round = next(i for i, (_, d, _) in enumerate(seen) if d >= 16)
    assert within_half(seen[first_round:], end, 2.0) == []
    t, d, eta = seen[first_round]
    assert eta == pytest.approx(end - t, rel=0.15), (d, eta, end - t)


def test_one_slow_round_does_not_double_the_eta(monkeypatch, tmp_path):
    """A round that takes twice as long (the machine busy, the endpoint paused) made an ETA over the
    last round alone twice the real remaining time right after it (the bench's endpoint figure at
    load 9: +92-231%); over the last ROUNDS rounds it counts a quarter."""
    from glotbench.engine.progress import ROUNDS

    latencies = [4.0 if 64 <= i < 80 else 2.0 for i in range(160)]
    clock = Clock()
    seen, end = run_and_watch(Endpoint(clock, latencies, 16), 160, clock, monkeypatch, tmp_path)
    after = next((t, d, e) for t, d, e in seen if d >= 80)  # the slow round just ended
    assert after[2] < (end - after[0]) * (1 + 1.0 / ROUNDS + 0.05), after  # one round back: twice


@pytest.mark.parametrize("into", [1, 5, 11])
def test_a_reading_inside_a_wave_counts_whole_rounds(into, monkeypatch, tmp_path):
    """Replies in waves of 16: at 16 + `into` replies (the next wave just started), the time since
    the first call is two rounds for 16 + `into` replies; the rate is taken between replies one wave
    apart (the same place in their waves), so the ETA is the real remaining time within 15% (this
    model lands a wave's replies at one instant: the reading at 17 still counts the 15 landing with it).
    From the first call: twice the real time at 17."""
    clock = Clock()
    seen, end = run_and_watch(Endpoint(clock, [2.0] * 160, 16), 160, clock, monkeypatch, tmp_path)
    t, d, eta = next((t, d, e) for t, d, e in seen if d >= 16 + into)
    assert eta == pytest.approx(end - t, rel=0.15), (d, eta, end - t)
