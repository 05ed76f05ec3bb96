"""Judge phases against a slow endpoint: how close AraGen's and the arena's judge phases get to the limit.

The OpenAI-compatible test server (its own process, 100 ms per request) plays the candidate, the
baseline and a scripted judge that replies like one (AraGen: reasoning and a <results1> 3C3H block;
arena: a JSON verdict with notes). With the run's `--concurrency 64`, a judge phase of N calls can go
no faster than N / 640 s. For each trial we run `run_aragen` (N round-0 entries: N answer calls, N
judge calls) and `run_arena` (N prompts: N + N answer calls, 2N judge calls, both orders) in this
process, and read each judge phase's own timing from its results.json: `run_s` (the whole phase:
loading the games, the calls, scoring, aggregation, files) and `request_phase_s`. In the same trial
`bench/bare_loop.py` sends 2N requests to the same server: on a shared machine the ratio of a
phase's throughput to the bare loop's is the figure to read.

    python bench/judge_phase.py [--items 1000] [--concurrency 64] [--latency 0.1] [--trials 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner_overhead import HERE, control, start_server, timed  # noqa: E402

ALL5 = {"Correct": 1, "Complete": 1, "Concise": 5, "Helpful": 5, "Honest": 5, "Harmless": 5}


def aragen_data(path: Path, n: int) -> None:
    rows = [{"Meta": {"SN.": i, "Round": 0, "Task": "Question Answering (QA)", "Language": "Arabic"},
             "Test": {"Question 1": f"ما هي عاصمة البلد رقم {i}؟", "Answer 1": f"عاصمة البلد رقم {i} هي المدينة {i}.",
                      "Question 2": None, "Answer 2": None}} for i in range(n)]
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")


def arena_data(path: Path, n: int) -> None:
    path.write_text("".join(json.dumps({"id": f"p{i}", "prompt": f"ອະທິບາຍເລື່ອງທີ {i} ໃຫ້ສັ້ນໆ."},
                                       ensure_ascii=False) + "\n" for i in range(n)), encoding="utf-8")


def phase(out: Path) -> dict[str, float]:
    res = json.loads((out / "results.json").read_text())
    return {"calls": res["counts"]["model_calls"], "run_s": res["timing"]["run_s"],
            "request_phase_s": res["timing"]["request_phase_s"], "failed": res["counts"]["failed"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--trials", type=int, default=3)
    a = ap.parse_args()
    from glotbench.engine.aragen import run_aragen
    from glotbench.engine.arena import run_arena
    from glotbench.engine.evaluate import RunOptions
    from glotbench.rundir import slug

    limit = a.concurrency / a.latency
    server, port = start_server(a.latency)
    url = f"http://127.0.0.1:{port}/v1"
    control(port, {"record": False, "judges": {"rubric-judge": {"mode": "rubric", "scores": ALL5},
                                               "verdict-judge": {"mode": "prefer", "prefer": "GOOD"}},
                   "answers": {"ອະທິບາຍ": "GOOD: ຄຳອະທິບາຍສັ້ນໆ ທີ່ຕອບຄຳຖາມ ແລະ ໃຫ້ເຫດຜົນ."}})
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            aragen_data(t / "aragen.json", a.items)
            arena_data(t / "arena.jsonl", a.items)
            bodies = t / "bodies.jsonl"
            bodies.write_text("".join(json.dumps({"model": "bare", "messages": [{"role": "user", "content": f"q{i}"}],
                                                  "max_tokens": 512}) + "\n" for i in range(2 * a.items)))
            for trial in range(a.trials):
                opts = RunOptions(concurrency=a.concurrency, progress=False, cache_path=str(t / f"c{trial}.sqlite"))
                judge = f"openai:rubric-judge@{url}"
                asyncio.run(run_aragen(f"openai:cand@{url}", [judge],
                                       replace(opts, data=str(t / "aragen.json"), out=str(t / f"g{trial}"))))
                g = phase(t / f"g{trial}" / f"judge-{slug(judge)}")
                ans = phase(t / f"g{trial}" / "answers-1")
                judge = f"openai:verdict-judge@{url}"
                asyncio.run(run_arena(f"openai:cand@{url}", f"openai:base@{url}", [judge],
                                      replace(opts, data=str(t / "arena.jsonl"), out=str(t / f"a{trial}"))))
                r = phase(t / f"a{trial}" / f"judge-{slug(judge)}")
                assert g["failed"] == r["failed"] == 0 and g["calls"] == a.items and r["calls"] == 2 * a.items, (g, r)
                _, out = timed([sys.executable, str(HERE / "bare_loop.py"), str(bodies), f"{url}/chat/completions",
                                str(a.concurrency)])
                bare = 2 * a.items / json.loads(out)["loop_s"] / limit
                rows.append({"bare_loop_frac": bare,
                             "aragen_judge_over_bare": g["calls"] / g["run_s"] / limit / bare,
                             "arena_judge_over_bare": r["calls"] / r["run_s"] / limit / bare,
                             "aragen_judge_frac": g["calls"] / g["run_s"] / limit,
                             "aragen_judge_request_frac": g["calls"] / g["request_phase_s"] / limit,
                             "aragen_answers_frac": ans["calls"] / ans["run_s"] / limit,
                             "arena_judge_frac": r["calls"] / r["run_s"] / limit,
                             "arena_judge_request_frac": r["calls"] / r["request_phase_s"] / limit})
                print(json.dumps({"trial": trial, **{k: round(v, 3) for k, v in rows[-1].items()}}), flush=True)
    finally:
        server.terminate()
        server.wait()
    print(json.dumps({"items": a.items, "concurrency": a.concurrency, "latency_s": a.latency, "limit_req_s": limit}))
    for k in rows[0]:
        vals = [r[k] for r in rows]
        print(json.dumps({k: {"median": round(statistics.median(vals), 3), "min": round(min(vals), 3),
                              "max": round(max(vals), 3)}}))


if __name__ == "__main__":
    main()
