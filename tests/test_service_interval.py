"""The service's released interval carries its n (the set's public item count) and the † rule, in the
JSON reply and on the leaderboard page, through a real `glotbench serve` on loopback (SQLite, and
PostgreSQL when GLOTBENCH_TEST_PG_URL is set); the rule is the measured coverage of that interval
(bench/service_ci_coverage.py, docs/metrics.md)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from glotbench.benchmarks.laobench import LaoBenchMCQ
from glotbench.service.scoring import MIN_RELEASED_ITEMS
from glotbench.stats.coverage import MIN_COVERAGE
from service_helpers import prepare, start

LAO = LaoBenchMCQ().load()
GOLD = {it.id: it.gold["answer"] for it in LAO}
# Every key a reply to an answers submission carries: n and too_few_units added, nothing else (the
# threat model bounds what a reply reveals: docs/service.md).
REPLY_KEYS = {"set", "benchmark", "metric", "score", "ci95", "n", "too_few_units", "improved", "ladder_step", "noise_sd", "items",
              "coverage", "subdomains", "subdomains_hidden_below"}


def _bench():
    path = Path(__file__).resolve().parent.parent / "bench" / "service_ci_coverage.py"
    spec = importlib.util.spec_from_file_location("service_ci_coverage", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _db(tmp_path, which: str) -> str:
    if which == "sqlite":
        return f"sqlite:///{tmp_path}/db.sqlite"
    from sqlalchemy import create_engine, text

    url = os.environ["GLOTBENCH_TEST_PG_URL"]
    with create_engine(url, isolation_level="AUTOCOMMIT").connect() as c:
        c.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    return url


@pytest.mark.parametrize("which", ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not os.environ.get("GLOTBENCH_TEST_PG_URL"), reason="no PostgreSQL server: set GLOTBENCH_TEST_PG_URL"))])
def test_the_released_score_carries_n_and_the_mark_in_the_reply_and_on_the_page(tmp_path, which):
    db = _db(tmp_path, which)
    keys = prepare(db)
    s = start(db, "--rate-per-minute", "100000", "--daily-limit", "100")
    s.keys.update(keys)
    try:
        public_n = next(x for x in s.call("GET", "/api/sets").json() if x["name"] == "lao-1")["items"]
        assert public_n == len(GOLD)
        # Lao answers: every third one wrong, so the score is neither 0 nor 100
        answers = {i: (g if k % 3 else "ABCD"[("ABCD".index(g) + 1) % 4]) for k, (i, g) in enumerate(GOLD.items())}
        r = s.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "model": "ລາວ-model", "answers": answers})
        assert r.status_code == 200, r.text
        res = r.json()["result"]
        assert set(res) == REPLY_KEYS, set(res) ^ REPLY_KEYS
        assert res["n"] == public_n == res["items"]
        assert res["too_few_units"] is (public_n < MIN_RELEASED_ITEMS)
        lo, hi = res["ci95"]
        assert lo <= res["score"] <= hi
        assert s.call("POST", f"/api/submissions/{r.json()['id']}/publish", "alice", json={}).status_code == 200
        row = next(x for t in s.call("GET", "/api/leaderboard").json() if t["set"] == "lao-1"
                   for x in t["rows"] if x["model"] == "ລາວ-model")
        assert row["n"] == public_n and row["too_few_units"] is res["too_few_units"] and row["ci95"] == [lo, hi]
        page = s.call("GET", "/").text
        mark = "†" if res["too_few_units"] else ""
        assert f'({lo}–{hi}){mark}</span> <span class="n">n={public_n}</span>' in page
        assert "bootstrap" not in page  # the released interval is not a bootstrap of the answers
    finally:
        s.stop()


@pytest.mark.parametrize("m", [1, 2, 3, 5, 10, 30])
def test_the_released_interval_covers_from_the_marked_count(m):
    """No released interval is marked below MIN_RELEASED_ITEMS items only because its measured
    coverage (the real noise, rounding and interval of service/scoring.py) is at least 93% there."""
    assert m >= MIN_RELEASED_ITEMS
    bench = _bench()
    for p in bench.P:
        assert bench.released_coverage(m, p, reps=600) >= MIN_COVERAGE, (m, p)


def test_the_coverage_check_can_fail(monkeypatch):
    """An interval that leaves out the release noise (the sampling bound and the rounding only) holds
    the true score well under 93% of the time at 30 items: the simulation tells."""
    from glotbench.service.scoring import released_ci

    bench = _bench()
    monkeypatch.setattr(bench, "released_ci", lambda rel, sd, step, m, digits: released_ci(rel, 0.0, step, m, digits))
    assert bench.released_coverage(30, 0.25, reps=600) < 0.8
