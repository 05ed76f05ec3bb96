"""Request rate limits with the `limits` library: a moving one-minute window per API key and per
client address. In-memory storage (one process) by default; `redis://...` shares the windows
between server processes. Each check-and-record is atomic in the storage (a Lua script on Redis)."""

from __future__ import annotations

import ipaddress
import time

from limits import RateLimitItemPerMinute
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter


def client_bucket(ip: str) -> str:
    """What one client is counted as: an IPv4 address, or the /64 of an IPv6 one (a client holds a
    whole /64, often a /56: counted per address, each of its 2^64 addresses would get its own rate
    window and connection cap). An IPv4-mapped IPv6 address counts as its IPv4 address."""
    try:
        addr = ipaddress.ip_address(ip.split("%")[0])
    except ValueError:
        return ip
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.IPv6Network((addr, 64), strict=False))
    return str(addr)


class RateLimited(Exception):
    def __init__(self, retry_after: float):
        super().__init__("rate limit reached; slow down")
        self.retry_after = retry_after


class RateLimiter:
    def __init__(self, per_minute: int, storage_url: str = "memory://"):
        self.item = RateLimitItemPerMinute(max(1, per_minute))
        self.limiter = MovingWindowRateLimiter(storage_from_string(storage_url))

    def hit(self, *who: str) -> None:
        """Record one request for each identity; refuse if any window is full."""
        for w in who:
            if not self.limiter.hit(self.item, "glotbench", w):
                reset = self.limiter.get_window_stats(self.item, "glotbench", w).reset_time
                raise RateLimited(max(1.0, reset - time.time()))
