"""HTTP framing of `glotbench serve`, attacked with raw sockets on loopback (issue 31): one framing
whatever is installed (with `uvicorn[standard]` present uvicorn would pick httptools, websockets and
uvloop, none of them guarded), heads counted as their bytes arrive, Content-Length with
Transfer-Encoding refused, a body left unread after a reply not read on for ever, and a slow reader
evicted only when it makes no progress. Each case failed on the code before it.

CI installs httptools, websockets and uvloop (the test extras), so every service test runs with them
importable; the two cases that need them say so and skip where they are missing."""

from __future__ import annotations

import contextlib
import importlib.util
import resource
import socket
import threading
import time

import pytest
import requests

from service_helpers import prepare, released_big_set, reset_by_peer, start

STANDARD = all(importlib.util.find_spec(m) is not None for m in ("httptools", "websockets"))
needs_standard = pytest.mark.skipif(not STANDARD, reason="httptools and websockets are not installed "
                                                         "(uvicorn[standard]; the test extras install them)")


def _addr(s) -> tuple[str, int]:
    host, port = s.base.split("//")[1].split(":")
    return host, int(port)


def _connect(s, source: str = "127.0.0.1") -> socket.socket:
    c = socket.socket()
    c.bind((source, 0))
    c.connect(_addr(s))
    return c


class Replies:
    """HTTP/1.1 replies read off a raw socket, one at a time (Content-Length framed, as the server's are)."""

    def __init__(self, c: socket.socket, timeout: float = 30.0):
        self.c, self.buf = c, b""
        c.settimeout(timeout)

    def _fill(self) -> None:
        try:
            d = self.c.recv(65536)
        except ConnectionResetError:
            d = b""
        if not d:
            raise EOFError
        self.buf += d

    def next(self) -> int | None:
        """The next reply's status; None when the server closed first."""
        try:
            while b"\r\n\r\n" not in self.buf:
                self._fill()
            head, self.buf = self.buf.split(b"\r\n\r\n", 1)
            status = int(head.split()[1])
            n = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")), None)
            if n is None:  # uvicorn's own 400: its body ends with the connection
                with contextlib.suppress(EOFError):
                    while True:
                        self._fill()
                self.buf = b""
                return status
            while len(self.buf) < n:
                self._fill()
            self.buf = self.buf[n:]
            return status
        except EOFError:
            return None

    def closed(self) -> bool:
        """Whether the server closes the connection (within the timeout) with nothing more sent."""
        try:
            self._fill()
        except EOFError:
            return not self.buf
        except socket.timeout:
            return False
        return False


