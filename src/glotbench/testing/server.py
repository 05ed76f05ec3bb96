"""An OpenAI-compatible chat server for tests and benchmarks, with fault injection.

Run: `python -m glotbench.testing.server [--port 0] [--latency 0.1]`; it prints `PORT <n>` first.
Behaviour is set over HTTP, so tests talk to it exactly as glotbench talks to vLLM:
- POST /_control  {"latency": s, "answers": {substring: reply}, "sequences": {substring: [reply...]}, "faults": [rule...],
                   "model_answers": {model: {substring: reply}} (per requested model: scripted models on one server),
                   "reject_response_format": bool, "require_key": str|null}
- GET  /_requests  every chat request body received, in order;  POST /_reset  clears state.
- GET  /_stats  {"requests", "in_flight", "max_in_flight", "rejected"}: the most requests ever open at
  once; `rejected`: chat requests answered 429 by the hidden capacity.
- A hidden capacity: {"capacity": n} serves at most n chat requests at once and answers the others
  429 at once (with {"capacity_retry_after": "1"}, a Retry-After header): a hosted API's
  unpublished concurrency limit, for `--concurrency auto`.
- The Batch API (/v1/files, /v1/batches): glotbench/testing/batch_server.py.
- POST /v1/embeddings: a deterministic 64-dimension vector per input (hashed character trigrams),
  or, when an `embed_groups` {substring: group} key is found in the input, the group's own vector
  plus a little of the trigram one: scripted paraphrases.
A fault rule: {"match": substring or "*", "status": 429|500|..., "retry_after": "1", "times": n,
"delay": s (sleep before answering: a timeout), "malformed": true (200 with a broken body),
"redirect": URL (a 307 to it), "embeddings": true (the rule is for /v1/embeddings only), "model": name
(only that requested model's calls)}. A rule
fires `times` times per distinct prompt, then the request succeeds.
The reply is the next of `sequences[key]` for the first `sequences` key found in the last user message
(the n-th such request gets the n-th reply, the last repeating), else `answers[last user message]`, else
the value of the first `answers` key found in it, else an echo of the message.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import time
from collections import Counter
from typing import Any

from aiohttp import web


class State:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.latency = 0.0
        self.answers: dict[str, str] = {}
        self.faults: list[dict[str, Any]] = []
        self.reject_response_format = False
        self.require_key: str | None = None
        self.requests: list[dict[str, Any]] = []
        self.judges: dict[str, dict[str, Any]] = {}
        self.fired: Counter = Counter()
        self.record = True
        self.in_flight = getattr(self, "in_flight", 0)  # requests open across a reset still close
        self.max_in_flight = self.in_flight  # the most chat requests ever open at once (GET /_stats)
        self.embed_groups: dict[str, str] = {}
        self.sequences: dict[str, list[str]] = {}
        self.model_answers: dict[str, dict[str, str]] = {}
        self.embedding_calls = 0
        self.capacity: int | None = None
        self.capacity_retry_after: str | None = None
        self.rejected = 0
        self.batch: dict[str, Any] = {}
        self.batch_state = None  # testing/batch_server.py BatchState, made on first use


def _last_user(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            return str(m.get("content", ""))
    return ""


async def chat(request: web.Request) -> web.StreamResponse:
    st: State = request.app["state"]
    if st.capacity is not None and st.in_flight >= st.capacity:  # the hidden capacity: rejected at once
        st.rejected += 1
        headers = {"Retry-After": st.capacity_retry_after} if st.capacity_retry_after else {}
        return web.json_response({"error": {"message": "Rate limit reached: too many requests in flight",
                                            "type": "rate_limit_error"}}, status=429, headers=headers)
    st.in_flight += 1
    st.max_in_flight = max(st.max_in_flight, st.in_flight)
    try:
        return await _chat(request, st)
    finally:
        st.in_flight -= 1


async def _chat(request: web.Request, st: State) -> web.StreamResponse:
    raw = await request.read()
    try:
        body = json.loads(raw)
    except ValueError:
        return web.json_response({"error": {"message": "invalid JSON body"}}, status=400)
    if st.record:
        st.requests.append(body)
    if st.require_key is not None and request.headers.get("Authorization") != f"Bearer {st.require_key}":
        return web.json_response({"error": {"message": "invalid API key"}}, status=401)
    if st.reject_response_format and "response_format" in body:
        return web.json_response({"error": {"message": "response_format is not supported"}}, status=400)
    content = _last_user(body)
    digest = hashlib.sha256(content.encode()).hexdigest()
    for i, rule in enumerate(st.faults):
        pattern = rule.get("match", "*")
        if rule.get("embeddings") or (pattern != "*" and pattern not in content):
            continue
        if rule.get("model") not in (None, body.get("model")):  # a rule for one model's requests
            continue
        if st.fired[(i, digest)] >= rule.get("times", 1):
            continue
        st.fired[(i, digest)] += 1
        if rule.get("delay"):
            await asyncio.sleep(float(rule["delay"]))
        if rule.get("redirect"):
            return web.Response(status=307, headers={"Location": rule["redirect"]})
        if rule.get("malformed"):
            return web.Response(text='{"choices": [', content_type="application/json")
        if rule.get("status"):
            headers = {"Retry-After": str(rule["retry_after"])} if "retry_after" in rule else {}
            return web.json_response({"error": {"message": f"injected {rule['status']}"}},
                                     status=int(rule["status"]), headers=headers)
        break
    if st.latency:
        await asyncio.sleep(st.latency)
    judge = st.judges.get(str(body.get("model")))
    if judge is not None and judge.get("mode") == "rubric":
        return _chat_reply(body, _rubric(judge, content, st, f"{body.get('model')}:{digest}"), "stop", content)
    if judge is not None and "[Answer A]" in content:
        return _chat_reply(body, _verdict(judge, content, st, f"{body.get('model')}:{digest}"), "stop", content)
    reply = next((v for k, v in st.model_answers.get(str(body.get("model")), {}).items() if k in content), None)
    if reply is None:
        reply = _next_in_sequence(st, content)
    if reply is None:
        reply = st.answers.get(content)
    if reply is None:
        reply = next((v for k, v in st.answers.items() if k in content), content)
    words = reply.split()
    finish = "stop"
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and len(words) > max_tokens:
        reply, finish = " ".join(words[:max_tokens]), "length"
    return _chat_reply(body, reply, finish, content)


def _next_in_sequence(st: State, content: str) -> str | None:
    """`sequences` {substring: [reply, ...]}: the n-th request holding the substring gets the n-th
    reply (the last one repeats): a malformed reply then a valid one, or different judges in turn."""
    for sub, replies in st.sequences.items():
        if sub in content and replies:
            n = st.fired[("sequence", sub)]
            st.fired[("sequence", sub)] += 1
            return replies[min(n, len(replies) - 1)]
    return None


def _verdict(judge: dict[str, Any], content: str, st: State, digest: str) -> str:
    """A scripted judge. mode: "prefer" (the answer containing judge["prefer"] wins; tie if both or
    neither), "always_A" (position bias), "tie", "malformed" (never JSON). malformed_first: n makes
    the first n replies per prompt malformed."""
    key = ("judge", digest)
    st.fired[key] += 1
    if judge.get("mode") == "malformed" or st.fired[key] <= judge.get("malformed_first", 0):
        return "I think A is better."
    a = content.split("[Answer A]", 1)[1].split("[Answer B]", 1)[0]
    b = content.split("[Answer B]", 1)[1].split("Reply with one JSON", 1)[0]
    mode = judge.get("mode", "prefer")
    if mode == "always_A":
        winner = "A"
    elif mode == "tie":
        winner = "tie"
    else:
        mark = judge.get("prefer", "")
        winner = "tie" if (mark in a) == (mark in b) else ("A" if mark in a else "B")
    notes = {c: "ok" for c in ("correctness", "completeness", "reasoning", "clarity", "lao_fluency")}
    return json.dumps({"winner": winner, "notes": notes})


def _rubric(judge: dict[str, Any], content: str, st: State, digest: str) -> str:
    """A scripted 3C3H judge: judge["scores"] (and "scores2" for a follow-up's second answer), or
    judge["when"][substring] when that substring is in the prompt (a string there spoils the reply).
    "cycle": [scores, ...] varies over repeated calls. "break": "missing_tag" | "out_of_range" |
    "not_json" spoils every reply; "malformed_first": n spoils the first n per prompt. "replies":
    {substring: text} returns that literal text when the substring is in the prompt (verbatim verdicts)."""
    for sub, text in (judge.get("replies") or {}).items():
        if sub in content:
            return text
    key = ("rubric", digest)
    st.fired[key] += 1
    scores = dict(judge.get("scores", {}))
    if judge.get("cycle"):  # varying verdicts over repeated calls, for consistency audits
        scores = dict(judge["cycle"][(st.fired[key] - 1) % len(judge["cycle"])])
    spoil = judge.get("break") or ("missing_tag" if st.fired[key] <= judge.get("malformed_first", 0) else None)
    for sub, sc in (judge.get("when") or {}).items():
        if sub in content:
            if isinstance(sc, str):
                spoil = sc
            else:
                scores = dict(sc)
    scores2 = dict(judge.get("scores2", scores))
    if spoil == "missing_tag":
        return "The answer is fine. " + json.dumps(scores)
    if spoil == "out_of_range":
        scores["Concise"] = 7
    body = json.dumps(scores) if spoil != "not_json" else "{Correct: 1}"
    reply = f"Reasoning: compared with the reference.\n<results1>{body}</results1>"
    if "<results2>" in content:
        reply += f"\n<results2>{json.dumps(scores2)}</results2>"
    return reply


def _chat_reply(body: dict[str, Any], reply: str, finish: str, content: str = "") -> web.Response:
    digest = hashlib.sha256(reply.encode()).hexdigest()
    return web.json_response({
        "id": f"chatcmpl-{digest[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": finish}],
        "usage": {"prompt_tokens": len(content.split()), "completion_tokens": len(reply.split()),
                  "total_tokens": len(content.split()) + len(reply.split())},
    })


def _unit_vector(seed: str, dims: int = 64) -> list[float]:
    import random

    rnd = random.Random(hashlib.sha256(seed.encode()).digest())
    v = [rnd.gauss(0, 1) for _ in range(dims)]
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]


def _embedding(text: str, groups: dict[str, str], dims: int = 64) -> list[float]:
    v = [0.0] * dims
    t = " ".join(text.split()).lower()
    for i in range(max(1, len(t) - 2)):
        h = int.from_bytes(hashlib.blake2b(t[i:i + 3].encode(), digest_size=4).digest(), "big")
        v[h % dims] += 1.0 if h & 1 else -1.0
    n = sum(x * x for x in v) ** 0.5 or 1.0
    v = [x / n for x in v]
    group = next((g for k, g in groups.items() if k in text), None)
    if group is not None:
        v = [g + 0.05 * x for g, x in zip(_unit_vector(group, dims), v)]
    return v


async def embeddings(request: web.Request) -> web.Response:
    st: State = request.app["state"]
    try:
        body = json.loads(await request.read())
    except ValueError:
        return web.json_response({"error": {"message": "invalid JSON body"}}, status=400)
    inputs = body.get("input")
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not all(isinstance(x, str) for x in inputs):
        return web.json_response({"error": {"message": "input must be a string or a list of strings"}}, status=400)
    st.embedding_calls += 1
    for i, rule in enumerate(st.faults):
        if rule.get("embeddings") and st.fired[(i, "emb")] < rule.get("times", 1):
            st.fired[(i, "emb")] += 1
            return web.json_response({"error": {"message": "injected"}}, status=int(rule.get("status", 500)))
    data = [{"object": "embedding", "index": i, "embedding": _embedding(x, st.embed_groups)}
            for i, x in enumerate(inputs)]
    return web.json_response({"object": "list", "data": data, "model": body.get("model", "test"),
                              "usage": {"prompt_tokens": sum(len(x.split()) for x in inputs),
                                        "total_tokens": sum(len(x.split()) for x in inputs)}})


async def models(request: web.Request) -> web.Response:
    st: State = request.app["state"]
    if st.require_key is not None and request.headers.get("Authorization") != f"Bearer {st.require_key}":
        return web.json_response({"error": {"message": "invalid API key"}}, status=401)
    return web.json_response({"object": "list", "data": [{"id": "test", "object": "model"}]})


async def control(request: web.Request) -> web.Response:
    st: State = request.app["state"]
    cfg = await request.json()
    for key in ("latency", "answers", "faults", "reject_response_format", "require_key", "record", "judges",
                "embed_groups", "sequences", "capacity", "capacity_retry_after", "batch", "model_answers"):
        if key in cfg:
            setattr(st, key, cfg[key])
    return web.json_response({"ok": True})


async def get_requests(request: web.Request) -> web.Response:
    return web.json_response(request.app["state"].requests)


async def stats(request: web.Request) -> web.Response:
    st: State = request.app["state"]
    return web.json_response({"requests": len(st.requests), "in_flight": st.in_flight,
                              "max_in_flight": st.max_in_flight, "rejected": st.rejected})


async def reset(request: web.Request) -> web.Response:
    request.app["state"].reset()
    return web.json_response({"ok": True})


def make_app(latency: float = 0.0) -> web.Application:
    app = web.Application(client_max_size=64 * 2**20)
    app["state"] = State()
    app["state"].latency = latency
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/embeddings", embeddings)
    app.router.add_post("/_control", control)
    app.router.add_get("/_requests", get_requests)
    app.router.add_get("/_stats", stats)
    app.router.add_post("/_reset", reset)
    from glotbench.testing.batch_server import add_routes

    add_routes(app)
    return app


async def serve(app: web.Application, host: str, port: int, **site: Any) -> None:
    """Serve `app` on host:port (0: any free port), print `PORT <n>` first, and run until stopped:
    the loopback servers the tests start (this one, glotbench.testing.hub) all begin this way."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, host, port, **site)
    await tcp.start()
    actual = tcp._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"PORT {actual}", flush=True)
    await asyncio.Event().wait()


async def _serve(host: str, port: int, latency: float) -> None:
    await serve(make_app(latency), host, port, backlog=1024)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0)
    a = ap.parse_args(argv)
    from glotbench.models.openai_compat import ensure_open_files

    ensure_open_files(8192)  # one socket per client connection: benchmarks open 1,000+
    try:
        asyncio.run(_serve(a.host, a.port, a.latency))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
