"""What a hostile client costs the scoring service: server CPU per unauthenticated (and per
rate-limited) 5 MiB request, /healthz latency while such requests stream in, and the server's
memory under 8 concurrent maximal bodies from a valid key (as large as the server accepts, packed
with as many answers as fit), against a real `glotbench serve` process on loopback with a
10,000-item private set open.

    python bench/service_hostile.py [--src PATH] [--items 10000] [--requests 20]
    python bench/service_hostile.py --framing [--src PATH] [--with PATH]   # issue 31's framing figures only

Issue 31 adds, on a 100-item CrossSum set (articles of 18,000 characters, summaries of 300): server
CPU per refused submission whose answers are ~37,000 characters, and 10 at once (CPU, /healthz p95,
RSS); the refusal latency of 5,000 real ids against 5,000 made-up ones (16 interleaved rounds); and
10 concurrent maximal accepted bodies (every answer at the set's cap: scored) — RSS and /healthz.

    python bench/service_hostile.py --issue31
    python bench/service_hostile.py --reconstruction [--items 200]

`--reconstruction` (offline, on the release path): the regression attack over many fresh keys' first
releases of tests/test_service_collusion.py, at 5 to 80 keys per item (docs/service.md, "Many keys").

`--src` runs the server (and prepares its database) from another checkout's `src`, e.g. the code
before issue 22: `git archive 02849df src | tar -x -C /tmp/before` then `--src /tmp/before/src`.
`--framing` measures the HTTP framing instead (`framing_figures`): server CPU per refused head, what a
client can write after a 401, what Content-Length with Transfer-Encoding gets. `--with PATH` adds a
directory to the server's import path, e.g. one holding `uvicorn[standard]`'s httptools, websockets
and uvloop (`pip install --target PATH httptools websockets uvloop`).
"""

from __future__ import annotations

import argparse
import contextlib
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


@contextlib.contextmanager
def rss_peak(pid: int, every_s: float = 0.005):
    """(RSS before, the list of samples) of process `pid`, sampled every `every_s` in a thread while the
    block runs: `max(samples)` is the peak."""
    base = rss_mb(pid)
    samples, done = [base], threading.Event()

    def sample() -> None:
        while not done.is_set():
            samples.append(rss_mb(pid))
            time.sleep(every_s)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield base, samples
    finally:
        done.set()
        sampler.join(10)


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


# -- issue 31: HTTP framing -----------------------------------------------------------------------

def _raw(base: str, data: bytes, wait_s: float = 30.0) -> tuple[list[int], bool]:
    """Send `data` on a fresh connection (in a thread: the server may refuse before it is all
    written); the statuses of the replies read until the server closes, and whether it closed."""
    host, port = base.split("//")[1].split(":")
    c = socket.create_connection((host, int(port)))

    def write() -> None:
        try:
            c.sendall(data)
        except OSError:
            pass

    threading.Thread(target=write, daemon=True).start()
    c.settimeout(wait_s)
    got, closed = b"", False
    try:
        while d := c.recv(65536):
            got += d
        closed = True
    except socket.timeout:
        pass
    except OSError:
        closed = True
    c.close()
    return [int(code) for code in re.findall(rb"HTTP/1\.1 (\d{3}) ", got)], closed  # a reply may follow a body directly


def head_cpu(proc: subprocess.Popen, base: str, head: bytes, n: int) -> tuple[float, list[int]]:
    """Server CPU per request for `head` sent in one write, n times."""
    c0 = cpu_s(proc.pid)
    codes = [st for _ in range(n) for st in _raw(base, head)[0]]
    return (cpu_s(proc.pid) - c0) / n, sorted(set(codes))


def written_after_401(base: str, seconds: float = 10.0) -> tuple[int, float]:
    """A wrong key and a declared 100 GB body, written as fast as the server takes it: bytes written
    until the server ended the connection (or `seconds` passed), and when."""
    host, port = base.split("//")[1].split(":")
    c = socket.create_connection((host, int(port)))
    c.sendall(b"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer gb_wrong\r\n"
              b"Content-Type: application/json\r\nContent-Length: 100000000000\r\n\r\n")
    chunk, written, t0 = b"a" * 2**16, 0, time.monotonic()
    c.settimeout(1.0)
    try:
        while time.monotonic() - t0 < seconds:
            written += c.send(chunk)
    except OSError:
        pass
    took = time.monotonic() - t0
    c.close()
    return written, took


