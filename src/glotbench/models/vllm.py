"""`vllm:MODEL[,KEY=VALUE...]`: offline batched generation through vLLM's engine on a GPU.

Concurrent `generate`/`loglikelihood` calls are gathered (20 ms) into one `LLM.chat`/`LLM.generate`
call of up to `concurrency` requests (default 1024), which vLLM schedules with continuous batching.
Each request keeps its own `SamplingParams` (temperature, max_tokens, seed, stop strings, a JSON
schema where the vLLM version supports structured outputs); thinking on/off goes to the chat
template as `chat_template_kwargs={"enable_thinking": ...}`, so requests are grouped by it. Log-
likelihood scoring (`method=loglik`) asks for prompt log-probabilities of context + continuation
and sums those of the continuation's tokens (lm-evaluation-harness's rule, as the `hf:` backend).

Engine settings are passed to `vllm.LLM` unchanged: `tensor_parallel_size`, `max_model_len`,
`gpu_memory_utilization`, `dtype`, `quantization`, ... either after the model in the spec
(`vllm:/models/qwen3-8b,tensor_parallel_size=2`) or as a sweep model's `options`.
vLLM is imported only when the model is first used: a cached run, and every test, needs neither vLLM
nor a GPU; without them the backend fails with one line. Tests inject a fake engine at `engine=`.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from glotbench.errors import GlotbenchError, SpecError
from glotbench.models.base import GenerateConfig, Prompt, Response, Usage
from glotbench.models.batching import (BATCH_LATENCY, LoglikEncoding, MicroBatcher, batch_latency, encode_pair,
                                       has_chat_template)

OUTPUT_AFFECTING = ("dtype", "quantization", "revision", "tokenizer", "max_model_len")


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_spec(rest: str) -> tuple[str, dict[str, Any]]:
    """`MODEL[,KEY=VALUE...]` -> (model, engine settings); values parsed as JSON where they can be."""
    model, *pairs = rest.split(",")
    if not model:
        raise SpecError("vllm: needs a model path or repo id, e.g. vllm:/models/qwen3-8b")
    opts: dict[str, Any] = {}
    for p in pairs:
        k, sep, v = p.partition("=")
        if not sep or not k:
            raise SpecError(f"vllm: engine settings are KEY=VALUE after the model, got {p!r}")
        opts[k.strip()] = _value(v.strip())
    return model, opts


def sampling_kwargs(config: GenerateConfig, json_schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The SamplingParams arguments for one request (pure: tested without vLLM)."""
    kw: dict[str, Any] = {"temperature": config.temperature, "max_tokens": config.max_tokens, "n": 1}
    if config.seed is not None:
        kw["seed"] = config.seed
    if config.stop:
        kw["stop"] = list(config.stop)
    if json_schema is not None:
        kw["json_schema"] = json_schema  # turned into the version's structured-output object by the model
    return kw


def chat_kwargs(thinking: bool | None) -> dict[str, Any]:
    return {} if thinking is None else {"chat_template_kwargs": {"enable_thinking": thinking}}


def continuation_span(ctx_ids: list[int], full_ids: list[int]) -> tuple[int, int]:
    """Token positions of a continuation: where the joint tokenisation leaves the context's prefix."""
    start = next((i for i, (a, b) in enumerate(zip(ctx_ids, full_ids)) if a != b), min(len(ctx_ids), len(full_ids)))
    return max(1, min(start, len(full_ids) - 1)), len(full_ids)


def sum_prompt_logprobs(prompt_logprobs: list[Any], ids: list[int], span: tuple[int, int]) -> float:
    """Sum of log P(token) over `span`; vLLM's entry per position maps token id -> Logprob."""
    total = 0.0
    for pos in range(*span):
        entry = prompt_logprobs[pos]
        lp = entry[ids[pos]]
        total += float(getattr(lp, "logprob", lp))
    return total


@dataclass
class _Req:
    kind: str  # "chat" | "text" | "loglik"
    payload: Any
    params: Any
    thinking: bool | None
    extra: Any = None


