"""Where a plain endpoint run's resident memory grows: one `glotbench run vi-diacritics` of N items
against the runner-overhead bench's server (its replies, 100 ms latency, concurrency 64), in this
process, with VmRSS and VmHWM (the peak so far) read from /proc/self/status after so many samples
and before and after each end-of-run step (the checks, samples.jsonl put in order, the aggregate,
the input floor, the checks' summary), with the main thread's CPU seconds spent since the point
before (`time.thread_time`: the end-of-run steps' own CPU; the input floor runs in a worker thread
while requests are in flight, so its CPU is its own thread's). Linux only.

    python bench/runner_memory_phases.py [--items 10000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import runner_overhead as R  # noqa: E402 - the same server and data

ROWS: list[tuple[str, int, int, float, int]] = []


def mark(name: str) -> None:
    got = {line.split(":")[0]: int(line.split()[1]) for line in open("/proc/self/status")
           if line.startswith(("VmRSS", "VmHWM"))}
    ROWS.append((name, got["VmRSS"], got["VmHWM"], time.thread_time(), threading.get_ident()))


def watch(owner: Any, attr: str, label: str) -> None:
    fn: Callable[..., Any] = getattr(owner, attr)

    def watched(*a: Any, **k: Any) -> Any:
        mark(f"before {label}")
        try:
            return fn(*a, **k)
        finally:
            mark(f"after {label}")

    setattr(owner, attr, watched)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10000)
    a = ap.parse_args()
    import glotbench.engine.evaluate as E
    import glotbench.engine.runner as RN
    import glotbench.rundir.files as F
    from glotbench.benchmarks.base import Benchmark
    from glotbench.checks import RunChecks
    from glotbench.engine.evaluate import RunOptions, evaluate

    watch(RunChecks, "check_all", "checks of each sample")
    watch(F.SampleSink, "in_order", "samples.jsonl in order")
    watch(E, "aggregate_run", "aggregate")
    watch(Benchmark, "input_floor", "input floor")
    watch(RunChecks, "summary", "checks' summary")
    finish = RN.Runner._finish
    n = a.items

    def counted(self: Any, *args: Any, **kw: Any) -> None:
        finish(self, *args, **kw)
        if self.counters.done in (1, 1000, n // 2, n):
            mark(f"{self.counters.done:,} samples")

    RN.Runner._finish = counted  # type: ignore[method-assign]
    server, port = R.start_server(0.1)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            data, _, answers = R.make_data(t, n, "phases")
            R.control(port, {"answers": answers, "record": False})
            mark("start")
            res = evaluate("vi-diacritics", f"openai:bench@http://127.0.0.1:{port}/v1",
                           RunOptions(data=str(data), concurrency=64, progress=False, cache_path=str(t / "c.sqlite"),
                                      out=str(t / "run")))
            assert res.results["counts"]["failed"] == 0, res.results["counts"]
            mark("end")
    finally:
        server.terminate()
        server.wait()
    print("| point | RSS MB | peak so far MB | CPU s since this thread's point before |\n|---|---|---|---|")
    last: dict[int, float] = {}
    for name, rss, hwm, cpu, thread in ROWS:
        before = last.get(thread)
        print(f"| {name} | {rss / 1024:.1f} | {hwm / 1024:.1f} | {'' if before is None else f'{cpu - before:.3f}'} |")
        last[thread] = cpu
    print(json.dumps({"peak_rss_mb": round(max(r[2] for r in ROWS) / 1024, 1), "items": n}))


if __name__ == "__main__":
    main()
