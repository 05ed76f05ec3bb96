"""The service's HTTP surface over real HTTP: streaming size limit, one error shape, security headers,
rate limits (in memory and shared through Redis), set windows with offsets, one leaderboard row per
model and key."""

from __future__ import annotations

import http.client
import os
from pathlib import Path
import shutil
import subprocess
import time

import pytest
import requests

from glotbench.benchmarks.laobench import LaoBenchMCQ
from service_helpers import free_port, prepare, start

LAO = LaoBenchMCQ().load()
ALL_RIGHT = {it.id: it.gold["answer"] for it in LAO}


@pytest.fixture(scope="module")
def svc(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('http')}/db.sqlite"
    keys = prepare(db)
    # --release-noise 0: exact boards and ranks; the noise is tested in tests/test_service_collusion.py
    s = start(db, "--daily-limit", "1000", "--min-group", "3", "--rate-per-minute", "100000", "--release-noise", "0")
    s.keys.update(keys)
    yield s
    s.stop()


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))


def test_chunked_body_is_cut_off_at_the_limit_while_streaming(svc):
    before = _rss_kb(svc.proc.pid)
    host, port = svc.base.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.putrequest("POST", "/api/submissions")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Authorization", f"Bearer {svc.keys['alice']}")  # without a key: 401 before any body is read
    conn.endheaders()
    chunk = b"x" * 2**20
    sent = 0
    try:
        for _ in range(200):  # up to 200 MiB: the server must answer long before
            conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sent += 1
    except (BrokenPipeError, ConnectionResetError):
        pass
    r = conn.getresponse()
    assert r.status == 413 and b"larger than" in r.read()
    assert sent < 200  # the server closed the connection: the rest was never read
    assert _rss_kb(svc.proc.pid) - before < 60_000  # far less than what was sent


def test_errors_have_one_shape(svc):
    for method, path, code in (("GET", "/no/such/route", 404), ("DELETE", "/api/sets", 405),
                               ("GET", "/api/submissions/abc", 422), ("GET", "/api/sets/x%00y/download", 400)):
        r = svc.call(method, path, "alice")
        assert r.status_code == code and set(r.json()) == {"error"}, (path, r.status_code, r.text)
    r = svc.call("POST", "/api/submissions", "alice", data=b"\xff\xfe", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and set(r.json()) == {"error"}


def test_security_headers(svc):
    for path in ("/", "/api/leaderboard", "/api/sets"):
        h = svc.call("GET", path).headers
        assert "frame-ancestors 'none'" in h["Content-Security-Policy"] and "script-src 'self'" in h["Content-Security-Policy"]
        assert h["X-Content-Type-Options"] == "nosniff" and h["X-Frame-Options"] == "DENY"
    page = svc.call("GET", "/").text
    assert "<script>" not in page and "<style>" not in page  # nothing inline: the CSP forbids it
    assert svc.call("GET", "/static/board.js").status_code == 200


def test_quota_is_checked_before_scoring_and_incomplete_costs_nothing(tmp_path):
    db = f"sqlite:///{tmp_path}/q.sqlite"
    keys = prepare(db)
    s = start(db, "--daily-limit", "1", "--rate-per-minute", "1000")
    try:
        h = {"Authorization": f"Bearer {keys['alice']}"}
        for _ in range(3):  # incomplete: refused, free
            r = requests.post(s.base + "/api/submissions", headers=h, timeout=30,
                              json={"set": "lao-1", "answers": dict(list(ALL_RIGHT.items())[:3])})
            assert r.status_code == 400
        assert requests.post(s.base + "/api/submissions", headers=h, timeout=30,
                             json={"set": "lao-1", "answers": ALL_RIGHT}).status_code == 200
        r = requests.post(s.base + "/api/submissions", headers=h, timeout=30, json={"set": "lao-1", "answers": ALL_RIGHT})
        assert r.status_code == 429 and set(r.json()) == {"error"}
    finally:
        s.stop()


def test_public_routes_are_rate_limited(tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    prepare(db)
    s = start(db, "--rate-per-minute", "5")
    try:
        codes = [requests.get(s.base + "/api/leaderboard", timeout=10).status_code for _ in range(6)]
        assert codes == [200] * 5 + [429]
        assert requests.get(s.base + "/api/sets", timeout=10).status_code == 429
    finally:
        s.stop()


@pytest.fixture
def redis_url():
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server is not installed (.ci/run installs it)")
    port = free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import redis

    client = redis.Redis(host="127.0.0.1", port=port)
    for _ in range(400):  # up to 20 s on a busy machine
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    else:
        proc.terminate()
        pytest.fail("redis-server did not answer within 20 s")
    yield f"redis://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(10)


def test_rate_limit_is_shared_across_processes_through_redis(tmp_path, redis_url):
    db = f"sqlite:///{tmp_path}/redis.sqlite"
    keys = prepare(db)
    a = start(db, "--rate-per-minute", "4", "--rate-storage", redis_url)
    b = start(db, "--rate-per-minute", "4", "--rate-storage", redis_url)
    try:
        h = {"Authorization": f"Bearer {keys['bob']}"}
        codes = [requests.get((a, b)[i % 2].base + "/api/submissions/999", headers=h, timeout=10).status_code
                 for i in range(5)]
        assert codes == [404] * 4 + [429]
    finally:
        a.stop()
        b.stop()


def test_set_window_changes_only_what_is_given_and_offsets_are_converted(tmp_path):
    from datetime import datetime, timedelta, timezone

    from typer.testing import CliRunner

    from glotbench.cli import app

    db = f"sqlite:///{tmp_path}/w.sqlite"
    keys = prepare(db)
    soon = datetime.now(timezone(timedelta(hours=7))) + timedelta(hours=2)  # in 2 hours, written in UTC+7
    cli = CliRunner()
    r = cli.invoke(app, ["service", "set-window", "lao-1", "--release-date", soon.replace(tzinfo=None).isoformat() + "+07:00", "--db", db])
    assert r.exit_code == 0, r.output
    r = cli.invoke(app, ["service", "set-window", "lao-1", "--blind-until", "2099-01-01", "--db", db])
    assert r.exit_code == 0, r.output
    s = start(db, "--rate-per-minute", "1000", "--daily-limit", "100", "--min-group", "3")
    s.keys.update(keys)
    try:
        sets = {x["name"]: x for x in s.call("GET", "/api/sets").json()}
        lao = sets["lao-1"]
        assert lao["status"] == "current", lao  # not released hours early
        assert datetime.fromisoformat(lao["release_date"]) == soon.replace(microsecond=soon.microsecond)
        assert lao["blind_until"].startswith("2099-01-01")  # the release date stayed
        sid = s.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "model": "m", "answers": ALL_RIGHT}).json()["id"]
        assert s.call("POST", f"/api/submissions/{sid}/publish", "alice", json={}).status_code == 200
        table = next(t for t in s.call("GET", "/api/leaderboard").json() if t["set"] == "lao-1")
        assert table["blind"] is True and table["rows"] == []  # blind: scores hidden
    finally:
        s.stop()


