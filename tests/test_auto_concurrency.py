"""`--concurrency auto`: the AIMD gate's rules, and runs against the test server's hidden capacity
(it serves N requests at once and answers the rest 429)."""

from __future__ import annotations

import asyncio
import json
import urllib.request

from glotbench.engine.concurrency import AdaptiveLimit
from glotbench.engine.evaluate import RunOptions, evaluate


def test_slow_start_then_one_decrease_per_episode():
    async def go():
        g = AdaptiveLimit(max_limit=100, start=4)
        tokens = [await g.acquire() for _ in range(4)]
        assert g.in_flight == 4 and g.current == 4
        for t in tokens:
            g.release(t, None)
        assert g.limit == 8  # slow start: +1 per reply, doubling per round trip
        held = [await g.acquire() for _ in range(8)]
        for t in held[:5]:
            g.release(t, None)  # limit 13
        # three 429s from requests sent in the same episode: one decrease
        for t in held[5:]:
            g.release(t, "rate_limited")
        assert g.episodes == 1 and g.rejected == 3 and not g.slow_start
        # cut from what was served (in flight when the signal came: the rejected one and two others;
        # or fewer, the replies of the last round trip), not from the limit
        assert 1 <= g.limit <= 0.9 * 3
        t = await g.acquire()
        g.release(t, "timeout")  # a new episode: a timeout is congestion too
        assert g.episodes == 2
        t = await g.acquire()
        g.release(t, "server_error")  # says nothing about load
        assert g.episodes == 2 and g.rejected == 4  # three 429s and the timeout
        return g

    g = asyncio.run(go())
    assert g.summary()["decreases"] == 2 and g.summary()["mode"] == "auto"


def test_additive_increase_never_passes_the_ceiling():
    async def go():
        g = AdaptiveLimit(max_limit=6, start=4)
        for _ in range(200):
            t = await g.acquire()
            g.release(t, None)
        return g

    g = asyncio.run(go())
    assert g.current == 6 and g.peak == 6


def test_waiters_never_exceed_the_limit():
    async def go():
        g = AdaptiveLimit(max_limit=3, start=3)
        peak = 0

        async def one():
            nonlocal peak
            t = await g.acquire()
            peak = max(peak, g.in_flight)
            await asyncio.sleep(0.001)
            g.release(t, None)

        await asyncio.gather(*(one() for _ in range(50)))
        return peak

    assert asyncio.run(go()) == 3


def stats(srv) -> dict:
    with urllib.request.urlopen(srv.base + "/_stats", timeout=10) as r:
        return json.loads(r.read())


def test_auto_finds_the_hidden_capacity(tmp_path, srv):
    srv.configure(latency=0.05, capacity=4, capacity_retry_after="0")
    res = evaluate("vi-diacritics", srv.spec(), RunOptions(
        limit=80, repeats=2, concurrency="auto", max_concurrency=32, use_cache=False, progress=False,
        out=str(tmp_path / "run"), bootstrap_resamples=0, max_retries=10)).results
    c = res["concurrency"]
    assert res["counts"]["failed"] == 0 and res["counts"]["samples"] == 160
    assert c["rejected"] == stats(srv)["rejected"] > 0  # it did probe past the capacity
    assert 2 <= c["settled"] <= 6 and c["peak"] < 32 and c["decreases"] >= 1
    assert c["rejected_rate"] < 0.15
    assert res["config"]["concurrency"] == "auto" and res["config"]["max_concurrency"] == 32


def test_auto_stays_under_max_concurrency(tmp_path, srv):
    srv.configure(latency=0.02)  # no capacity limit: the ceiling is what holds
    res = evaluate("vi-diacritics", srv.spec(), RunOptions(
        limit=60, concurrency="auto", max_concurrency=3, use_cache=False, progress=False,
        out=str(tmp_path / "run"), bootstrap_resamples=0)).results
    assert stats(srv)["max_in_flight"] <= 3
    assert res["concurrency"]["settled"] == 3 and res["concurrency"]["rejected"] == 0


def test_auto_against_a_server_that_always_429s_ends_invalid_with_no_settled_limit(tmp_path, srv):
    """Every request rejected: the run ends (no hang), invalid (exit 3), each item a rate_limited
    failure, and results.json records no settled limit (it said 1, a limit never found) with a note."""
    from conftest import cli

    srv.configure(faults=[{"match": "*", "status": 429, "retry_after": "0", "times": 10**6}])
    r = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "6", "--concurrency", "auto", "--max-retries", "2",
            "--out", str(tmp_path / "run"), "--no-cache", "--no-progress", timeout=60)
    assert r.returncode == 3, r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["counts"]["failures"] == {"rate_limited": 6} and not res["validity"]["valid"]
    c = res["concurrency"]
    assert c["settled"] is None and "not found" in c["note"]
    assert c["requests"] == c["rejected"] == 18 and c["rejected_rate"] == 1.0  # 6 items x (1 + 2 retries)
