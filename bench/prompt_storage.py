"""What keeping the prompt of every sample costs in a run directory (engine/prompts.py).

For each benchmark and size, a run with an in-process model that answers at once (a chat model and
a base model: the two prompt forms), then samples.jsonl measured three ways from the same samples:
without any prompt, with the prompt kept whole on every line, and as written (the run's template
in run.json, each line its fill). Sizes above the bundled data repeat its items with new ids (the
prompts then share their template as a real set's do).

    python bench/prompt_storage.py [--sizes 164 10000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.engine.prompts import join
from glotbench.models.base import ModelBase, Response
from glotbench.registry import get_benchmark


class Instant(ModelBase):
    """Answers every prompt at once with a short JSON reply, in the form it is told to take."""

    def __init__(self, form: str):
        super().__init__("instant", spec=f"python:instant-{form}", concurrency=64)
        self.form = form

    def prompt_form(self):
        return self.form

    async def generate(self, prompt, config, *, item_id="", repeat=0):
        return Response(text='{"restored_text": "x", "answer": "A"} A', finish_reason="stop", latency_s=0.0)


def data_file(bench_name: str, n: int, folder: Path) -> str | None:
    """A data file of `n` items: the bundled ones repeated with new ids (None: the bundled file as is)."""
    bench = get_benchmark(bench_name)
    ds = bench.load(None)
    if n == len(ds):
        return None
    import glotbench.benchmarks as pkg

    src = Path(pkg.__file__).parent / "data" / ds.source.removeprefix("bundled:").split(" ")[0]
    rows = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines() if x.strip()]
    out = folder / f"{bench_name}-{n}.jsonl"
    with out.open("w", encoding="utf-8") as f:
        for i in range(n):
            row = dict(rows[i % len(rows)])
            row["id"] = f"{row['id']}-{i:06d}"
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return str(out)


def measure(bench_name: str, n: int, form: str, folder: Path) -> dict:
    data = data_file(bench_name, n, folder)
    out = folder / f"run-{bench_name}-{n}-{form}"
    t0 = time.perf_counter()
    evaluate(bench_name, Instant(form), RunOptions(data=data, progress=False, use_cache=False, out=str(out),
                                                  bootstrap_resamples=0))
    wall = time.perf_counter() - t0
    tpl = json.loads((out / "run.json").read_text(encoding="utf-8"))["prompt_template"]
    rows = [json.loads(x) for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]

    def size(rs: list[dict]) -> int:
        return sum(len((json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8")) for r in rs)

    none = size([{k: v for k, v in r.items() if k != "prompt"} for r in rows])
    whole = size([{**r, "prompt": join(tpl, r["prompt"])} for r in rows])
    written = (out / "samples.jsonl").stat().st_size
    fitted = sum("fill" in r["prompt"] for r in rows)
    return {"benchmark": bench_name, "items": len(rows), "form": form, "no_prompt": none, "whole": whole,
            "template_fill": written, "template_bytes": len(json.dumps(tpl, ensure_ascii=False).encode()),
            "fitted": fitted, "run_s": round(wall, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[164, 10_000])
    ap.add_argument("--benchmarks", nargs="+", default=["vi-diacritics", "laobench-mcq"])
    a = ap.parse_args()
    print(f"{'benchmark':<14} {'items':>6} {'form':<5} {'no prompt':>11} {'whole':>11} {'template+fill':>14} "
          f"{'+whole':>7} {'+fill':>6} {'fit':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for b in a.benchmarks:
            for n in a.sizes:
                for form in ("chat", "text"):
                    r = measure(b, n, form, Path(tmp))
                    print(f"{b:<14} {r['items']:>6} {form:<5} {r['no_prompt']:>11,} {r['whole']:>11,} "
                          f"{r['template_fill']:>14,} {100 * (r['whole'] / r['no_prompt'] - 1):>6.0f}% "
                          f"{100 * (r['template_fill'] / r['no_prompt'] - 1):>5.0f}% "
                          f"{r['fitted']:>6}", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
