"""HTTP-level guards of the service: the request-size limit enforced while the body streams in (a
chunked body without Content-Length is cut off at the limit, never read whole), NUL characters
refused before they reach a database, and the security headers every response carries."""

from __future__ import annotations

import json
from typing import Any

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


class BodyLimit:
    """Pure ASGI middleware: read at most `max_bytes` of a request body (413 beyond, before the
    application or authentication sees anything), then replay it to the application."""

    def __init__(self, app: Any, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if "\x00" in scope.get("path", "") or b"%00" in scope.get("query_string", b""):
            return await _reply(send, 400, "NUL characters are not allowed")
        too_big = f"request body larger than {self.max_bytes} bytes"
        length = dict(scope.get("headers") or ()).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            return await _reply(send, 413, too_big)
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return await _reply(send, 413, too_big)
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if b"\\u0000" in body:  # JSON's escape for NUL: PostgreSQL text cannot hold it
            return await _reply(send, 400, "NUL characters are not allowed")
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class SecurityHeaders:
    """Pure ASGI middleware adding SECURITY_HEADERS to every response (the interactive /docs page,
    which loads its assets from a CDN, goes without the Content-Security-Policy)."""

    def __init__(self, app: Any):
        self.app = app
        self.all = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
        self.docs = [h for h in self.all if h[0] != b"content-security-policy"]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        extra = self.docs if scope.get("path") in ("/docs", "/redoc", "/docs/oauth2-redirect") else self.all

        async def wrapped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in extra if h[0] not in have]
            await send(message)

        await self.app(scope, receive, wrapped)
