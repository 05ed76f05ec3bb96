"""Micro-batching for in-process engines that run one batch at a time (transformers, vLLM's offline
engine): concurrent `generate` calls are collected for a short window, grouped by what must be
shared within one engine call (sampling settings, chat or text, thinking mode), and each group runs
in a worker thread so the event loop stays free. One implementation for both backends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable, Generic, Hashable, Sequence, TypeVar

from glotbench.errors import GlotbenchError
from glotbench.models.base import LoglikEncoding

R = TypeVar("R")
K = TypeVar("K", bound=Hashable)  # what groups requests into one engine call

# How a batched backend's replies carry latency: one engine call answers the whole batch, so giving
# every item the batch's wall time (60.8 s each for a 16-item CPU batch) overstates it 16-fold. Each
# reply gets its share; the batch's own time and size travel in `Response.raw`.
BATCH_LATENCY = "per item: its batch's wall time divided by the number of items in the batch"


def batch_latency(seconds: float, size: int) -> tuple[float, dict[str, float | int]]:
    """(latency of one item of a batch, the raw fields that record the batch itself)."""
    size = max(1, size)
    return seconds / size, {"batch": size, "batch_latency_s": round(seconds, 4)}




def encode_pair(encode: Callable[[str, bool], list[int]], prefix_id: int | None, context: str, continuation: str,
                encoding: LoglikEncoding = "joint") -> tuple[list[int], int]:
    """(input token ids, index of the continuation's first token) of one log-likelihood request.
    `encode(text, add_special_tokens)` is the model's tokenizer; `prefix_id` (BOS, else EOS) stands
    for an empty context, as lm-eval's `prefix_token_id` does. The index is at least 1: the first
    scored token always has one before it."""
    if encoding == "lm-eval":
        if context == "":  # lm-eval's loglikelihood(): the prefix token is the context
            cont = encode(continuation, False)
            if prefix_id is not None and (not cont or cont[0] != prefix_id):
                ctx = [prefix_id]
            else:
                ctx, cont = cont[:1], cont[1:]
        else:
            n_spaces = len(context) - len(context.rstrip())
            if n_spaces:
                context, continuation = context[:-n_spaces], context[-n_spaces:] + continuation
            whole = encode(context + continuation, True)
            ctx = encode(context, True)
            cont = whole[len(ctx):]
        if not cont:  # lm-eval asserts here: the joint tokenisation absorbed the continuation into the context
            raise GlotbenchError(f"continuation {continuation!r} has no tokens of its own after the context "
                                 "under lm-eval's tokenisation (lm-eval refuses it too)")
        ids = ctx + cont
        return ids, max(1, min(len(ctx), len(ids) - 1))
    ctx = encode(context, True)
    prefix: list[int] = []
    if not ctx and prefix_id is not None:  # an empty context: scored after BOS, else EOS
        prefix = ctx = [prefix_id]
    full = prefix + encode(context + continuation, True)
    start = next((i for i, (a, b) in enumerate(zip(ctx, full)) if a != b), min(len(ctx), len(full)))
    return full, max(1, min(start, len(full) - 1))


def length_batches(lengths: Sequence[int], token_budget: int) -> list[list[int]]:
    """Indices of `lengths` in batches of similar length (shortest first) whose padded size
    (rows x longest row) stays within `token_budget`; a row longer than the budget is a batch alone."""
    batches: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        if batches and (len(batches[-1]) + 1) * lengths[i] <= token_budget:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


class MicroBatcher(Generic[R, K]):
    """`await submit(req)` returns `run(key, reqs)`'s result for `req`. `key(req)` groups requests
    that can share one engine call; at most `batch_size` requests are taken per round, after
    waiting `window_s` for concurrent callers to join. An exception in `run` (or `run` returning
    the wrong number of results) goes to every caller of that group; the others are unaffected.
    `close()` fails every caller still waiting: none awaits forever."""

    def __init__(self, run: Callable[[K, list[R]], list[Any]], key: Callable[[R], K], *,
                 batch_size: int, window_s: float = 0.02):
        self._run, self._key = run, key
        self.batch_size, self.window_s = max(1, batch_size), window_s
        self._queue: asyncio.Queue[tuple[R, asyncio.Future]] | None = None
        self._worker: asyncio.Task | None = None
        self._pending: set[asyncio.Future] = set()  # callers not yet answered, failed by close()

    async def submit(self, req: R) -> Any:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._worker = asyncio.create_task(self._loop())
        fut = asyncio.get_running_loop().create_future()
        self._pending.add(fut)
        fut.add_done_callback(self._pending.discard)
        await self._queue.put((req, fut))
        return await fut

    async def _loop(self) -> None:
        assert self._queue is not None
        while True:
            batch = [await self._queue.get()]
            await asyncio.sleep(self.window_s)  # let concurrent callers join the batch
            while len(batch) < self.batch_size and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            groups: dict[K, list[tuple[R, asyncio.Future]]] = {}
            for entry in batch:
                try:
                    groups.setdefault(self._key(entry[0]), []).append(entry)
                except Exception as e:  # noqa: BLE001 - this caller's request is bad, not the batcher
                    if not entry[1].done():
                        entry[1].set_exception(e)
            for key, entries in groups.items():
                try:
                    outs = await asyncio.to_thread(self._run, key, [req for req, _ in entries])
                    if len(outs) != len(entries):
                        raise RuntimeError(f"the engine returned {len(outs)} results for {len(entries)} requests")
                    for (_, fut), out in zip(entries, outs):
                        if not fut.done():
                            fut.set_result(out)
                except Exception as e:  # noqa: BLE001 - handed to each caller of the group
                    for _, fut in entries:
                        if not fut.done():
                            fut.set_exception(e)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
        self._queue = None
        for fut in list(self._pending):
            if not fut.done():
                fut.set_exception(RuntimeError("the model was closed before this request was answered"))
        self._pending.clear()


def has_chat_template(directory: str | Path) -> bool | None:
    """Whether a local model directory ships a chat template (chat_template.jinja/.json, or one in
    tokenizer_config.json); None when it cannot tell (no readable tokenizer config)."""
    import json

    p = Path(directory)
    if (p / "chat_template.jinja").is_file() or (p / "chat_template.json").is_file():
        return True
    try:
        cfg = json.loads((p / "tokenizer_config.json").read_text(encoding="utf-8"))
        return bool(cfg.get("chat_template"))
    except (OSError, ValueError, AttributeError):
        return None
