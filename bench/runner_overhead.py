"""Runner overhead, side by side: a whole `glotbench run` process against a bare aiohttp loop.

The OpenAI-compatible test server (its own process, 100 ms per request) answers each prompt like a
model would: the restored sentence as JSON (`{"restored_text": ...}`), some wrapped in prose and a code
fence, some with a word left wrong, so extraction and scoring do their real work. 2,000 requests at
64 in flight can go no faster than 64 / 0.1 s = 640 req/s. Each trial runs, one after the other on
the same server: `bench/bare_loop.py` (the same request bodies, as a process), `glotbench run
vi-diacritics` (as a process), and the same command again on the warm cache. The machine may be
shared, so the figures that matter are the ratios within a trial; the median and range over trials
are printed. Then one `glotbench run` of `--memory-items` items reports its peak RSS (wait4), and
the same command again on its warm cache gives the cached/first ratio at that size; the bare loop
sends those requests too, so the CPU a request adds (start-up left out: from the trials' medians to
that size) is printed for both beside the whole-process ratio.

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
from typing import Any

HERE = Path(__file__).resolve().parent


def start_server(latency: float) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "glotbench.testing.server", "--latency", str(latency)],
                            stdout=subprocess.PIPE, text=True)
    return proc, int(proc.stdout.readline().split()[1])


def control(port: int, cfg: dict) -> None:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/_control", data=json.dumps(cfg).encode(),
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()


# An answer in the wrong language: the language check cannot settle it by script (Vietnamese and
# English share Latin letters), so the identifier is loaded and asked, as on a translation task.
OFF_LANGUAGE = "Sorry, I can only answer in English: this sentence needs its diacritics restored."


def model_reply(i: int, ref: str, source: str) -> str:
    """What a decent model sends: mostly bare JSON, sometimes prose and a fence, sometimes a miss,
    one in 20 an English sentence instead of the restored text."""
    if i % 20 == 19:
        ref = OFF_LANGUAGE
    elif i % 10 == 9:  # one word left without its marks
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
    wall, _, rss, _ = measured(cmd)
    return wall, rss


def measured(cmd: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (user + system), peak RSS in KiB (this child alone, from wait4) and
    stdout of a process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=CHILD_ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.exit(f"{cmd[:4]} failed: {err.read().decode().strip()}")
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out.read().decode()


def summary(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def load1() -> float:
    return round(os.getloadavg()[0], 2)


def eta_errors(url: str, latency: float) -> dict[str, float]:
    """The ETA against the real remaining time, in this process with the real clock: an endpoint run
    (the loopback server, 16 in flight, vi-diacritics' 164 items) and a batched local model (batches of 8 that
    take 0.5 s each, 40 items). At every reading of the counters from the first completed batch on,
    while more than the last round (one batch; at least one request's latency) of real time is left:
    the largest |ETA / real remaining - 1|. tests/test_eta.py holds the same on a fake clock."""
    import asyncio

    import glotbench.engine.progress as P
    from glotbench.engine.evaluate import RunOptions, evaluate
    from glotbench.models.base import GenerateConfig, ModelBase, Prompt, Response
    from glotbench.models.batching import BATCH_LATENCY, MicroBatcher, batch_latency

    class Batches(ModelBase):
        def __init__(self, seconds: float, size: int):
            super().__init__("batches", spec="python:batches", concurrency=size)
            self.seconds = seconds
            self._b = MicroBatcher(lambda _k, reqs: self._run(reqs), lambda _r: 0, batch_size=size)

        def description(self) -> dict:
            return {"backend": "bench", "latency": BATCH_LATENCY}

        def _run(self, reqs: list) -> list:
            time.sleep(self.seconds)
            lat, raw = batch_latency(self.seconds, len(reqs))
            return [Response(text='{"restored_text": "x"}', finish_reason="stop", latency_s=lat, raw=raw)
                    for _ in reqs]

        async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0):
            return await self._b.submit(prompt)

        async def aclose(self) -> None:
            self._b.close()

    out = {}
    commit = P.ProgressBar._commit
    for name, model, n, conc, grain in (("endpoint", f"openai:bench@{url}", 164, 16, latency),
                                        ("local batches", Batches(0.5, 8), 40, 8, 0.5)):
        seen: list[tuple[float, int, float | None]] = []

        def watched(bar: Any, seen: list = seen) -> None:
            commit(bar)
            now = time.perf_counter()
            seen.append((now, bar._counters.done, bar.eta(now)))

        P.ProgressBar._commit = watched  # type: ignore[method-assign]
        try:
            with tempfile.TemporaryDirectory() as tmp:
                evaluate("vi-diacritics", model, RunOptions(limit=n, concurrency=conc, progress=False,
                                                            use_cache=False, out=str(Path(tmp) / "r")))
        finally:
            P.ProgressBar._commit = commit  # type: ignore[method-assign]
        end = seen[-1][0]
        first = next(i for i, (_, d, _) in enumerate(seen) if d >= conc)
        # the last round: from the reading when every unit left was in flight (on a loaded machine a
        # round takes longer than one request's latency: the client is the bottleneck)
        last_round = end - next(t for t, d, _ in seen if d >= seen[-1][1] - conc)
        errs = [abs((e if e is not None else float("inf")) / (end - t) - 1)
                for t, _, e in seen[first:] if end - t > max(grain, last_round)]
        out[name] = round(max(errs), 3) if errs else float("nan")
        asyncio.set_event_loop(None)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--memory-items", type=int, default=10000)
    ap.add_argument("--no-eta", action="store_true", help="leave out the ETA figures")
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
            # one run first: what is made once per machine (the language identifier unpacked into
            # the cache folder) is made before the trials, as on any machine after its first run
            measured([*gb, "--data", str(data), "--limit", "50", "--model", f"openai:bench@{url}", "--no-progress",
                      "--cache-path", str(t / "warm.sqlite"), "--out", str(t / "warm")])
            for trial in range(a.trials):
                load = load1()
                bare_s, bare_cpu, bare_rss, out = measured([*py, str(HERE / "bare_loop.py"), str(bodies),
                                                            f"{url}/chat/completions", str(a.concurrency)])
                bare_loop_s = json.loads(out)["loop_s"]
                common = [*gb, "--data", str(data), "--model", f"openai:bench@{url}", "--concurrency",
                          str(a.concurrency), "--cache-path", str(t / f"cache{trial}.sqlite"), "--no-progress"]
                wall, cpu, rss, _ = measured([*common, "--out", str(t / f"a{trial}")])
                res = json.loads((t / f"a{trial}" / "results.json").read_text())
                assert res["counts"]["model_calls"] == a.requests, res["counts"]
                assert res["counts"]["failed"] == 0, res["counts"]  # every reply parsed to an answer
                assert res["checks"]["language"]["wrong"] == a.requests // 20, res["checks"]["language"]
                cached, cached_cpu, cached_rss, _ = measured([*common, "--out", str(t / f"b{trial}")])
                res2 = json.loads((t / f"b{trial}" / "results.json").read_text())
                assert res2["counts"]["model_calls"] == 0 and res2["scores"] == res["scores"]
                assert res2["checks"] == res["checks"]
                rows.append({"bare_process_s": bare_s, "bare_loop_s": bare_loop_s, "run_process_s": wall,
                             "cached_process_s": cached, "run_over_bare": wall / bare_s,
                             "run_frac_of_limit": a.requests / wall / limit,
                             "bare_frac_of_limit": a.requests / bare_s / limit,
                             "cached_over_first": cached / wall, "run_peak_rss_mb": rss / 1024,
                             "bare_cpu_s": bare_cpu, "run_cpu_s": cpu, "cpu_over_bare": cpu / bare_cpu,
                             "cached_cpu_s": cached_cpu, "bare_peak_rss_mb": bare_rss / 1024,
                             "cached_peak_rss_mb": cached_rss / 1024, "load1": load})
                print(json.dumps({"trial": trial, **{k: round(v, 3) for k, v in rows[-1].items()}}), flush=True)
            mem = {}
            if a.memory_items:
                mdata, mbodies, manswers = make_data(t, a.memory_items, "mem")
                control(port, {"answers": manswers, "record": False})
                load = load1()
                _, bare_mem_cpu, _, _ = measured([*py, str(HERE / "bare_loop.py"), str(mbodies),
                                                  f"{url}/chat/completions", str(a.concurrency)])
                margs = [*gb, "--data", str(mdata), "--model", f"openai:bench@{url}", "--concurrency",
                         str(a.concurrency), "--cache-path", str(t / "mem.sqlite"), "--no-progress"]
                wall, cpu, rss, _ = measured([*margs, "--out", str(t / "mem")])
                cached_wall, _, cached_rss, _ = measured([*margs, "--out", str(t / "mem-cached")])
                res = json.loads((t / "mem-cached" / "results.json").read_text())
                assert res["counts"]["model_calls"] == 0, res["counts"]
                # CPU a request adds: from the trials' medians to this run, glotbench's and the bare loop's
                extra = a.memory_items - a.requests
                marginal = {"run_us": (cpu - statistics.median(r["run_cpu_s"] for r in rows)) / extra * 1e6,
                            "bare_us": (bare_mem_cpu - statistics.median(r["bare_cpu_s"] for r in rows)) / extra * 1e6}
                mem = {"items": a.memory_items, "peak_rss_mb": round(rss / 1024, 1), "wall_s": round(wall, 2),
                       "cpu_s": round(cpu, 2), "bare_cpu_s": round(bare_mem_cpu, 2),
                       "cpu_per_request_us": round(marginal["run_us"], 1),
                       "bare_cpu_per_request_us": round(marginal["bare_us"], 1), "cached_wall_s": round(cached_wall, 2),
                       "cached_peak_rss_mb": round(cached_rss / 1024, 1),
                       "cached_over_first": round(cached_wall / wall, 3), "load1": load}
                print(json.dumps({"memory_run": mem}), flush=True)
            eta = {}
            if not a.no_eta:
                load = load1()
                eta = {**eta_errors(url, a.latency), "load1": load}
                print(json.dumps({"eta_max_error": eta}), flush=True)
    finally:
        server.terminate()
        server.wait()
    print(json.dumps({"requests": a.requests, "no_site": a.no_site, "concurrency": a.concurrency, "latency_s": a.latency,
                      "limit_req_s": limit, "trials": a.trials,
                      "memory": mem}))
    for k in rows[0]:
        print(json.dumps({k: summary([r[k] for r in rows])}))
    print()
    print(table(rows, mem, eta, a))


def table(rows: list[dict[str, float]], mem: dict[str, Any], eta: dict[str, float], a: Any) -> str:
    """Every figure of issue 32 beside its target: medians (min–max) over the trials, the load
    average (1 min) before each; a figure from a busy machine says so."""
    def med(k: str, digits: int = 2) -> str:
        v = [r[k] for r in rows]
        return f"{statistics.median(v):.{digits}f} ({min(v):.{digits}f}–{max(v):.{digits}f})"

    def met(k: str, bound: float) -> str:
        return "met" if statistics.median(r[k] for r in rows) <= bound else "NOT met"

    loads = [r["load1"] for r in rows]
    busy = max(loads) > 1.5
    load = f"{min(loads):.2f}–{max(loads):.2f}"
    mem_rss = mem.get("peak_rss_mb")
    lines = [(f"{a.requests:,} chat requests, concurrency {a.concurrency}, {a.latency * 1000:g} ms latency (limit "
              f"{a.requests * a.latency / a.concurrency:.3f} s), {len(rows)} interleaved trials; medians (min–max).")
             + (" BUSY MACHINE (load average above 1.5): re-measure on a quiet one." if busy else ""),
             "",
             "| figure | raw aiohttp | glotbench | target | | load avg |",
             "|---|---|---|---|---|---|",
             f"| wall s, first run | {med('bare_process_s')} | {med('run_process_s')} | — | | {load} |",
             f"| wall, glotbench / raw | — | {med('run_over_bare', 3)} | ≤ 1.10 | {met('run_over_bare', 1.10)} | {load} |",
             f"| CPU s, first run | {med('bare_cpu_s')} | {med('run_cpu_s')} | — | | {load} |",
             f"| CPU, glotbench / raw | — | {med('cpu_over_bare', 2)} | ≤ 3 | {met('cpu_over_bare', 3)} | {load} |",
             (f"| peak RSS MB, {a.requests:,} requests | {med('bare_peak_rss_mb', 1)} | {med('run_peak_rss_mb', 1)} "
              f"| ≤ 100 | {met('run_peak_rss_mb', 100)} | {load} |")]
    if mem_rss is not None:
        lines.append(f"| peak RSS MB, {mem['items']:,} requests | — | {mem_rss} (one run) | ≤ 130 | "
                     f"{'met' if mem_rss <= 130 else 'NOT met'} | {mem['load1']:.2f} |")
        if mem["items"] > a.requests and mem["bare_cpu_per_request_us"] > 0:
            ratio = mem["cpu_per_request_us"] / mem["bare_cpu_per_request_us"]
            lines.append(f"| CPU µs a request adds ({a.requests:,} → {mem['items']:,}; start-up left out) | "
                         f"{mem['bare_cpu_per_request_us']:.0f} | {mem['cpu_per_request_us']:.0f} ({ratio:.2f} ×) | — | | "
                         f"{mem['load1']:.2f} |")
    lines += [f"| cached re-run: wall s | — | {med('cached_process_s')} | — | | {load} |",
              f"| cached re-run: CPU s | — | {med('cached_cpu_s')} | — | | {load} |",
              f"| cached re-run: peak RSS MB | — | {med('cached_peak_rss_mb', 1)} | — | | {load} |"]
    for name in ("endpoint", "local batches"):
        if name in eta:
            lines.append(f"| ETA, largest error from the first batch on ({name}) | — | ±{eta[name]:.0%} | ±50% | "
                         f"{'met' if eta[name] <= 0.5 else 'NOT met'} | {eta['load1']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
