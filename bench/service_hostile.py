"""What a hostile client costs the scoring service: server CPU per unauthenticated (and per
rate-limited) 5 MiB request, /healthz latency while such requests stream in, and the server's
memory under 8 concurrent maximal bodies from a valid key (as large as the server accepts, packed
with as many answers as fit), against a real `glotbench serve` process on loopback with a
10,000-item private set open.

    python bench/service_hostile.py [--src PATH] [--items 10000] [--requests 20]

`--src` runs the server (and prepares its database) from another checkout's `src`, e.g. the code
before issue 22: `git archive 02849df src | tar -x -C /tmp/before` then `--src /tmp/before/src`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from service_load import make_set  # noqa: E402

MiB = 2**20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_for(src: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": src}


def prepare(src: str, db: str, data: Path) -> str:
    code = ("from glotbench.service.core import Service, Settings\n"
            f"s = Service(Settings(db_url={db!r}))\n"
            f"s.load_set('big', 'laobench-mcq', {str(data)!r})\n"
            "s.rotate('big')\n"
            "print(s.create_key('bench')[1])\n")
    out = subprocess.run([sys.executable, "-c", code], env=env_for(src), capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def serve(src: str, db: str, *flags: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "glotbench", "serve", "--db", db, "--port", str(port), *flags],
                            env=env_for(src), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if requests.get(base + "/healthz", timeout=1).ok:
                return proc, base
        except requests.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("the server did not start")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return 0.0


def body_of(size: int) -> bytes:
    """A JSON submission of about `size` bytes: as many short answers as fit."""
    n = max(1, (size - 64) // 15)
    body = json.dumps({"set": "big", "answers": {f"x{i:09d}": "A" for i in range(n)}}).encode()
    while len(body) > size:
        n = int(n * 0.98)
        body = json.dumps({"set": "big", "answers": {f"x{i:09d}": "A" for i in range(n)}}).encode()
    return body


def post(base: str, key: str, body: bytes) -> int:
    try:
        return requests.post(base + "/api/submissions", data=body, timeout=120,
                             headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"}).status_code
    except requests.ConnectionError:
        return -1  # the server answered and closed before the body was written


def per_request_cpu(proc: subprocess.Popen, base: str, key: str, body: bytes, n: int) -> tuple[float, list[int]]:
    c0 = cpu_s(proc.pid)
    codes = [post(base, key, body) for _ in range(n)]
    return (cpu_s(proc.pid) - c0) / n, codes


def healthz_under_flood(base: str, body: bytes, seconds: float) -> list[float]:
    stop = threading.Event()

    def flood() -> None:
        while not stop.is_set():
            post(base, "gb_wrong", body)

    t = threading.Thread(target=flood, daemon=True)
    t.start()
    lat = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        requests.get(base + "/healthz", timeout=30)
        lat.append(time.perf_counter() - t0)
        time.sleep(0.05)
    stop.set()
    t.join(120)
    return lat


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=str(HERE.parent / "src"))
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=20)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gb-hostile-"))
    make_set(tmp / "big.jsonl", a.items)
    db = f"sqlite:///{tmp}/db.sqlite"
    key = prepare(a.src, db, tmp / "big.jsonl")
    five = body_of(5 * MiB - 1024)
    print(f"server code: {a.src}; a {a.items}-item set open; bodies of {len(five) / MiB:.2f} MiB")

    proc, base = serve(a.src, db, "--rate-per-minute", "1000000", "--daily-limit", "1000")
    try:
        cpu, codes = per_request_cpu(proc, base, "gb_wrong", five, a.requests)
        print(f"unauthenticated 5 MiB request: {1000 * cpu:.1f} ms server CPU each (replies {sorted(set(codes))})")
        lat = healthz_under_flood(base, five, 10.0)
        print(f"/healthz while 5 MiB wrong-key requests stream in: p50 {1000 * pct(lat, 0.5):.1f} ms, "
              f"p95 {1000 * pct(lat, 0.95):.1f} ms ({len(lat)} probes)")
        r = requests.post(base + "/api/submissions", data=body_of(6 * MiB), timeout=120,
                          headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
        limit = int(re.search(r"larger than (\d+) bytes", r.text).group(1))
        biggest = body_of(limit - 256)
        base_rss = rss_mb(proc.pid)
        peak = [base_rss]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak.append(rss_mb(proc.pid))
                time.sleep(0.005)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        results: list[int] = []
        threads = [threading.Thread(target=lambda: results.append(post(base, key, biggest))) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        done.set()
        sampler.join(10)
        print(f"8 concurrent maximal bodies ({len(biggest) / MiB:.2f} MiB each, the server's limit {limit} bytes): "
              f"RSS {base_rss:.0f} MB before, peak {max(peak):.0f} MB (+{max(peak) - base_rss:.0f} MB; replies "
              f"{sorted(results)})")
    finally:
        proc.terminate()
        proc.wait(30)
    proc, base = serve(a.src, db, "--rate-per-minute", "2")
    try:
        for _ in range(2):
            post(base, "gb_wrong", b"{}")
        cpu, codes = per_request_cpu(proc, base, "gb_wrong", five, a.requests)
        print(f"rate-limited 5 MiB request: {1000 * cpu:.1f} ms server CPU each (replies {sorted(set(codes))})")
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