def test_one_leaderboard_row_per_model_and_key(svc):
    wrong = {i: "ABCD"[("ABCD".index(g) + 1) % 4] for i, g in ALL_RIGHT.items()}
    half = {i: (g if n % 2 else wrong[i]) for n, (i, g) in enumerate(ALL_RIGHT.items())}
    for key, answers in (("alice", wrong), ("alice", half), ("alice", ALL_RIGHT), ("bob", ALL_RIGHT)):
        r = svc.call("POST", "/api/submissions", key, json={"set": "lao-1", "model": "same-model", "answers": answers})
        assert r.status_code == 200 and r.json()["result"]["improved"], r.text
        assert svc.call("POST", f"/api/submissions/{r.json()['id']}/publish", key, json={}).status_code == 200
    table = next(t for t in svc.call("GET", "/api/leaderboard").json() if t["set"] == "lao-1")
    rows = [x for x in table["rows"] if x["model"] == "same-model"]
    assert len(rows) == 2 and [x["score"] for x in rows] == [100.0, 100.0], rows
    # A submission that did not raise its key's score has no score of its own to publish.
    r = svc.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "model": "worse", "answers": wrong})
    assert r.json()["result"]["improved"] is False and r.json()["result"]["score"] == 100.0
    assert svc.call("POST", f"/api/submissions/{r.json()['id']}/publish", "alice", json={}).status_code == 409


