"""One 10,000-answer submission in process, without HTTP: wall and CPU time of `Service.submit_answers`
and the time the garbage collector took inside it, as the server runs it (the console script's
collector thresholds; the server freezes its long-lived objects out of the collector:
`Service(..., freeze_sets=True)` and `settle_heap()`), with a breakdown by stage. CPU time is what to compare on a shared machine: it does not grow with load.

    python bench/service_inprocess.py [--items 10000] [--submissions 15] [--no-freeze]

`--no-freeze` runs it as the server did before it froze the sets it caches.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from service_load import make_set  # noqa: E402


def main() -> None:
    from glotbench.scoring import score_output
    from glotbench.service import core, sets
    from glotbench.service.db import Submission
    from glotbench.service.scoring import aggregate

    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--submissions", type=int, default=15)
    ap.add_argument("--no-freeze", action="store_true")
    a = ap.parse_args()
    gc_ms = [0.0]
    started = [0.0]

    def on_gc(phase: str, _: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            gc_ms[0] += 1000 * (time.perf_counter() - started[0])

    gc.set_threshold(10_000, 10, 10)  # as `glotbench serve` runs (cli/app.py: main)
    gc.freeze()
    with tempfile.TemporaryDirectory() as tmp:
        make_set(Path(tmp) / "hidden.jsonl", a.items)
        settings = core.Settings(db_url=f"sqlite:///{tmp}/db.sqlite", daily_limit=10**6)
        svc = core.Service(settings, freeze_sets=not a.no_freeze)
        svc.load_set("hidden", "laobench-mcq", str(Path(tmp) / "hidden.jsonl"))
        svc.rotate("hidden")
        keys = [svc.create_key(f"k{i}")[0] for i in range(a.submissions + 1)]
        answers = {f"h{i:05d}": "ABCD"[(i * 7) % 4] for i in range(a.items)}
        if not a.no_freeze:
            sets.settle_heap()  # as the server does once started
        svc.submit_answers(keys[-1], answers, benchmark="laobench-mcq", model="warm-up")  # loads the set
        gc.callbacks.append(on_gc)
        wall, cpu, gcs = [], [], []
        for k in keys[:-1]:
            gc_ms[0] = 0.0
            t0, c0 = time.perf_counter(), time.process_time()
            svc.submit_answers(k, answers, benchmark="laobench-mcq", model="m")
            wall.append(1000 * (time.perf_counter() - t0))
            cpu.append(1000 * (time.process_time() - c0))
            gcs.append(gc_ms[0])
        gc.callbacks.remove(on_gc)

        with svc.Session() as s:  # the stages, one by one (CPU ms, median)
            ts = svc._target_set(s, None, "laobench-mcq")
            loaded, set_id = svc.load_items(s, ts), ts.id
        stages: dict[str, list[float]] = {}

        def stage(name: str, fn):
            c0 = time.process_time()
            out = fn()
            stages.setdefault(name, []).append(1000 * (time.process_time() - c0))
            return out

        for k in keys[:5]:
            samples = stage("score_output x items", lambda: {i: score_output(loaded.bench, loaded.by_id[i], x, answer_given=True)
                                                             for i, x in answers.items()})
            stage("valid-answer check", lambda: sets.count_unreadable(samples, loaded.options))
            agg = stage("aggregate (+ headline CI)", lambda: aggregate(loaded.bench, loaded.dataset, samples,
                                                                     resamples=settings.resamples, groups=loaded.groups))
            stage("store + Ladder", lambda: svc.record(k, Submission(key_id=k, set_id=set_id, kind="answers",
                                                                     model="m", status="running"), agg))

    print(json.dumps({
        "items": a.items, "submissions": a.submissions, "frozen": not a.no_freeze,
        "submit_wall_p50_ms": round(statistics.median(wall), 1), "submit_wall_max_ms": round(max(wall), 1),
        "submit_cpu_p50_ms": round(statistics.median(cpu), 1), "submit_cpu_mean_ms": round(statistics.mean(cpu), 1),
        "submit_cpu_max_ms": round(max(cpu), 1),
        "gc_in_submit_p50_ms": round(statistics.median(gcs), 1), "gc_in_submit_mean_ms": round(statistics.mean(gcs), 1),
        "gc_in_submit_max_ms": round(max(gcs), 1), "submissions_with_gc_over_50ms": sum(g > 50 for g in gcs),
        "stages_cpu_p50_ms": {n: round(statistics.median(v), 1) for n, v in stages.items()},
    }, indent=2))


if __name__ == "__main__":
    main()
