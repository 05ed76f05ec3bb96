"""`python:MODULE:FUNCTION`: a Python callable (sync or async) that takes the chat messages.

MODULE is imported as `python -m` finds it: an installed module, or a module in the current folder
(the `glotbench` console script does not put the current folder on sys.path; it is added when the
module is not found otherwise). The callable gets a list of `{"role", "content"}` dicts and may
return a string or a dict with `text` (and optionally `finish_reason`). docs/extending.md has the contract.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
import time
from typing import Any, Callable, Literal

from glotbench.errors import SpecError, module_missing, user_module_error
from glotbench.models.base import BadResponse, GenerateConfig, Prompt, Response


def _call(fn: Callable[..., Any], msgs: list[dict[str, Any]]) -> Any:
    """`fn(msgs)` in a worker thread. A StopIteration cannot cross into an asyncio future (asyncio
    raises TypeError in its callback and the future never completes: the run hung for ever); it
    leaves here as the RuntimeError a coroutine would make of it (PEP 479)."""
    try:
        return fn(msgs)
    except StopIteration as e:
        raise RuntimeError(f"the callable raised StopIteration{f': {e}' if str(e) else ''}") from e


def _import(name: str) -> Any:
    """The module, as `python -m` would find it: when its top-level package is not importable and the
    current folder is not on sys.path (the console script's case), the folder is added (at the end:
    an installed module of the same name still wins, as it does for `python -m` with no such file)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        here = os.getcwd()
        if e.name != name.split(".")[0] or any(os.path.abspath(p or ".") == here for p in sys.path):
            raise
        sys.path.append(here)
        importlib.invalidate_caches()
        return importlib.import_module(name)


class PythonModel:
    default_concurrency = 8

    def __init__(self, target: str, *, spec: str | None = None, **_: Any):
        mod_name, sep, fn_name = target.rpartition(":")
        if not sep or not mod_name or not fn_name:
            raise SpecError(f"python model spec needs MODULE:FUNCTION, got {target!r}")
        try:
            module = _import(mod_name)
        except ModuleNotFoundError as e:
            if not module_missing(e, mod_name):  # the module was found; an import inside it failed
                raise SpecError(user_module_error(mod_name, e)) from None
            raise SpecError(f"cannot import module {mod_name!r}: {e} (looked on sys.path and in the current "
                            f"folder, {os.getcwd()})") from None
        except Exception as e:  # noqa: BLE001 - the user's module failed while importing (SyntaxError, ...)
            raise SpecError(user_module_error(mod_name, e)) from None
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
