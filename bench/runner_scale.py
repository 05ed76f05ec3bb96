"""The runner with 1,000+ requests in flight: request-phase throughput as a fraction of the limit the
endpoint's latency and the concurrency set (concurrency / latency), for 10,000 requests at
concurrency 256 and 1,024 and latency 100 ms and 500 ms. Beside it, the same requests from a bare
aiohttp loop (`bench/bare_loop.py` as its own process, the same request bodies; no prompts, cache,
scoring or files: the ceiling of any Python client on this machine),
and the CPU seconds per request of client and server, which say whether the machine is the limit.

    python bench/runner_scale.py [--requests 10000] [--trials 3] [--configs 256:0.1,1024:0.1,256:0.5,1024:0.5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from runner_overhead import CHILD_ENV, make_data, start_server  # noqa: E402


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def control(port: int, **cfg) -> None:
    import urllib.request

    req = urllib.request.Request(f"http://127.0.0.1:{port}/_control", data=json.dumps(cfg).encode(),
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()


def bare_loop(bodies: Path, port: int, concurrency: int) -> float:
    """`bench/bare_loop.py` as its own process (like glotbench's run) on the same request bodies:
    the loop's own seconds."""
    p = subprocess.run([sys.executable, str(Path(__file__).parent / "bare_loop.py"), str(bodies),
                        f"http://127.0.0.1:{port}/v1/chat/completions", str(concurrency)],
                       capture_output=True, text=True, env=CHILD_ENV)
    if p.returncode != 0:
        sys.exit(f"bare loop failed: {p.stderr.strip()}")
    return json.loads(p.stdout)["loop_s"]


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--configs", default="256:0.1,1024:0.1,256:0.5,1024:0.5")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        # The same realistic replies as bench/runner_overhead.py: extraction and scoring do real work.
        data, bodies, answers = make_data(t, a.requests, "scale")
        summary = []
        for cfg in a.configs.split(","):
            conc, lat = int(cfg.split(":")[0]), float(cfg.split(":")[1])
            limit = conc / lat
            server, port = start_server(lat)
            rows = []
            try:
                control(port, latency=lat, record=False, answers=answers)
                for trial in range(a.trials):
                    bare = bare_loop(bodies, port, conc)
                    s1 = proc_cpu_s(server.pid)
                    out = t / f"run-{conc}-{lat}-{trial}"
                    c0 = children_cpu()
                    p = subprocess.run([sys.executable, "-m", "glotbench", "run", "vi-diacritics", "--data", str(data),
                                        "--model", f"openai:bench@http://127.0.0.1:{port}/v1", "--concurrency", str(conc),
                                        "--cache-path", str(t / f"c-{conc}-{lat}-{trial}.sqlite"), "--no-progress",
                                        "--out", str(out)], capture_output=True, text=True, env=CHILD_ENV)
                    c1, s2 = children_cpu(), proc_cpu_s(server.pid)
                    if p.returncode != 0:
                        sys.exit(f"glotbench run failed: {p.stderr.strip()}")
                    res = json.loads((out / "results.json").read_text())
                    assert res["counts"]["model_calls"] == a.requests and res["counts"]["retries"] == 0, res["counts"]
                    phase = res["timing"]["request_phase_s"]
                    rows.append({
                        "glotbench_frac": a.requests / phase / limit, "bare_frac": a.requests / bare / limit,
                        "glotbench_over_bare": bare / phase,
                        "client_cpu_ms_per_req": 1000 * (c1 - c0) / a.requests,
                        "server_cpu_ms_per_req": 1000 * (s2 - s1) / a.requests,
                        "load1": os.getloadavg()[0],
                    })
                    print(json.dumps({"concurrency": conc, "latency": lat, "trial": trial,
                                      **{k: round(v, 3) for k, v in rows[-1].items()}}), flush=True)
            finally:
                server.terminate()
                server.wait(10)
            med = {k: round(statistics.median(r[k] for r in rows), 3) for k in rows[0]}
            rng = {k: [round(min(r[k] for r in rows), 3), round(max(r[k] for r in rows), 3)] for k in rows[0]}
            summary.append({"concurrency": conc, "latency_s": lat, "limit_req_s": limit, "median": med, "range": rng})
        print(json.dumps({"requests": a.requests, "cores": os.cpu_count(), "results": summary}, indent=2))


if __name__ == "__main__":
    main()
