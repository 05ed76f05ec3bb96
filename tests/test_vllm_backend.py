"""The vllm: backend without vLLM or a GPU: a fake engine object injected at the `engine=` seam
records exactly what glotbench would hand to vLLM (SamplingParams arguments, chat messages,
chat_template_kwargs, prompt-logprob requests) and answers in vLLM's output shapes."""

from __future__ import annotations

import asyncio
import importlib.util
import math
from dataclasses import dataclass, field
from typing import Any

import pytest

from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError, SpecError
from glotbench.models.base import GenerateConfig, Prompt
from glotbench.registry import load_model
from glotbench.models.vllm import VLLMModel, continuation_span, parse_spec, sampling_kwargs


@dataclass
class FakeSP:
    """Stands in for vllm.SamplingParams: keeps its keyword arguments."""

    kw: dict[str, Any]

    def __init__(self, **kw: Any):
        self.kw = kw


@dataclass
class Completion:
    text: str
    token_ids: list[int]
    finish_reason: str


@dataclass
class RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[Completion]
    prompt_logprobs: list[Any] | None = None


@dataclass
class Logprob:
    logprob: float


class CharTokenizer:
    """One token per character (code point), so spans are easy to check by hand."""

    def encode(self, text: str) -> list[int]:
        return [1] + [ord(c) for c in text]  # 1: BOS, as HF tokenizers add one


@dataclass
class FakeLLM:
    calls: list[tuple[str, Any, Any, dict]] = field(default_factory=list)
    reply: str = "ok"

    def get_tokenizer(self) -> CharTokenizer:
        return CharTokenizer()

    def chat(self, messages, sampling_params, use_tqdm=True, **kw):
        self.calls.append(("chat", messages, sampling_params, kw))
        outs = []
        for conv, sp in zip(messages, sampling_params):
            words = (conv[-1]["content"] + " " + self.reply).split()
            n = sp.kw["max_tokens"]
            outs.append(RequestOutput(list(range(len(conv[-1]["content"]))),
                                      [Completion(" ".join(words[:n]), list(range(min(n, len(words)))),
                                                  "length" if len(words) > n else "stop")]))
        return outs

    def generate(self, prompts, sampling_params, use_tqdm=True, **kw):
        self.calls.append(("generate", prompts, sampling_params, kw))
        outs = []
        for p, sp in zip(prompts, sampling_params):
            if isinstance(p, dict):  # a prompt-logprob request: log P(token) = -token/1000
                ids = p["prompt_token_ids"]
                lps = [None] + [{t: Logprob(-t / 1000), 99999: Logprob(-0.01)} for t in ids[1:]]
                outs.append(RequestOutput(ids, [Completion("x", [5], "length")], lps))
            else:
                outs.append(RequestOutput([1, 2, 3], [Completion(f"text:{p[-5:]}", [4, 5], "stop")]))
        return outs


def model(**kw) -> tuple[VLLMModel, FakeLLM]:
    eng = FakeLLM()
    return VLLMModel("/models/qwen3", engine=eng, sampling_params_cls=FakeSP, chat=kw.pop("chat", None), **kw), eng


def test_spec_parsing_and_cache_identity():
    assert parse_spec("/m/qwen3,tensor_parallel_size=2,dtype=bfloat16,enforce_eager=true") == (
        "/m/qwen3", {"tensor_parallel_size": 2, "dtype": "bfloat16", "enforce_eager": True})
    m = load_model("vllm:/m/qwen3,tensor_parallel_size=4,dtype=half", concurrency=64, timeout_s=5)
    assert isinstance(m, VLLMModel)
    assert m.engine_args == {"tensor_parallel_size": 4, "dtype": "half"}  # passed to vllm.LLM unchanged
    assert m.batch_size == m.default_concurrency == 64
    assert m.cache_id == "vllm:/m/qwen3,dtype=half"  # parallelism does not change replies; dtype does
    assert m.description()["engine_args"]["tensor_parallel_size"] == 4
    for bad in ("vllm:", "vllm:,x=1", "vllm:/m,notakeyvalue"):
        with pytest.raises(SpecError):
            load_model(bad)


def test_sampling_arguments():
    cfg = GenerateConfig(temperature=0.7, max_tokens=64, seed=3, stop=("\n\n", "###"))
    assert sampling_kwargs(cfg) == {"temperature": 0.7, "max_tokens": 64, "n": 1, "seed": 3, "stop": ["\n\n", "###"]}
    assert sampling_kwargs(GenerateConfig()) == {"temperature": 0.0, "max_tokens": 512, "n": 1}


