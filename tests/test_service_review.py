"""The scoring service against a hostile submitter, over real HTTP on loopback (the review of issue 22):
a body whose number no parser holds, a set that no endpoint can run, and clients spread over one
IPv6 prefix. Each case failed on the code before its fix."""

from __future__ import annotations

import pytest
import requests
from sqlalchemy import create_engine, text

from glotbench.service.core import Service, Settings
from service_helpers import hostile, prepare, start  # noqa: F401 - a fixture


def _count(db: str, table: str) -> int:
    with create_engine(db).connect() as c:
        return c.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()


@pytest.mark.parametrize("body", [
    b'{"set": "lao-1", "answers": {"sample-001": ' + b"1" * 5000 + b"}}",  # an integer past 4,300 digits
    b"9" * 60_000,
    b'{"set": "lao-1", "model": -' + b"7" * 4301 + b"}",
], ids=["in-answers", "whole-body", "negative"])
def test_a_number_too_long_to_read_is_a_422_not_an_internal_error(tmp_path, body):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    s = start(db, "--rate-per-minute", "1000")
    s.keys.update(keys)
    try:
        r = s.call("POST", "/api/submissions", "alice", data=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 422 and r.json() == {"error": "invalid request: the body holds a number too long "
                                                              "to read"}, r.text[:300]
        assert _count(db, "submissions") == 0
    finally:
        s.stop()


def test_a_set_no_endpoint_can_run_is_refused_at_submission_and_costs_nothing(tmp_path, hostile):
    """A set scored by log-likelihood needs a local model: an endpoint run of it can never send a
    prompt. It is refused when submitted (the endpoint never called, nothing stored or charged), not
    failed later as a charged run."""
    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    svc = Service(Settings(db_url=db))
    svc.load_set("ll", "laobench-mcq", None, options={"method": "loglik"})
    svc.rotate("ll")
    s = start(db, "--allow-host", "127.0.0.1", "--rate-per-minute", "1000", "--daily-limit", "1")
    s.keys.update(keys)
    try:
        r = s.call("POST", "/api/submissions", "alice", json={"set": "ll", "model": "m", "endpoint": hostile.url})
        assert r.status_code == 403 and "log-likelihood" in r.json()["error"] and "submit answers" in r.json()["error"], r.text
        assert hostile.seen() == [] and _count(db, "submissions") == 0
        r = s.call("POST", "/api/submissions", "alice", json={"set": "vi-1", "model": "m", "endpoint": hostile.url})
        assert r.status_code == 202, r.text  # the daily limit of 1 is untouched
    finally:
        s.stop()


def test_ipv6_clients_of_one_prefix_share_a_rate_limit(tmp_path):
    """An IPv6 client holds a whole /64 (often a /56): counted per address, each of its 2^64
    addresses would get its own window (and its own connection cap). Addresses are counted per /64;
    IPv4 addresses one by one. Through a trusted proxy, whose X-Forwarded-For names the client."""
    db = f"sqlite:///{tmp_path}/db.sqlite"
    prepare(db)
    s = start(db, "--rate-per-minute", "5", "--trusted-proxy", "127.0.0.1")
    try:
        def get(client: str) -> int:
            return requests.get(s.base + "/api/sets", headers={"X-Forwarded-For": client}, timeout=10).status_code

        codes = [get(f"2001:db8:1:2::{i:x}") for i in range(1, 7)]
        assert codes == [200] * 5 + [429], codes  # six addresses of one /64: one window
        assert get("2001:db8:1:3::1") == 200  # the next /64 has its own
        assert [get(f"198.51.100.{i}") for i in range(1, 7)] == [200] * 6  # IPv4: one window per address
    finally:
        s.stop()


def _cpu_s(pid: int) -> float:
    import os

    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def released_10k(tmp_path):
    """A server with a released 10,000-item set (2.8 MB to download) and a current one."""
    from service_helpers import make_mcq_set

    gold = make_mcq_set(tmp_path / "big.jsonl", 10_000, seed=1)
    db = f"sqlite:///{tmp_path}/db.sqlite"
    svc = Service(Settings(db_url=db))
    svc.load_set("old", "laobench-mcq", str(tmp_path / "big.jsonl"))
    svc.rotate("old")
    svc.load_set("new", "laobench-mcq", None)
    svc.rotate("new")  # old is released
    return db, gold


def test_a_released_download_is_served_without_rebuilding_it(released_10k):
    """Anyone may download a released set, so what it costs is unauthenticated CPU: it was built
    from the database and serialised on every request (278 ms of CPU for 10,000 items, so one
    address within its rate limit kept a quarter of a core busy). A released set never changes: its
    body is made once per process."""
    db, gold = released_10k
    s = start(db, "--rate-per-minute", "1000")
    try:
        first = requests.get(s.base + "/api/sets/old/download", timeout=60)
        assert first.status_code == 200 and first.headers["content-type"].startswith("application/json")
        data = first.json()
        assert len(data["items"]) == 10_000 and {i["id"]: i["gold"]["answer"] for i in data["items"]} == gold
        t0 = _cpu_s(s.proc.pid)
        for _ in range(10):
            r = requests.get(s.base + "/api/sets/old/download", timeout=60)
            assert r.content == first.content
        per_request = (_cpu_s(s.proc.pid) - t0) / 10
        assert per_request < 0.05, per_request
        assert requests.get(s.base + "/api/sets/new/download", timeout=10).status_code == 404  # still private
    finally:
        s.stop()


def test_a_client_that_never_reads_its_reply_is_closed(tmp_path):
    """A slow reader: a request for a large reply whose client never reads it held its connection,
    with the reply in memory, for ever (no timeout applies once a request is complete). A reply
    whose client makes no progress reading it for --send-timeout seconds is dropped with a reset.
    The reply (6.6 MB) is larger than the 4 MB a kernel's send buffer may take, so the server's own
    buffer stays full. Deterministic: the test waits for the reset itself (polled, up to 120 s;
    it comes 2-3 s after the buffer fills), never for a fixed time (a sleep of 8 s failed 4 of 7
    whole-suite runs on a loaded 2-core machine)."""
    import socket

    from service_helpers import released_big_set, reset_by_peer

    s = start(released_big_set(tmp_path), "--rate-per-minute", "1000", "--send-timeout", "2")
    host, port = s.base.split("//")[1].split(":")
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.connect((host, int(port)))
    try:
        c.sendall(b"GET /api/sets/old/download HTTP/1.1\r\nHost: x\r\n\r\n")
        assert reset_by_peer(c, 120)  # never reads: the reply fills the buffers, stalls, and is dropped
        with pytest.raises(ConnectionResetError):
            while c.recv(1 << 20):  # what had arrived, then the reset: the rest of the reply never comes
                pass
        assert requests.get(s.base + "/healthz", timeout=30).status_code == 200
    finally:
        c.close()
        s.stop()


def test_publish_checks_the_key_before_reading_its_body(tmp_path):
    """Without a key, a publish request is refused as soon as its headers are in: its body (declared,
    never sent) is not waited for. (FastAPI read the body before the key's dependency, so a client
    dribbling it held a request in flight until the body timeout — unauthenticated.)"""
    import http.client

    db = f"sqlite:///{tmp_path}/db.sqlite"
    keys = prepare(db)
    s = start(db, "--rate-per-minute", "1000")
    host, port = s.base.split("//")[1].split(":")
    try:
        for key in (None, "gb_wrong"):
            conn = http.client.HTTPConnection(host, int(port), timeout=5)
            conn.putrequest("POST", "/api/submissions/1/publish")
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Content-Length", "100")
            if key:
                conn.putheader("Authorization", f"Bearer {key}")
            conn.endheaders()
            conn.send(b"{")
            assert conn.getresponse().status == 401
            conn.close()
        r = requests.post(s.base + "/api/submissions/1/publish", json={"public": "yes please"},
                          headers={"Authorization": f"Bearer {keys['alice']}"}, timeout=10)
        assert r.status_code == 422 and set(r.json()) == {"error"}, r.text
        r = requests.post(s.base + "/api/submissions/1/publish", json={"public": True},
                          headers={"Authorization": f"Bearer {keys['alice']}"}, timeout=10)
        assert r.status_code == 404, r.text  # the body read and validated once the key is known
    finally:
        s.stop()
