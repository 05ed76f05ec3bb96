"""What `glotbench serve` starts: uvicorn, with the limits a public server needs against slow and
many connections, and the line saying where it listens.

One HTTP framing whatever is installed: uvicorn picks httptools, websockets and uvloop when they are
importable (`uvicorn[standard]`), and none of them is guarded here (httptools takes a 64 MiB header
line; a WebSocket upgrade hands the connection to a protocol that never gives back its place in the
per-address count). The server pins h11 (`guarded_protocol` subclasses uvicorn's `H11Protocol`, not
its "auto" choice), no WebSocket protocol and asyncio's own event loop.

`guarded_protocol` adds, to uvicorn's h11 protocol:
- a header timeout: a request's headers must be complete `header_timeout_s` after its first byte
  (or after the connection opened), or the connection is closed;
- a head limit counted as the bytes arrive (`_GuardedH11`): a head longer than `max_header_bytes`
  or with more than `max_header_fields` lines is refused (400) and the connection closed, whether it
  dribbles in or arrives in one read (h11's own limit applies only to a head still incomplete);
- one framing per request: a request with both Content-Length and Transfer-Encoding is refused and
  the connection closed (RFC 9112 6.1: a front end may have framed it the other way: request
  smuggling);
- a reply sent before its request's body was read (a 401 straight after the headers) ends the
  connection: the write side is shut after the reply, at most `linger_bytes` more of the body are
  read and dropped for at most `linger_s` (so a client that writes its body before reading still
  reads the reply), then the connection is closed;
- a send timeout: a reply whose client makes no progress reading it (the bytes still queued, ours
  and the kernel's, do not shrink) for `send_timeout_s` is dropped: no other timeout applies once a
  request is complete;
- a per-address connection cap: a peer (an IPv6 one counted by its /64) holding
  `max_connections_per_ip` connections has further ones closed at once (addresses of
  `trusted_proxies` are exempt: behind a proxy, the proxy caps each client, docs/service.md
  "Deployment");
- a bound on all connections, one below `limit_concurrency`: a new connection at the bound closes
  the oldest one with no request in flight or whose reply has made no progress for `stall_s` (a
  client that reads slowly but steadily is never taken for idle), so a request always finds room and
  the file descriptors never run out.
The request body has its own deadline and size limit (service/guards.py). `limit_concurrency`
(uvicorn's: requests and connections in flight; 503 beyond) is kept below the process's
file-descriptor limit less a margin and the listen backlog (`fd_margin_concurrency`).
X-Forwarded-For is believed only from `trusted_proxies` (none by default: the peer's address is the
client's, so a client cannot pick its own rate-limit bucket).
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServerLimits:
    header_timeout_s: float = 10.0
    send_timeout_s: float = 30.0  # a reply whose client makes no progress reading it this long: dropped
    stall_s: float = 2.0  # a reply with no progress this long counts as idle when the connection bound is reached
    keep_alive_s: int = 5
    max_connections_per_ip: int = 32
    limit_concurrency: int = 1000  # lowered to the file-descriptor limit minus a margin when that is smaller
    backlog: int = 128  # the listen queue, and the most connections one accept round takes at once
    max_header_bytes: int = 16 * 2**10
    max_header_fields: int = 100  # lines of a head after the request line (Apache's LimitRequestFields)
    linger_bytes: int = 2**20  # read and dropped after a reply that left its request's body unread ...
    linger_s: float = 2.0  # ... for at most this long; then the connection is closed
    trusted_proxies: tuple[str, ...] = ()


HEAD_END = re.compile(rb"\n\r?\n")  # h11's end of a head (a blank line, CRLF or bare LF)


def fd_margin_concurrency(wanted: int, backlog: int = 0) -> int:
    """`wanted`, or the soft file-descriptor limit less 64 (database, logs, outbound runs) and less
    `backlog` if lower. asyncio accepts every pending connection of a round (up to the backlog)
    before any of them is seen by a protocol: the descriptors of one round must fit on top of the
    connections kept, or accept() fails with EMFILE, logs a traceback per pending connection and
    stops accepting (a second) — /healthz then waits in the listen queue."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return wanted
    return wanted if soft == resource.RLIM_INFINITY else max(16, min(wanted, soft - 64 - backlog))


