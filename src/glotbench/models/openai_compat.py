"""`openai:MODEL@BASE_URL`: any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp, TGI, APIs).

The client is aiohttp with a connection pool sized to the run's concurrency: measured here it reached
0.93 of a 640 req/s limit where the `openai` SDK reached 0.37 and httpx 0.10 (see docs/performance.md).
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import os
import time
from typing import Any, Literal

from glotbench.errors import GlotbenchError
from glotbench.models.base import (
    AuthError,
    BadResponse,
    ClientError,
    ConnectionFailed,
    GenerateConfig,
    ModelError,
    ModelTimeout,
    Prompt,
    RateLimited,
    Response,
    ServerError,
    Usage,
)

from glotbench.models.endpoint import DEFAULT_BASE_URL, DEFAULT_KEY_ENV, check_base_url, key_source, parse_endpoint

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_KEY_ENV", "OpenAICompatModel", "from_spec", "map_status", "parse_retry_after"]


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: either delta-seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_message(body: bytes) -> str:
    try:
        data = json.loads(body)
        err = data.get("error", data)
        msg = err.get("message") if isinstance(err, dict) else str(err)
        return str(msg or data)[:300]
    except (ValueError, AttributeError):
        return body[:300].decode("utf-8", "replace")


def map_status(status: int, body: bytes, headers: Any) -> ModelError:
    """Map an HTTP error status and body to a typed ModelError."""
    msg = f"HTTP {status}: {_error_message(body)}"
    if status == 429:
        return RateLimited(msg, status=status, retry_after=parse_retry_after(headers.get("Retry-After")))
    if status in (401, 403):
        return AuthError(msg, status=status)
    if status == 408:
        return ModelTimeout(msg, status=status)
    if status >= 500:
        return ServerError(msg, status=status, retry_after=parse_retry_after(headers.get("Retry-After")))
    return ClientError(msg, status=status)


def ensure_open_files(n: int) -> None:
    """Raise this process's soft limit on open files towards `n` (never above the hard limit).

    Each request in flight holds a socket: 1,024 in flight need more descriptors than the soft limit
    many systems start processes with (1,024), and the shortfall shows up as connection errors."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n if hard == resource.RLIM_INFINITY else min(n, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except (ValueError, OSError):  # a sandbox that forbids it: run with what there is
            pass


_REASONS: dict[str, str] = {}


def _shared_reason(reason: Any) -> Any:
    """A reply's finish reason, one string object per distinct value ("stop", "length"): each reply's
    JSON made its own, and every sample keeps it to the end of the run (about 50 bytes a sample).
    Bounded: an endpoint that sends many distinct reasons keeps the rest as they came."""
    if not isinstance(reason, str):
        return reason
    kept = _REASONS.get(reason)
    if kept is None and len(_REASONS) < 64:
        kept = _REASONS[reason] = reason
    return reason if kept is None else kept


def _count(value: Any) -> int:
    """A token count from a reply's usage: a whole number, never negative (a count of -5 is 0);
    raises ValueError or OverflowError for what is no count (a string, NaN, infinity)."""
    return max(0, int(value or 0))


