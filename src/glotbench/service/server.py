"""What `glotbench serve` starts: uvicorn, with the limits a public server needs against slow and
many connections, and the line saying where it listens.

uvicorn closes an idle kept-alive connection (`timeout_keep_alive`) but has no timeout for a request
whose headers never finish: a client that dribbles them holds its connection (and a file
descriptor) for ever. `guarded_protocol` adds, under uvicorn's own HTTP protocol class:
- a header timeout: a request's headers must be complete `header_timeout_s` after its first byte
  (or after the connection opened), or the connection is closed;
- a send timeout: a reply whose client reads none of it for `send_timeout_s` (the write buffer
  stays full) is dropped: no other timeout applies once a request is complete;
- a per-address connection cap: a peer (an IPv6 one counted by its /64) holding
  `max_connections_per_ip` connections has further ones closed at once (addresses of
  `trusted_proxies` are exempt: behind a proxy, the proxy caps each client, docs/service.md
  "Deployment");
- a bound on all connections, one below `limit_concurrency`: a new connection at the bound closes
  the oldest one with no request in flight or whose reply waits on a client that does not read it
  (slow clients from many addresses), so a request always finds room and the file descriptors never
  run out.
The request body has its own deadline and size limit (service/guards.py). `limit_concurrency`
(uvicorn's: requests and connections in flight; 503 beyond) is kept below the process's
file-descriptor limit less a margin and the listen backlog (`fd_margin_concurrency`), and
`h11_max_incomplete_event_size` bounds the header block.
X-Forwarded-For is believed only from `trusted_proxies` (none by default: the peer's address is the
client's, so a client cannot pick its own rate-limit bucket).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServerLimits:
    header_timeout_s: float = 10.0
    send_timeout_s: float = 30.0  # a reply stalled this long on a client that reads none of it: dropped
    keep_alive_s: int = 5
    max_connections_per_ip: int = 32
    limit_concurrency: int = 1000  # lowered to the file-descriptor limit minus a margin when that is smaller
    backlog: int = 128  # the listen queue, and the most connections one accept round takes at once
    max_header_bytes: int = 16 * 2**10
    trusted_proxies: tuple[str, ...] = ()


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


def guarded_protocol(limits: ServerLimits) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class with the header timeout and the per-address connection cap."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    from glotbench.service.ratelimit import client_bucket

    per_ip: Counter = Counter()
    trusted = set(limits.trusted_proxies)
    # uvicorn answers 503 to any request while it holds `limit_concurrency` connections: keep one
    # below, so a new request always finds room (and the descriptors never run out).
    bound = fd_margin_concurrency(limits.limit_concurrency, limits.backlog) - 1
    held: dict[Any, None] = {}  # every connection kept, oldest first

    class GuardedProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        _gb_ip: str | None = None
        _gb_timer: asyncio.TimerHandle | None = None
        _gb_send_timer: asyncio.TimerHandle | None = None

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
            """Nothing to lose by closing it: no request in flight (headers still arriving, or kept
            alive between requests), or a reply stalled on a client that does not read it."""
            return self.cycle is None or self.cycle.response_complete or self._gb_send_timer is not None

        def pause_writing(self) -> None:
            """The reply's buffer is full: the client reads slower than we write. Unless it reads
            enough to drain it within the send timeout, the connection is dropped (a client that
            reads nothing would hold it, and the reply in memory, for ever)."""
            super().pause_writing()
            if self._gb_send_timer is None:
                self._gb_send_timer = self.loop.call_later(limits.send_timeout_s, self.transport.abort)

        def resume_writing(self) -> None:
            if self._gb_send_timer is not None:
                self._gb_send_timer.cancel()
                self._gb_send_timer = None
            super().resume_writing()

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
                conn.transport.abort()  # not close(): that would wait to flush what it has not sent
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
        http=guarded_protocol(limits), timeout_keep_alive=limits.keep_alive_s,
        limit_concurrency=fd_margin_concurrency(limits.limit_concurrency, limits.backlog), backlog=limits.backlog,
        h11_max_incomplete_event_size=limits.max_header_bytes,
        proxy_headers=bool(limits.trusted_proxies), forwarded_allow_ips=",".join(limits.trusted_proxies) or None,
        server_header=False)
    Server(config).run()