@pytest.mark.skipif(not os.environ.get("GLOTBENCH_TEST_PG_URL"), reason="no PostgreSQL server: set GLOTBENCH_TEST_PG_URL (.ci/run starts one)")
def test_postgresql_offsets_and_nul(tmp_path):
    from datetime import datetime, timedelta, timezone

    from sqlalchemy import create_engine, text

    from glotbench.service.core import Service, Settings

    url = os.environ["GLOTBENCH_TEST_PG_URL"]
    with create_engine(url, isolation_level="AUTOCOMMIT").connect() as c:
        c.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    keys = prepare(url)
    soon = datetime.now(timezone(timedelta(hours=-5))) + timedelta(hours=2)
    Service(Settings(db_url=url)).set_window("lao-1", release_date=soon)
    s = start(url, "--rate-per-minute", "1000")
    s.keys.update(keys)
    try:
        lao = next(x for x in s.call("GET", "/api/sets").json() if x["name"] == "lao-1")
        assert lao["status"] == "current" and datetime.fromisoformat(lao["release_date"]) == soon
        r = s.call("POST", "/api/submissions", "alice", data='{"set": "lao\\u0000-1", "answers": {}}',
                   headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and set(r.json()) == {"error"}
        assert s.call("GET", "/api/sets/a%00b/download").status_code == 400
    finally:
        s.stop()


def test_migration_from_the_first_schema_keeps_data_and_reads_times_as_utc(tmp_path):
    """A database made by revision 0001 (naive UTC times) upgrades in place; its times come back aware."""
    from datetime import timezone

    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine, text

    import glotbench.service.db as dbm
    from glotbench.service.core import Service, Settings

    url = f"sqlite:///{tmp_path}/old.sqlite"
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(dbm.__file__).parent / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url)
    command.upgrade(cfg, "0001")
    with create_engine(url).begin() as c:
        c.execute(text("INSERT INTO test_sets (name, benchmark, options, status, release_date, data_sha256, created) "
                       "VALUES ('old', 'laobench-mcq', '{}', 'current', '2099-01-01 12:00:00.000000', '', '2026-01-01 00:00:00.000000')"))
    svc = Service(Settings(db_url=url))  # migrates to the newest revision
    with svc.Session() as s:
        from glotbench.service.db import TestSet

        ts = s.query(TestSet).one()
        assert ts.release_date.tzinfo is not None and ts.release_date.utcoffset().total_seconds() == 0
        assert ts.release_date.astimezone(timezone.utc).hour == 12 and ts.endpoint_mode is True


@pytest.mark.parametrize("flags, fragment", [
    (["--rate-storage", "bogus://x"], "--rate-storage"),
    (["--ladder-step", "-1"], "--ladder-step"),
    (["--release-noise", "-1"], "--release-noise"),
    (["--endpoint-per-key", "0"], "must be positive"),
])
def test_serve_refuses_bad_settings_with_one_line(tmp_path, flags, fragment):
    from typer.testing import CliRunner

    from glotbench.cli import app

    r = CliRunner().invoke(app, ["serve", "--db", f"sqlite:///{tmp_path}/s.sqlite", *flags])
    assert r.exit_code == 2 and fragment in r.output and "Traceback" not in r.output, r.output


def test_fixed_ladder_step(tmp_path):
    """--ladder-step 5: released scores are multiples of 5 within one step of the score (rounded with
    the key's secret offset), move only on a gain over the key's best of more than 5 points plus the
    key's secret margin (under 2 more steps: released at a gain of 15 points, never at 5 or less), and
    cells too small for the step to hide one item (fewer than 100/5 = 20) are not released."""
    db = f"sqlite:///{tmp_path}/step.sqlite"
    keys = prepare(db)
    s = start(db, "--ladder-step", "5", "--min-group", "3", "--daily-limit", "100", "--rate-per-minute", "1000",
              "--release-noise", "0")  # the step and the decision; the noise is tested in test_service_collusion.py
    s.keys.update(keys)

    def right_first(n):
        return {i: (g if k < n else "ABCD"[("ABCD".index(g) + 1) % 4]) for k, (i, g) in enumerate(ALL_RIGHT.items())}
    try:
        out = []
        for n in (10, 11, 14, 15, 25):  # 40%, 44%, 56%, 60%, 100%: gains over the best (not the released) value
            res = s.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "answers": right_first(n)}).json()["result"]
            out.append((res["score"], res["improved"]))
            assert res["subdomains"] == {} and res["ladder_step"] == 5.0 and res["score"] % 5 == 0
            assert ("note" in res) is (not res["improved"])  # the reply says the score is an earlier one
        assert [x[1] for x in out] == [True, False, True, False, True], out  # 4 <= 5; 16 > 15; 4 again; 40
        assert out[0][0] == 40.0 and out[4][0] == 100.0  # on the grid: no offset moves them
        assert out[1][0] == out[0][0] and out[3][0] == out[2][0] and abs(out[2][0] - 56) < 5, out
    finally:
        s.stop()
