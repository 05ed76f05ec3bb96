"""The OpenAI Batch API on the test server (`glotbench.testing.server` mounts these routes):
files and batches as the providers document them, each request of a batch answered by the
server's own chat endpoint (so `answers` and fault rules apply to batch lines too).

- POST /v1/files (multipart: `purpose=batch`, `file`) → a file object; GET /v1/files/{id}/content.
- POST /v1/batches {input_file_id, endpoint: "/v1/chat/completions", completion_window: "24h"}
  → a batch object, status `validating`; GET /v1/batches/{id} advances it one step per poll:
  validating → in_progress (the requests are run) → finalizing → completed, with `output_file_id`
  (lines whose request returned 200) and `error_file_id` (the others: `response.status_code` and
  the error body, or `error.code` `batch_expired`), `request_counts` {total, completed, failed}.
- Behaviour through POST /_control {"batch": {...}}: `validating_polls` / `in_progress_polls`
  (polls spent in each status, default 1), `hold` (true: stay in_progress until set false again),
  `expire_after` (n: the batch expires after its first n requests; the rest are `batch_expired`
  error lines), `fail_validation` (the batch goes to `failed` with errors.data), `drop_output` (n:
  the first n answered lines are in neither file: partial results), `output_extra` (raw lines
  appended to the output file: malformed ones), `report_status` (the status every poll reports
  instead of the real one; null: none).
- GET /_batch_stats: {"uploads", "batches", "polls", "lines"}: what clients did.
Batch state survives POST /_control (a test can release a held batch) and is cleared by /_reset.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from aiohttp import ClientSession, web

TERMINAL = {"completed", "failed", "expired", "cancelled"}


class BatchState:
    def __init__(self) -> None:
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.polls = 0
        self.lines = 0  # batch lines run

    def stats(self) -> dict[str, int]:
        return {"uploads": sum(1 for f in self.files.values() if f["purpose"] == "batch"),
                "batches": len(self.batches), "polls": self.polls, "lines": self.lines}


def _state(request: web.Request) -> BatchState:
    st = request.app["state"]
    if getattr(st, "batch_state", None) is None:
        st.batch_state = BatchState()
    return st.batch_state


def _settings(request: web.Request) -> dict[str, Any]:
    return dict(getattr(request.app["state"], "batch", None) or {})


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=status)


def _authorized(handler):  # noqa: ANN001, ANN202 - an aiohttp handler
    """The server's `require_key` applies to the Batch API too."""
    async def wrapped(request: web.Request) -> web.Response:
        key = request.app["state"].require_key
        if key is not None and request.headers.get("Authorization") != f"Bearer {key}":
            return _error(401, "invalid API key")
        return await handler(request)
    return wrapped


def _file_object(f: dict[str, Any]) -> dict[str, Any]:
    return {k: f[k] for k in ("id", "object", "bytes", "created_at", "filename", "purpose")}


@_authorized
async def upload_file(request: web.Request) -> web.Response:
    bs = _state(request)
    try:
        form = await request.post()
    except Exception:  # noqa: BLE001 - not multipart
        return _error(400, "expected multipart/form-data with purpose and file")
    purpose, upload = form.get("purpose"), form.get("file")
    if purpose != "batch" or not isinstance(upload, web.FileField):
        return _error(400, "purpose must be 'batch' and file must be given")
    data = upload.file.read()
    fid = f"file-{len(bs.files) + 1:06d}"
    bs.files[fid] = {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                     "filename": upload.filename or "batch.jsonl", "purpose": "batch", "data": data}
    return web.json_response(_file_object(bs.files[fid]))


@_authorized
async def file_content(request: web.Request) -> web.Response:
    f = _state(request).files.get(request.match_info["file_id"])
    if f is None:
        return _error(404, "no such file")
    return web.Response(body=f["data"], content_type="application/octet-stream")


@_authorized
async def create_batch(request: web.Request) -> web.Response:
    bs = _state(request)
    try:
        body = await request.json()
    except ValueError:
        return _error(400, "invalid JSON body")
    f = bs.files.get(body.get("input_file_id"))
    if f is None:
        return _error(404, "input file not found")
    if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
        return _error(400, "endpoint must be /v1/chat/completions and completion_window 24h")
    bid = f"batch_{len(bs.batches) + 1:06d}"
    now = int(time.time())
    lines = [json.loads(x) for x in f["data"].decode("utf-8").splitlines() if x.strip()]
    bs.batches[bid] = {
        "id": bid, "object": "batch", "endpoint": body["endpoint"], "input_file_id": f["id"],
        "completion_window": "24h", "status": "validating", "output_file_id": None, "error_file_id": None,
        "created_at": now, "in_progress_at": None, "expires_at": now + 86400, "finalizing_at": None,
        "completed_at": None, "failed_at": None, "expired_at": None, "errors": None,
        "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
        "metadata": body.get("metadata"), "_lines": lines, "_polls": 0, "_task": None, "_results": None,
    }
    return web.json_response(_public(bs.batches[bid]))