def framing_figures(src: str, extra: list[str]) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="gb-framing-"))
    make_set(tmp / "small.jsonl", 100)
    db = f"sqlite:///{tmp}/db.sqlite"
    prepare(src, db, tmp / "small.jsonl")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, *extra])}
    have = [m for m in ("httptools", "websockets", "uvloop") if subprocess.run(
        [sys.executable, "-c", f"import {m}"], env=env, capture_output=True).returncode == 0]
    print(f"server code: {src}; importable by the server: {', '.join(have) or 'none of httptools, websockets, uvloop'}")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "glotbench", "serve", "--db", db, "--port", str(port),
                             "--rate-per-minute", "1000000"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if requests.get(base + "/healthz", timeout=1).ok:
                break
        except requests.ConnectionError:
            time.sleep(0.05)
    try:
        start = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"  # timed to the reply, not the keep-alive
        for label, head in (("a plain /healthz (2 header fields)", start + b"\r\n"),
                            ("8,000 header fields (73 KiB) in one write", start + b"".join(
                                b"X-%d: y\r\n" % i for i in range(8000)) + b"\r\n"),
                            ("100 header fields (16 KiB, the most accepted) in one write", start + b"".join(
                                b"X-%02d: " % i + b"y" * 150 + b"\r\n" for i in range(98)) + b"\r\n"),
                            ("a 1 MiB header line in one write", start + b"X: " + b"a" * 2**20 + b"\r\n\r\n")):
            cpu, codes = head_cpu(proc, base, head, 100)
            print(f"{label}: replies {codes}, {1000 * cpu:.1f} ms server CPU each")
        written, took = written_after_401(base)
        print(f"a body after a 401 (wrong key, Content-Length 100 GB): {written / MiB:,.1f} MiB written in {took:.1f} s "
              "before the server ended the connection")
        smuggle = (b"POST /api/submissions/1/publish HTTP/1.1\r\nHost: x\r\nContent-Length: 44\r\n"
                   b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/sets HTTP/1.1\r\nHost: x\r\n\r\n")
        codes, closed = _raw(base, smuggle, wait_s=10)
        print(f"Content-Length with Transfer-Encoding and a request hidden in the body: replies {codes}, "
              f"connection {'closed' if closed else 'kept open'}")
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=str(HERE.parent / "src"))
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--framing", action="store_true", help="measure the HTTP framing only (issue 31)")
    ap.add_argument("--with", dest="extra", action="append", default=[], help="a directory the server also imports from")
    a = ap.parse_args()
    if a.framing:
        return framing_figures(a.src, a.extra)
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
        results: list[int] = []
        with rss_peak(proc.pid) as (base_rss, peak):
            threads = [threading.Thread(target=lambda: results.append(post(base, key, biggest))) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(300)
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


def crosssum_file(path: Path, n: int = 100) -> None:
    """A CrossSum set in DeepSEA's JSON: n articles of 18,000 characters with 300-character summaries."""
    langs = ("lo", "th", "km", "my", "vi")
    rows = {lang: [] for lang in langs}
    for i in range(n):
        rows[langs[i % len(langs)]].append({"text": (f"article {i} " + "ຂ່າວ " * 4000)[:18_000],
                                             "summary": (f"summary {i} " + "ສະຫຼຸບ " * 60)[:300]})
    path.write_text(json.dumps({"task": "crosssum", "languages": rows}, ensure_ascii=False), encoding="utf-8")


def prepare_issue31(src: str, db: str, sums: Path, mcq: Path) -> tuple[str, list[str], list[str]]:
    """The two sets (current) and a key; (key, the CrossSum ids, the MCQ ids)."""
    code = ("import json\nfrom sqlalchemy import select\nfrom glotbench.service.core import Service, Settings\n"
            "from glotbench.service.db import SetItem\n"
            f"s = Service(Settings(db_url={db!r}))\n"
            f"a = s.load_set('sum', 'deepsea-crosssum', {str(sums)!r})\ns.rotate('sum')\n"
            f"b = s.load_set('ids', 'laobench-mcq', {str(mcq)!r})\ns.rotate('ids')\n"
            "with s.Session() as ss:\n"
            "    ids = [ss.scalars(select(SetItem.item_id).where(SetItem.set_id == x)).all() for x in (a, b)]\n"
            "print(json.dumps([s.create_key('bench31')[1], *ids]))\n")
    out = subprocess.run([sys.executable, "-c", code], env=env_for(src), capture_output=True, text=True, check=True)
    key, sum_ids, mcq_ids = json.loads(out.stdout.strip().splitlines()[-1])
    return key, sum_ids, mcq_ids


def issue31(src: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="gb-issue31-"))
    crosssum_file(tmp / "sum.json")
    make_set(tmp / "ids.jsonl", 5000)
    db = f"sqlite:///{tmp}/db.sqlite"
    key, sum_ids, mcq_ids = prepare_issue31(src, db, tmp / "sum.json", tmp / "ids.jsonl")
    proc, base = serve(src, db, "--rate-per-minute", "1000000", "--daily-limit", "1000", "--org-daily-limit", "100000")
    try:
        long = json.dumps({"set": "sum", "answers": {i: "ສະຫຼຸບ " * 5300 for i in sum_ids}}).encode()  # ~37k characters each
        cpu, codes = per_request_cpu(proc, base, key, long, 10)
        print(f"refused CrossSum submission, 100 answers of ~37,000 characters ({len(long) / MiB:.1f} MiB): "
              f"{1000 * cpu:.1f} ms server CPU each (replies {sorted(set(codes))})")
        cap_answer = "ສະຫຼຸບ " * 380  # 2,660 characters: at the set's cap (2 x 300 + 64 + 2,000 for outputs)
        refused = json.dumps({"set": "sum", "answers": {**{i: cap_answer for i in sum_ids[1:]}, "made-up": cap_answer}},
                             ensure_ascii=False).encode()
        cpu, codes = per_request_cpu(proc, base, key, refused, 10)
        print(f"refused CrossSum submission at the cap, one made-up id ({len(refused) / MiB:.2f} MiB): "
              f"{1000 * cpu:.1f} ms server CPU each (replies {sorted(set(codes))})")
        for name, body in (("refused", long), ("refused at the cap", refused),
                           ("accepted at the cap (scored)", json.dumps({"set": "sum", "answers": {
                               i: cap_answer for i in sum_ids}}, ensure_ascii=False).encode())):
            c0, results = cpu_s(proc.pid), []
            with rss_peak(proc.pid) as (base_rss, peak):
                threads = [threading.Thread(target=lambda b=body: results.append(post(base, key, b))) for _ in range(10)]
                for th in threads:
                    th.start()
                lat = []
                while any(th.is_alive() for th in threads):
                    t0 = time.perf_counter()
                    requests.get(base + "/healthz", timeout=60)
                    lat.append(time.perf_counter() - t0)
                    time.sleep(0.05)
                for th in threads:
                    th.join(300)
            print(f"10 concurrent {name} CrossSum submissions: {cpu_s(proc.pid) - c0:.2f} s server CPU in all, "
                  f"/healthz p95 {1000 * pct(lat, 0.95):.0f} ms ({len(lat)} probes), RSS {base_rss:.0f} MB before, "
                  f"peak +{max(peak) - base_rss:.0f} MB; replies {sorted(results)}")
        real = json.dumps({"set": "ids", "answers": {**{i: "A" for i in mcq_ids[1:]}, mcq_ids[0]: "Z"}}).encode()
        fake = json.dumps({"set": "ids", "answers": {f"z{i[1:]}": "A" for i in mcq_ids}}).encode()  # same lengths
        times: dict[str, list[float]] = {"real": [], "made-up": []}
        for _ in range(16):
            for name, body in (("real", real), ("made-up", fake)):
                t0 = time.perf_counter()
                code = post(base, key, body)
                times[name].append(time.perf_counter() - t0)
                assert code == 400, code
        wins = sum(a > b for a, b in zip(times["real"], times["made-up"]))
        print(f"refusal latency, 5,000 real ids (one invalid answer) vs 5,000 made-up ids: "
              f"p50 {1000 * pct(times['real'], 0.5):.1f} vs {1000 * pct(times['made-up'], 0.5):.1f} ms; real slower in "
              f"{wins} of 16 interleaved rounds")
    finally:
        proc.terminate()
        proc.wait(30)


