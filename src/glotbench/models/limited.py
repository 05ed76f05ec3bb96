"""A model wrapper for sweeps: a concurrency budget shared with other runs, a call counter, and a
shared inner model that one run's end does not close.

Runs of a sweep against the same endpoint each wrap one shared backend object; the wrappers hold the
same semaphore, so two benchmarks against one server share its limit instead of doubling it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Literal

from glotbench.models.base import GenerateConfig, Model, Prompt, Response


class SharedModel:
    """One backend object used by several runs: checked (or loaded) once, closed once at the end."""

    def __init__(self, inner: Model):
        self.inner = inner
        self._checked = False
        self._lock: asyncio.Lock | None = None

    async def check(self) -> None:
        if self._checked:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if not self._checked:
                await self.inner.check()
                self._checked = True

    async def aclose(self) -> None:
        await self.inner.aclose()


class LimitedModel:
    """Forwards to a shared model under an optional shared semaphore; `on_call(n)` counts calls."""

    def __init__(self, shared: SharedModel, semaphore: asyncio.Semaphore | None = None,
                 on_call: Callable[[int], None] | None = None):
        self.shared = shared
        inner = shared.inner
        self.semaphore = semaphore
        self.on_call = on_call
        self.spec = inner.spec
        self.cache_id = inner.cache_id
        self.default_concurrency = inner.default_concurrency
        if hasattr(inner, "loglikelihood"):
            self.loglikelihood = self._loglikelihood
        if hasattr(inner, "loglikelihood_tokens"):
            self.loglikelihood_tokens = self._loglikelihood_tokens

    def prompt_form(self) -> Literal["chat", "text"]:
        return self.shared.inner.prompt_form()

    def description(self) -> dict[str, Any]:
        return self.shared.inner.description()

    async def check(self) -> None:
        await self.shared.check()

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0) -> Response:
        if self.semaphore is None:
            resp = await self.shared.inner.generate(prompt, config, item_id=item_id, repeat=repeat)
        else:
            async with self.semaphore:
                resp = await self.shared.inner.generate(prompt, config, item_id=item_id, repeat=repeat)
        if self.on_call is not None:
            self.on_call(1)
        return resp

    async def _loglikelihood(self, context: str, continuations: tuple[str, ...], **how: Any) -> list[float]:
        return await self._limited(self.shared.inner.loglikelihood, context, continuations, **how)  # type: ignore[attr-defined]

    async def _loglikelihood_tokens(self, context: str, continuations: tuple[str, ...],
                                    **how: Any) -> list[tuple[float, int]]:
        return await self._limited(self.shared.inner.loglikelihood_tokens, context, continuations, **how)  # type: ignore[attr-defined]

    async def _limited(self, fn: Callable[..., Any], context: str, continuations: tuple[str, ...], **how: Any) -> Any:
        if self.semaphore is None:
            out = await fn(context, continuations, **how)
        else:
            async with self.semaphore:
                out = await fn(context, continuations, **how)
        if self.on_call is not None:
            self.on_call(1)
        return out

    async def aclose(self) -> None:
        """Nothing: the sweep closes the shared model after its last run."""
