"""What each piece of a run costs per reply, measured one piece at a time (best of 3, CPU time) on
the replies of `bench/runner_overhead.py` (its model's replies to N distinct vi-diacritics items):
the prompt, the cache key, the reply's object, the stored reply, scoring, the score key, the stored
score, the sample's line, the language verdict, the input floor; and the floor scored apart from the
replies' scores against scored beside each (the scorer's caches then hold the item).

    python bench/reply_costs.py [--items 2000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    a = ap.parse_args()
    import runner_overhead as R

    from glotbench.checks.language import verdict
    from glotbench.core import TokenCounts
    from glotbench.engine.cache import cache_key, cache_key_head, score_key
    from glotbench.engine.runner import prompt_payload
    from glotbench.models.openai_compat import OpenAICompatModel
    from glotbench.registry import get_benchmark
    from glotbench.rundir.files import json_bytes, to_json
    from glotbench.scoring import score_output, score_record
    from glotbench.text import vietnamese as V

    with tempfile.TemporaryDirectory() as tmp:
        data, _, _ = R.make_data(Path(tmp), a.items, "costs")
        b = get_benchmark("vi-diacritics")
        ds = b.load(str(data))
    items = list(ds)
    cfg = b.default_config
    prompts = [b.render(it.to_public()) for it in items]
    head = cache_key_head("m", cfg.to_dict())
    bodies = [{"id": "x", "model": "bench", "usage": {"prompt_tokens": 50, "completion_tokens": 14},
               "choices": [{"message": {"content": R.model_reply(i, it.gold["references"][0], it.public["text"])},
                            "finish_reason": "stop"}]} for i, it in enumerate(items)]
    resps = [OpenAICompatModel.response_from(d, 0.1) for d in bodies]

    def fields(it):
        return {"finish_reason": "stop", "latency_s": 0.1, "tokens": TokenCounts(50, 14), "input": it.public,
                "prompt_form": "chat", "retries": 0, "cached": False, "error": None}

    samples = [score_output(b, it, r.text, **fields(it)) for it, r in zip(items, resps)]

    def timed(name: str, fn: Callable[[], object]) -> None:
        best = float("inf")
        for _ in range(3):
            t = time.process_time()
            fn()
            best = min(best, time.process_time() - t)
        print(f"| {name} | {best * 1000:.1f} ms | {best / len(items) * 1e6:.2f} µs |")

    print(f"| piece ({len(items):,} replies) | total | per reply |\n|---|---|---|")
    timed("the prompt (render)", lambda: [b.render(it.to_public()) for it in items])
    timed("the cache key", lambda: [cache_key("m", prompt_payload(p, "chat", cfg), {}, 0, head=head) for p in prompts])
    timed("the reply's object", lambda: [OpenAICompatModel.response_from(d, 0.1) for d in bodies])
    timed("the stored reply (JSON)", lambda: [to_json(r.to_dict()) for r in resps])
    timed("scoring (extraction and score)", lambda: [score_output(b, it, r.text, **fields(it)) for it, r in zip(items, resps)])
    timed("the score key", lambda: [score_key("k" * 64, "scorer", it, r) for it, r in zip(items, resps)])
    timed("the stored score (JSON)", lambda: [to_json(score_record(s)) for s in samples])
    timed("the sample's line (record and JSON)", lambda: [json_bytes(s.to_record()) for s in samples])
    timed("the language verdict", lambda: [verdict(b, s.answer, "vi", it.public) for s, it in zip(samples, items) if s.answer])
    timed("the input floor (a pass of its own)", lambda: b.input_floor(ds, items))

    def clear() -> None:
        for f in (V.strip, V.comparison_key, V._words):
            f.cache_clear()

    def apart() -> None:
        clear()
        for s, it in zip(samples, items):
            if s.answer is not None:
                b.run_score(s.answer, it)
        for it in items:
            b.input_floor_score(it)

    def beside() -> None:
        clear()
        for s, it in zip(samples, items):
            if s.answer is not None:
                b.run_score(s.answer, it)
            b.input_floor_score(it)

    timed("replies' scores, then the floor apart", apart)
    timed("each reply's score, its floor beside it", beside)


if __name__ == "__main__":
    main()
