"""Model spec strings -> Model backends. A new backend is one module plus one entry here."""

from __future__ import annotations

from typing import Any, Callable

from glotbench.errors import SpecError
from glotbench.models.base import Model


def _openai(rest: str, spec: str, **opts: Any) -> Model:
    from glotbench.models.openai_compat import OpenAICompatModel

    return OpenAICompatModel.from_spec(rest, spec, **opts)


def _hf(rest: str, spec: str, **opts: Any) -> Model:
    from glotbench.models.hf import HFModel

    if not rest:
        raise SpecError("hf: needs a path or repo id, e.g. hf:/models/my-model")
    return HFModel(rest, spec=spec, **opts)


def _local(rest: str, spec: str, **opts: Any) -> Model:
    from glotbench.models.hf import HFModel

    return HFModel.embedded_default(spec=spec, **opts)


def _vllm(rest: str, spec: str, **opts: Any) -> Model:
    from glotbench.models.vllm import VLLMModel

    return VLLMModel.from_spec(rest, spec, **opts)


def _replay(rest: str, spec: str, **opts: Any) -> Model:
    from glotbench.models.replay import ReplayModel

    return ReplayModel(rest, spec=spec)


def _python(rest: str, spec: str, **opts: Any) -> Model:
    from glotbench.models.python_fn import PythonModel

    return PythonModel(rest, spec=spec)


BACKENDS: dict[str, tuple[Callable[..., Model], str]] = {
    "openai": (_openai, "openai:MODEL@BASE_URL  any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp...)"),
    "local": (_local, "local  the embedded default: Gemma 3 270M (GGUF Q4_K_M) via transformers"),
    "hf": (_hf, "hf:PATH_OR_REPO  a transformers causal LM"),
    "vllm": (_vllm, "vllm:MODEL[,KEY=VALUE...]  vLLM's offline engine on a GPU (settings passed to vllm.LLM)"),
    "replay": (_replay, "replay:FILE.jsonl  outputs produced elsewhere ({\"id\", \"output\"} per line)"),
    "python": (_python, "python:MODULE:FUNCTION  a Python callable taking the chat messages"),
}


def load_model(spec: str, **opts: Any) -> Model:
    """Build a Model from a spec string. `opts`: concurrency, timeout_s, api_key_env (where they apply)."""
    name, _, rest = spec.partition(":")
    if name not in BACKENDS:
        known = ", ".join(BACKENDS)
        raise SpecError(f"unknown model spec {spec!r}: it must start with one of {known}")
    factory, _ = BACKENDS[name]
    return factory(rest, spec, **opts)
