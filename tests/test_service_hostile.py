"""The scoring service against a hostile submitter, over real HTTP on loopback (issue 22): an endpoint
whose reply no writer could encode, runs killed after their prompts left, bodies sent to burn CPU
before the key is checked, revoked keys with queued runs, endpoints that never answer, probes for
which item ids exist, malformed redirects, oversized bodies written whole before reading, and a
forged X-Forwarded-For. Also: `serve` says where it listens, /docs needs no CDN, `load-set` counts
and refuses rows it cannot use."""

from __future__ import annotations

import http.client
import signal
import time

import pytest
import requests
from sqlalchemy import create_engine, text

from glotbench.benchmarks.laobench import LaoBenchMCQ
from glotbench.service.core import Service, Settings
from service_helpers import hostile, post_endpoint, prepare, start, start_hostile  # noqa: F401 - a fixture

LAO = LaoBenchMCQ().load()
ALL_RIGHT = {it.id: it.gold["answer"] for it in LAO}
OPEN = ("--allow-host", "127.0.0.1", "--rate-per-minute", "100000", "--min-group", "3")


def _endpoint(s, key, url, **extra) -> int:
    return post_endpoint(s, key, url, **extra)["id"]


def _rows(db: str) -> dict[int, dict]:
    with create_engine(db).connect() as c:
        return {r.id: dict(r._mapping) for r in c.execute(text(
            "SELECT id, status, error, charged, prompts_sent_at FROM submissions"))}


def _chats(h) -> list[dict]:
    return [x for x in h.seen() if x["path"].endswith("/chat/completions")]


def _until(check, timeout: float = 30.0, every: float = 0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        time.sleep(every)
    raise AssertionError(f"not within {timeout} s")


# -- 1. a run that showed the set is charged, whatever happens after -------------------------------

def test_a_reply_no_writer_can_encode_buys_no_free_runs(tmp_path, hostile):
    """The issue's attack: every reply carries a lone surrogate. Each run completes and is charged;
    with a daily limit of 2 the third is refused, and the endpoint saw the set twice, not five times."""
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    s = start(db, *OPEN, "--daily-limit", "2")
    s.keys.update(keys)
    try:
        hostile.control(reply="\ud800 Answer: A")
        for _ in range(2):
            st = s.wait(_endpoint(s, "alice", hostile.url), "alice")
            assert st["status"] == "done" and st["counts_against_limit"] is True and st["prompts_sent"], st
        r = s.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "model": "m", "endpoint": hostile.url})
        assert r.status_code == 429, r.text
        assert len(_chats(hostile)) == 2 * 25
    finally:
        s.stop()


def test_a_killed_run_is_charged_once_its_first_prompt_left(tmp_path, hostile):
    """kill -9 while one keyed run waits on its endpoint and another is still queued: both lose their
    in-memory key; the one whose prompts had left is charged, the queued one is refunded."""
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    flags = (*OPEN, "--daily-limit", "10", "--lease-seconds", "1.5", "--endpoint-workers", "1",
             "--endpoint-per-key", "5")
    s = start(db, *flags)
    s.keys.update(keys)
    hostile.control(stall_after=0)  # the pre-flight answers, chat requests never do
    shown = _endpoint(s, "alice", hostile.url, api_key="sk-one")
    queued = _endpoint(s, "alice", hostile.url, api_key="sk-two")
    _until(lambda: _chats(hostile))
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait(30)
    s2 = start(db, *flags)
    s2.keys.update(keys)
    try:
        a, b = s2.wait(shown, "alice"), s2.wait(queued, "alice")
        assert a["status"] == "failed" and a["counts_against_limit"] is True and "counts against" in a["error"], a
        assert b["status"] == "failed" and b["counts_against_limit"] is False and not b["prompts_sent"], b
        assert {x["authorization"] for x in _chats(hostile)} == {"Bearer sk-one"}
    finally:
        s2.stop()


# -- 2. nothing is read before the key and the rate limit are checked; limits from the sets -------

def _partial_post(base: str, key: str | None, declared: int = 5 * 2**20) -> int:
    """Declare a large body, send 1 KiB of it, and wait for an answer (which must not need the rest)."""
    host, port = base.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.putrequest("POST", "/api/submissions")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(declared))
    if key:
        conn.putheader("Authorization", f"Bearer {key}")
    conn.endheaders()
    conn.send(b"{" + b" " * 1023)
    try:
        return conn.getresponse().status
    finally:
        conn.close()