def reconstruction(m: int, keys: tuple[int, ...]) -> None:
    """The regression attack of tests/test_service_collusion.py (fresh keys, a uniformly random letter
    per item, first releases regressed on the letters, items named at posterior >= 0.9 or 0.5, knowing
    the mechanism) over more numbers of keys than the test runs."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    from test_service_collusion import regression_attack
    from glotbench.service.scoring import Step

    print(f"{m} items: step {Step().size(m):g}, release noise sd {Step().noise_sd(m, m, 1):.2f} points")
    for n in keys:
        r = regression_attack(m, n, seed=n)
        (named9, right9), (named5, right5) = r[0.9], r[0.5]
        print(f"{n} fresh keys: posterior >= 0.9: {named9:.0f} named, {right9:.0f} right, "
              f"{n / max(right9, 1e-9):.0f} keys per label; >= 0.5: {named5:.0f} named, {right5:.0f} right, "
              f"{n / max(right5, 1e-9):.0f}; beyond chance naming all: {r['beyond_chance']:.0f} "
              f"({n / max(r['beyond_chance'], 1e-9):.0f} keys per label's worth)")


if __name__ == "__main__":
    if "--reconstruction" in sys.argv:
        sys.argv.remove("--reconstruction")
        items = int(sys.argv[sys.argv.index("--items") + 1]) if "--items" in sys.argv else 200
        reconstruction(items, tuple(int(k * items) for k in (5, 10, 20, 40, 60, 80)))
    elif "--issue31" in sys.argv:
        sys.argv.remove("--issue31")
        src = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv else str(HERE.parent / "src")
        issue31(src)
    else:
        main()
