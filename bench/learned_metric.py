"""Segments per minute of a learned metric (metrics/learned.py) with an xlm-roberta-base-sized encoder,
or (`--kind xcomet-lite`) of an xCOMET-lite-sized estimator (metrics/xcomet.py: mDeBERTa-v3-base's
shape, vocabulary 251,000, 12 layers, hidden 768, 256 relative-position buckets: 278M encoder
parameters; three passes per segment over the translation joined to the source, the reference and both).

Builds a random-weight COMET-22-style checkpoint with XLM-R base's shape (vocabulary 250,002, 12
layers, hidden 768, 3,072 feed-forward, 514 positions: 278M encoder parameters; estimator 3,072 ->
1,024 as COMET-22's), then scores N segments (source, translation and reference of T tokens each,
<s> and </s> included) in batches on CPU with torch limited to `--threads`, and prints segments per
minute (wall clock), the process's CPU seconds per segment and the load average (the machine may be
shared: wall time then waits for the CPU, CPU time does not). Weights are random: the speed of a forward pass does not depend on their values. With
`--oracle DIR` (a folder where unbabel-comet 2.2.7 imports: tests/learned_oracle.py says how) it
also times unbabel-comet's `predict` on the same checkpoint and segments.

Run: `python bench/learned_metric.py [--segments 256] [--tokens 32] [--batch 16] [--threads 2]
[--kind comet22|xcomet-lite] [--oracle /tmp/oracle] [--json FILE]` (builds ~1.1 GB under a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASE = dict(hidden=768, layers=12, heads=12, intermediate=3072, max_tokens=512, estimator=(3072, 1024),
            vocab=250002)
LITE = dict(encoder="DeBERTa", layout="lite", hidden=768, layers=12, heads=12, intermediate=3072, max_tokens=512,
            estimator=(3072, 1024), vocab=251000, buckets=256, word_layer=8)
_ORACLE = """
import json, sys, time, torch
torch.set_num_threads(int(sys.argv[3]))
torch.set_num_interop_threads(1)
from comet.models import load_from_checkpoint
m = load_from_checkpoint(sys.argv[1] + "/checkpoints/model.ckpt", local_files_only=True)
data = json.load(open(sys.argv[2]))
t, cpu = time.perf_counter(), time.process_time()
out = m.predict(data, batch_size=int(sys.argv[4]), gpus=0, progress_bar=False, num_workers=0)
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - cpu, "scores": out.scores}))
"""


def segments(n: int, tokens: int, vocab_words: list[str]) -> list[dict[str, str]]:
    """n triples of `tokens - 2` in-vocabulary words each (each word one token), drawn reproducibly."""
    import random

    rng = random.Random(0)
    return [{k: " ".join(rng.choice(vocab_words) for _ in range(tokens - 2)) for k in ("src", "mt", "ref")}
            for _ in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--segments", type=int, default=256)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--oracle", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--kind", choices=("comet22", "xcomet-lite"), default="comet22")
    a = ap.parse_args()
    import torch

    torch.set_num_threads(a.threads)
    from glotbench.metrics.learned import load
    from glotbench.testing.learned_checkpoint import TinyComet, TinyXComet, build, build_xcomet

    words = [f"w{i}" for i in range(2000)]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        if a.kind == "xcomet-lite":
            d = build_xcomet(Path(tmp) / "lite", TinyXComet(**LITE), " ".join(words))  # type: ignore[arg-type]
        else:
            d = build(Path(tmp) / "base", TinyComet(**BASE), " ".join(words))  # type: ignore[arg-type]
        built = time.perf_counter() - t0
        m = load(d, batch_size=a.batch)
        params = sum(p.numel() for p in m.encoder.parameters())
        data = segments(a.segments, a.tokens, words)
        ids, _ = m.tokenizer([data[0]["src"]])
        assert ids.shape[1] == a.tokens, ids.shape
        m.score(*([x[k] for x in data[:a.batch]] for k in ("src", "mt", "ref")))  # warm-up: one batch
        t, cpu = time.perf_counter(), time.process_time()
        ours = m.score(*([x[k] for x in data] for k in ("src", "mt", "ref")))
        secs, cpu = time.perf_counter() - t, time.process_time() - cpu
        out = {"kind": a.kind, "encoder_parameters": params, "segments": a.segments, "tokens_per_text": a.tokens,
               "batch": a.batch, "threads": a.threads, "seconds": round(secs, 2),
               "segments_per_minute": round(60 * a.segments / secs, 1), "cpu_seconds": round(cpu, 2),
               "cpu_seconds_per_segment": round(cpu / a.segments, 3),
               "load_average_1min": round(os.getloadavg()[0], 2), "build_seconds": round(built, 1),
               "torch": torch.__version__, "cpus": os.cpu_count()}
        if a.oracle and a.kind == "comet22":
            (Path(tmp) / "data.json").write_text(json.dumps(data))
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([a.oracle, str(Path(__file__).parents[1] / "src")])}
            r = subprocess.run([sys.executable, "-c", _ORACLE, str(d), str(Path(tmp) / "data.json"), str(a.threads),
                                str(a.batch)], env=env, capture_output=True, text=True, check=True)
            ref = json.loads(r.stdout.strip().splitlines()[-1])
            out["unbabel_comet_seconds"] = round(ref["seconds"], 2)
            out["unbabel_comet_segments_per_minute"] = round(60 * a.segments / ref["seconds"], 1)
            out["unbabel_comet_cpu_seconds_per_segment"] = round(ref["cpu"] / a.segments, 3)
            out["max_abs_difference"] = max(abs(x - y) for x, y in zip(ours, ref["scores"]))
    print(json.dumps(out, indent=1))
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
