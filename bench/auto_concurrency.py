"""`--concurrency auto` against a server with a hidden capacity: how much of it does it use, and
how many requests does it get rejected?

The test server (its own process) serves at most CAPACITY chat requests at once, each after
LATENCY seconds, and answers the rest 429 at once (with `Retry-After: 1` unless --no-retry-after):
a hosted API's unpublished concurrency limit. Its best throughput is CAPACITY / LATENCY requests
per second. Each trial runs `glotbench run vi-diacritics --data <N distinct items> --concurrency
auto --max-concurrency MAX --no-cache` in this process and reads from results.json the request
phase (first call sent to last sample scored), the limit the gate settled at and the 429s; the
server's own count of rejected requests is checked against it. Throughput counts completed
requests only; the fraction is throughput / (CAPACITY / LATENCY). A last run with a fixed
`--concurrency CAPACITY` (the best static setting, which a user cannot know) is the reference for
what this machine's client reaches.

Run: `python bench/auto_concurrency.py [--capacity 32] [--latency 0.1] [--items 3000] [--trials 3]`
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner_overhead import control, make_data, start_server  # noqa: E402


def stats(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stats") as r:
        return json.loads(r.read())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capacity", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--max-concurrency", type=int, default=128)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--no-retry-after", action="store_true")
    a = ap.parse_args()
    from glotbench.engine.evaluate import RunOptions, evaluate

    proc, port = start_server(a.latency)
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            data, _, answers = make_data(Path(tmp), a.items, "auto")
            for trial in range(a.trials + 1):  # the last: fixed --concurrency CAPACITY, the best static setting
                oracle = trial == a.trials
                control(port, {"answers": answers, "capacity": a.capacity, "record": False,
                               "capacity_retry_after": None if a.no_retry_after else "1"})
                urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/_reset", data=b"{}")).read()
                control(port, {"answers": answers, "capacity": a.capacity, "record": False, "latency": a.latency,
                               "capacity_retry_after": None if a.no_retry_after else "1"})
                res = evaluate("vi-diacritics", f"openai:bench@http://127.0.0.1:{port}/v1", RunOptions(
                    data=str(data), concurrency=a.capacity if oracle else "auto", max_concurrency=a.max_concurrency,
                    use_cache=False,
                    progress=False, out=str(Path(tmp) / f"run-{trial}"), max_retries=10,
                    bootstrap_resamples=0)).results
                server = stats(port)
                phase = res["timing"]["request_phase_s"]
                ok = res["counts"]["samples"] - res["counts"]["failures"].get("rate_limited", 0)
                row = {"trial": trial, "request_phase_s": phase, "throughput": round(ok / phase, 1),
                       "fraction_of_capacity": round(ok / phase / (a.capacity / a.latency), 3),
                       "failed": res["counts"]["failed"], "server_rejected": server["rejected"],
                       "server_max_in_flight": server["max_in_flight"], **res.get("concurrency", {})}
                if oracle:
                    print("fixed --concurrency", a.capacity, json.dumps(row), flush=True)
                    best = row
                    continue
                assert row["rejected"] == server["rejected"], (row, server)
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        proc.terminate()
        proc.wait(10)
    print(f"\ncapacity {a.capacity} at {a.latency:g} s: best {a.capacity / a.latency:.0f} req/s; "
          f"{a.items} requests per trial, median of {a.trials}:")
    for k in ("fraction_of_capacity", "rejected_rate", "settled", "peak", "decreases"):
        vals = [r[k] for r in rows]
        print(f"  {k:<22} {statistics.median(vals)}  ({min(vals)}–{max(vals)})")
    vals = [r["throughput"] / best["throughput"] for r in rows]
    print(f"  {'vs fixed --concurrency ' + str(a.capacity):<22} {statistics.median(vals):.3f}  ({min(vals):.3f}–{max(vals):.3f})"
          f"  (fixed: {best['fraction_of_capacity']} of capacity, {best['server_rejected']} rejected)")


if __name__ == "__main__":
    main()