def _statuses(c: socket.socket, timeout: float = 30.0) -> tuple[list[int], bool]:
    """Every reply's status until the server closes; whether it closed (within `timeout`)."""
    r = Replies(c, timeout)
    out = []
    try:
        while (st := r.next()) is not None:
            out.append(st)
    except socket.timeout:
        return out, False
    return out, True


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the cases that change nothing in its database."""
    db = f"sqlite:///{tmp_path_factory.mktemp('framing')}/db.sqlite"
    keys = prepare(db)
    s = start(db, "--rate-per-minute", "100000", "--header-timeout", "20")
    s.keys.update(keys)
    yield s
    s.stop()


# -- heads: the limit counted as the bytes arrive --------------------------------------------------

HEADS = {
    # 8,000 short fields in one read (was answered 200: h11's limit only held heads still incomplete)
    "8000-fields": b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(8000)) + b"\r\n",
    # 101 fields in 1.5 KiB: under the byte limit, over the field limit
    "101-fields": b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(100)) + b"\r\n",
    # one 1 MiB header line in one write
    "1MiB-line": b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 2**20 + b"\r\n\r\n",
}


@pytest.mark.parametrize("name", list(HEADS))
def test_a_head_over_the_limit_is_refused_however_it_arrives(server, name):
    c = _connect(server)
    try:
        threading.Thread(target=lambda: _send_quietly(c, HEADS[name]), daemon=True).start()
        statuses, closed = _statuses(c)
        assert statuses == [400] and closed, (statuses, closed)
    finally:
        c.close()
    assert requests.get(server.base + "/healthz", timeout=10).status_code == 200


def _send_quietly(c: socket.socket, data: bytes) -> None:
    try:
        c.sendall(data)
    except OSError:
        pass  # the server refused and closed before the rest was written


def test_a_dribbled_head_is_refused_at_the_limit_and_an_honest_one_is_served(server):
    c = _connect(server)
    try:
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        for i in range(17):  # 17 KiB of 1 KiB fields, one per write
            _send_quietly(c, b"X-Pad-%02d: " % i + b"a" * 1012 + b"\r\n")
            time.sleep(0.01)
        _send_quietly(c, b"\r\n")
        statuses, closed = _statuses(c)
        assert statuses == [400] and closed, (statuses, closed)
    finally:
        c.close()
    # 60 ordinary fields (a browser sends about 15, a proxy adds a few), two requests in one write:
    # both served, and the connection kept for a third
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-Fine-%d: ok\r\n" % i for i in range(60)) + b"\r\n"
    c = _connect(server)
    try:
        c.sendall(head + head)
        r = Replies(c)
        assert [r.next(), r.next()] == [200, 200]
        c.sendall(head)
        assert r.next() == 200
    finally:
        c.close()


# -- one framing per request -----------------------------------------------------------------------

@pytest.mark.parametrize("framing", [
    b"Content-Length: 44\r\nTransfer-Encoding: chunked\r\n",
    b"Transfer-Encoding: chunked\r\nContent-Length: 44\r\n",
    b"content-length: 44\r\ntransfer-encoding: CHUNKED\r\n",
], ids=["cl-te", "te-cl", "lower-case"])
def test_content_length_with_transfer_encoding_is_refused_and_the_connection_closed(server, framing):
    """A front end that frames by Content-Length sees one request; h11 framed by the chunks and
    answered the smuggled `GET /api/sets` hidden in the body as a second request."""
    smuggled = b"GET /api/sets HTTP/1.1\r\nHost: x\r\n\r\n"
    body = b"0\r\n\r\n" + smuggled
    c = _connect(server)
    try:
        c.sendall(b"POST /api/submissions/1/publish HTTP/1.1\r\nHost: x\r\n" + framing + b"\r\n" + body)
        statuses, closed = _statuses(c)
        assert statuses == [400] and closed, (statuses, closed)
    finally:
        c.close()


# -- a reply that leaves its request's body unread ends the connection -----------------------------

def test_a_body_after_a_401_is_not_read_on(server):
    """A wrong key gets its 401 straight after the headers; the body that follows was read and
    dropped, keeping the connection alive, for as long as it came (4-9 GB in 10 s on loopback).
    The reply is still readable, and the connection ends: at most linger_bytes (1 MiB) are read
    after the reply; what the client could write is that plus the kernel's buffers."""
    c = _connect(server)
    written = 0
    stop = threading.Event()

    def flood() -> None:
        nonlocal written
        chunk = b"a" * 2**16
        try:
            while not stop.is_set():
                written += c.send(chunk)
        except OSError:
            pass

    try:
        c.sendall(b"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer gb_wrong\r\n"
                  b"Content-Type: application/json\r\nContent-Length: 100000000000\r\n\r\n")
        t = threading.Thread(target=flood, daemon=True)
        t.start()
        statuses, closed = _statuses(c, timeout=20)
        stop.set()
        t.join(10)
        assert statuses == [401] and closed, (statuses, closed)
        assert written < 32 * 2**20, written  # the kernel buffers (a few MiB) and the 1 MiB linger
    finally:
        c.close()


