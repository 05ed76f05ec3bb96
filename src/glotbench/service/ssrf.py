"""Server-side requests to URLs that strangers chose: refuse loopback, private, link-local,
multicast, reserved and metadata addresses — after DNS resolution, on every connection (so a DNS
answer that changes cannot slip through) and on every redirect. A host can be allowed explicitly
(for local testing)."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any, Iterable
from urllib.parse import urlsplit


class UnsafeEndpoint(ValueError):
    """The URL points somewhere a submission may not make the server go."""


def forbidden_ip(ip: str) -> bool:
    addr = ipaddress.ip_address(ip.split("%")[0])
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return (addr.is_private or addr.is_loopback or addr.is_link_local or addr.is_multicast
            or addr.is_reserved or addr.is_unspecified or not addr.is_global)


def check_url(url: str, allow_hosts: Iterable[str] = ()) -> None:
    """Raise UnsafeEndpoint unless every address the URL's host resolves to is public (or the host
    is allowed). Resolves the name; makes no connection."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeEndpoint(f"endpoint must be an http(s) URL, got {url!r}")
    host = parts.hostname
    if host in set(allow_hosts):
        return
    try:
        infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80),
                                   type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise UnsafeEndpoint(f"cannot resolve {host!r}: {e}") from None
    bad = sorted({i[4][0] for i in infos if forbidden_ip(i[4][0])})
    if bad:
        raise UnsafeEndpoint(f"endpoint host {host!r} resolves to a non-public address ({', '.join(bad)})")


def guarded_resolver(allow_hosts: Iterable[str] = ()) -> Any:
    """An aiohttp resolver that refuses any host resolving to a forbidden address."""
    from aiohttp.resolver import ThreadedResolver

    allowed = set(allow_hosts)

    class GuardedResolver(ThreadedResolver):
        async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[dict[str, Any]]:
            results = await super().resolve(host, port, family)
            if host not in allowed and any(forbidden_ip(r["host"]) for r in results):
                raise OSError(f"refused: {host} resolves to a non-public address")
            return results

    return GuardedResolver()
