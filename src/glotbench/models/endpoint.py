"""THE reader of OpenAI-compatible endpoints: `openai:MODEL@BASE_URL` specs (the chat backend, judges,
sweeps, the `openai:` embedder) and base URLs, with where the URL and the key came from.

A key must never go to a host the user did not name. So:
- `MODEL@BASE_URL`: BASE_URL must start with `http://` or `https://`. A tail that looks like a host
  or a URL without its scheme (`127.0.0.1:8000/v1`, `localhost:8000`, `example.com/v1`, `myserver`)
  is an error naming the fix: never the default host, loopback included. So is an `@` with nothing
  after it (`openai:qwen@$URL` with `$URL` unset): a base URL was meant, none was given.
- A base URL names its host alone: a user name or password before an `@` in it is an error naming
  the host it would reach (`http://127.0.0.1:8000@evil.example/v1` goes to evil.example); so is a URL
  with no host or a port that is not a number.
- A tail of digits and dashes only (a version tag: Vertex's `claude-3@20240229`) is part of the
  model name; a model name holding any other `@` takes an explicit base URL (the first `@` followed
  by `SCHEME://` splits; without one, the last `@`).
- No `@BASE_URL`: `OPENAI_BASE_URL` when it is set and not empty (as the `openai` SDK, lm-eval and
  inspect do; its scheme checked the same way), else `https://api.openai.com/v1`.
The key comes from an environment variable only (`OPENAI_API_KEY`, or the one `--api-key-env` names);
what a run records is the variable's name, never its value."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Mapping

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


def _with_scheme(url: str) -> str:
    """The URL the user most likely meant, for an error's hint: `http:/h`, `//h`, `HTTPS:h` and a bare
    host all become `http(s)://h`."""
    m = re.match(r"(?i)(https?):/*(?![0-9]+(?:/|$))", url)
    if m:
        return f"{m.group(1).lower()}://{url[m.end():]}"
    return "http://" + url.lstrip("/")


def check_base_url(url: str, where: str) -> str:
    """`url` without a trailing slash, or a SpecError naming `where` (a spec, a variable) and the fix."""
    from urllib.parse import urlsplit

    url = url.strip()
    if not url.lower().startswith(("http://", "https://")):
        if _SCHEME.match(url):
            raise SpecError(f"{where}: the endpoint must be an http:// or https:// URL, got {url!r}")
        fixed = _with_scheme(url)
        raise SpecError(f"{where}: the base URL {url!r} has no scheme; write {fixed} (or "
                        f"{fixed.replace('http://', 'https://', 1)}). glotbench never guesses a host for an API key")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError as e:
        raise SpecError(f"{where}: the base URL {url!r} is not a valid URL ({e})") from None
    if "@" in parts.netloc:
        raise SpecError(f"{where}: the base URL {url!r} holds a user name or password before '@', so its requests "
                        f"and your API key would go to {parts.hostname!r}; name the host alone (the key comes from "
                        "an environment variable: --api-key-env)")
    if not parts.hostname:
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
    url_at = re.search(r"@(?=\s*[A-Za-z][A-Za-z0-9+.-]*://)", rest)  # the first '@' a URL follows
    if url_at:
        model, sep, tail = rest[:url_at.start()], "@", rest[url_at.end():]
    else:
        model, sep, tail = rest.rpartition("@")
    tail = tail.strip()
    if not sep or _VERSION_TAG.fullmatch(tail):
        model, tail = rest, ""
    elif not model.strip():
        raise SpecError(f"model spec {spec!r} names no model: use openai:MODEL@BASE_URL")
    elif not tail:
        raise SpecError(f"model spec {spec!r} has no base URL after '@': write openai:{model}@http://HOST:PORT/v1, "
                        f"or leave out the '@' for {BASE_URL_ENV} or the default host")
    if not model.strip():
        raise SpecError(f"model spec {spec!r} names no model: use openai:MODEL@BASE_URL")
    if tail:
        where = f"model spec {spec!r}"
        if not _SCHEME.match(tail):
            hint = "" if re.search(r"[.:/]", tail) else (
                f"; if '@{tail}' is part of the model name, add the base URL: openai:{rest}@https://HOST/v1")
            raise SpecError(f"{where}: the base URL {tail!r} has no scheme: write openai:{model}@{_with_scheme(tail)} "
                            f"(or https://); a request and its API key never go to a host you did not name"
                            + hint)
        return Endpoint(model, check_base_url(tail, where), "spec")
    url, source = default_base_url()
    return Endpoint(model, url, source)


def key_source(env_name: str, key: str | None) -> str:
    """What a run records about its key: the variable it came from, or "none"."""
    return env_name if key else "none"


# -- the endpoint line -------------------------------------------------------------------------

BASE_URL_FROM = {"spec": "from the model spec", "OPENAI_BASE_URL": "from $OPENAI_BASE_URL",
                 "default": "the default: no @URL in the spec, $OPENAI_BASE_URL not set"}


def endpoint_line(model: Mapping[str, Any]) -> str | None:
    """Where an endpoint model's requests go and which key they carry, from its description (or a
    run's `model` record): `endpoint: URL (from $OPENAI_BASE_URL) · API key from $OPENAI_API_KEY`;
    None for a model with no endpoint (local, python:, replay:)."""
    url = model.get("endpoint")
    if not url:
        return None
    src = model.get("base_url_from")
    where = f" ({BASE_URL_FROM.get(src, f'from {src}')})" if src else ""
    key_from = model.get("api_key_from")
    if key_from in (None, "none"):
        env = model.get("api_key_env")
        key = "no API key sent" + (f" (${env} not set)" if env else "")
    elif key_from == "submitted":
        key = "the submitted API key"
    else:
        key = f"API key from ${key_from}"
    return f"endpoint: {url}{where} · {key}"


def spec_endpoint(spec: str, api_key_env: str | None = None) -> dict[str, Any] | None:
    """The endpoint facts an `openai:` spec's model will record (`endpoint`, `base_url_from`,
    `api_key_env`, `api_key_from`), read from the spec and the environment before the model is
    built, so a command can say where its requests go when it starts; None for another backend."""
    scheme, _, rest = spec.partition(":")
    if scheme != "openai":
        return None
    ep = parse_endpoint(rest, spec)
    env = api_key_env or DEFAULT_KEY_ENV
    return {"endpoint": ep.base_url, "base_url_from": ep.base_url_from, "api_key_env": env,
            "api_key_from": key_source(env, os.environ.get(env) or None)}
