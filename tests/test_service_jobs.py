"""Endpoint runs as persisted, leased jobs, over real HTTP: fair scheduling with a per-key cap and a
queue position, a time budget, kill -9 and SIGTERM with the quota returned, two server processes
sharing one queue."""

from __future__ import annotations

import os
import signal
import time

import pytest

from service_helpers import hostile, post_endpoint, prepare, start  # noqa: F401 - hostile is a fixture

FLAGS = ("--daily-limit", "100", "--rate-per-minute", "10000", "--allow-host", "127.0.0.1", "--min-group", "3")


post = post_endpoint


def status(s, key, sid):
    return s.call("GET", f"/api/submissions/{sid}", key).json()


def wait_status(s, key, sid, wanted, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        st = status(s, key, sid)
        if st["status"] in wanted:
            return st
        time.sleep(0.05)
    raise AssertionError(st)


def test_fair_scheduling_per_key_cap_queue_position_and_budget(tmp_path, hostile):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    s = start(db, *FLAGS, "--endpoint-workers", "2", "--endpoint-per-key", "1", "--endpoint-timeout", "20")
    s.keys.update(keys)
    try:
        hostile.control(delay=0.25)  # 25 items, 8 in flight: about a second per run
        a = [post(s, "alice", hostile.url) for _ in range(3)]
        assert all(isinstance(x["queue_position"], int) and x["queue_position"] >= 1 for x in a[1:])
        b = post(s, "bob", hostile.url)
        wait_status(s, "alice", a[0]["id"], ("running", "done"))
        # alice's later runs wait for her first (cap 1); bob's takes the second worker at once.
        st_b = wait_status(s, "bob", b["id"], ("running", "done"), timeout=5)
        assert status(s, "alice", a[2]["id"])["status"] == "queued", st_b
        assert status(s, "alice", a[2]["id"])["queue_position"] >= 1
        done = {x["id"]: s.wait(x["id"], "alice", timeout=60)["status"] for x in a}
        assert set(done.values()) == {"done"} and s.wait(b["id"], "bob")["status"] == "done"
    finally:
        s.stop()
    s = start(db, *FLAGS, "--endpoint-timeout", "1")
    s.keys.update(keys)
    try:
        hostile.control(delay=3)
        st = s.wait(post(s, "alice", hostile.url)["id"], "alice", timeout=30)
        assert st["status"] == "failed" and "time budget" in st["error"], st
    finally:
        s.stop()


@pytest.mark.parametrize("how", ["kill", "term"])
def test_runs_survive_a_restart_and_lost_keys_return_their_quota(tmp_path, hostile, how):
    """Killed or stopped once both runs' prompts had left: neither is run again (a second run would
    show the set again for one charge): both failed and charged. A run stopped before its first
    prompt left is run again from the start (tests/test_service_exposure.py)."""
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    flags = (*FLAGS, "--lease-seconds", "1.5", "--endpoint-per-key", "5")
    s = start(db, *flags)
    s.keys.update(keys)
    hostile.control(delay=0.5)
    plain = post(s, "alice", hostile.url)["id"]
    keyed = post(s, "alice", hostile.url, api_key="sk-run-only")["id"]

    def chats(auth):
        return [x for x in hostile.seen() if x["path"].endswith("/chat/completions") and x["authorization"] == auth]

    end = time.monotonic() + 30
    while not (chats(None) and chats("Bearer sk-run-only")) and time.monotonic() < end:
        time.sleep(0.05)
    if how == "kill":
        s.proc.send_signal(signal.SIGKILL)
    else:
        s.proc.send_signal(signal.SIGTERM)
    s.proc.wait(30)
    if how == "term":  # handed back at once: failed, its prompts having left
        from sqlalchemy import create_engine, text

        with create_engine(db).connect() as c:
            rows = dict(c.execute(text("SELECT id, status FROM submissions")).all())
        assert rows[plain] == "failed" and rows[keyed] == "failed", rows
    hostile.control()
    s2 = start(db, *flags)
    s2.keys.update(keys)
    try:
        for sid in (plain, keyed):
            st = s2.wait(sid, "alice", timeout=60)
            assert st["status"] == "failed" and st["counts_against_limit"] is True and st["prompts_sent"], st
        assert "interrupted" in s2.wait(plain, "alice")["error"]
        assert len(chats(None)) <= 25 and len(chats("Bearer sk-run-only")) <= 25  # each shown once at most
    finally:
        s2.stop()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_processes_share_one_queue(tmp_path, hostile, backend):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    if backend == "postgresql":
        db = os.environ.get("GLOTBENCH_TEST_PG_URL", "")
        if not db:
            pytest.skip("no PostgreSQL server: set GLOTBENCH_TEST_PG_URL (.ci/run starts one)")
        from sqlalchemy import create_engine, text

        with create_engine(db, isolation_level="AUTOCOMMIT").connect() as c:
            c.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    keys = prepare(db)
    flags = (*FLAGS, "--endpoint-per-key", "10", "--endpoint-workers", "2")
    a = start(db, *flags)
    b = start(db, *flags)
    a.keys.update(keys)
    b.keys.update(keys)
    try:
        hostile.control(delay=0.1)
        sids = [post(a if i % 2 else b, "alice", hostile.url)["id"] for i in range(6)]
        assert {a.wait(sid, "alice", timeout=90)["status"] for sid in sids} == {"done"}
        chats = [x for x in hostile.seen() if x["path"].endswith("/chat/completions")]
        assert len(chats) == 6 * 25  # each run exactly once
    finally:
        a.stop()
        b.stop()
