"""A 4 models × 4 benchmarks sweep against the OpenAI-compatible test server, each model its own
endpoint (own server process, own latency, own concurrency budget), on the local executor and on
Ray's local mode, side by side.

The limit a sweep can reach: an endpoint serves at most budget / latency calls a second, so it needs
at least calls × latency / budget seconds; the endpoints work in parallel, so the sweep needs at
least the largest of these. We report wall time against that bound, and the overhead per run:
the time from a run's start (local) or submission (Ray) to its result, minus the run's own
`timing.run_s`. For Ray it is split: queued (submission to the task starting in a worker: waiting for
a free slot, starting a worker process), in the task but outside the run (model set-up, indexing the
store), and the result's way back.

    python bench/sweep_scale.py [--trials 3] [--ray-cpus 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from runner_overhead import start_server  # noqa: E402

MODELS = [("m-fast", 0.1, 8), ("m-mid", 0.2, 8), ("m-slow", 0.3, 16), ("m-slowest", 0.5, 16)]  # name, latency, budget
BENCHMARKS = [("vi-diacritics", 40, 1), ("laobench-mcq", None, 2), ("deepsea-mgsm", None, 4),
              ("deepsea-xquad", None, 5)]  # name, limit, repeats


def sweep_spec(root: Path, ports: dict[str, int], tag: str) -> dict:
    return {
        "out": str(root / tag / "out"), "cache": str(root / tag / "calls.sqlite"),
        "store": f"sqlite:///{root / tag / 'store.sqlite'}", "runs_per_endpoint": 4,
        "models": [{"spec": f"openai:{n}@http://127.0.0.1:{ports[n]}/v1", "name": n, "concurrency": b,
                    "resources": {"num_cpus": 0.25}} for n, _, b in MODELS],
        "benchmarks": [{"name": b, "limit": lim, "repeats": rep} for b, lim, rep in BENCHMARKS],
    }


def bound_s(runs) -> float:
    lat = {n: l for n, l, _ in MODELS}
    bud = {n: b for n, _, b in MODELS}
    per_ep: dict[str, float] = {}
    for r in runs:
        per_ep[r.model.label] = per_ep.get(r.model.label, 0.0) + r.calls * lat[r.model.label] / bud[r.model.label]
    return max(per_ep.values())


def overheads(outcomes) -> list[float]:
    out = []
    for o in outcomes:
        res = json.loads((Path(o.run.out_dir) / "results.json").read_text())
        out.append(o.seconds - res["timing"]["run_s"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--ray-cpus", type=int, default=2)
    a = ap.parse_args()
    from glotbench.engine.sweep import expand, parse_sweep
    from glotbench.engine.sweep_run import run_local

    servers = {n: start_server(lat) for n, lat, _ in MODELS}
    ports = {n: p for n, (_, p) in servers.items()}
    rows: dict[str, list[dict]] = {"local": [], "ray": []}
    try:
        import ray

        t0 = time.perf_counter()
        ray.init(num_cpus=a.ray_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
        ray_init_s = time.perf_counter() - t0

        @ray.remote(num_cpus=0.25)
        def noop() -> None:
            return None

        ray.get([noop.remote() for _ in range(8)])  # warm the workers
        t0 = time.perf_counter()
        for _ in range(50):
            ray.get(noop.remote())
        noop_ms = (time.perf_counter() - t0) / 50 * 1000
        from glotbench.engine.sweep_ray import run_ray

        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for trial in range(a.trials):
                for mode in ("local", "ray"):
                    spec = parse_sweep(sweep_spec(root, ports, f"{mode}{trial}"))
                    runs = expand(spec)
                    t0 = time.perf_counter()
                    if mode == "local":
                        outcomes = asyncio.run(run_local(spec, runs, progress=False))
                    else:
                        outcomes = run_ray(spec, runs, progress=False)
                    wall = time.perf_counter() - t0
                    assert all(o.status == "done" for o in outcomes), [o.error for o in outcomes if o.error]
                    calls = sum(o.calls for o in outcomes)
                    assert calls == sum(r.calls for r in runs), calls
                    ov = overheads(outcomes)
                    row = {"wall_s": wall, "bound_s": bound_s(runs), "bound_over_wall": bound_s(runs) / wall,
                           "calls": calls, "runs": len(runs), "overhead_per_run_s": statistics.median(ov)}
                    if mode == "ray":  # where a task's time went: waiting for a slot, in the task, back
                        for ph in ("queued_s", "in_task_s", "transfer_s"):
                            row[ph] = statistics.median(o.phases[ph] for o in outcomes)
                        row["in_task_minus_run_s"] = statistics.median(
                            o.phases["in_task_s"] - json.loads((Path(o.run.out_dir) / "results.json").read_text())
                            ["timing"]["run_s"] for o in outcomes)
                    rows[mode].append(row)
                    print(json.dumps({"mode": mode, "trial": trial,
                                      **{k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}}),
                          flush=True)
    finally:
        for proc, _ in servers.values():
            proc.terminate()
    summary = {}
    for mode, rs in rows.items():
        summary[mode] = {k: {"median": round(statistics.median(r[k] for r in rs), 3),
                             "range": [round(min(r[k] for r in rs), 3), round(max(r[k] for r in rs), 3)]}
                         for k in ("wall_s", "bound_over_wall", "overhead_per_run_s", "queued_s", "in_task_s",
                                   "transfer_s", "in_task_minus_run_s") if k in rs[0]}
    print(json.dumps({"models": MODELS, "benchmarks": BENCHMARKS, "bound_s": round(rows["local"][0]["bound_s"], 3),
                      "ray_init_s": round(ray_init_s, 2), "ray_noop_task_ms": round(noop_ms, 2),
                      "ray_cpus": a.ray_cpus, **summary}, indent=2))


if __name__ == "__main__":
    main()