def _kernel_queued(transport: Any) -> int:
    """Bytes of a reply the kernel holds for the peer, not yet acknowledged (Linux SIOCOUTQ; 0 where
    it cannot be read). They shrink as the client reads, long before the socket is writable again
    (the kernel wakes a writer only once a large part of its send buffer is free)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    try:
        import fcntl
        import struct
        import termios

        return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]
    except (ImportError, AttributeError, OSError, ValueError):
        return 0


def _reset(transport: Any) -> None:
    """Drop a connection at once with a reset (SO_LINGER 0): a plain close would leave the kernel
    holding what the client never read (up to its send buffer, 4 MB) until it gave up on an orphan,
    and the client would never see the end."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        import socket
        import struct

        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    transport.abort()


def guarded_h11(limits: ServerLimits) -> type:
    """h11's connection with the head limit counted as the bytes arrive, and one framing per request."""
    import h11

    class GuardedH11(h11.Connection):  # type: ignore[misc]
        def next_event(self) -> Any:
            if self.their_state is h11.IDLE:  # a head is arriving: what h11 holds is that head (and more)
                buf = self.trailing_data[0]
                end = HEAD_END.search(buf, 0, limits.max_header_bytes)
                if (end is None and len(buf) > limits.max_header_bytes) or (
                        end is not None and buf.count(b"\n", 0, end.start()) > limits.max_header_fields):
                    raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
            event = super().next_event()
            if isinstance(event, h11.Request):
                names = {name for name, _ in event.headers}
                if b"transfer-encoding" in names and b"content-length" in names:
                    raise h11.RemoteProtocolError("both Content-Length and Transfer-Encoding", error_status_hint=400)
            return event

    return GuardedH11


