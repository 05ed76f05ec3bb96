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


def test_cache_keys_are_the_canonical_json_they_always_were():
    """The key is assembled from a per-config head (not re-encoded per unit); its bytes must stay
    those of the canonical JSON document, or every existing cache would miss."""
    import hashlib
    import json

    from glotbench.engine.cache import cache_key, cache_key_head

    def canonical(model_id, payload, config, repeat):
        blob = json.dumps({"v": 1, "model": model_id, "prompt": payload, "config": config, "repeat": repeat},
                          sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    cases = [
        ("openai:m@http://127.0.0.1:1/v1", {"messages": [{"role": "user", "content": "ພາສາລາວ \"q\" \\ \u0000 🔥"}]},
         {"temperature": 0.0, "max_tokens": 5, "seed": None, "stop": ["\n", "</s>"], "structured_output": False}, 0),
        ("hf:org/model", {"text": "Đây là", "loglik_choices": ["A", "B"]},
         {"temperature": 0.7, "max_tokens": 1024, "seed": 3, "stop": [], "structured_output": True, "thinking": True}, 12),
        ("replay:/p.jsonl", {"messages": [], "json_schema": {"type": "object", "b": 1, "a": [1.5, None]}},
         {"temperature": 1e-300, "max_tokens": 1, "seed": -1, "stop": ["ا"], "structured_output": True}, 3),
    ]
    for model_id, payload, config, repeat in cases:
        want = canonical(model_id, payload, config, repeat)
        assert cache_key(model_id, payload, config, repeat) == want
        assert cache_key(model_id, payload, {}, repeat, head=cache_key_head(model_id, config)) == want
