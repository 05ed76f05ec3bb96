"""Runner pieces: retry policy, error mapping, lazy work creation."""

from __future__ import annotations

import asyncio
import email.utils
import json
import time

from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.engine.runner import RetryPolicy, Runner
from glotbench.items import Item
from glotbench.models.base import GenerateConfig, Prompt, Response
from glotbench.models.openai_compat import map_status, parse_retry_after


def test_retry_after_seconds_and_http_date():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 28 <= parse_retry_after(when) <= 31


def test_backoff_honours_retry_after_and_caps_it():
    p = RetryPolicy(backoff_base_s=0.5, backoff_max_s=4, max_retry_after_s=10)
    assert all(2.0 <= p.delay(0, 2.0) <= 2.2 for _ in range(50))
    assert all(10.0 <= p.delay(0, 999) <= 110 for _ in range(50))
    assert all(0 <= p.delay(5, None) <= 4 for _ in range(50))  # full jitter, capped


def test_status_mapping():
    body = json.dumps({"error": {"message": "slow down"}}).encode()
    e = map_status(429, body, {"Retry-After": "7"})
    assert e.kind == "rate_limited" and e.retryable and e.retry_after == 7 and "slow down" in str(e)
    assert map_status(503, b"oops", {}).kind == "server_error"
    assert map_status(401, b"", {}).kind == "auth"
    assert map_status(408, b"", {}).kind == "timeout"
    e = map_status(400, b"bad", {})
    assert e.kind == "client_error" and not e.retryable


class CountingModel:
    """Counts how many generate calls are in flight at once."""

    spec = cache_id = "count"
    default_concurrency = 8

    def __init__(self):
        self.in_flight = self.peak = 0
        self.peak_tasks = 0

    def prompt_form(self):
        return "chat"

    def description(self):
        return {}

    async def check(self):
        pass

    async def aclose(self):
        pass

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id="", repeat=0):
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self.peak_tasks = max(self.peak_tasks, len(asyncio.all_tasks()))
        await asyncio.sleep(0)
        self.in_flight -= 1
        return Response(text='{"restored_text": "x"}', finish_reason="stop")


def test_work_is_created_lazily():
    bench = VietnameseDiacritics()
    produced = 0

    def items():
        nonlocal produced
        for i in range(20_000):
            produced += 1
            yield Item.create(str(i), {"text": "xin chao"}, {"references": ["xin chào"]}, {"category": "c"})

    model = CountingModel()
    runner = Runner(bench, model, GenerateConfig(), concurrency=8)
    samples = asyncio.run(runner.run(items(), 20_000))
    assert len(samples) == 20_000 and produced == 20_000
    assert model.peak <= 8
    assert model.peak_tasks <= 8 + 4  # workers, producer, flusher, main: never one task per item
