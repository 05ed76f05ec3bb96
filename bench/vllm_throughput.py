"""GPU check: the same prompts through glotbench's `vllm:` backend and through vLLM directly.

Both use one `vllm.LLM` configuration and greedy decoding with a fixed reply cap; throughput is
output tokens per second of the generation phase (model loading excluded for both). Target: glotbench
at >= 0.9 of vLLM's own throughput. glotbench's side goes through `evaluate()` (the runner, its cache
disabled, extraction, scoring, run directory), so the ratio is the whole framework's cost.

    python bench/vllm_throughput.py --model Qwen/Qwen3-0.6B [--prompts 2000] [--max-tokens 256]
        [--engine-arg tensor_parallel_size=1 ...]

Needs vLLM and an NVIDIA GPU; without them it says so and exits with status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path


def needs_gpu() -> str | None:
    try:
        import vllm  # noqa: F401
    except ImportError:
        return "this benchmark needs vLLM (pip install vllm) and an NVIDIA GPU; vLLM is not installed"
    try:
        import torch
    except ImportError:
        return "this benchmark needs torch with CUDA"
    if not torch.cuda.is_available():
        return "this benchmark needs an NVIDIA GPU; none is visible (torch.cuda.is_available() is False)"
    return None


def make_data(path: Path, n: int) -> None:
    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics

    refs = [it.gold["references"][0] for it in VietnameseDiacritics().load()]
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"b{i}", "category": "bench", "references": [f"{refs[i % len(refs)]} Câu số {i}."]},
                               ensure_ascii=False) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompts", type=int, default=2000)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--engine-arg", action="append", default=[], help="KEY=VALUE passed to vllm.LLM")
    a = ap.parse_args()
    problem = needs_gpu()
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        sys.exit(2)
    from vllm import LLM, SamplingParams

    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
    from glotbench.engine.evaluate import RunOptions, evaluate_async
    from glotbench.models.vllm import VLLMModel, parse_spec

    _, engine_args = parse_spec(a.model + "".join("," + kv for kv in a.engine_arg))
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.jsonl"
        make_data(data, a.prompts)
        bench = VietnameseDiacritics()
        items = bench.load(str(data))
        convs = [[dict(m) for m in bench.render(it.to_public()).messages] for it in items]

        t0 = time.perf_counter()
        llm = LLM(model=a.model, **engine_args)
        load_s = time.perf_counter() - t0
        sp = SamplingParams(temperature=0.0, max_tokens=a.max_tokens)
        llm.chat(convs[:8], sp, use_tqdm=False)  # warm-up (CUDA graphs, caches)
        t0 = time.perf_counter()
        outs = llm.chat(convs, sp, use_tqdm=False)
        direct_s = time.perf_counter() - t0
        direct_tok = sum(len(o.outputs[0].token_ids) for o in outs)

        model = VLLMModel(a.model, engine=llm, sampling_params_cls=SamplingParams, concurrency=a.prompts, **engine_args)
        opts = RunOptions(data=str(data), max_tokens=a.max_tokens, temperature=0.0, use_cache=False,
                          progress=False, out=str(Path(tmp) / "run"))
        t0 = time.perf_counter()
        res = asyncio.run(evaluate_async(bench, model, opts))
        glot_s = res.results["timing"]["request_phase_s"] or (time.perf_counter() - t0)
        glot_tok = res.results["tokens"]["completion"]
    direct_tps, glot_tps = direct_tok / direct_s, glot_tok / glot_s
    print(json.dumps({
        "model": a.model, "engine_args": engine_args, "prompts": a.prompts, "max_tokens": a.max_tokens,
        "load_s": round(load_s, 1), "vllm_direct": {"s": round(direct_s, 2), "output_tokens": direct_tok,
                                                    "tok_per_s": round(direct_tps, 1)},
        "glotbench_vllm": {"request_phase_s": round(glot_s, 2), "output_tokens": glot_tok,
                           "tok_per_s": round(glot_tps, 1)},
        "ratio": round(glot_tps / direct_tps, 3),
    }, indent=2))


if __name__ == "__main__":
    main()
