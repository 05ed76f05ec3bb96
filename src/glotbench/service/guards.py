"""HTTP-level guards of the service, below the application.

- `RequestGuard` (ASGI): NUL characters in a path are refused before they reach a database; a
  request body is counted while it streams in — never buffered here — against a limit (the route's,
  `BODY_LIMIT_KEY` in the scope, set by a handler once it has authenticated the caller; a small
  default otherwise) and a deadline. Beyond the limit the rest is read and thrown away (up to
  `drain_bytes`, within the deadline) before the 413 is sent, so clients that write their whole body
  before reading (`requests`, `http.client`) see the 413, not a reset connection.
- `SecurityHeaders` (ASGI): the headers every response carries.
- `parse_json_body`: the one parse of a JSON body (duplicate keys refused, objects capped in size,
  nesting errors caught), meant to run off the event loop.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.exceptions import HTTPException

BODY_LIMIT_KEY = "glotbench.body_limit"
DEFAULT_BODY_LIMIT = 16 * 2**10  # routes other than submissions take small JSON objects

SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}


async def _reply(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def too_large(limit: int) -> HTTPException:
    return HTTPException(413, f"request body larger than {limit} bytes", headers={"Connection": "close"})


class RequestGuard:
    """Pure ASGI middleware: see the module docstring. `body_timeout_s`: the whole body must have
    arrived this long after the request's headers (a client that dribbles it gets 408)."""

    def __init__(self, app: Any, *, body_timeout_s: float = 30.0, drain_bytes: int = 16 * 2**20):
        self.app, self.body_timeout_s, self.drain_bytes = app, body_timeout_s, drain_bytes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if "\x00" in scope.get("path", "") or b"%00" in scope.get("query_string", b""):
            return await _reply(send, 400, "NUL characters are not allowed")
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout_s
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        size, finished = 0, False

        async def next_message(idle_s: float | None = None) -> dict[str, Any]:
            nonlocal size, finished
            left = deadline - loop.time()
            try:
                if left <= 0:
                    raise asyncio.TimeoutError
                message = await asyncio.wait_for(receive(), left if idle_s is None else min(left, idle_s))
            except asyncio.TimeoutError:
                raise HTTPException(408, "the request body did not arrive in time",
                                    headers={"Connection": "close"}) from None
            if message["type"] == "http.request":
                size += len(message.get("body", b""))
                finished = not message.get("more_body", False)
            else:
                finished = True
            return message

        async def drain_then_refuse(limit: int) -> None:
            """Read and drop the rest (bounded in bytes and time; stopping when the client pauses for a
            second, as one that waits for an answer does), so a client that writes its whole body
            before reading reads the 413 instead of a reset connection."""
            try:
                while not finished and size <= limit + self.drain_bytes:
                    await next_message(idle_s=1.0)
            except HTTPException:
                pass
            raise too_large(limit)

        async def guarded() -> dict[str, Any]:
            limit = int(scope.get(BODY_LIMIT_KEY) or DEFAULT_BODY_LIMIT)
            if declared is not None and (not declared.isdigit() or int(declared) > limit):
                await drain_then_refuse(limit)
            message = await next_message()
            if size > limit:
                await drain_then_refuse(limit)
            return message

        await self.app(scope, guarded, send)


def parse_json_body(raw: bytes, max_members: int) -> Any:
    """Parse a JSON body once. Raises an HTTPException to show: 422 not JSON (or nested too deeply),
    400 a key given twice in one object (JSON parsers silently keep the last: an answer id twice is
    an error), an object with more than `max_members` keys, or a NUL character (which PostgreSQL
    text cannot hold)."""
    if b"\\u0000" in raw:
        raise HTTPException(400, "NUL characters are not allowed")

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if len(pairs) > max_members:
            raise HTTPException(400, f"an object has more than {max_members} members (more answers than any open "
                                     "set has items)")
        obj = dict(pairs)
        if len(obj) != len(pairs):
            raise HTTPException(400, "duplicate ids in the submission")
        return obj

    try:
        return json.loads(raw, object_pairs_hook=hook)
    except RecursionError:
        raise HTTPException(422, "invalid request: the body is nested too deeply") from None
    except json.JSONDecodeError as e:
        raise HTTPException(422, f"invalid request: the body is not JSON ({e.msg} at line {e.lineno} column "
                                 f"{e.colno})") from None
    except UnicodeDecodeError:
        raise HTTPException(422, "invalid request: the body is not UTF-8 JSON") from None
    except ValueError:  # a number no parser holds: an integer past Python's 4,300 digits
        raise HTTPException(422, "invalid request: the body holds a number too long to read") from None


class SecurityHeaders:
    """Pure ASGI middleware adding SECURITY_HEADERS to every response."""

    def __init__(self, app: Any):
        self.app = app
        self.all = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def wrapped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in self.all if h[0] not in have]
            await send(message)

        await self.app(scope, receive, wrapped)