@functools.lru_cache(maxsize=64)  # once per endpoint and path, not per request (11 µs a request)
def _joined_url(base_url: str, path: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    p = urlsplit(base_url)
    return urlunsplit((p.scheme, p.netloc, p.path.rstrip("/") + "/" + path, p.query, ""))


class OpenAICompatModel:
    """Chat completions over HTTP. API key from an environment variable (never from the spec); the
    base URL from the spec, else `OPENAI_BASE_URL`, else the default (`models/endpoint.py`).

    `client` (the scoring service's `GuardedClient`) replaces the plain aiohttp session for every
    request, the pre-flight included; with it the environment is never read: only `api_key` is sent."""

    default_concurrency = 16

    def __init__(
        self,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        base_url_from: str = "spec",
        spec: str | None = None,
        api_key_env: str | None = None,
        concurrency: int = 16,
        timeout_s: float = 120.0,
        client: Any = None,
        api_key: str | None = None,
    ):
        self.model = model
        self.base_url = check_base_url(base_url, f"the endpoint of {model!r}")
        self.base_url_from = base_url_from
        self.spec = spec or f"openai:{model}@{self.base_url}"
        self.cache_id = f"openai:{model}@{self.base_url}"
        self.api_key_env = api_key_env or DEFAULT_KEY_ENV
        self._explicit_key_env = api_key_env is not None
        # `client` (the scoring service's guarded client) means: no key from the environment, only
        # the one given here, and every request through that client.
        self.client = client
        self.api_key = api_key if client is not None else (api_key or os.environ.get(self.api_key_env) or None)
        self.concurrency = max(1, concurrency)
        self.timeout_s = timeout_s
        self._session: Any = None
        self._schema_supported: bool | None = None  # learnt on the first structured request

    @classmethod
    def from_spec(cls, rest: str, spec: str, **opts: Any) -> "OpenAICompatModel":
        ep = parse_endpoint(rest, spec)
        return cls(ep.model, ep.base_url, base_url_from=ep.base_url_from, spec=spec, **opts)

    def prompt_form(self) -> Literal["chat", "text"]:
        return "chat"

    def description(self) -> dict[str, Any]:
        """What a run records: the base URL and where it came from (the spec, `OPENAI_BASE_URL`, the
        default), and the variable the key came from (never the key; "none": no key was sent)."""
        return {"backend": "openai", "model": self.model, "endpoint": self.base_url,
                "base_url_from": self.base_url_from,
                # the variable read for the key, set or not (a run without a key names what was unset)
                "api_key_env": self.api_key_env if self.client is None else None,
                "api_key_from": key_source(self.api_key_env, self.api_key) if self.client is None
                else ("submitted" if self.api_key else "none")}

    def _url(self, path: str) -> str:
        """`base_url` + `/path`, keeping a query string of the base URL a query string."""
        return _joined_url(self.base_url, path)

    def _headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json"}
        if self.api_key:
            h["Authorization"] = f"Bearer {self.api_key}"
        return h

    def _get_session(self) -> Any:
        if self._session is None:
            import aiohttp  # imported lazily: a fully cached run never needs it

            ensure_open_files(self.concurrency + 256)
            connector = aiohttp.TCPConnector(limit=self.concurrency, limit_per_host=self.concurrency,
                                             ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(
                connector=connector, headers=self._headers(),
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
            )
        return self._session

    async def check(self) -> None:
        if self.client is not None:
            r = await self.client.request("GET", self._url("models"), headers=self._headers(), timeout_s=15)
            if r.status in (401, 403):
                raise GlotbenchError(f"the endpoint rejected the request for its model list (HTTP {r.status})")
            return
        if self.base_url == DEFAULT_BASE_URL or self._explicit_key_env:
            if not self.api_key:
                raise GlotbenchError(
                    f"no API key: set the environment variable {self.api_key_env} for {self.base_url}")
        import aiohttp

        session = self._get_session()
        try:
            async with session.get(self._url("models"),
                                   timeout=aiohttp.ClientTimeout(total=min(self.timeout_s, 15))) as r:
                if r.status in (401, 403):
                    raise GlotbenchError(
                        f"the endpoint {self.base_url} rejected the API key (HTTP {r.status}); "
                        f"check {self.api_key_env}")
        except (aiohttp.ClientConnectionError, asyncio.TimeoutError, OSError) as e:
            raise GlotbenchError(f"cannot reach the endpoint {self.base_url}: "
                                 f"{type(e).__name__}: {e}".rstrip(": ")) from None

    def _payload(self, prompt: Prompt, config: GenerateConfig, use_schema: bool) -> dict[str, Any]:
        p: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in prompt.messages],
            "temperature": config.temperature,
            "max_tokens": config.max_tokens,
        }
        if config.seed is not None:
            p["seed"] = config.seed
        if config.stop:
            p["stop"] = list(config.stop)
        if config.thinking is not None:  # vLLM / SGLang chat-template switch (Qwen3, DeepSeek, ...)
            p["chat_template_kwargs"] = {"enable_thinking": config.thinking}
        if use_schema and prompt.json_schema is not None:
            p["response_format"] = {"type": "json_schema", "json_schema": dict(prompt.json_schema)}
        return p

    async def _post(self, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
        import aiohttp

        t0 = time.perf_counter()
        url = self._url("chat/completions")
        if self.client is not None:  # the service's guarded client: it raises ModelErrors itself
            r = await self.client.request("POST", url, json=payload, headers=self._headers())
            status, body, headers = r.status, r.body, r.headers
        else:
            session = self._get_session()
            try:
                async with session.post(url, json=payload) as resp:
                    status, body, headers = resp.status, await resp.read(), resp.headers
            except asyncio.TimeoutError:
                raise ModelTimeout(f"no reply within {self.timeout_s:g} s") from None
            except aiohttp.ClientConnectionError as e:
                raise ConnectionFailed(f"{type(e).__name__}: {e}") from None
        if status != 200:
            raise map_status(status, body, headers)
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            raise BadResponse(f"reply is not JSON: {body[:120]!r}") from None
        return data, time.perf_counter() - t0

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0) -> Response:
        want_schema = config.structured_output and prompt.json_schema is not None
        use_schema = want_schema and self._schema_supported is not False
        try:
            data, latency = await self._post(self._payload(prompt, config, use_schema))
        except ClientError as e:
            if not (use_schema and e.status in (400, 404, 422)):
                raise
            # The endpoint rejects response_format: fall back to the prompt's JSON instruction.
            self._schema_supported = False
            use_schema = False
            data, latency = await self._post(self._payload(prompt, config, False))
        if use_schema:
            self._schema_supported = True
        return self.response_from(data, latency, ("json_schema" if use_schema else "prompt") if want_schema else None)

    @staticmethod
    def response_from(data: Any, latency: float = 0.0, structured_output: str | None = None,
                      **raw: Any) -> Response:
        """A chat completion body as a Response (a reply, or a Batch API output line's body)."""
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
            if not isinstance(text, str):
                raise TypeError("content is not a string")
            usage = data.get("usage") or {}
            return Response(
                text=text,
                finish_reason=_shared_reason(choice.get("finish_reason")),
                usage=Usage(_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))),
                latency_s=latency,
                structured_output=structured_output,
                raw={"id": data.get("id"), "model": data.get("model"), **raw},
            )
        except (KeyError, IndexError, TypeError, AttributeError, ValueError, OverflowError) as e:
            raise BadResponse(f"reply lacks choices[0].message.content or a readable usage ({e})") from None

    # -- the Batch API (engine/batch.py) --

    def batch_line(self, custom_id: str, prompt: Prompt, config: GenerateConfig) -> dict[str, Any]:
        """One line of a batch input file: the body `generate` would POST."""
        use_schema = config.structured_output and prompt.json_schema is not None
        return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
                "body": self._payload(prompt, config, use_schema)}

    def endpoint_url(self, path: str) -> str:
        return self._url(path)

    def request_headers(self) -> dict[str, str]:
        """Headers of a request without a JSON body (the key, if any)."""
        return {k: v for k, v in self._headers().items() if k != "Content-Type"}

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        if self._session is not None:
            await self._session.close()
            self._session = None


def from_spec(rest: str, *, spec: str, **opts: Any) -> OpenAICompatModel:
    """The registry's factory for `openai:MODEL@BASE_URL`."""
    return OpenAICompatModel.from_spec(rest, spec, **opts)
