"""THE reader of OpenAI-compatible endpoints: `openai:MODEL@BASE_URL` specs (the chat backend, judges,
sweeps, the `openai:` embedder) and base URLs, with where the URL and the key came from.

A key must never go to a host the user did not name. So:
- `MODEL@BASE_URL`: BASE_URL must start with `http://` or `https://`. A tail that looks like a host
  or a URL without its scheme (`127.0.0.1:8000/v1`, `localhost:8000`, `example.com/v1`, `myserver`)
  is an error naming the fix: never the default host, loopback included.
- A tail of digits and dashes only (a version tag: Vertex's `claude-3@20240229`) is part of the
  model name; a model name holding any other `@` takes an explicit base URL (the last `@` splits).
- No `@BASE_URL`: `OPENAI_BASE_URL` when it is set and not empty (as the `openai` SDK, lm-eval and
  inspect do; its scheme checked the same way), else `https://api.openai.com/v1`.
The key comes from an environment variable only (`OPENAI_API_KEY`, or the one `--api-key-env` names);
what a run records is the variable's name, never its value."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from glotbench.errors import SpecError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_VERSION_TAG = re.compile(r"[0-9][0-9-]*")


@dataclass(frozen=True)
class Endpoint:
    """A model name and the base URL its requests go to; `base_url_from`: "spec", the variable
    `OPENAI_BASE_URL`, or "default"."""

    model: str
    base_url: str
    base_url_from: str


def check_base_url(url: str, where: str) -> str:
    """`url` without a trailing slash, or a SpecError naming `where` (a spec, a variable) and the fix."""
    url = url.strip()
    if not url.lower().startswith(("http://", "https://")):
        if _SCHEME.match(url):
            raise SpecError(f"{where}: the endpoint must be an http:// or https:// URL, got {url!r}")
        raise SpecError(f"{where}: the base URL {url!r} has no scheme; write http://{url} (or https://{url}). "
                        "glotbench never guesses a host for an API key")
    if len(url.split("://", 1)[1].split("/", 1)[0]) == 0:
        raise SpecError(f"{where}: the base URL {url!r} names no host")
    return url.rstrip("/")


def default_base_url(env: dict[str, str] | None = None) -> tuple[str, str]:
    """(base URL, where it came from) when a spec names none: `OPENAI_BASE_URL`, else the default."""
    value = (os.environ if env is None else env).get(BASE_URL_ENV, "")
    if value.strip():
        return check_base_url(value, f"the environment variable {BASE_URL_ENV}"), BASE_URL_ENV
    return DEFAULT_BASE_URL, "default"


def parse_endpoint(rest: str, spec: str) -> Endpoint:
    """`MODEL[@BASE_URL]` (what follows `openai:`) as an Endpoint; `spec` (the whole spec) names it
    in errors."""
    model, sep, tail = rest.rpartition("@")
    if not sep or _VERSION_TAG.fullmatch(tail):
        model, tail = rest, ""
    elif not model:
        raise SpecError(f"model spec {spec!r} names no model: use openai:MODEL@BASE_URL")
    if not model.strip():
        raise SpecError(f"model spec {spec!r} names no model: use openai:MODEL@BASE_URL")
    if tail:
        where = f"model spec {spec!r}"
        if not _SCHEME.match(tail):
            hint = "" if re.search(r"[.:/]", tail) else (
                f"; if '@{tail}' is part of the model name, add the base URL: openai:{rest}@https://HOST/v1")
            raise SpecError(f"{where}: the base URL {tail!r} has no scheme: write openai:{model}@http://{tail} "
                            f"(or https://); a request and its API key never go to a host you did not name"
                            + hint)
        return Endpoint(model, check_base_url(tail, where), "spec")
    url, source = default_base_url()
    return Endpoint(model, url, source)


def key_source(env_name: str, key: str | None) -> str:
    """What a run records about its key: the variable it came from, or "none"."""
    return env_name if key else "none"
