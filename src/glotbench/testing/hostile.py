"""Hostile OpenAI-compatible endpoints for testing the scoring service's outbound guards.

Run: `python -m glotbench.testing.hostile [--host 127.0.0.1] [--port 0]`; it prints `PORT <n>` first.
Every request (method, path, query, Authorization header) is recorded: GET /_seen lists them and
POST /_reset clears them. POST /_control sets the behaviour:
- "reply": the chat reply text (default "Answer: A");
- "redirect": a URL: every request (pre-flight `/models` included) gets a 307 to it;
- "redirect_models_only": only `/models` redirects;
- "chunks": send the JSON reply in this many chunks (chunked transfer encoding, 20 ms apart);
- "pad": add this many bytes of whitespace to each reply (an oversized reply);
- "delay": seconds to wait before answering (a slow endpoint; 1e9: one that never answers);
- "stall_after": answer this many chat requests, then never answer another (a run that stalls);
- "status": answer every request with this status (e.g. 401); with "echo_auth": true the error
  message is the request's Authorization header; "status_chat_only": true spares the pre-flight;
- "only": a substring: chat requests whose prompt lacks it get a 400 (one item answered, the rest failed);
- "body": the chat reply's whole body, sent as given (a reply of the wrong shape, numbers no int holds).
An endpoint that only records (an "internal service" an attacker aims at) is the same server with
no control set; tests bind it to 127.0.0.2 to stand for an internal address.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from aiohttp import web


def _prompt(body: bytes) -> str:
    try:
        return "\n".join(str(m.get("content", "")) for m in json.loads(body).get("messages", []))
    except (ValueError, AttributeError):
        return ""


def make_app() -> web.Application:
    app = web.Application(client_max_size=64 * 2**20)
    state: dict[str, Any] = {"cfg": {}, "seen": [], "chats": 0}

    async def control(request: web.Request) -> web.Response:
        state["cfg"], state["chats"] = await request.json(), 0
        return web.json_response({"ok": True})

    async def seen(request: web.Request) -> web.Response:
        return web.json_response(state["seen"])

    async def reset(request: web.Request) -> web.Response:
        state["seen"].clear()
        state["cfg"], state["chats"] = {}, 0
        return web.json_response({"ok": True})

    async def anything(request: web.Request) -> web.StreamResponse:
        cfg: dict[str, Any] = state["cfg"]
        body = await request.read()
        state["seen"].append({"method": request.method, "path": request.path, "query": request.query_string,
                              "authorization": request.headers.get("Authorization"),
                              "body": body.decode("utf-8", "replace")[:2000]})
        if request.path.endswith("/chat/completions"):
            state["chats"] += 1
            if cfg.get("stall_after") is not None and state["chats"] > int(cfg["stall_after"]):
                await asyncio.sleep(1e9)
        if cfg.get("delay"):
            await asyncio.sleep(float(cfg["delay"]))
        if cfg.get("redirect") and (not cfg.get("redirect_models_only") or request.path.endswith("/models")):
            return web.Response(status=307, headers={"Location": cfg["redirect"]})
        if cfg.get("status") and (not cfg.get("status_chat_only") or request.path.endswith("/chat/completions")):
            # the error echoes the request's Authorization header, as a hostile server might
            echo = request.headers.get("Authorization", "") if cfg.get("echo_auth") else "refused"
            return web.json_response({"error": {"message": echo}}, status=int(cfg["status"]))
        if request.path.endswith("/models"):
            return web.json_response({"object": "list", "data": [{"id": "m", "object": "model"}]})
        if not request.path.endswith("/chat/completions"):
            return web.json_response({"internal": "secret-banner-1234"})
        if cfg.get("only") and cfg["only"] not in _prompt(body):
            return web.json_response({"error": {"message": "no"}}, status=400)
        if cfg.get("body") is not None:  # a chat reply sent as given: JSON of the wrong shape, odd numbers
            return web.Response(body=str(cfg["body"]).encode("utf-8", "surrogatepass"), content_type="application/json")
        payload = json.dumps({"id": "x", "object": "chat.completion", "model": "m",
                              "choices": [{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": cfg.get("reply", "Answer: A")}}],
                              "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
        data = (payload + " " * int(cfg.get("pad", 0))).encode()
        n = max(1, int(cfg.get("chunks", 1)))
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        size = -(-len(data) // n)
        for i in range(0, len(data), size):
            await resp.write(data[i:i + size])
            if n > 1:
                await asyncio.sleep(0.02)
        await resp.write_eof()
        return resp

    app.router.add_post("/_control", control)
    app.router.add_get("/_seen", seen)
    app.router.add_post("/_reset", reset)
    app.router.add_route("*", "/{tail:.*}", anything)
    return app


async def _serve(host: str, port: int) -> None:
    runner = web.AppRunner(make_app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    print(f"PORT {site._server.sockets[0].getsockname()[1]}", flush=True)  # type: ignore[union-attr]
    await asyncio.Event().wait()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args(argv)
    try:
        asyncio.run(_serve(a.host, a.port))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