def test_a_client_that_writes_its_body_first_still_reads_its_401_and_complete_requests_keep_alive(server):
    body = b'{"set": "lao-1", "answers": {' + b",".join(b'"x%06d": "A"' % i for i in range(30_000)) + b"}}"
    assert 2**18 < len(body) < 2**20  # within what is read after the reply
    r = requests.post(server.base + "/api/submissions", data=body, timeout=30,
                      headers={"Authorization": "Bearer gb_wrong", "Content-Type": "application/json"})
    assert r.status_code == 401, r.text
    c = _connect(server)
    try:  # a 401 whose (small) body had arrived whole: the connection is kept
        c.sendall(b"POST /api/submissions/1/publish HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer gb_wrong\r\n"
                  b"Content-Length: 2\r\n\r\n{}" + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        replies = Replies(c)
        assert [replies.next(), replies.next()] == [401, 200]
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert replies.next() == 200
    finally:
        c.close()


# -- the same framing with uvicorn[standard] installed ---------------------------------------------

@needs_standard
def test_httptools_installed_changes_nothing(server):
    """With httptools importable, uvicorn's "auto" protocol was httptools, which took a 64 MiB header
    line. The server pins its guarded h11 protocol: refused at the limit."""
    c = _connect(server)
    got = 0
    try:
        def line() -> None:
            nonlocal got
            try:
                c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: ")
                chunk = b"a" * 2**20
                for _ in range(64):
                    c.sendall(chunk)
                    got += len(chunk)
                c.sendall(b"\r\n\r\n")
            except OSError:
                pass

        t = threading.Thread(target=line, daemon=True)
        t.start()
        statuses, closed = _statuses(c)
        t.join(30)
        assert statuses == [400] and closed and got < 64 * 2**20, (statuses, closed, got)
    finally:
        c.close()


@needs_standard
def test_websocket_upgrades_do_not_lock_an_address_out(tmp_path):
    """With websockets importable, an upgrade request handed its connection to uvicorn's WebSocket
    protocol, which never returned its place in the per-address count: 40 upgrades from one address
    (cap 32) locked it out until restart. No WebSocket protocol is loaded: an upgrade is an ordinary
    request."""
    db = f"sqlite:///{tmp_path}/db.sqlite"
    prepare(db)
    s = start(db, "--rate-per-minute", "100000", "--max-connections-per-ip", "8")
    try:
        for _ in range(40):
            c = _connect(s, "127.0.0.4")
            try:
                c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                          b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
                c.settimeout(10)
                first = c.recv(65536)
                assert not first.startswith(b"HTTP/1.1 101"), first[:200]
            finally:
                c.close()
        c = _connect(s, "127.0.0.4")
        try:
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            statuses, closed = _statuses(c)
            assert statuses == [200], statuses
        finally:
            c.close()
    finally:
        s.stop()


# -- slow readers: evicted only when they make no progress -----------------------------------------

def _fds_256() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def test_a_slow_reader_that_makes_progress_is_never_evicted(tmp_path):
    """At the connection bound a new connection evicts the oldest idle one, and a reply waiting on a
    full buffer counted as idle: an honest client reading a release at 200 KB/s was cut. Now a reply
    is idle only after `stall_s` (2 s) without progress. One client reads the download at 100 KB/s,
    another never reads its own; connections from new addresses (each idle, the bound 63) arrive
    until the one that never read is evicted — long before its send timeout (30 s). The reader,
    older than all of them, gets every byte."""
    s = start(released_big_set(tmp_path), "--rate-per-minute", "100000", "--header-timeout", "60", preexec_fn=_fds_256)
    crowd: list[socket.socket] = []
    reader, stuck = _connect(s, "127.0.0.5"), _connect(s, "127.0.0.6")
    try:
        whole = requests.get(s.base + "/api/sets/old/download", timeout=60).content
        assert len(whole) > 6_000_000
        for c in (reader, stuck):
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            c.sendall(b"GET /api/sets/old/download HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = bytearray()
        fast, done = threading.Event(), threading.Event()

        def read_steadily() -> None:  # 100 KB/s (16 KiB every 160 ms) until `fast`, then as fast as it comes
            reader.settimeout(60)
            try:
                while True:
                    d = reader.recv(16384 if not fast.is_set() else 1 << 20)
                    if not d:
                        break
                    got.extend(d)
                    if not fast.is_set():
                        time.sleep(0.16)
            except OSError:
                pass
            done.set()

        t = threading.Thread(target=read_steadily, daemon=True)
        t.start()
        for i in range(1500):  # a new idle connection from a new address every 20 ms, up to 30 s
            if reset_by_peer(stuck, 0.02):
                break
            try:
                crowd.append(_connect(s, f"127.0.{2 + i // 250}.{1 + i % 250}"))
                crowd[-1].sendall(b"GET /healthz HTTP/1.1\r\n")  # never finished: idle
            except OSError:
                pass
        else:
            raise AssertionError("the client that never read was not evicted")
        assert len(crowd) > 60  # the bound was reached: evictions happened
        slow_part = len(got)
        fast.set()
        assert done.wait(60)
        assert got.startswith(b"HTTP/1.1 200") and bytes(got).endswith(whole), (len(got), slow_part)
        assert slow_part < len(whole) / 2, slow_part  # the crowd came while most of the reply was unread
        assert requests.get(s.base + "/healthz", timeout=10).status_code == 200
    finally:
        for c in [*crowd, reader, stuck]:
            c.close()
        s.stop()
