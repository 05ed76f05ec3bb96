"""Runner overhead, side by side: a whole `glotbench run` process against a bare aiohttp loop.

The OpenAI-compatible test server (its own process, 100 ms per request) answers each prompt like a
model would: the restored sentence as JSON (`{"restored_text": ...}`), some wrapped in prose and a code
fence, some with a word left wrong, so extraction and scoring do their real work. 2,000 requests at
64 in flight can go no faster than 64 / 0.1 s = 640 req/s. Each trial runs, one after the other on
the same server: `bench/bare_loop.py` (the same request bodies, as a process), `glotbench run
vi-diacritics` (as a process), and the same command again on the warm cache. The machine may be
shared, so the figures that matter are the ratios within a trial; the median and range over trials
are printed. Then one `glotbench run` of `--memory-items` items reports its peak RSS (wait4), and
the same command again on its warm cache gives the cached/first ratio at that size.

    python bench/runner_overhead.py [--requests 2000] [--concurrency 64] [--latency 0.1] [--trials 5]
                                    [--memory-items 10000] [--no-site]

`--no-site`: the bare loop and every `glotbench run` start as `python -S` with glotbench's source and
the site-packages directory on PYTHONPATH: the same packages without the `.pth` files' code, as a
plain virtual environment has them (this sandbox's interpreter runs a `.pth` that imports certifi
at every start, 0.025 s).
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
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent


def start_server(latency: float) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "glotbench.testing.server", "--latency", str(latency)],
                            stdout=subprocess.PIPE, text=True)
    return proc, int(proc.stdout.readline().split()[1])


def control(port: int, cfg: dict) -> None:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/_control", data=json.dumps(cfg).encode(),
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()


def model_reply(i: int, ref: str, source: str) -> str:
    """What a decent model sends: mostly bare JSON, sometimes prose and a fence, sometimes a miss."""
    if i % 10 == 9:  # one word left without its marks
        first, _, rest = ref.partition(" ")
        ref = f"{source.split(' ', 1)[0]} {rest}" if rest else source
    from glotbench.benchmarks.vi_diacritics import ANSWER_FIELD

    body = json.dumps({ANSWER_FIELD: ref}, ensure_ascii=False)
    if i % 10 in (7, 8):
        return f"Here is the text with its diacritics restored:\n```json\n{body}\n```"
    return body


def make_data(t: Path, n: int, tag: str) -> tuple[Path, Path, dict[str, str]]:
    """Data file, request bodies for the bare loop, and the server's replies keyed by prompt."""
    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
    from glotbench.text.vietnamese import normalize_space, strip

    bench = VietnameseDiacritics()
    refs = [it.gold["references"][0] for it in bench.load()]
    data, bodies = t / f"data-{tag}.jsonl", t / f"bodies-{tag}.jsonl"
    answers: dict[str, str] = {}
    cfg = bench.default_config
    with data.open("w", encoding="utf-8") as f, bodies.open("w", encoding="utf-8") as b:
        for i in range(n):  # every prompt distinct, so no request is served by the cache in run 1
            ref = f"{refs[i % len(refs)]} Câu số {i}."
            f.write(json.dumps({"id": f"b{i}", "category": "bench", "references": [ref]}, ensure_ascii=False) + "\n")
            source = normalize_space(strip(ref))
            content = bench.render({"text": source}).messages[-1]["content"]
            answers[content] = model_reply(i, ref, source)
            b.write(json.dumps({"model": "bench", "messages": [{"role": "user", "content": content}],
                                "temperature": cfg.temperature, "max_tokens": cfg.max_tokens},
                               ensure_ascii=False) + "\n")
    return data, bodies, answers


# Children run as an installed package does: from their bytecode cache (a shell that sets
# PYTHONDONTWRITEBYTECODE would have every glotbench module compiled from source on every start).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def interpreter(no_site: bool) -> list[str]:
    """The command that starts a child Python: with `no_site`, `python -S` with glotbench's source and
    site-packages on PYTHONPATH (set in CHILD_ENV): the packages without the `.pth` files' code."""
    if not no_site:
        return [sys.executable]
    import site

    import glotbench

    CHILD_ENV["PYTHONPATH"] = os.pathsep.join([str(Path(glotbench.__file__).resolve().parents[1]),
                                               *site.getsitepackages()])
    return [sys.executable, "-S"]