def test_chat_requests_are_batched_with_their_own_sampling_params():
    m, eng = model(concurrency=8)
    prompts = [Prompt(messages=({"role": "system", "content": "Be brief."}, {"role": "user", "content": f"q{i}"}))
               for i in range(5)]
    cfgs = [GenerateConfig(temperature=0.0, max_tokens=1 + i, seed=i, stop=("END",)) for i in range(5)]

    async def go():
        return await asyncio.gather(*(m.generate(p, c) for p, c in zip(prompts, cfgs)))

    outs = asyncio.run(go())
    assert len(eng.calls) == 1  # one engine call for the five concurrent requests
    kind, messages, sps, kw = eng.calls[0]
    assert kind == "chat" and kw == {}  # thinking unset: the template's default
    assert messages[0] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "q0"}]
    assert [sp.kw for sp in sps] == [sampling_kwargs(c) for c in cfgs]
    assert outs[0].text == "q0" and outs[0].finish_reason == "length"  # max_tokens=1 cut "q0 ok"
    assert outs[4].text == "q4 ok" and outs[4].finish_reason == "stop"
    assert outs[4].usage.prompt_tokens == 2 and outs[4].usage.completion_tokens == 2


def test_thinking_goes_to_the_chat_template_and_splits_batches():
    m, eng = model()
    p = Prompt(messages=({"role": "user", "content": "2+2?"},))

    async def go():
        return await asyncio.gather(m.generate(p, GenerateConfig(thinking=False)),
                                    m.generate(p, GenerateConfig(thinking=True)),
                                    m.generate(p, GenerateConfig(thinking=False)))

    asyncio.run(go())
    by_kw = sorted((c[3]["chat_template_kwargs"]["enable_thinking"], len(c[1])) for c in eng.calls)
    assert by_kw == [(False, 2), (True, 1)]


def test_base_models_get_the_text_prompt():
    m, eng = model(chat=False)
    p = Prompt(messages=({"role": "user", "content": "x"},), text="Q: 1+1\nA:", text_stop=("\n",))
    out = asyncio.run(m.generate(p, GenerateConfig(max_tokens=5, stop=("\n",))))
    kind, prompts, sps, _ = eng.calls[0]
    assert kind == "generate" and prompts == ["Q: 1+1\nA:"] and sps[0].kw["stop"] == ["\n"]
    assert out.text == "text:+1\nA:"
    with pytest.raises(GlotbenchError, match="no plain-text prompt"):
        asyncio.run(m.generate(Prompt(messages=({"role": "user", "content": "x"},)), GenerateConfig()))


def test_loglikelihood_sums_the_continuation_prompt_logprobs():
    m, eng = model()
    scores = asyncio.run(m.loglikelihood("Answer:", (" A", " B")))
    kind, prompts, sps, _ = eng.calls[0]
    assert kind == "generate" and len(prompts) == 2
    assert prompts[0] == {"prompt_token_ids": [1] + [ord(c) for c in "Answer: A"]}
    assert sps[0].kw == {"temperature": 0.0, "max_tokens": 1, "prompt_logprobs": 1}
    # The continuation " A" is the last two tokens: -(ord(' ') + ord('A')) / 1000.
    assert math.isclose(scores[0], -(32 + 65) / 1000) and math.isclose(scores[1], -(32 + 66) / 1000)
    assert continuation_span([1, 5, 6], [1, 5, 6, 7, 8]) == (3, 5)
    assert continuation_span([1, 5, 6], [1, 5, 9, 8]) == (2, 4)  # the joint tokenisation merged a token


def test_loglik_benchmark_end_to_end_with_the_fake_engine(tmp_path):
    """laobench-mcq method=loglik through evaluate(): the choice with the highest prompt logprob wins."""
    m, eng = model()
    res = evaluate("laobench-mcq", m, RunOptions(limit=3, bench_options=(("method", "loglik"),), progress=False,
                                                 out=str(tmp_path / "r"), cache_path=str(tmp_path / "c.sqlite")))
    assert res.results["counts"]["samples"] == 3 and res.results["counts"]["failed"] == 0
    assert all(c[0] == "generate" and isinstance(c[1][0], dict) for c in eng.calls)
    assert res.results["model"]["backend"] == "vllm"


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_without_vllm_the_backend_fails_with_one_line(tmp_path):
    m = load_model("vllm:/models/none")
    with pytest.raises(GlotbenchError, match="the vllm: backend needs vLLM and an NVIDIA GPU; vLLM is not installed"):
        asyncio.run(m.check())
    from conftest import cli

    proc = cli("run", "vi-diacritics", "--model", "vllm:/models/none", "--limit", "1", "--no-progress",
               "--out", str(tmp_path / "o"), "--cache-path", str(tmp_path / "c.sqlite"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("error: the vllm: backend needs vLLM and an NVIDIA GPU")
