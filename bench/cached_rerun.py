"""Where a fully cached re-run of `glotbench run` spends its time, phase by phase.

One first run of `glotbench run vi-diacritics` on `--items` distinct items against the
OpenAI-compatible test server (100 ms per request, replies like a model's: bench/runner_overhead.py),
then `--trials` fully cached re-runs, each a process timed whole, and as many again in an
instrumented child that notes when each phase starts and ends (CLOCK_MONOTONIC, from just before
the process was started). Prints the medians, and the floor that any
`glotbench run` process pays here: `python -c pass` and the start of `evaluate_async`.

`--no-site` runs every child as `python -S` with glotbench's source and the site-packages directory
on PYTHONPATH: the same packages without the `.pth` files' code, as a plain virtual environment
has it. (This sandbox's interpreter runs a `.pth` that imports certifi at every start.)

    python bench/cached_rerun.py [--items 2000] [--trials 9] [--no-site]
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import runner_overhead as ro  # noqa: E402 - the same server, data and child environment

CHILD = r"""
import gc
gc.disable()  # as the console script starts (glotbench/__main__.py); cli.app.main turns it on
import sys, time, atexit, importlib, json, os
GC = {"collections": 0, "s": 0.0}
def _gc(phase, info, _t=[0.0]):
    if phase == "start":
        _t[0] = time.perf_counter()
    else:
        GC["collections"] += 1
        GC["s"] += time.perf_counter() - _t[0]
gc.callbacks.append(_gc)
START = float(os.environ["BENCH_T_START"])  # CLOCK_MONOTONIC just before the parent started this process
marks = {}
def mark(name): marks[name] = time.clock_gettime(time.CLOCK_MONOTONIC) - START
mark("interpreter and site")
import pydantic  # as glotbench/__main__.py does, with the collector off
from pydantic import BaseModel, TypeAdapter
app = importlib.import_module("glotbench.cli.app")
import glotbench.engine.evaluate as E, glotbench.engine.runner as R, glotbench.report.terminal as T
mark("glotbench imported")
def around(obj, name, label, is_async=False):
    f = getattr(obj, name)
    if is_async:
        async def w(*a, **k):
            mark(label + " start"); r = await f(*a, **k); mark(label + " end"); return r
    else:
        def w(*a, **k):
            mark(label + " start"); r = f(*a, **k); mark(label + " end"); return r
    setattr(obj, name, w)
around(E, "evaluate_async", "evaluate_async", True)
around(R.Runner, "run", "runner", True)
around(E, "_aggregate", "aggregate")
around(T, "print_results", "table")
atexit.register(lambda: print("MARKS " + json.dumps({**marks, "gc collections (count)": GC["collections"],
                                                     "gc collections (seconds)": GC["s"]}), file=sys.stderr))
sys.argv = ["glotbench"] + sys.argv[1:]
app.main()
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--trials", type=int, default=9)
    ap.add_argument("--no-site", action="store_true", help="children as `python -S`, packages on PYTHONPATH")
    a = ap.parse_args()
    py = ro.interpreter(a.no_site)
    server, port = ro.start_server(0.1)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            data, _, answers = ro.make_data(t, a.items, "run")
            ro.control(port, {"answers": answers, "record": False})
            args = ["run", "vi-diacritics", "--data", str(data), "--model", f"openai:bench@{url}", "--concurrency",
                    "64", "--cache-path", str(t / "cache.sqlite"), "--no-progress"]
            gb = [*py, "-m", "glotbench"]
            subprocess.run([*gb, "list"], env=ro.CHILD_ENV, capture_output=True)  # bytecode written once
            first, _ = ro.timed([*gb, *args, "--out", str(t / "first")])
            walls, timelines, floor = [], [], []
            for i in range(a.trials):
                walls.append(ro.timed([*gb, *args, "--out", str(t / f"c{i}")])[0])
                env = {**ro.CHILD_ENV, "BENCH_T_START": repr(time.clock_gettime(time.CLOCK_MONOTONIC))}
                proc = subprocess.run([*py, "-c", CHILD, *args, "--out", str(t / f"p{i}")],
                                      capture_output=True, text=True, env=env)
                line = next(x for x in proc.stderr.splitlines() if x.startswith("MARKS "))
                timelines.append(json.loads(line[6:]))
                floor.append(ro.timed([*py, "-c", "pass"])[0])
                res = json.loads((t / f"c{i}" / "results.json").read_text())
                assert res["counts"]["model_calls"] == 0 and res["counts"]["cache_hits"] == a.items
    finally:
        server.terminate()
        server.wait()
    med = statistics.median(walls)
    print(json.dumps({"items": a.items, "no_site": a.no_site, "first_run_s": round(first, 3), "cached_s_median": round(med, 3),
                      "cached_s_range": [round(min(walls), 3), round(max(walls), 3)],
                      "cached_over_first": round(med / first, 3), "target_s": round(0.1 * first, 3),
                      "python_c_pass_s": round(statistics.median(floor), 3)}))
    print("phase ends, seconds from the process start, and the collector's work (median of the instrumented"
          " children):")
    for k in timelines[0]:
        print(f"  {statistics.median(tl[k] for tl in timelines):6.3f}  {k}")


if __name__ == "__main__":
    main()