def timed(cmd: list[str]) -> tuple[float, str]:
    """Wall seconds and stdout of a process."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=CHILD_ENV)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{cmd[:4]} failed: {proc.stderr.strip()}")
    return wall, proc.stdout


def timed_rss(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS in KiB of a process (this child alone, from wait4)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=CHILD_ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{cmd[:4]} failed: {err.strip()}")
    return wall, usage.ru_maxrss


def summary(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--memory-items", type=int, default=10000)
    ap.add_argument("--no-site", action="store_true", help="children as `python -S`, packages on PYTHONPATH")
    a = ap.parse_args()
    py = interpreter(a.no_site)
    limit = a.concurrency / a.latency
    server, port = start_server(a.latency)
    url = f"http://127.0.0.1:{port}/v1"
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            data, bodies, answers = make_data(t, a.requests, "run")
            control(port, {"answers": answers, "record": False})
            gb = [*py, "-m", "glotbench", "run", "vi-diacritics"]
            subprocess.run([*gb[:3], "list"], env=CHILD_ENV, capture_output=True)  # bytecode written once
            for trial in range(a.trials):
                bare_s, out = timed([*py, str(HERE / "bare_loop.py"), str(bodies),
                                        f"{url}/chat/completions", str(a.concurrency)])
                bare_loop_s = json.loads(out)["loop_s"]
                common = [*gb, "--data", str(data), "--model", f"openai:bench@{url}", "--concurrency",
                          str(a.concurrency), "--cache-path", str(t / f"cache{trial}.sqlite"), "--no-progress"]
                wall, rss = timed_rss([*common, "--out", str(t / f"a{trial}")])
                res = json.loads((t / f"a{trial}" / "results.json").read_text())
                assert res["counts"]["model_calls"] == a.requests, res["counts"]
                assert res["counts"]["failed"] == 0, res["counts"]  # every reply parsed to an answer
                cached, _ = timed_rss([*common, "--out", str(t / f"b{trial}")])
                res2 = json.loads((t / f"b{trial}" / "results.json").read_text())
                assert res2["counts"]["model_calls"] == 0 and res2["scores"] == res["scores"]
                rows.append({"bare_process_s": bare_s, "bare_loop_s": bare_loop_s, "run_process_s": wall,
                             "cached_process_s": cached, "run_over_bare": wall / bare_s,
                             "run_frac_of_limit": a.requests / wall / limit,
                             "bare_frac_of_limit": a.requests / bare_s / limit,
                             "cached_over_first": cached / wall, "run_peak_rss_mb": rss / 1024})
                print(json.dumps({"trial": trial, **{k: round(v, 3) for k, v in rows[-1].items()}}), flush=True)
            mem = {}
            if a.memory_items:
                mdata, _, manswers = make_data(t, a.memory_items, "mem")
                control(port, {"answers": manswers, "record": False})
                wall, rss = timed_rss([*gb, "--data", str(mdata), "--model", f"openai:bench@{url}", "--concurrency",
                                       str(a.concurrency), "--cache-path", str(t / "mem.sqlite"), "--no-progress",
                                       "--out", str(t / "mem")])
                cached_wall, _ = timed_rss([*gb, "--data", str(mdata), "--model", f"openai:bench@{url}",
                                            "--concurrency", str(a.concurrency), "--cache-path", str(t / "mem.sqlite"),
                                            "--no-progress", "--out", str(t / "mem-cached")])
                res = json.loads((t / "mem-cached" / "results.json").read_text())
                assert res["counts"]["model_calls"] == 0, res["counts"]
                mem = {"items": a.memory_items, "peak_rss_mb": round(rss / 1024, 1), "wall_s": round(wall, 2),
                       "cached_wall_s": round(cached_wall, 2), "cached_over_first": round(cached_wall / wall, 3)}
                print(json.dumps({"memory_run": mem}), flush=True)
    finally:
        server.terminate()
        server.wait()
    print(json.dumps({"requests": a.requests, "no_site": a.no_site, "concurrency": a.concurrency, "latency_s": a.latency,
                      "limit_req_s": limit, "trials": a.trials,
                      "memory": mem}))
    for k in rows[0]:
        print(json.dumps({k: summary([r[k] for r in rows])}))


if __name__ == "__main__":
    main()
