"""`--batch`: send a run's uncached requests through the provider's Batch API, then run as usual.

The Batch API (OpenAI's, and the providers that copy it: Together, Groq, Mistral, vLLM's batch
runner, ...) takes a JSONL file of requests uploaded to `/v1/files` (purpose `batch`), runs it as a
batch (`POST /v1/batches`, completion window 24h) at a discount (half price at OpenAI), and returns
an output file and an error file. Here the batch is a pre-pass that fills the call cache:

1. Each uncached unit of the run (the runner's own `prepare`: the same prompt, config and cache
   key) becomes one line whose `custom_id` is its cache key and whose body is exactly what
   `generate` would POST. Files hold at most 50,000 lines / 190 MB (the documented limits are
   50,000 / 200 MB); a larger run is several batches.
2. The batch ids are written to `batch.json` in the run directory as soon as each batch is created:
   a killed process, run again with the same command, polls the batches it created instead of
   uploading again (one submission per run directory).
3. Polled every `--batch-poll` seconds until each batch is completed, expired, failed or cancelled;
   the output and error files are downloaded, and every line with status 200 is put in the call
   cache under its key, as a normal reply would be.
4. The ordinary runner then runs: what the batch answered is a cache hit; what it did not (error
   lines, requests expired with the batch, a batch that failed validation) is sent as a normal
   request, with the usual retries. A re-run makes no call at all.

Cost: `results.json` `batch.tokens` are the batch's own usage; `cost.billed_now` adds them at the
batch price (`--batch-discount`, default 0.5: half the listed prices).
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any, Iterable

from glotbench.engine.estimate import inner_model
from glotbench.errors import GlotbenchError
from glotbench.models.base import BadResponse, ModelError
from glotbench.rundir import write_json_atomic

log = logging.getLogger("glotbench")

STATE_FILE = "batch.json"
MAX_LINES = 50_000
MAX_BYTES = 190 * 2**20
TERMINAL = ("completed", "expired", "failed", "cancelled")
STATUSES = ("validating", "in_progress", "finalizing", "cancelling", *TERMINAL)  # the documented batch statuses
MAX_POLL_FAILURES = 20  # consecutive failed polls before giving up (the batch id stays in batch.json)


class BatchClient:
    """The four calls of the Batch API, over the model's endpoint and key."""

    def __init__(self, model: Any, timeout_s: float = 300.0):
        self.model = model
        self.timeout_s = timeout_s
        self._session: Any = None

    async def __aenter__(self) -> "BatchClient":
        import aiohttp

        self._session = aiohttp.ClientSession(headers=self.model.request_headers(),
                                              timeout=aiohttp.ClientTimeout(total=self.timeout_s))
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._session.close()

    async def _request(self, method: str, path: str, **kw: Any) -> bytes:
        import aiohttp

        from glotbench.models.openai_compat import map_status

        url = self.model.endpoint_url(path)
        try:
            async with self._session.request(method, url, **kw) as r:
                body = await r.read()
                if r.status != 200:
                    raise map_status(r.status, body, r.headers)
                return body
        except asyncio.TimeoutError:
            raise ModelError(f"{method} {url}: no reply within {self.timeout_s:g} s") from None
        except aiohttp.ClientError as e:
            raise ModelError(f"{method} {url}: {type(e).__name__}: {e}") from None

    async def _json(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        body = await self._request(method, path, **kw)
        try:
            data = json.loads(body)
        except ValueError:
            raise BadResponse(f"{path}: the reply is not JSON: {body[:120]!r}") from None
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            raise BadResponse(f"{path}: the reply has no id: {body[:120]!r}")
        return data

    async def upload(self, data: bytes, name: str) -> str:
        import aiohttp

        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field("file", data, filename=name, content_type="application/jsonl")
        return (await self._json("POST", "files", data=form))["id"]

    async def create(self, file_id: str) -> dict[str, Any]:
        return await self._json("POST", "batches", json={"input_file_id": file_id, "endpoint": "/v1/chat/completions",
                                                         "completion_window": "24h"})

    async def get(self, batch_id: str) -> dict[str, Any]:
        """The batch object; one without a documented status is a bad reply (a failed poll), so
        a provider that never says 'completed' ends in an error, not a wait for ever."""
        batch = await self._json("GET", f"batches/{batch_id}")
        if batch.get("status") not in STATUSES:
            raise BadResponse(f"batches/{batch_id}: status {batch.get('status')!r} is none of {', '.join(STATUSES)}")
        return batch

    async def content(self, file_id: str) -> bytes:
        return await self._request("GET", f"files/{file_id}/content")


def _read_state(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise GlotbenchError(f"{path}: not a readable batch state ({e}); delete it to submit a new batch") from None
    if not isinstance(state, dict) or not isinstance(state.get("batches"), list):
        raise GlotbenchError(f"{path}: not a glotbench batch state; delete it to submit a new batch")
    return state


def _chunks(lines: Iterable[bytes]) -> Iterable[list[bytes]]:
    chunk: list[bytes] = []
    size = 0
    for line in lines:
        if chunk and (len(chunk) >= MAX_LINES or size + len(line) > MAX_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(line)
        size += len(line)
    if chunk:
        yield chunk


async def prefill_from_batch(runner: Any, items: Any, out_dir: Path, options: Any) -> dict[str, Any]:
    """Fill the call cache from the Batch API for the run's uncached units; returns what
    results.json records under `batch`."""
    from glotbench.engine.runner import Unit

    model = inner_model(runner.model)
    if not hasattr(model, "batch_line") or getattr(model, "client", None) is not None:
        raise GlotbenchError(f"--batch needs an openai: endpoint model; {runner.model.spec} has no Batch API")
    if runner.cache is None:
        raise GlotbenchError("--batch needs the call cache (batch replies are delivered through it); drop --no-cache")
    if runner.benchmark.method == "loglik":
        raise GlotbenchError("--batch sends chat completions; the log-likelihood method needs a local model")
    pending = {}
    for item in items:
        for r in range(runner.repeats):
            u = runner.prepare(Unit(item, r))
            if u.cached is None:
                pending[u.key] = u
    to_send = len(pending)
    path = Path(out_dir) / STATE_FILE
    state = _read_state(path)
    resumed = state is not None
    async with BatchClient(model) as api:
        if state is None:
            state = {"endpoint": model.endpoint_url(""), "model": model.cache_id, "batches": []}
            if pending:
                await runner.model.check()
                lines = (json.dumps(model.batch_line(k, u.prompt, u.config), ensure_ascii=False).encode("utf-8") + b"\n"
                         for k, u in pending.items())
                for n, chunk in enumerate(_chunks(lines)):
                    try:
                        file_id = await api.upload(b"".join(chunk), f"glotbench-{Path(out_dir).name}-{n}.jsonl")
                        batch = await api.create(file_id)
                    except ModelError as e:
                        raise GlotbenchError(f"the endpoint refused the batch ({e}); run without --batch") from None
                    state["batches"].append({"id": batch["id"], "input_file_id": file_id, "requests": len(chunk),
                                             "status": batch.get("status"), "downloaded": False})
                    write_json_atomic(path, state)
                    log.info("batch %s created: %d requests", batch["id"], len(chunk))
        else:
            log.info("resuming %d batch(es) from %s", len(state["batches"]), path)
        await _poll(api, state, path, options.batch_poll_s)
        filled, failures, tokens = await _download(api, state, path, pending, runner, model)
    runner.cache.flush()
    return {"batches": [{k: b.get(k) for k in ("id", "status", "requests", "completed", "failed")}
                        for b in state["batches"]],
            "requests": sum(b["requests"] for b in state["batches"]), "filled": filled,
            "failures": failures, "sent_as_requests": to_send - filled, "resumed": resumed,
            "tokens": tokens, "discount": options.batch_discount}


async def _poll(api: BatchClient, state: dict[str, Any], path: Path, every_s: float) -> None:
    failures = 0
    while True:
        waiting = [b for b in state["batches"] if b.get("status") not in TERMINAL]
        if not waiting:
            return
        for b in waiting:
            try:
                batch = await api.get(b["id"])
                failures = 0
            except ModelError as e:
                failures += 1
                if failures >= MAX_POLL_FAILURES:
                    raise GlotbenchError(f"cannot poll batch {b['id']} ({e}); run the same command again to "
                                         f"resume polling it ({path})") from None
                continue
            counts = batch.get("request_counts") or {}
            if batch.get("status") != b.get("status"):
                log.info("batch %s: %s (%s/%s done)", b["id"], batch.get("status"),
                         counts.get("completed", 0), counts.get("total", b["requests"]))
            b.update(status=batch.get("status"), output_file_id=batch.get("output_file_id"),
                     error_file_id=batch.get("error_file_id"), completed=counts.get("completed"),
                     failed=counts.get("failed"), errors=batch.get("errors"))
        write_json_atomic(path, state)
        if any(b.get("status") not in TERMINAL for b in state["batches"]):
            await asyncio.sleep(every_s)


async def _download(api: BatchClient, state: dict[str, Any], path: Path, pending: dict[str, Any], runner: Any,
                    model: Any) -> tuple[int, dict[str, int], dict[str, int]]:
    """Each finished batch's output and error lines: a 200 reply goes into the cache under its
    custom_id (the unit's cache key); the rest are counted by reason and left to normal requests."""
    filled = 0
    failures: dict[str, int] = {}
    tokens = {"prompt": 0, "completion": 0}
    for b in state["batches"]:
        if not b.get("downloaded"):
            b["tokens"] = {"prompt": 0, "completion": 0}
            mine: dict[str, int] = {}
            if b.get("status") in ("failed", "cancelled"):
                mine[f"batch_{b['status']}"] = b["requests"]
                log.warning("batch %s %s: its %d requests are sent as normal requests", b["id"], b["status"],
                            b["requests"])
            for fid in (b.get("output_file_id"), b.get("error_file_id")):
                if not fid:
                    continue
                try:
                    data = await api.content(fid)
                except ModelError as e:
                    raise GlotbenchError(f"cannot download {fid} of batch {b['id']} ({e}); run the same command "
                                         f"again to retry") from None
                for raw in data.splitlines():
                    n, reason = _take_line(raw, pending, runner, model, b)
                    filled += n
                    if reason:
                        mine[reason] = mine.get(reason, 0) + 1
            b["downloaded"] = True
            b["failures"] = mine
            write_json_atomic(path, state)
        for reason, n in (b.get("failures") or {}).items():
            failures[reason] = failures.get(reason, 0) + n
        for k in tokens:
            tokens[k] += (b.get("tokens") or {}).get(k, 0)
    return filled, failures, tokens


def _take_line(raw: bytes, pending: dict[str, Any], runner: Any, model: Any, batch: dict[str, Any]) -> tuple[int, str | None]:
    if not raw.strip():
        return 0, None
    try:
        row = json.loads(raw)
        key = row["custom_id"]
        response = row.get("response") or {}
    except (ValueError, KeyError, TypeError, AttributeError):
        return 0, "malformed_line"
    if not isinstance(key, str):  # a list or an object cannot be a key: the line is malformed, not the run
        return 0, "malformed_line"
    unit = pending.get(key)
    if unit is None:  # already cached (a resumed download), or not this run's
        return 0, None
    status = response.get("status_code") if isinstance(response, dict) else None
    if status != 200:
        err = row.get("error") or {}
        return 0, str(err.get("code") if isinstance(err, dict) and err.get("code") else f"http_{status}")
    want = unit.config.structured_output and unit.prompt.json_schema is not None
    try:
        resp = model.response_from(response.get("body"), 0.0, "json_schema" if want else None, batch_id=batch["id"])
    except BadResponse:
        return 0, "bad_response"
    runner.cache.put(key, model.cache_id, resp)
    batch["tokens"]["prompt"] += resp.usage.prompt_tokens
    batch["tokens"]["completion"] += resp.usage.completion_tokens
    del pending[key]
    return 1, None
