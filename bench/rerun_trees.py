"""Wall time of a fully cached `glotbench run` (as a process) of N vi-diacritics items, for one or
more source trees side by side (e.g. `git archive REV src | tar -x -C /tmp/REV`), trials interleaved
so a shared machine's load falls on all alike. Each tree gets its own cache, filled by a first run.

    python bench/rerun_trees.py [--items 2000] [--trials 9] NAME=SRC_DIR [NAME=SRC_DIR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from runner_overhead import control, make_data, start_server  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--trials", type=int, default=9)
    ap.add_argument("trees", nargs="+", help="NAME=SRC_DIR")
    args = ap.parse_args()
    trees = dict(t.split("=", 1) for t in args.trees)
    env0 = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        data, _, answers = make_data(t, args.items, "rerun")
        proc, port = start_server(0.0)
        try:
            control(port, {"answers": answers})

            def run(name: str, out: str) -> float:
                cmd = [sys.executable, "-m", "glotbench", "run", "vi-diacritics", "--data", str(data),
                       "--model", f"openai:m@http://127.0.0.1:{port}/v1", "--cache-path", str(t / f"{name}.sqlite"),
                       "--out", str(t / out), "--no-progress", "--concurrency", "64"]
                t0 = time.perf_counter()
                p = subprocess.run(cmd, capture_output=True, text=True, env={**env0, "PYTHONPATH": trees[name]})
                wall = time.perf_counter() - t0
                if p.returncode != 0:
                    raise SystemExit(p.stderr)
                return wall

            for name in trees:
                run(name, f"{name}-first")
            times: dict[str, list[float]] = {name: [] for name in trees}
            for trial in range(args.trials):
                for name in trees:
                    times[name].append(run(name, f"{name}-{trial}"))
                    res = json.loads((t / f"{name}-{trial}" / "results.json").read_text())
                    assert res["counts"]["cache_hits"] == args.items * 1, res["counts"]
        finally:
            proc.terminate()
            proc.wait(10)
    for name, ts in times.items():
        print(f"{name}: median {statistics.median(ts):.3f} s (min {min(ts):.3f}, max {max(ts):.3f}), "
              f"{len(ts)} cached re-runs of {args.items} items")


if __name__ == "__main__":
    main()
