"""Slowloris against `glotbench serve` over loopback: 300 connections that dribble their headers, from
one address, against a server held to 256 file descriptors. /healthz (from another address) keeps
answering; the dribblers beyond the per-address cap are closed at once and the others when the
header timeout expires; a kept-alive connection that dribbles its next request is closed too."""

from __future__ import annotations

import resource
import socket
import time

import requests

from service_helpers import prepare, start

ATTACKER = "127.0.0.3"


def _fds_256() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def _open(sock: socket.socket) -> bool:
    """Whether the server still holds this connection: reads what has arrived (a reply's last bytes)
    until it would block (open) or sees the end or a reset (closed)."""
    sock.setblocking(False)
    try:
        while sock.recv(65536):
            pass
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def _until(check, timeout: float) -> float:
    t0 = time.monotonic()
    while not check() and time.monotonic() - t0 < timeout:
        time.sleep(0.1)
    return time.monotonic() - t0


def test_dribbled_headers_do_not_take_the_server_down(tmp_path):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    prepare(db)
    s = start(db, "--header-timeout", "8", "--max-connections-per-ip", "16", preexec_fn=_fds_256)
    host, port = s.base.split("//")[1].split(":")
    socks = []
    try:
        t0 = time.monotonic()
        for _ in range(300):
            c = socket.socket()
            c.bind((ATTACKER, 0))
            c.connect((host, int(port)))
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            socks.append(c)
        _until(lambda: sum(_open(c) for c in socks) <= 16, 6)
        held = sum(_open(c) for c in socks)
        assert held <= 16 and time.monotonic() - t0 < 8, held  # the cap, before any header timeout
        health, t_end = [], t0 + 14
        while time.monotonic() < t_end:
            for c in socks:  # one more header byte on each connection still open
                try:
                    c.send(b"X")
                except OSError:
                    pass
            health.append(requests.get(s.base + "/healthz", timeout=3).status_code)
            time.sleep(0.5)
        assert health and set(health) == {200}, health
        assert sum(_open(c) for c in socks) == 0  # the header timeout (8 s) closed the ones held
    finally:
        for c in socks:
            c.close()
        s.stop()


def test_a_kept_alive_connection_that_dribbles_its_next_request_is_closed(tmp_path):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    prepare(db)
    s = start(db, "--header-timeout", "1")
    host, port = s.base.split("//")[1].split(":")
    c = socket.create_connection((host, int(port)))
    try:
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert c.recv(65536).startswith(b"HTTP/1.1 200")
        c.sendall(b"GET /healthz HTTP/1.1\r\n")  # the next request, whose headers never end
        t0 = time.monotonic()
        while _open(c) and time.monotonic() - t0 < 10:
            try:
                c.send(b"X")
            except OSError:
                break
            time.sleep(0.2)
        assert not _open(c) and time.monotonic() - t0 < 5
    finally:
        c.close()
        s.stop()


def test_dribblers_from_many_addresses_do_not_take_the_server_down(tmp_path):
    """300 connections dribbling headers from 300 addresses (no per-address cap applies) against 256
    file descriptors: without a bound on connections the descriptors run out, the accept loop stops
    and /healthz waits in the listen queue. With one, a new connection at the bound closes the oldest
    one that has no request in flight (a dribbler; a request being answered is never cut), so
    /healthz keeps answering and the server holds at most its bound."""
    db = f"sqlite:///{tmp_path}/db.sqlite"
    prepare(db)
    s = start(db, "--header-timeout", "30", preexec_fn=_fds_256)
    host, port = s.base.split("//")[1].split(":")
    socks = []
    try:
        for i in range(300):
            c = socket.socket()
            c.bind((f"127.0.{1 + i // 200}.{1 + i % 200}", 0))
            c.connect((host, int(port)))
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            socks.append(c)
        time.sleep(1)
        health, t_end = [], time.monotonic() + 8
        while time.monotonic() < t_end:
            for c in socks:
                try:
                    c.send(b"X")
                except OSError:
                    pass
            try:
                health.append(requests.get(s.base + "/healthz", timeout=3).status_code)
            except requests.RequestException as e:
                health.append(type(e).__name__)
            time.sleep(0.3)
        assert health and set(health) == {200}, health
        held = sum(_open(c) for c in socks)
        assert held <= 256 - 64, held  # the bound: the descriptor limit less the margin kept for the rest
    finally:
        for c in socks:
            c.close()
        s.stop()
