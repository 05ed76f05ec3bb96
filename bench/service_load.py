"""Scoring-service load: a 10,000-answer submission (latency over repeated submissions, each from its
own key, so every one passes the Ladder and is published as its own row) and 100 concurrent
leaderboard requests, against a real `glotbench serve` process on loopback (SQLite).

    python bench/service_load.py [--items 10000] [--submissions 15] [--concurrent 100]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def make_set(path: Path, n: int) -> None:
    subs = [f"subject-{i}" for i in range(20)]
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"h{i:05d}", "data_type": "Knowledge Application", "subdomain": subs[i % 20],
                                "question": f"ຄຳຖາມທີ {i}?", "A": "a", "B": "b", "C": "c", "D": "d",
                                "answer": "ABCD"[i % 4]}, ensure_ascii=False) + "\n")


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


async def leaderboard_burst(base: str, n: int) -> list[float]:
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=n)) as s:
        async def one() -> float:
            t0 = time.perf_counter()
            async with s.get(base + "/api/leaderboard") as r:
                await r.read()
                assert r.status == 200
            return time.perf_counter() - t0
        return list(await asyncio.gather(*(one() for _ in range(n))))


def main() -> None:
    import requests

    from glotbench.service.core import Service, Settings
    from service_helpers import start

    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--submissions", type=int, default=15)
    ap.add_argument("--concurrent", type=int, default=100)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "hidden.jsonl"
        make_set(data, a.items)
        db = f"sqlite:///{tmp}/db.sqlite"
        svc = Service(Settings(db_url=db))
        svc.load_set("hidden", "laobench-mcq", str(data))
        svc.rotate("hidden")
        keys = [svc.create_key(f"bench-{k}")[1] for k in range(a.submissions)]
        # The burst stands for many clients, all on loopback: lift the per-address connection cap.
        s = start(db, "--daily-limit", "100000", "--rate-per-minute", "100000", "--max-connections-per-ip", "1000")
        try:
            answers = {f"h{i:05d}": "ABCD"[(i * 7) % 4] for i in range(a.items)}
            gc.collect()  # the client's own full collections (up to ~140 ms, the loaded set's objects
            gc.freeze()   # among them) would otherwise land inside timed requests: they are not the service's
            lat = []
            for k in range(a.submissions):
                headers = {"Authorization": f"Bearer {keys[k]}"}
                t0 = time.perf_counter()
                r = requests.post(s.base + "/api/submissions", headers=headers, timeout=120,
                                  json={"benchmark": "laobench-mcq", "model": f"m{k}", "answers": answers})
                lat.append(time.perf_counter() - t0)
                assert r.status_code == 200, r.text
                p = requests.post(f"{s.base}/api/submissions/{r.json()['id']}/publish", headers=headers, json={}, timeout=30)
                assert p.status_code == 200, p.text
            burst = asyncio.run(leaderboard_burst(s.base, a.concurrent))
        finally:
            s.stop()
    print(json.dumps({
        "items": a.items, "submissions": a.submissions,
        "submission_p50_ms": round(1000 * statistics.median(lat), 1),
        "submission_p90_ms": round(1000 * pct(lat, 0.9), 1),
        "leaderboard_rows": a.submissions, "concurrent_requests": a.concurrent,
        "leaderboard_p50_ms": round(1000 * statistics.median(burst), 1),
        "leaderboard_p99_ms": round(1000 * pct(burst, 0.99), 1),
    }, indent=2))


if __name__ == "__main__":
    main()
