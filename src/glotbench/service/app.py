"""The FastAPI app: submissions with API keys, set listings, released-set downloads, leaderboard.

Errors are JSON `{"error": "..."}` with a 4xx status; nothing of a rejected submission is stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Path as PathParam, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field, model_validator

from glotbench.service.core import Service, ServiceError, Settings


class SubmissionIn(BaseModel):
    """Either `answers` (item id -> answer) or `endpoint` (an OpenAI-compatible base URL) with `model`."""

    model_config = ConfigDict(extra="forbid")
    set: str | None = Field(None, max_length=100, description="Test set name (default: the benchmark's current set)")
    benchmark: str | None = Field(None, max_length=100)
    model: str = Field("", max_length=300, description="Model name (the endpoint's model, or a label)")
    description: str = Field("", max_length=2000)
    answers: dict[str, str] | None = None
    endpoint: str | None = Field(None, max_length=2000)

    @model_validator(mode="after")
    def one_kind(self) -> "SubmissionIn":
        if (self.answers is None) == (self.endpoint is None):
            raise ValueError("give exactly one of answers or endpoint")
        if self.set is None and self.benchmark is None:
            raise ValueError("name a set or a benchmark")
        if self.endpoint is not None and not self.model:
            raise ValueError("an endpoint submission needs the model name")
        return self


class PublishIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    public: bool = True


def create_app(settings: Settings) -> FastAPI:
    service = Service(settings)
    app = FastAPI(title="glotbench scoring service", version="1")
    app.state.service = service
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=select_autoescape())

    @app.exception_handler(ServiceError)
    async def service_error(_: Request, e: ServiceError) -> JSONResponse:
        headers = {"Retry-After": str(int(e.retry_after) + 1)} if e.retry_after else None
        return JSONResponse({"error": e.message}, status_code=e.status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, e: RequestValidationError) -> JSONResponse:
        first = e.errors()[0] if e.errors() else {}
        where = ".".join(str(x) for x in first.get("loc", ()) if x != "body")
        return JSONResponse({"error": f"invalid request: {where} {first.get('msg', '')}".strip()}, status_code=422)

    @app.exception_handler(Exception)
    async def internal(_: Request, e: Exception) -> JSONResponse:
        return JSONResponse({"error": "internal error"}, status_code=500)

    @app.middleware("http")
    async def limit_body(request: Request, call_next: Any) -> Any:
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > settings.max_body_bytes):
            return JSONResponse({"error": f"request body larger than {settings.max_body_bytes} bytes"}, status_code=413)
        if request.method in ("POST", "PUT", "PATCH") and size is None:
            body = await request.body()
            if len(body) > settings.max_body_bytes:
                return JSONResponse({"error": f"request body larger than {settings.max_body_bytes} bytes"}, status_code=413)
        return await call_next(request)

    def caller(request: Request) -> int:
        auth = request.headers.get("authorization", "")
        key = auth[7:].strip() if auth.lower().startswith("bearer ") else None
        address = request.client.host if request.client else "unknown"
        service.limiter.hit(f"addr:{address}")
        key_id = service.authenticate(key)
        service.limiter.hit(f"key:{key_id}")
        return key_id

    async def no_duplicate_ids(request: Request) -> None:
        """JSON objects silently keep the last of duplicate keys; a duplicate answer id is an error."""
        import json

        def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            keys = [k for k, _ in pairs]
            if len(keys) != len(set(keys)):
                raise ServiceError(400, "duplicate ids in the submission")
            return dict(pairs)
        try:
            json.loads(await request.body(), object_pairs_hook=hook)
        except ValueError:
            pass  # malformed JSON: the body model reports it

    @app.post("/api/submissions", status_code=200, dependencies=[Depends(no_duplicate_ids)])
    def submit(body: SubmissionIn, key_id: int = Depends(caller)) -> JSONResponse:
        if body.answers is not None:
            out = service.submit_answers(key_id, body.answers, set_name=body.set, benchmark=body.benchmark,
                                         model=body.model, description=body.description)
            return JSONResponse(out)
        out = service.submit_endpoint(key_id, body.endpoint or "", body.model, set_name=body.set,
                                      benchmark=body.benchmark, description=body.description)
        return JSONResponse(out, status_code=202)

    @app.get("/api/submissions/{sid}")
    def submission(sid: int = PathParam(..., ge=1, le=2**62), key_id: int = Depends(caller)) -> dict[str, Any]:
        return service.get_submission(key_id, sid)

    @app.post("/api/submissions/{sid}/publish")
    def publish(body: PublishIn, sid: int = PathParam(..., ge=1, le=2**62), key_id: int = Depends(caller)) -> dict[str, Any]:
        return service.publish(key_id, sid, body.public)

    @app.get("/api/sets")
    def sets() -> list[dict[str, Any]]:
        return service.sets()

    @app.get("/api/sets/{name}/download")
    def download(name: str) -> dict[str, Any]:
        return service.download(name)

    rendered: dict[str, tuple[Any, bytes]] = {}

    def cached(kind: str, board: list[dict[str, Any]]) -> bytes:
        """Serialise once per leaderboard refresh (the board object changes when it is rebuilt)."""
        hit = rendered.get(kind)
        if hit is None or hit[0] is not board:
            import json

            body = (json.dumps(board, ensure_ascii=False) if kind == "json"
                    else env.get_template("leaderboard.html").render(tables=board)).encode("utf-8")
            rendered[kind] = hit = (board, body)
        return hit[1]

    @app.get("/api/leaderboard", response_model=list[dict[str, Any]])
    async def leaderboard_json() -> Response:
        board = await run_in_threadpool(service.leaderboard) if service.board_stale() else service.leaderboard()
        return Response(cached("json", board), media_type="application/json")

    @app.get("/", response_class=HTMLResponse)
    async def leaderboard_page() -> Response:
        board = await run_in_threadpool(service.leaderboard) if service.board_stale() else service.leaderboard()
        return Response(cached("html", board), media_type="text/html; charset=utf-8")

    @app.get("/healthz")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app
