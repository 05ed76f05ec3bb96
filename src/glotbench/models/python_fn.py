"""`python:MODULE:FUNCTION`: a Python callable (sync or async) that takes the chat messages.

It may return a string or a dict with `text` (and optionally `finish_reason`).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import time
from typing import Any, Callable, Literal

from glotbench.errors import SpecError
from glotbench.models.base import BadResponse, GenerateConfig, Prompt, Response


def _call(fn: Callable[..., Any], msgs: list[dict[str, Any]]) -> Any:
    """`fn(msgs)` in a worker thread. A StopIteration cannot cross into an asyncio future (asyncio
    raises TypeError in its callback and the future never completes: the run hung for ever); it
    leaves here as the RuntimeError a coroutine would make of it (PEP 479)."""
    try:
        return fn(msgs)
    except StopIteration as e:
        raise RuntimeError(f"the callable raised StopIteration{f': {e}' if str(e) else ''}") from e


class PythonModel:
    default_concurrency = 8

    def __init__(self, target: str, *, spec: str | None = None, **_: Any):
        mod_name, sep, fn_name = target.rpartition(":")
        if not sep or not mod_name or not fn_name:
            raise SpecError(f"python model spec needs MODULE:FUNCTION, got {target!r}")
        try:
            module = importlib.import_module(mod_name)
        except ImportError as e:
            raise SpecError(f"cannot import module {mod_name!r}: {e}") from None
        fn = getattr(module, fn_name, None)
        if not callable(fn):
            raise SpecError(f"{mod_name!r} has no callable {fn_name!r}")
        self.fn: Callable[..., Any] = fn
        self.spec = spec or f"python:{target}"
        self.cache_id = f"python:{target}"

    def prompt_form(self) -> Literal["chat", "text"]:
        return "chat"

    def description(self) -> dict[str, Any]:
        return {"backend": "python", "callable": self.cache_id.removeprefix("python:")}

    async def check(self) -> None:
        return None

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0) -> Response:
        msgs = [dict(m) for m in prompt.messages]
        t0 = time.perf_counter()
        if inspect.iscoroutinefunction(self.fn):
            out = await self.fn(msgs)
        else:
            out = await asyncio.to_thread(_call, self.fn, msgs)
        latency = time.perf_counter() - t0
        if isinstance(out, str):
            return Response(text=out, finish_reason="stop", latency_s=latency)
        if isinstance(out, dict) and isinstance(out.get("text"), str):
            return Response(text=out["text"], finish_reason=out.get("finish_reason", "stop"),
                            latency_s=latency)
        raise BadResponse(f"callable returned {type(out).__name__}, expected str or {{'text': str}}")

    async def aclose(self) -> None:
        return None
