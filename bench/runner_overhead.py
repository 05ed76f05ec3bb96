"""Runner overhead: how close glotbench gets to the limit a slow endpoint sets.

Against the OpenAI-compatible test server (separate process, 100 ms latency per request), 2,000
requests at concurrency 64 can go no faster than 64 / 0.1 s = 640 req/s. We report the achieved
throughput as a fraction of that limit for the request phase (results.json timing.run_s) and for the
whole `glotbench run` process including interpreter start-up, imports, scoring and writing; then
the wall time of the same command fully cached, as a fraction of the first run.

    python bench/runner_overhead.py [--requests 2000] [--concurrency 64] [--latency 0.1] [--trials 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def start_server(latency: float) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "glotbench.testing.server", "--latency", str(latency)],
                            stdout=subprocess.PIPE, text=True)
    return proc, int(proc.stdout.readline().split()[1])


def make_data(path: Path, n: int) -> None:
    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics

    refs = [it.gold["references"][0] for it in VietnameseDiacritics().load()]
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):  # every prompt distinct, so no request is served by the cache in run 1
            ref = f"{refs[i % len(refs)]} Câu số {i}."
            f.write(json.dumps({"id": f"b{i}", "category": "bench", "references": [ref]}, ensure_ascii=False) + "\n")


def glotbench_run(args: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "glotbench", "run", *args], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"glotbench run failed: {proc.stderr.strip()}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--trials", type=int, default=3)
    a = ap.parse_args()
    limit = a.concurrency / a.latency
    server, port = start_server(a.latency)
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            data = t / "data.jsonl"
            make_data(data, a.requests)
            for trial in range(a.trials):
                cache = t / f"cache{trial}.sqlite"
                common = ["vi-diacritics", "--data", str(data), "--model", f"openai:bench@http://127.0.0.1:{port}/v1",
                          "--concurrency", str(a.concurrency), "--cache-path", str(cache), "--no-progress"]
                wall = glotbench_run([*common, "--out", str(t / f"a{trial}")])
                res = json.loads((t / f"a{trial}" / "results.json").read_text())
                assert res["counts"]["model_calls"] == a.requests, res["counts"]
                phase = res["timing"]["request_phase_s"]
                cached = glotbench_run([*common, "--out", str(t / f"b{trial}")])
                res2 = json.loads((t / f"b{trial}" / "results.json").read_text())
                assert res2["counts"]["model_calls"] == 0
                rows.append({"request_phase_s": phase, "process_s": wall, "cached_process_s": cached,
                             "request_phase_frac": a.requests / phase / limit,
                             "process_frac": a.requests / wall / limit, "cached_over_first": cached / wall})
                print(json.dumps({"trial": trial, **{k: round(v, 3) for k, v in rows[-1].items()}}), flush=True)
    finally:
        server.terminate()
    med = {k: round(statistics.median(r[k] for r in rows), 3) for k in rows[0]}
    print(json.dumps({"requests": a.requests, "concurrency": a.concurrency, "latency_s": a.latency,
                      "limit_req_s": limit, "median": med}, indent=2))


if __name__ == "__main__":
    main()
