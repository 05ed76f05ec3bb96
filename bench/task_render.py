"""Rendering a task's prompts: microseconds per prompt for a library task (Belebele, no loop in its
templates) and for a template with a loop, which pays for the step bound of glotbench.tasks.template
(a line trace of the template's code).

    python bench/task_render.py --rounds 300
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from glotbench.registry import get_benchmark
from glotbench.tasks.template import render

FX = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "tasks"


def per_call(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()
    bench = get_benchmark("belebele")
    items = [it.to_public() for it in bench.load(str(FX / "belebele_lao_Laoo.jsonl"))]
    us = per_call(lambda: [bench.render(it) for it in items], args.rounds) / len(items)
    print(f"belebele prompt (chat and text forms): {us:.0f} us per item")
    ctx = {"options": [{"label": c, "text": f"ຕົວເລືອກ {c}"} for c in "ABCD"], "q": "ຄຳຖາມ"}
    loop = "{{ q }}\n{% for o in options %}{{ o.label }}. {{ o.text }}\n{% endfor %}Answer:"
    flat = "{{ q }}\n{{ options[0].label }}. {{ options[0].text }}\n{{ options[1].label }}. {{ options[1].text }}\n" \
           "{{ options[2].label }}. {{ options[2].text }}\n{{ options[3].label }}. {{ options[3].text }}\nAnswer:"
    assert render(loop, ctx) == render(flat, ctx)
    print(f"four options by a for loop (step bound on): {per_call(lambda: render(loop, ctx), args.rounds * 10):.0f} us")
    print(f"the same written out (no loop, no bound):   {per_call(lambda: render(flat, ctx), args.rounds * 10):.0f} us")


if __name__ == "__main__":
    main()