def test_keys_and_rate_limits_are_checked_before_the_body_is_read(tmp_path):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    s = start(db, "--rate-per-minute", "4")
    try:
        assert _partial_post(s.base, None) == 401
        assert _partial_post(s.base, "gb_wrong") == 401
        assert _partial_post(s.base, keys["alice"]) == 413  # declared larger than any open set needs
        codes = [_partial_post(s.base, "gb_wrong") for _ in range(3)]
        assert codes[-1] == 429, codes  # the address's window is full: refused before the body too
    finally:
        s.stop()


def test_body_limit_is_what_the_open_sets_need_and_clients_see_the_413(tmp_path):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    s = start(db, *OPEN, "--daily-limit", "100")
    s.keys.update(keys)
    try:
        svc = Service(Settings(db_url=db))
        members, limit = svc.body_limits()
        assert members == 164 and 64 * 2**10 <= limit < 2**20, (members, limit)  # vi-1: 164 items, free text
        # requests writes its whole body before reading: it must get the 413, not a reset connection.
        big = {"set": "lao-1", "answers": {f"x{i:07d}": "A" * 40 for i in range(120_000)}}  # ~7 MiB
        r = s.call("POST", "/api/submissions", "alice", json=big)
        assert r.status_code == 413 and f"larger than {limit} bytes" in r.json()["error"], r.text[:200]
        # Within the byte limit but more answers than any open set has items: refused at the parse.
        many = {"set": "lao-1", "answers": {f"x{i}": "A" for i in range(3000)}}
        r = s.call("POST", "/api/submissions", "alice", json=many)
        assert r.status_code == 400 and "members" in r.json()["error"], r.text
        deep = '{"set": "lao-1", "answers": ' + "[" * 30_000 + "]" * 30_000 + "}"
        r = s.call("POST", "/api/submissions", "alice", data=deep, headers={"Content-Type": "application/json"})
        assert r.status_code == 422 and set(r.json()) == {"error"}, r.text[:200]
        assert s.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "answers": ALL_RIGHT}).status_code == 200
    finally:
        s.stop()


# -- 5. revocation ----------------------------------------------------------------------------------

def test_revoking_a_key_fails_its_queued_runs_and_stops_its_running_one(tmp_path, hostile):
    slow, other = hostile, start_hostile("127.0.0.1")
    db = f"sqlite:///{tmp_path}/db.sqlite"
    prepare(db)
    svc = Service(Settings(db_url=db))
    kid, key = svc.create_key("carol")
    s = start(db, *OPEN, "--daily-limit", "10", "--lease-seconds", "1.5", "--endpoint-per-key", "1")
    try:
        slow.control(stall_after=0)
        other.control()
        running = _endpoint(s, key, slow.url)
        _until(lambda: _chats(slow))
        queued = _endpoint(s, key, other.url)  # waits: one run per key
        assert _rows(db)[queued]["status"] == "queued"
        assert svc.revoke_key(kid) == 1
        assert _rows(db)[queued]["status"] == "failed" and "revoked" in _rows(db)[queued]["error"]
        st = _until(lambda: (_rows(db)[running]["status"] == "failed") and _rows(db)[running], timeout=15)
        assert "revoked" in st["error"], st
        time.sleep(2)
        assert _chats(other) == []  # the queued run never started
        assert s.call("GET", f"/api/submissions/{running}", key).status_code == 401
    finally:
        other.stop()
        s.stop()


# -- 6. stalls, budgets and fair workers --------------------------------------------------------------

def test_an_endpoint_that_never_answers_is_stopped_and_charged(tmp_path, hostile):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    s = start(db, *OPEN, "--daily-limit", "10", "--endpoint-stall", "2")
    s.keys.update(keys)
    try:
        hostile.control(stall_after=0)  # the pre-flight answers; no chat request ever does
        t0 = time.monotonic()
        st = s.wait(_endpoint(s, "alice", hostile.url), "alice", timeout=60)
        assert st["status"] == "failed" and "no reply for 2 s" in st["error"], st
        assert st["counts_against_limit"] is True and time.monotonic() - t0 < 20
    finally:
        s.stop()
    assert Settings().endpoint_timeout_s == 300 and Settings().endpoint_stall_s == 60  # the defaults, documented


