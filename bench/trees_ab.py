"""Two source trees side by side on a busy machine: CPU seconds (and wall) of a 2,000-request run, and the ETA's error.

`cpu`: rounds of (the bare aiohttp loop, then `glotbench run vi-diacritics` of each tree) against the
loopback server of `bench/runner_overhead.py` (same data, replies, 100 ms latency, 64 in flight), one
after the other, so each round sees the same load; CPU seconds (user + system, wait4) of each process
and each tree's CPU / the bare loop's in the same round; the same for wall seconds. CPU seconds move
far less with the load than wall times do, and interleaving cancels the machine's drift between rounds.

`eta`: for each tree, TRIALS endpoint runs as runner_overhead.py's ETA figure makes them (164 requests,
16 in flight, real clock): the largest |ETA / real remaining - 1| from the first round on while more
than the last round is left, per trial.

    git archive BASE src | tar -x -C /tmp/base
    python bench/trees_ab.py cpu --rounds 7 base=/tmp/base/src new=src
    python bench/trees_ab.py eta --trials 6 base=/tmp/base/src new=src
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import runner_overhead as R  # noqa: E402


def cpu(trees: dict[str, str], rounds: int, requests: int) -> None:
    server, port = R.start_server(0.1)
    url = f"http://127.0.0.1:{port}/v1"
    cpu_s: dict[str, list[float]] = {k: [] for k in ["bare", *trees]}
    wall_s: dict[str, list[float]] = {k: [] for k in ["bare", *trees]}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            data, bodies, answers = R.make_data(t, requests, "run")
            R.control(port, {"answers": answers, "record": False})

            def run(src: str, out: str) -> tuple[float, float]:
                R.CHILD_ENV["PYTHONPATH"] = str(Path(src).resolve())
                shutil.rmtree(t / out, ignore_errors=True)
                (t / "c.sqlite").unlink(missing_ok=True)
                return R.measured([sys.executable, "-m", "glotbench", "run", "vi-diacritics", "--data", str(data),
                                   "--model", f"openai:bench@{url}", "--concurrency", "64", "--cache-path",
                                   str(t / "c.sqlite"), "--no-progress", "--out", str(t / out)])[:2]

            for src in trees.values():  # bytecode written, the language identifier unpacked
                run(src, "warm")
            for r in range(rounds):
                load = round(os.getloadavg()[0], 2)
                wall, cpu_bare = R.measured([sys.executable, str(HERE / "bare_loop.py"), str(bodies),
                                             f"{url}/chat/completions", "64"])[:2]
                cpu_s["bare"].append(cpu_bare)
                wall_s["bare"].append(wall)
                for name, src in trees.items():
                    wall, cpu_run = run(src, "o")
                    cpu_s[name].append(cpu_run)
                    wall_s[name].append(wall)
                print(json.dumps({"round": r, "load1": load, **{k: round(v[-1], 3) for k, v in cpu_s.items()}}), flush=True)
    finally:
        server.terminate()
        server.wait()
    for what, got in (("CPU", cpu_s), ("wall", wall_s)):
        for k, v in got.items():
            ratio = "" if k == "bare" else (" / bare in the same round: median %.3f (%.3f-%.3f)" % (
                statistics.median(a / b for a, b in zip(v, got["bare"])),
                min(a / b for a, b in zip(v, got["bare"])), max(a / b for a, b in zip(v, got["bare"]))))
            print(f"{k}: {what} s median {statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f}){ratio}")


def eta(trees: dict[str, str], trials: int) -> None:
    code = ("import json, sys; sys.path.insert(0, %r); import runner_overhead as R; s, p = R.start_server(0.1)\n"
            "try:\n    print(json.dumps([R.eta_errors(f'http://127.0.0.1:{p}/v1', 0.1)['endpoint'] for _ in range(%d)]))\n"
            "finally:\n    s.terminate(); s.wait()\n") % (str(HERE), trials)
    for name, src in trees.items():
        env = {**R.CHILD_ENV, "PYTHONPATH": str(Path(src).resolve())}
        load = round(os.getloadavg()[0], 2)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        errs = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{name}: endpoint ETA, largest error per trial {errs}; median {statistics.median(errs):.2f} (load {load})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("cpu", "eta"))
    ap.add_argument("trees", nargs="+", help="NAME=SRC_DIR")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--trials", type=int, default=6)
    ap.add_argument("--requests", type=int, default=2000)
    a = ap.parse_args()
    trees = dict(t.split("=", 1) for t in a.trees)
    if a.what == "cpu":
        cpu(trees, a.rounds, a.requests)
    else:
        eta(trees, a.trials)


if __name__ == "__main__":
    main()
