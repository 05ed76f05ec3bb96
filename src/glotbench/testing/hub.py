"""A loopback server that lays out dataset repositories as the Hugging Face Hub serves them, so the
hub loading code (`glotbench.tasks.source`, through `huggingface_hub`) is tested for real, offline.

Run: `python -m glotbench.testing.hub --root DIR [--port 0]`; it prints `PORT <n>` first; point
`HF_ENDPOINT` at `http://127.0.0.1:<n>`. The folder holds one directory per repository and commit:

    DIR/OWNER/NAME/COMMIT_SHA/...files...     the repository's files at that commit (40 hex)
    DIR/OWNER/NAME/repo.json                  {"refs": {"main": SHA}, "gated": false, "token": null}

What is served (the hub's routes and error headers, as huggingface_hub reads them):
- GET  /api/datasets/OWNER/NAME[/revision/REV]   repository info (sha, siblings)
- GET  /api/datasets/OWNER/NAME/tree/REV[/PATH]  the file listing (`recursive=true` for all of it)
- HEAD, GET /datasets/OWNER/NAME/resolve/REV/PATH   a file, with X-Repo-Commit and ETag
- a gated repository answers 401 `X-Error-Code: GatedRepo` without `Authorization: Bearer TOKEN`;
  an unknown revision 404 `RevisionNotFound`, an unknown repository 401 `RepoNotFound`, a missing
  file 404 `EntryNotFound`. GET /_requests lists the paths requested (to assert "no call was made").
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from aiohttp import web

from glotbench.testing.server import serve

_SHA = re.compile(r"[0-9a-f]{40}")


def _error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status,
                             headers={"X-Error-Code": code, "X-Error-Message": message})


class Hub:
    def __init__(self, root: Path):
        self.root = root
        self.requests: list[str] = []

    def repo(self, request: web.Request) -> tuple[Path, dict[str, Any]] | web.Response:
        folder = self.root / request.match_info["owner"] / request.match_info["name"]
        meta_file = folder / "repo.json"
        if not meta_file.is_file():
            return _error(401, "RepoNotFound", "Repository not found")
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        if meta.get("gated") and request.headers.get("Authorization") != f"Bearer {meta.get('token')}":
            return _error(401, "GatedRepo", "Access to this dataset is restricted: accept its conditions")
        return folder, meta

    def commit(self, folder: Path, meta: dict[str, Any], rev: str) -> str | web.Response:
        sha = rev if _SHA.fullmatch(rev) else (meta.get("refs") or {}).get(rev)
        if sha is None or not (folder / sha).is_dir():
            return _error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        return sha

    def resolve(self, request: web.Request) -> tuple[Path, str] | web.Response:
        self.requests.append(f"{request.method} {request.path}")
        found = self.repo(request)
        if isinstance(found, web.Response):
            return found
        folder, meta = found
        sha = self.commit(folder, meta, request.match_info.get("rev", "main"))
        if isinstance(sha, web.Response):
            return sha
        return folder / sha, sha


def _files(base: Path, under: str = "") -> list[dict[str, Any]]:
    start = base / under if under else base
    out = []
    for p in sorted(start.rglob("*")):
        if p.is_file():
            blob = p.read_bytes()
            out.append({"type": "file", "path": p.relative_to(base).as_posix(), "size": len(blob),
                        "oid": hashlib.sha1(b"blob %d\0" % len(blob) + blob).hexdigest()})
    return out


def _at_commit(handler: Any) -> Any:
    """A route over one repository at one revision: the handler gets (request, folder, commit), or
    the hub's error answers first (unknown repository or revision, gated without a token)."""
    async def route(request: web.Request) -> web.StreamResponse:
        found = request.app["hub"].resolve(request)
        return found if isinstance(found, web.Response) else await handler(request, *found)
    return route


@_at_commit
async def info(request: web.Request, base: Path, sha: str) -> web.Response:
    repo_id = f"{request.match_info['owner']}/{request.match_info['name']}"
    return web.json_response({"id": repo_id, "_id": sha[:24], "sha": sha, "private": False, "gated": False,
                              "disabled": False, "downloads": 0, "likes": 0, "tags": [],
                              "lastModified": "2024-01-01T00:00:00.000Z",
                              "siblings": [{"rfilename": f["path"]} for f in _files(base)]})


@_at_commit
async def tree(request: web.Request, base: Path, sha: str) -> web.Response:
    under = request.match_info.get("path", "").strip("/")
    if under and not (base / under).is_dir():
        return _error(404, "EntryNotFound", f"{under} does not exist")
    entries = _files(base, under)
    if request.query.get("recursive", "false").lower() != "true":
        depth = under.count("/") + 1 if under else 0
        entries = [e for e in entries if e["path"].count("/") == depth]
    return web.json_response(entries)


@_at_commit
async def resolve_file(request: web.Request, base: Path, sha: str) -> web.StreamResponse:
    path = base / request.match_info["path"]
    if not path.is_file() or base not in path.resolve().parents:
        return _error(404, "EntryNotFound", f"{request.match_info['path']} does not exist")
    blob = path.read_bytes()
    etag = hashlib.sha256(blob).hexdigest()
    headers = {"X-Repo-Commit": sha, "ETag": f'"{etag}"', "Content-Length": str(len(blob)),
               "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream"}
    if request.method == "HEAD":
        return web.Response(status=200, headers=headers)
    return web.Response(body=blob, headers=headers)


async def requests_seen(request: web.Request) -> web.Response:
    return web.json_response(request.app["hub"].requests)


def make_app(root: Path) -> web.Application:
    app = web.Application()
    app["hub"] = Hub(root)
    repo = "/{owner}/{name}"
    app.router.add_get(f"/api/datasets{repo}", info)
    app.router.add_get(f"/api/datasets{repo}/revision/{{rev}}", info)
    app.router.add_get(f"/api/datasets{repo}/tree/{{rev}}", tree)
    app.router.add_get(f"/api/datasets{repo}/tree/{{rev}}/{{path:.*}}", tree)
    app.router.add_get(f"/datasets{repo}/resolve/{{rev}}/{{path:.+}}", resolve_file)  # HEAD too
    app.router.add_get("/_requests", requests_seen)
    return app


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args(argv)
    try:
        asyncio.run(serve(make_app(Path(a.root)), a.host, a.port))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
