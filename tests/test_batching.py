"""The micro-batcher shared by the in-process backends (hf:, vllm:)."""

import asyncio
import threading

import pytest

from glotbench.models.batching import MicroBatcher, has_chat_template


def test_concurrent_calls_are_batched_grouped_and_answered_in_order():
    calls: list[tuple[object, list[int]]] = []
    threads: set[int] = set()

    def run(key, reqs):
        calls.append((key, list(reqs)))
        threads.add(threading.get_ident())
        return [r * 10 for r in reqs]

    async def main():
        b = MicroBatcher(run, key=lambda r: r % 2, batch_size=4)
        try:
            return await asyncio.gather(*(b.submit(i) for i in range(10)))
        finally:
            b.close()

    out = asyncio.run(main())
    assert out == [i * 10 for i in range(10)]  # each caller gets its own result
    assert all(len(reqs) <= 4 for _, reqs in calls)  # never more than batch_size per round
    assert all(all(r % 2 == key for r in reqs) for key, reqs in calls)  # groups never mix keys
    assert sum(len(reqs) for _, reqs in calls) == 10
    assert len(calls) < 10  # batched, not one call per request
    assert threading.get_ident() not in threads  # the engine runs off the event loop


def test_a_failing_group_fails_only_its_own_callers():
    def run(key, reqs):
        if key == "bad":
            raise RuntimeError("CUDA out of memory")
        return [f"ok:{r}" for r in reqs]

    async def main():
        b = MicroBatcher(run, key=lambda r: "bad" if r.startswith("x") else "good", batch_size=8)
        try:
            return await asyncio.gather(b.submit("a"), b.submit("x1"), b.submit("b"), return_exceptions=True)
        finally:
            b.close()

    a, x, b = asyncio.run(main())
    assert (a, b) == ("ok:a", "ok:b")
    assert isinstance(x, RuntimeError) and "out of memory" in str(x)


@pytest.mark.parametrize("files, expected", [
    ({"chat_template.jinja": "{{ messages }}"}, True),
    ({"tokenizer_config.json": '{"chat_template": "{{ x }}"}'}, True),
    ({"tokenizer_config.json": '{"model_max_length": 512}'}, False),
    ({"tokenizer_config.json": "[1, 2]"}, None),  # not an object: cannot tell
    ({"tokenizer_config.json": "{not json"}, None),
    ({}, None),
])
def test_chat_template_detection(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert has_chat_template(tmp_path) is expected


def test_close_fails_waiting_and_running_callers_instead_of_leaving_them_hanging():
    """aclose() while requests wait in the queue or run in the engine: every caller gets an error
    (a caller awaiting forever would hang the run at its end)."""
    started = threading.Event()
    release = threading.Event()

    def run(key, reqs):
        started.set()
        release.wait(5)
        return list(reqs)

    async def main():
        b = MicroBatcher(run, key=lambda r: 0, batch_size=1, window_s=0)
        tasks = [asyncio.create_task(b.submit(i)) for i in range(3)]
        await asyncio.to_thread(started.wait, 5)  # the first request is in the engine, two wait
        b.close()
        try:
            return await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 3)
        finally:
            release.set()

    out = asyncio.run(main())
    assert len(out) == 3 and all(isinstance(e, Exception) and "closed" in str(e) for e in out), out


def test_an_engine_returning_too_few_results_fails_its_callers():
    async def main():
        b = MicroBatcher(lambda key, reqs: list(reqs)[:1], key=lambda r: 0, batch_size=4)
        try:
            return await asyncio.wait_for(asyncio.gather(*(b.submit(i) for i in range(3)), return_exceptions=True), 3)
        finally:
            b.close()

    out = asyncio.run(main())
    assert all(isinstance(e, Exception) for e in out), out


def test_a_failing_key_fails_its_caller_not_the_batcher():
    async def main():
        b = MicroBatcher(lambda key, reqs: list(reqs), key=lambda r: {"unhashable": r} if r == 1 else 0, batch_size=4)
        try:
            bad = await asyncio.wait_for(asyncio.gather(b.submit(0), b.submit(1), return_exceptions=True), 3)
            return bad, await asyncio.wait_for(b.submit(2), 3)
        finally:
            b.close()

    (ok, bad), later = asyncio.run(main())
    assert ok == 0 and isinstance(bad, TypeError) and later == 2
