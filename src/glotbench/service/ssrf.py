"""The one outbound HTTP client of the scoring service: every request an endpoint run makes — the
pre-flight `GET /models`, every chat request and every redirect hop — goes through `GuardedClient`.

- Addresses are refused by an explicit list of reserved ranges (`RESERVED`), not by whatever the
  running Python's `ipaddress` tables mark; an IPv4-mapped IPv6 address is judged by its IPv4 part.
- A literal IP in a URL is checked directly (aiohttp never calls a resolver for one); a name is
  resolved by `GuardedResolver`, which refuses it if any answer is reserved and hands aiohttp only
  the addresses it validated, so the connection goes to a checked address (no DNS rebinding).
- Redirects are never followed by aiohttp: our code follows at most `max_redirects`, checking each hop;
  a malformed `Location` is refused like a bad endpoint.
- Replies are read whole (however many chunks) up to `max_bytes`; a longer one is refused.
- Errors say what kind of thing went wrong, never what a refused address would have answered
  (a refused address is never connected to).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit

from glotbench.models.base import ClientError, ConnectionFailed, ModelTimeout

_V4 = ("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
       "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24",
       "192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
       "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32")
_V6 = ("::/128", "::1/128", "::/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23",
       "2001:db8::/32", "2002::/16", "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8")
#: Every range an endpoint may not resolve to (IANA special-purpose registries, IPv4 and IPv6).
RESERVED: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = tuple(
    ipaddress.ip_network(n) for n in _V4 + _V6)
_GLOBAL_V6 = ipaddress.ip_network("2000::/3")  # the only IPv6 unicast space allocated for global use


NOT_PUBLIC = "the endpoint's host must resolve to public addresses only"


class UnsafeEndpoint(ValueError):
    """The URL points somewhere a submission may not make the server go."""


def forbidden_ip(ip: str) -> bool:
    """True if the address is in a reserved range (or is not an address at all)."""
    try:
        addr = ipaddress.ip_address(ip.split("%")[0])
    except ValueError:
        return True
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped
        elif addr not in _GLOBAL_V6:
            return True
    return any(addr in net for net in RESERVED if net.version == addr.version)


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%")[0])
        return True
    except ValueError:
        return False


def _odd_numeric(host: str) -> bool:
    """Numeric hosts in non-canonical forms (`2130706433`, `127.1`, `0x7f.0.0.1`): never allowed."""
    return not _literal(host) and all(re.fullmatch(r"0x[0-9a-f]*|[0-9]+", p) for p in host.lower().split("."))


def check_url(url: str, allow_hosts: Iterable[str] = ()) -> None:
    """Refuse anything but http(s) to a host whose every address is public (or an allowed host).
    Resolves the name; makes no connection. Messages never list the addresses found."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UnsafeEndpoint("endpoint must be an http(s) URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeEndpoint("endpoint must be an http(s) URL")
    if parts.username or parts.password:
        raise UnsafeEndpoint("endpoint URLs may not carry credentials; send the key with the submission")
    host = parts.hostname
    if host in set(allow_hosts):
        return
    if _odd_numeric(host):
        raise UnsafeEndpoint(NOT_PUBLIC)
    if _literal(host):
        if forbidden_ip(host):
            raise UnsafeEndpoint(NOT_PUBLIC)
        return
    try:
        infos = socket.getaddrinfo(host, port or (443 if parts.scheme == "https" else 80), type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        infos = []  # unresolvable and internal look the same: no enumeration of internal names
    if not infos or any(forbidden_ip(str(i[4][0])) for i in infos):
        raise UnsafeEndpoint(NOT_PUBLIC)


def guarded_resolver(allow_hosts: Iterable[str] = (), refused: set[str] | None = None) -> Any:
    """An aiohttp resolver that refuses a name if any of its addresses is reserved (noting it in
    `refused`); aiohttp connects only to the addresses it returns, i.e. to the ones checked."""
    from aiohttp.resolver import ThreadedResolver

    allowed = set(allow_hosts)
    noted: set[str] = set() if refused is None else refused

    class GuardedResolver(ThreadedResolver):
        async def resolve(self, host: str, port: int = 0,
                          family: socket.AddressFamily = socket.AF_INET) -> list[Any]:
            results = await super().resolve(host, port, family)
            if host not in allowed and (not results or any(forbidden_ip(r["host"]) for r in results)):
                noted.add(host)
                raise OSError("refused: the host resolves to a non-public address")
            return results

    return GuardedResolver()


@dataclass(frozen=True)
class HttpReply:
    status: int
    headers: Mapping[str, str]
    body: bytes


class GuardedClient:
    """An aiohttp session that may only reach public addresses (see the module docstring)."""

    def __init__(self, allow_hosts: Iterable[str] = (), *, max_bytes: int = 2**20, max_redirects: int = 5,
                 concurrency: int = 8, timeout_s: float = 60.0):
        self.allow_hosts = tuple(allow_hosts)
        self.max_bytes, self.max_redirects = max_bytes, max_redirects
        self.concurrency, self.timeout_s = concurrency, timeout_s
        self._session: Any = None
        self._checked: set[str] = set()  # names already resolved to public addresses (re-checked on connect)
        self._refused: set[str] = set()  # names the connection-time resolver refused

    def _get(self) -> Any:
        if self._session is None:
            import aiohttp

            connector = aiohttp.TCPConnector(limit=self.concurrency,
                                             resolver=guarded_resolver(self.allow_hosts, self._refused),
                                             ttl_dns_cache=60)
            self._session = aiohttp.ClientSession(connector=connector, trust_env=False,
                                                  timeout=aiohttp.ClientTimeout(total=self.timeout_s))
        return self._session

    def _check_hop(self, url: str, first: bool) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ClientError("refused: " + ("the endpoint" if first else "a redirect") + " is not an http(s) URL")
        host = parts.hostname
        if host in self.allow_hosts:
            return
        if parts.username or parts.password or _odd_numeric(host) or (_literal(host) and forbidden_ip(host)):
            raise ClientError("refused: " + ("the endpoint" if first else "a redirect") + " points to a non-public address")

    async def _check_name(self, url: str, first: bool) -> None:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if host in self.allow_hosts or _literal(host) or host in self._checked:
            return
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, parts.port or 80, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            infos = []  # unresolvable and internal look the same
        if not infos or any(forbidden_ip(str(i[4][0])) for i in infos):
            raise ClientError("refused: " + ("the endpoint" if first else "a redirect") + " points to a non-public address")
        self._checked.add(host)

    async def request(self, method: str, url: str, *, json: Any = None, headers: Mapping[str, str] | None = None,
                      timeout_s: float | None = None) -> HttpReply:
        """One request, its redirects followed here (each hop checked; credentials dropped when a
        redirect leaves the original host). Raises a ModelError with a message safe to show."""
        import aiohttp
        from yarl import URL

        session = self._get()
        hdrs = dict(headers or {})
        origin = urlsplit(url).netloc
        timeout = aiohttp.ClientTimeout(total=timeout_s or self.timeout_s)
        try:
            for hop in range(self.max_redirects + 1):
                self._check_hop(url, hop == 0)
                await self._check_name(url, hop == 0)
                if urlsplit(url).netloc != origin:
                    hdrs.pop("Authorization", None)  # a key goes only to the host it was given for
                async with session.request(method, URL(url), json=json, headers=hdrs,
                                           allow_redirects=False, timeout=timeout) as r:
                    if r.status in (301, 302, 303, 307, 308) and "Location" in r.headers:
                        url = str(r.url.join(URL(r.headers["Location"])))
                        if r.status == 303:
                            method, json = "GET", None
                        continue
                    body = bytearray()
                    async for chunk in r.content.iter_any():
                        body += chunk
                        if len(body) > self.max_bytes:
                            raise ClientError(f"refused: reply larger than {self.max_bytes} bytes")
                    return HttpReply(r.status, dict(r.headers), bytes(body))
            raise ClientError(f"refused: more than {self.max_redirects} redirects")
        except asyncio.TimeoutError:
            raise ModelTimeout("no reply from the endpoint in time") from None
        except ValueError:  # a redirect to `http://x:99999/` or `http://[::1/x`: a bad endpoint, not our error
            raise ClientError("refused: a redirect points to a malformed URL") from None
        except (aiohttp.ClientError, OSError):
            refused = urlsplit(url).hostname in self._refused
            raise (ClientError("refused: the endpoint or a redirect resolves to a non-public address") if refused
                   else ConnectionFailed("could not connect to the endpoint")) from None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