def guarded_protocol(limits: ServerLimits) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol class with the guards of the module docstring."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from glotbench.service.ratelimit import client_bucket

    connection_class = guarded_h11(limits)
    per_ip: Counter = Counter()
    trusted = set(limits.trusted_proxies)
    # uvicorn answers 503 to any request while it holds `limit_concurrency` connections: keep one
    # below, so a new request always finds room (and the descriptors never run out).
    bound = fd_margin_concurrency(limits.limit_concurrency, limits.backlog) - 1
    held: dict[Any, None] = {}  # every connection kept, oldest first
    tick = min(1.0, limits.send_timeout_s / 4, limits.stall_s / 2)  # how often a paused reply's progress is read

    class GuardedProtocol(H11Protocol):  # type: ignore[misc, valid-type]
        _gb_ip: str | None = None
        _gb_timer: asyncio.TimerHandle | None = None
        _gb_send_timer: asyncio.TimerHandle | None = None
        _gb_queued = 0  # bytes of the reply still queued (ours and the kernel's) when last looked at ...
        _gb_moved_at = 0.0  # ... and when they last shrank
        _gb_linger = -1  # >= 0: the reply is sent, its request's unread body is being dropped (bytes so far)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.conn = connection_class(h11.SERVER, limits.max_header_bytes)

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            peer = (self.client or ("?",))[0]
            ip = client_bucket(peer)  # an IPv6 peer counts by its /64
            if peer not in trusted and per_ip[ip] >= limits.max_connections_per_ip:
                transport.close()  # uvicorn's connection_lost cleans up as for any other close
                return
            if len(held) >= bound and not _evict_oldest_idle():
                transport.close()  # every connection is serving a request: a real overload
                return
            held[self] = None
            self._gb_ip = ip
            per_ip[ip] += 1
            self._gb_arm()

        def _gb_idle(self) -> bool:
            """Nothing to lose by closing it: no request in flight (headers still arriving, kept alive
            between requests, or a reply sent and its unread body being dropped), or a reply that has
            made no progress for `stall_s`."""
            if self.cycle is None or self.cycle.response_complete:
                return True
            return self.flow.write_paused and not self._gb_progress(limits.stall_s)

        def _gb_progress(self, within: float) -> bool:
            """Whether the client read some of the reply in the last `within` seconds."""
            now = self.loop.time()
            queued = self.transport.get_write_buffer_size() + _kernel_queued(self.transport)
            if queued < self._gb_queued:
                self._gb_moved_at = now
            self._gb_queued = queued
            return now - self._gb_moved_at < within

        def pause_writing(self) -> None:
            """The reply's buffer is full: the client reads slower than we write. While it stays
            full, the reply must keep moving: a client that reads none of it for the send timeout is
            dropped (it would hold the connection, and the reply in memory, for ever)."""
            super().pause_writing()
            self._gb_queued = self.transport.get_write_buffer_size() + _kernel_queued(self.transport)
            self._gb_moved_at = self.loop.time()
            if self._gb_send_timer is None:
                self._gb_send_timer = self.loop.call_later(tick, self._gb_watch)

        def _gb_watch(self) -> None:
            self._gb_send_timer = None
            if self.transport.is_closing() or not self.flow.write_paused:
                return
            if not self._gb_progress(limits.send_timeout_s):
                _reset(self.transport)
                return
            self._gb_send_timer = self.loop.call_later(tick, self._gb_watch)

        def resume_writing(self) -> None:
            if self._gb_send_timer is not None:
                self._gb_send_timer.cancel()
                self._gb_send_timer = None
            super().resume_writing()

        def on_response_complete(self) -> None:
            """A reply sent before its request's body was read (their side still sending): the
            connection ends. Without this, the rest of the body (any size, chunked for ever) was
            read and dropped to keep the connection alive, until the header timeout."""
            if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
                self.server_state.total_requests += 1
                self._unset_keepalive_if_required()
                self._gb_linger = 0
                if self.transport.can_write_eof():
                    self.transport.write_eof()  # the reply goes first, then our FIN
                self.flow.resume_reading()
                self._gb_disarm()
                self._gb_timer = self.loop.call_later(limits.linger_s, _reset, self.transport)
                return
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            held.pop(self, None)
            if self._gb_send_timer is not None:
                self._gb_send_timer.cancel()
                self._gb_send_timer = None
            self._gb_disarm()
            if self._gb_ip is not None:
                per_ip[self._gb_ip] -= 1
                if per_ip[self._gb_ip] <= 0:
                    del per_ip[self._gb_ip]
                self._gb_ip = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._gb_linger >= 0:  # dropped unparsed: no further request is read on this connection
                self._gb_linger += len(data)
                if self._gb_linger > limits.linger_bytes:
                    _reset(self.transport)
                return
            before = self.cycle
            super().data_received(data)
            if self.cycle is not before:  # a request's headers are complete: the app has it now
                self._gb_disarm()
            elif self._gb_timer is None and (self.cycle is None or self.cycle.response_complete):
                self._gb_arm()  # the first bytes of a next request on a kept-alive connection

        def _gb_arm(self) -> None:
            self._gb_disarm()
            self._gb_timer = self.loop.call_later(limits.header_timeout_s, self._gb_expire)

        def _gb_disarm(self) -> None:
            if self._gb_timer is not None:
                self._gb_timer.cancel()
                self._gb_timer = None

        def _gb_expire(self) -> None:
            self._gb_timer = None
            if not self.transport.is_closing():
                self.transport.close()

    def _evict_oldest_idle() -> bool:
        """Close the oldest idle connection (`_gb_idle`: many slow clients from many addresses,
        beyond any per-address cap; the new connection takes its place)."""
        for conn in held:
            if conn._gb_idle():
                del held[conn]
                _reset(conn.transport)  # not close(): that would wait to flush what it has not sent
                return True
        return False

    return GuardedProtocol


def serve(app: Any, host: str, port: int, limits: ServerLimits) -> None:
    """Run `app` under uvicorn with `limits`; print the URL once it listens."""
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                for srv in self.servers:
                    for sock in srv.sockets or ():
                        h, p = sock.getsockname()[:2]
                        shown = f"[{h}]" if ":" in h else h
                        print(f"glotbench service listening on http://{shown}:{p} (API description: "
                              f"http://{shown}:{p}/openapi.json)", flush=True)

    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=15,
        # One framing whatever is installed: the guarded h11 protocol, no WebSocket protocol, asyncio's loop.
        http=guarded_protocol(limits), ws="none", loop="asyncio", timeout_keep_alive=limits.keep_alive_s,
        limit_concurrency=fd_margin_concurrency(limits.limit_concurrency, limits.backlog), backlog=limits.backlog,
        h11_max_incomplete_event_size=limits.max_header_bytes,
        proxy_headers=bool(limits.trusted_proxies), forwarded_allow_ips=",".join(limits.trusted_proxies) or None,
        server_header=False)
    Server(config).run()