def test_one_organisation_cannot_hold_every_worker(tmp_path, hostile):
    """Four keys of one organisation point at endpoints that never answer; another organisation's run
    still gets a worker at once (at most --endpoint-per-org runs of one organisation, default 2)."""
    good = start_hostile("127.0.0.1")
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    svc = Service(Settings(db_url=db))
    svc.create_org("many-keys-lab")
    lab = [svc.create_key(f"lab-{i}", "many-keys-lab")[1] for i in range(4)]
    s = start(db, *OPEN, "--daily-limit", "10", "--endpoint-workers", "4", "--endpoint-stall", "600",
              "--endpoint-timeout", "600")
    s.keys.update(keys)
    try:
        hostile.control(stall_after=0)
        good.control()
        stuck = [_endpoint(s, k, hostile.url) for k in lab]
        _until(lambda: sum(r["status"] == "running" for r in _rows(db).values()) == 2)
        st = s.wait(_endpoint(s, "bob", good.url), "bob", timeout=30)
        assert st["status"] == "done", st
        rows = _rows(db)
        assert sorted(rows[i]["status"] for i in stuck) == ["queued", "queued", "running", "running"]
    finally:
        good.stop()
        s.stop()


# -- 7. no free membership oracle ----------------------------------------------------------------------

def test_unknown_ids_and_incomplete_submissions_get_one_reply(tmp_path):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    s = start(db, "--daily-limit", "5", "--rate-per-minute", "1000")
    s.keys.update(keys)
    try:
        first = LAO[0].id
        rest = {i: a for i, a in ALL_RIGHT.items() if i != first}
        bodies = {
            "unknown id": {**rest, "sample-999": "A"},  # complete in count, one id not in the set
            "incomplete": rest,
            "one invalid answer": {**rest, first: "Z"},
            "one empty answer": {**rest, first: " "},
            "unknown and more": {**ALL_RIGHT, "sample-999": "A"},
        }
        replies = {what: s.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "answers": b})
                   for what, b in bodies.items()}
        assert {(r.status_code, r.content) for r in replies.values()} == {(400, replies["incomplete"].content)}, \
            {w: r.text for w, r in replies.items()}
        ok = s.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "answers": ALL_RIGHT})
        assert ok.status_code == 200  # refusals were free: the limit of 5 is untouched
        again = s.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "answers": ALL_RIGHT}).json()
        assert again["result"]["improved"] is False and "earlier released score" in again["result"]["note"]
    finally:
        s.stop()


# -- 8. malformed redirects, forged X-Forwarded-For -----------------------------------------------------

@pytest.mark.parametrize("location", ["http://x:99999/", "http://[::1/x", "http://[::1]:99999999/x"])
def test_a_malformed_redirect_is_a_bad_endpoint(tmp_path, hostile, location):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    s = start(db, *OPEN, "--daily-limit", "10")
    s.keys.update(keys)
    try:
        hostile.control(redirect=location, redirect_models_only=True)
        st = s.wait(_endpoint(s, "alice", hostile.url), "alice")
        assert st["status"] == "failed" and st["error"] == "refused: a redirect points to a malformed URL", st
    finally:
        s.stop()


def test_x_forwarded_for_is_believed_only_from_a_trusted_proxy(tmp_path):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    prepare(db)
    for flags, expected in ((("--rate-per-minute", "5"), [200] * 5 + [429]),
                            (("--rate-per-minute", "5", "--trusted-proxy", "127.0.0.1"), [200] * 6)):
        s = start(db, *flags)
        try:
            codes = [requests.get(s.base + "/api/sets", headers={"X-Forwarded-For": f"203.0.113.{i}"}, timeout=10).status_code
                     for i in range(6)]
            assert codes == expected, (flags, codes)
        finally:
            s.stop()


# -- issue 21's quiet outcomes ----------------------------------------------------------------------

