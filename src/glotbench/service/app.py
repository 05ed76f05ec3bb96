"""The FastAPI app: submissions with API keys, set listings, released-set downloads, leaderboard.

Every error is JSON `{"error": "..."}` with a 4xx status (5xx only for a bug, without details);
nothing of a rejected submission is stored. A submission is authenticated and rate limited before
its body is read; the body is limited to what the largest open set needs while it streams in and
parsed once, in a worker thread (at most two at a time). Every route is rate limited, and every
response carries security headers. There is no interactive /docs page (it would load its scripts
from a CDN, which an offline or CSP-locked deployment cannot); the API is described at /openapi.json.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import Depends, FastAPI, Path as PathParam, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from glotbench.service.core import Service, ServiceError, Settings
from glotbench.service.guards import BODY_LIMIT_KEY, RequestGuard, SecurityHeaders, parse_json_body
from glotbench.service.ratelimit import RateLimited, RateLimiter, client_bucket
from glotbench.service.sets import settle_heap
from glotbench.service.views import Views

STATIC = Path(__file__).parent / "templates"
Body = TypeVar("Body", bound=BaseModel)
DOWNLOAD_PIECE = 64 * 2**10  # a released set is written in pieces this size
PARSERS = 2  # submission bodies parsed at once (each in a worker thread): bounds the memory they take
IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,100}")  # printable ASCII, no space, at most 100 characters


class SubmissionIn(BaseModel):
    """Either `answers` (every item id -> its answer) or `endpoint` (an OpenAI-compatible base URL)
    with `model` and, if the endpoint needs one, `api_key` (used for this run only, never stored)."""

    model_config = ConfigDict(extra="forbid")
    set: str | None = Field(None, max_length=100, description="Test set name (default: the benchmark's current set)")
    benchmark: str | None = Field(None, max_length=100)
    model: str = Field("", max_length=300, description="Model name, shown on the leaderboard")
    description: str = Field("", max_length=2000)
    answers: dict[str, str] | None = None
    endpoint: str | None = Field(None, max_length=2000, description="Never published")
    api_key: str | None = Field(None, max_length=4096, description="The endpoint's key: memory only, this run only")
    judges: list[Annotated[str, Field(max_length=300)]] | None = Field(
        None, max_length=16, description="A judged set's judges as GET /api/sets shows them (a pin: fixed by the operator)")
    bench_options: dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=2000)]] | None = Field(
        None, max_length=16, description="The set's benchmark options as GET /api/sets shows them (a pin)")

    @model_validator(mode="after")
    def one_kind(self) -> "SubmissionIn":
        if (self.answers is None) == (self.endpoint is None):
            raise ValueError("give exactly one of answers or endpoint")
        if self.set is None and self.benchmark is None:
            raise ValueError("name a set or a benchmark")
        if self.endpoint is not None and not self.model.strip():
            raise ValueError("an endpoint submission needs the model name")
        if self.api_key is not None and self.endpoint is None:
            raise ValueError("api_key goes with an endpoint submission only")
        if (self.judges is not None or self.bench_options is not None) and self.endpoint is None:
            raise ValueError("judges and bench_options go with an endpoint submission only (answers are not judged)")
        return self


class PublishIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    public: bool = True


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _first_problem(errors: list[Any]) -> str:
    first = errors[0] if errors else {}
    where = ".".join(str(x) for x in first.get("loc", ()) if x != "body")
    msg = str(first.get("msg", "")).removeprefix("Value error, ")
    return f"invalid request: {where} {msg}".strip()


def parse_body(model: type[Body], raw: bytes, max_members: int) -> Body:
    """A request body, parsed once (guards.parse_json_body) and validated as `model`."""
    data = parse_json_body(raw, max_members)
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ServiceError(422, _first_problem(e.errors())) from None


def create_app(settings: Settings) -> FastAPI:
    from glotbench.service.jobs import JobRunner

    service = Service(settings, freeze_sets=True)  # a server process: keep long-lived objects out of the GC
    views = Views(service)
    limiter = RateLimiter(settings.rate_per_minute, settings.rate_storage)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> Any:
        service.jobs = JobRunner(service)
        service.jobs.start()
        settle_heap()  # what start-up made lives as long as the process (service/sets.py)
        yield
        await run_in_threadpool(service.jobs.stop)

    app = FastAPI(title="glotbench scoring service", version="2", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.service = service
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(STATIC), autoescape=select_autoescape())

    @app.exception_handler(ServiceError)
    async def service_error(_: Request, e: ServiceError) -> JSONResponse:
        return _error(e.status, e.message, {"Retry-After": str(int(e.retry_after) + 1)} if e.retry_after else None)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, e: RequestValidationError) -> JSONResponse:
        return _error(422, _first_problem(list(e.errors())))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, e: StarletteHTTPException) -> JSONResponse:
        return _error(e.status_code, str(e.detail) if e.detail else "error", getattr(e, "headers", None))

    @app.exception_handler(Exception)
    async def internal(_: Request, e: Exception) -> JSONResponse:
        return _error(500, "internal error")

    app.add_middleware(RequestGuard, body_timeout_s=settings.body_timeout_s)
    app.add_middleware(SecurityHeaders)  # outermost: on the guard's own replies too

    def address(request: Request) -> str:
        """The client's address (an IPv6 one's /64): the peer's, or the one a trusted proxy
        (--trusted-proxy) names."""
        return client_bucket(request.client.host) if request.client else "unknown"

    def hit_address(request: Request) -> None:
        try:
            limiter.hit(f"addr:{address(request)}")
        except RateLimited as e:
            raise ServiceError(429, str(e), retry_after=e.retry_after) from None

    if settings.rate_storage.startswith("memory"):
        async def public_route(request: Request) -> None:
            """Per-address limit (in memory: no thread hop for the cached leaderboard)."""
            hit_address(request)
    else:
        def public_route(request: Request) -> None:  # type: ignore[misc]
            """Per-address limit (Redis: a network round trip, kept off the event loop)."""
            hit_address(request)

    def caller(request: Request) -> int:
        auth = request.headers.get("authorization", "")
        key = auth[7:].strip() if auth.lower().startswith("bearer ") else None
        hit_address(request)
        key_id = service.authenticate(key)
        try:
            limiter.hit(f"key:{key_id}")
        except RateLimited as e:
            raise ServiceError(429, str(e), retry_after=e.retry_after) from None
        return key_id

    parsers = asyncio.Semaphore(PARSERS)
    schema = SubmissionIn.model_json_schema()
    pending = [0]  # submissions in progress in this process (body, parsing, scoring)

    def idempotency(request: Request) -> str | None:
        key = request.headers.get("idempotency-key")
        if key is not None and not IDEMPOTENCY_KEY.fullmatch(key):
            raise ServiceError(422, "invalid request: Idempotency-Key must be 1 to 100 printable ASCII characters")
        return key

    @app.post("/api/submissions", status_code=200, openapi_extra={"requestBody": {
        "required": True, "content": {"application/json": {"schema": schema}}}})
    async def submit(request: Request, key_id: int = Depends(caller)) -> JSONResponse:
        """Authenticated and rate limited (the dependency) before a byte of the body is read; at most
        `max_pending` in progress per process (503 beyond, before the body), so concurrent maximal
        bodies hold a bounded amount of memory. With an `Idempotency-Key` header, a retry of the same
        request gets the stored reply (`replayed`), not charged again."""
        idem_key = idempotency(request)
        if pending[0] >= settings.max_pending:
            raise ServiceError(503, "busy: too many submissions in progress; retry shortly", retry_after=2)
        pending[0] += 1
        try:
            return await _submit(request, key_id, idem_key)
        finally:
            pending[0] -= 1

    async def _submit(request: Request, key_id: int, idem_key: str | None) -> JSONResponse:
        max_members, max_bytes = await run_in_threadpool(service.body_limits)
        request.scope[BODY_LIMIT_KEY] = max_bytes  # the guard holds the body to it while it streams in
        raw = await request.body()
        async with parsers:
            body = await run_in_threadpool(parse_body, SubmissionIn, raw, max(16, max_members))
        idem = None
        if idem_key is not None:  # the request as sent, less the endpoint's key (never stored)
            canon = json.dumps(body.model_dump(exclude={"api_key"}), sort_keys=True, ensure_ascii=True)
            idem = (idem_key, hashlib.sha256(canon.encode()).hexdigest())
        if body.answers is not None:
            out = await run_in_threadpool(lambda: service.submit_answers(
                key_id, body.answers or {}, set_name=body.set, benchmark=body.benchmark, model=body.model,
                description=body.description, idem=idem))
            views.invalidate()
            return JSONResponse(out)
        out = await run_in_threadpool(lambda: service.submit_endpoint(
            key_id, body.endpoint or "", body.model.strip(), api_key=body.api_key, set_name=body.set,
            benchmark=body.benchmark, description=body.description, idem=idem, judges=body.judges,
            bench_options=body.bench_options))
        return JSONResponse(out, status_code=202)

    @app.get("/api/submissions")
    def own_submissions(idempotency_key: str | None = Query(None, max_length=100),
                        key_id: int = Depends(caller)) -> list[dict[str, Any]]:
        """The key's own submissions, newest first (at most 100), or the one made with an Idempotency-Key."""
        return service.submissions(key_id, idempotency_key)

    @app.get("/api/submissions/{sid}")
    def submission(sid: int = PathParam(..., ge=1, le=2**62), key_id: int = Depends(caller)) -> dict[str, Any]:
        return service.get_submission(key_id, sid)

    @app.post("/api/submissions/{sid}/publish", openapi_extra={"requestBody": {
        "required": True, "content": {"application/json": {"schema": PublishIn.model_json_schema()}}}})
    async def publish(request: Request, sid: int = PathParam(..., ge=1, le=2**62),
                      key_id: int = Depends(caller)) -> dict[str, Any]:
        """Like a submission, authenticated before its body is read (a body parameter would make
        FastAPI read it first: an unauthenticated client dribbling it held a request in flight)."""
        body = parse_body(PublishIn, await request.body(), 16)
        out = await run_in_threadpool(service.publish, key_id, sid, body.public)
        views.invalidate()
        return out

    @app.get("/api/sets", dependencies=[Depends(public_route)])
    def sets() -> list[dict[str, Any]]:
        return views.sets()

    @app.get("/api/sets/{name}/download", dependencies=[Depends(public_route)],
             responses={200: {"content": {"application/json": {}}, "description": "the set's items and gold"}})
    async def download(name: str = PathParam(..., max_length=100)) -> Response:
        """Streamed in 64 KiB pieces from the cached body: a client that reads slowly holds one piece
        in this process's buffers, not a copy of the whole set (the send timeout drops one that
        reads nothing)."""
        body = await run_in_threadpool(views.download, name)

        async def pieces() -> Any:
            for i in range(0, len(body), DOWNLOAD_PIECE):
                yield body[i:i + DOWNLOAD_PIECE]

        return StreamingResponse(pieces(), media_type="application/json", headers={"Content-Length": str(len(body))})

    rendered: dict[str, tuple[Any, bytes]] = {}

    def cached(kind: str, board: list[dict[str, Any]]) -> bytes:
        """Serialise once per leaderboard refresh (the board object changes when it is rebuilt)."""
        hit = rendered.get(kind)
        if hit is None or hit[0] is not board:
            body = (json.dumps(board, ensure_ascii=False) if kind == "json"
                    else env.get_template("leaderboard.html").render(tables=board)).encode("utf-8")
            rendered[kind] = hit = (board, body)
        return hit[1]

    async def board() -> list[dict[str, Any]]:
        return await run_in_threadpool(views.leaderboard) if views.stale() else views.leaderboard()

    @app.get("/api/leaderboard", response_model=list[dict[str, Any]], dependencies=[Depends(public_route)])
    async def leaderboard_json() -> Response:
        return Response(cached("json", await board()), media_type="application/json")

    @app.get("/", response_class=HTMLResponse, dependencies=[Depends(public_route)])
    async def leaderboard_page() -> Response:
        return Response(cached("html", await board()), media_type="text/html; charset=utf-8")

    assets = {name: (STATIC / name).read_bytes() for name in ("board.js", "board.css")}

    @app.get("/static/{name}", include_in_schema=False)
    async def static(name: str) -> Response:
        if name not in assets:
            raise ServiceError(404, "not found")
        kind = "text/javascript" if name.endswith(".js") else "text/css"
        return Response(assets[name], media_type=f"{kind}; charset=utf-8", headers={"Cache-Control": "max-age=300"})

    @app.get("/healthz")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app