def _public(b: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in b.items() if not k.startswith("_")}


async def _run_lines(base: str, lines: list[dict[str, Any]], limit: int | None, headers: dict[str, str]) -> list[dict[str, Any]]:
    """Each line through the server's own chat endpoint (fault rules and answers apply)."""
    out = []
    async with ClientSession() as session:
        for i, line in enumerate(lines):
            rid = f"batch_req_{i:06d}"
            if limit is not None and i >= limit:
                out.append({"id": rid, "custom_id": line.get("custom_id"), "response": None,
                            "error": {"code": "batch_expired",
                                      "message": "This request could not be executed before the completion window expired."}})
                continue
            async with session.post(base + "/v1/chat/completions", json=line.get("body"), headers=headers) as r:
                body = await r.read()
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = {"error": {"message": body[:200].decode("utf-8", "replace")}}
            out.append({"id": rid, "custom_id": line.get("custom_id"), "error": None,
                        "response": {"status_code": r.status, "request_id": f"req_{i:06d}", "body": parsed}})
    return out


def _store(bs: BatchState, name: str, rows: list[dict[str, Any]], extra: list[str] | None = None) -> str | None:
    if not rows and not extra:
        return None
    fid = f"file-{len(bs.files) + 1:06d}"
    data = "".join([json.dumps(r, ensure_ascii=False) + "\n" for r in rows] + [x + "\n" for x in extra or ()]).encode("utf-8")
    bs.files[fid] = {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                     "filename": name, "purpose": "batch_output", "data": data}
    return fid


@_authorized
async def get_batch(request: web.Request) -> web.Response:
    bs = _state(request)
    b = bs.batches.get(request.match_info["batch_id"])
    if b is None:
        return _error(404, "no such batch")
    bs.polls += 1
    cfg = _settings(request)
    now = int(time.time())
    b["_polls"] += 1
    if b["status"] == "validating" and b["_polls"] > int(cfg.get("validating_polls", 1)):
        if cfg.get("fail_validation"):
            b.update(status="failed", failed_at=now, errors={"object": "list", "data": [
                {"code": "invalid_request", "message": "injected validation failure", "line": 1}]})
        else:
            b.update(status="in_progress", in_progress_at=now, _polls=0)
            base = f"http://{request.host}"
            auth = {"Authorization": request.headers["Authorization"]} if "Authorization" in request.headers else {}
            limit = cfg.get("expire_after")
            b["_task"] = asyncio.ensure_future(_run_lines(base, b["_lines"], limit, auth))
    elif b["status"] == "in_progress" and b["_task"] is not None and b["_task"].done() \
            and not cfg.get("hold") and b["_polls"] > int(cfg.get("in_progress_polls", 1)):
        results = b["_task"].result()
        bs.lines += sum(1 for r in results if r["response"] is not None)
        ok = [r for r in results if r["response"] is not None and r["response"]["status_code"] == 200]
        bad = [r for r in results if r not in ok]
        expired = any(r["error"] and r["error"]["code"] == "batch_expired" for r in results)
        b.update(status="finalizing", finalizing_at=now, _results=(ok, bad, expired), _polls=0,
                 request_counts={"total": len(results), "completed": len(ok), "failed": len(bad)})
    elif b["status"] == "finalizing":
        ok, bad, expired = b["_results"]
        ok = ok[int(cfg.get("drop_output", 0)):]  # lines the provider lost: in neither file
        b.update(output_file_id=_store(bs, f"{b['id']}_output.jsonl", ok, cfg.get("output_extra")),
                 error_file_id=_store(bs, f"{b['id']}_error.jsonl", bad))
        b.update(status="expired", expired_at=now) if expired else b.update(status="completed", completed_at=now)
    public = _public(b)
    if "report_status" in cfg:  # a provider whose batch object says something else (or nothing)
        public["status"] = cfg["report_status"]
    return web.json_response(public)


async def batch_stats(request: web.Request) -> web.Response:
    return web.json_response(_state(request).stats())


def add_routes(app: web.Application) -> None:
    app.router.add_post("/v1/files", upload_file)
    app.router.add_get("/v1/files/{file_id}/content", file_content)
    app.router.add_post("/v1/batches", create_batch)
    app.router.add_get("/v1/batches/{batch_id}", get_batch)
    app.router.add_get("/_batch_stats", batch_stats)