class VLLMModel:
    """vLLM's offline engine behind glotbench's Model interface, with micro-batching."""

    def __init__(self, model: str, *, spec: str | None = None, concurrency: int = 1024,
                 timeout_s: float | None = None, chat: bool | None = None, engine: Any = None,
                 sampling_params_cls: Any = None, **engine_args: Any):
        self.model = model
        self.engine_args = engine_args
        self.spec = spec or f"vllm:{model}"
        extra = ",".join(f"{k}={engine_args[k]}" for k in OUTPUT_AFFECTING if k in engine_args)
        self.cache_id = f"vllm:{model}" + (f",{extra}" if extra else "")
        self.batch_size = max(1, concurrency)
        self.default_concurrency = self.batch_size
        self._chat = chat
        self._engine = engine
        self._sp_cls = sampling_params_cls
        self._structured: Any = None
        # One engine call per (kind, thinking): chat and text prompts, and thinking modes, cannot mix.
        self._batcher = MicroBatcher[_Req, tuple[str, bool | None]](
            lambda key, reqs: self._run_group(*key, reqs), lambda r: (r.kind, r.thinking), batch_size=self.batch_size)
        self._lock: asyncio.Lock | None = None
        self.load_seconds: float | None = None
        self.version: str | None = None

    @classmethod
    def from_spec(cls, rest: str, spec: str, **opts: Any) -> "VLLMModel":
        model, engine_args = parse_spec(rest)
        opts.pop("api_key_env", None)
        return cls(model, spec=spec, **{**engine_args, **opts})

    # -- loading ---------------------------------------------------------------------------------

    def _load_sync(self) -> None:
        try:
            import vllm
        except ImportError:
            raise GlotbenchError("the vllm: backend needs vLLM and an NVIDIA GPU; vLLM is not installed "
                                 "(pip install vllm on a GPU machine, or serve the model and use openai:)") from None
        try:
            import torch

            has_gpu = torch.cuda.is_available()
        except ImportError:
            has_gpu = False
        if not has_gpu:
            raise GlotbenchError("the vllm: backend needs a GPU and this machine has none")
        t0 = time.perf_counter()
        try:
            self._engine = vllm.LLM(model=self.model, **self.engine_args)
        except Exception as e:  # noqa: BLE001 - vLLM raises many kinds; the user needs one line
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise GlotbenchError(f"vLLM could not load {self.model}: {type(e).__name__}: {first}") from None
        self._sp_cls = self._sp_cls or vllm.SamplingParams
        self.version = getattr(vllm, "__version__", None)
        self.load_seconds = time.perf_counter() - t0

    async def check(self) -> None:
        if self._engine is not None and self._sp_cls is not None:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._engine is None or self._sp_cls is None:
                await asyncio.to_thread(self._load_sync)

    # -- interface -------------------------------------------------------------------------------

    def prompt_form(self) -> Literal["chat", "text"]:
        """"chat" unless `chat=false` or a local model directory has no chat template (a base model)."""
        if self._chat is not None:
            return "chat" if self._chat else "text"
        if not Path(self.model).is_dir():
            return "chat"
        return "text" if has_chat_template(self.model) is False else "chat"

    def description(self) -> dict[str, Any]:
        d: dict[str, Any] = {"backend": "vllm", "model": self.model, "batch_size": self.batch_size,
                             "engine_args": dict(self.engine_args), "latency": BATCH_LATENCY}
        if self.version:
            d["vllm"] = self.version
        if self.load_seconds is not None:
            d["load_seconds"] = round(self.load_seconds, 2)
        return d

    def sampling_params(self, config: GenerateConfig, prompt: Prompt | None = None) -> tuple[Any, str | None]:
        """SamplingParams for a request and the structured-output mode actually used."""
        schema = None
        mode = None
        if config.structured_output and prompt is not None and prompt.json_schema is not None:
            schema = dict(prompt.json_schema).get("schema", dict(prompt.json_schema))
        kw = sampling_kwargs(config, schema)
        if "json_schema" in kw:
            structured = self._structured_kwargs(kw.pop("json_schema"))
            mode = "json_schema" if structured else "prompt"
            kw.update(structured)
        return self._sp_cls(**kw), mode

    def _structured_kwargs(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The structured-output argument of the installed vLLM (its name changed across versions)."""
        try:
            from vllm.sampling_params import StructuredOutputsParams  # vLLM >= 0.10.2

            return {"structured_outputs": StructuredOutputsParams(json=schema)}
        except ImportError:
            pass
        try:
            from vllm.sampling_params import GuidedDecodingParams  # older vLLM

            return {"guided_decoding": GuidedDecodingParams(json=schema)}
        except ImportError:
            return {}  # the prompt's own JSON instruction remains

    async def _submit(self, req: _Req) -> Any:
        return await self._batcher.submit(req)

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0) -> Response:
        await self.check()
        params, mode = self.sampling_params(config, prompt)
        form = self.prompt_form()
        if form == "text" and prompt.text is None:
            raise GlotbenchError("this benchmark has no plain-text prompt for base models")
        payload = [dict(m) for m in prompt.messages] if form == "chat" else prompt.text
        resp: Response = await self._submit(_Req(form, payload, params, config.thinking, extra=mode))
        return resp

    def count_text_tokens(self, text: str) -> int:
        """Tokens of `text` alone, without special tokens (the token premium: glotbench.checks.tokens):
        the engine's tokenizer, or the model's own from transformers when the engine never loaded (a
        fully cached run)."""
        if self._engine is not None:
            tok = self._engine.get_tokenizer()
        else:
            if getattr(self, "_text_tok", None) is None:
                from transformers import AutoTokenizer

                self._text_tok = AutoTokenizer.from_pretrained(self.model)
            tok = self._text_tok
        return len(tok.encode(text, add_special_tokens=False))

    async def loglikelihood(self, context: str, continuations: tuple[str, ...], *,
                            encoding: LoglikEncoding = "joint") -> list[float]:
        """Sum of token log-probabilities of each continuation after `context`."""
        return [lp for lp, _ in await self.loglikelihood_tokens(context, continuations, encoding=encoding)]

    async def loglikelihood_tokens(self, context: str, continuations: tuple[str, ...], *,
                                   encoding: LoglikEncoding = "joint") -> list[tuple[float, int]]:
        """(summed log-probability, number of tokens) of each continuation after `context`;
        `encoding`: how the pair is tokenised (glotbench.models.batching.encode_pair)."""
        await self.check()
        tok = self._engine.get_tokenizer()
        futures = []
        for cont in continuations:
            if encoding == "joint":
                full = list(tok.encode(context + cont))
                span = continuation_span(list(tok.encode(context)), full)
            else:
                prefix_id = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
                full, start = encode_pair(lambda t, special: list(tok.encode(t, add_special_tokens=special)),
                                          prefix_id, context, cont, encoding)
                span = (start, len(full))
            params = self._sp_cls(temperature=0.0, max_tokens=1, prompt_logprobs=1)
            futures.append(self._submit(_Req("loglik", {"prompt_token_ids": full}, params, None,
                                             extra=(full, span))))
        return list(await asyncio.gather(*futures))

    def _run_group(self, kind: str, thinking: bool | None, reqs: list[_Req]) -> list[Any]:
        t0 = time.perf_counter()
        payloads = [r.payload for r in reqs]
        params = [r.params for r in reqs]
        if kind == "chat":
            outs = self._engine.chat(payloads, params, use_tqdm=False, **chat_kwargs(thinking))
        else:
            outs = self._engine.generate(payloads, params, use_tqdm=False)
        latency, raw = batch_latency(time.perf_counter() - t0, len(reqs))
        if kind == "loglik":
            return [(sum_prompt_logprobs(o.prompt_logprobs, *r.extra), r.extra[1][1] - r.extra[1][0])
                    for r, o in zip(reqs, outs)]
        results = []
        for r, o in zip(reqs, outs):
            c = o.outputs[0]
            results.append(Response(
                text=c.text, finish_reason=c.finish_reason,
                usage=Usage(len(o.prompt_token_ids or ()), len(c.token_ids or ())),
                latency_s=latency, structured_output=r.extra, raw=raw,
            ))
        return results

    async def aclose(self) -> None:
        self._batcher.close()


def from_spec(rest: str, *, spec: str, **opts: Any) -> VLLMModel:
    """The registry's factory for `vllm:MODEL[,KEY=VALUE...]`."""
    return VLLMModel.from_spec(rest, spec, **opts)