def test_serve_prints_its_url_and_the_api_description_needs_no_cdn(tmp_path):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    prepare(db)
    s = start(db)
    try:
        t0 = time.monotonic()  # the line is printed once the server listens, before /healthz answered
        while "\n" not in s.output() and time.monotonic() - t0 < 10:
            time.sleep(0.05)
        line = s.output().split("\n", 1)[0]
        assert f"listening on {s.base}" in line, line
        assert requests.get(s.base + "/docs", timeout=10).status_code == 404
        spec = requests.get(s.base + "/openapi.json", timeout=10).json()
        body = spec["paths"]["/api/submissions"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert "answers" in body["properties"] and "endpoint" in body["properties"]
    finally:
        s.stop()


def test_load_set_says_what_it_loaded_and_refuses_rows_it_cannot_use(tmp_path, repo_root):
    from typer.testing import CliRunner

    from glotbench.cli import app

    db = f"sqlite:///{tmp_path}/db.sqlite"
    data = str(repo_root / "src/glotbench/benchmarks/data/laobench_sample.jsonl")
    cli = CliRunner()
    r = cli.invoke(app, ["service", "load-set", "mcq", "--benchmark", "laobench-mcq", "--data", data, "--db", db])
    assert r.exit_code == 2 and "8 of its 33 rows are not laobench-mcq items" in r.output, r.output
    r = cli.invoke(app, ["service", "load-set", "mcq", "--benchmark", "laobench-mcq", "--data", data, "--db", db,
                         "--allow-unused-rows"])
    assert r.exit_code == 0 and "25 laobench-mcq items" in r.output and "8 of the file's 33 rows were not loaded" in r.output
    r = cli.invoke(app, ["service", "load-set", "tr", "--benchmark", "laobench-translation", "--data", data, "--db", db,
                         "--allow-unused-rows"])
    assert r.exit_code == 0 and "8 laobench-translation items" in r.output, r.output
    with create_engine(db).connect() as c:
        assert dict(c.execute(text("SELECT name, items FROM test_sets")).all()) == {"mcq": 25, "tr": 8}


def test_serve_refuses_a_limit_of_zero(tmp_path):
    from typer.testing import CliRunner

    from glotbench.cli import app

    for flag in ("--org-daily-limit", "--endpoint-per-org", "--max-connections-per-ip", "--endpoint-stall",
                 "--header-timeout"):
        r = CliRunner().invoke(app, ["serve", "--db", f"sqlite:///{tmp_path}/s.sqlite", flag, "0"])
        assert r.exit_code == 2 and "must be positive" in r.output, (flag, r.output)


# -- 3. organisations: a migration for existing keys, a shared limit, a cap on keys (both databases) ----

@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_keys_of_one_organisation_share_its_limit_and_old_keys_become_organisations(tmp_path, backend):
    import os
    from pathlib import Path

    from alembic import command
    from alembic.config import Config

    import glotbench.service.db as dbm
    from glotbench.errors import GlotbenchError
    from glotbench.service.keys import hash_key

    url = f"sqlite:///{tmp_path}/db.sqlite"
    if backend == "postgresql":
        url = os.environ.get("GLOTBENCH_TEST_PG_URL", "")
        if not url:
            pytest.skip("no PostgreSQL server: set GLOTBENCH_TEST_PG_URL (.ci/run starts one)")
        with create_engine(url, isolation_level="AUTOCOMMIT").connect() as c:
            c.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(dbm.__file__).parent / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    command.upgrade(cfg, "0002")
    with create_engine(url).begin() as c:  # two keys made before organisations existed
        for name in ("old-a", "old-b"):
            c.execute(text("INSERT INTO api_keys (name, key_hash, created, revoked) VALUES (:n, :h, :t, :r)"),
                      {"n": name, "h": hash_key(f"gb_{name}"), "t": "2026-01-01 00:00:00", "r": False})
    svc = Service(Settings(db_url=url))  # upgrades to the newest revision
    with create_engine(url).connect() as c:
        rows = c.execute(text("SELECT k.name, k.org_id, k.grid_secret, o.name AS org FROM api_keys k "
                              "JOIN organisations o ON o.id = k.org_id ORDER BY k.id")).all()
    assert [(r.name, r.org) for r in rows] == [("old-a", "key-1: old-a"), ("old-b", "key-2: old-b")]
    assert len({r.org_id for r in rows}) == 2 and all(len(r.grid_secret) == 64 for r in rows)
    svc.create_org("lab", daily_limit=2, max_keys=2)
    lab = [svc.create_key(f"lab-{i}", "lab")[1] for i in range(2)]
    with pytest.raises(GlotbenchError, match="holds 2 key"):
        svc.create_key("lab-2", "lab")
    svc.load_set("lao-1", "laobench-mcq", None)
    svc.rotate("lao-1")
    s = start(url, "--daily-limit", "5", "--rate-per-minute", "1000")
    try:
        codes = [s.call("POST", "/api/submissions", k, json={"set": "lao-1", "answers": ALL_RIGHT}).status_code
                 for k in (lab[0], lab[1], lab[1], "gb_old-a")]
        assert codes == [200, 200, 429, 200], codes  # the lab's 2 per day over both keys; old-a is its own
        r = s.call("POST", "/api/submissions", lab[0], json={"set": "lao-1", "answers": ALL_RIGHT})
        assert r.status_code == 429 and "organisation" in r.json()["error"]
    finally:
        s.stop()
