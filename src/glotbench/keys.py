"""What the caches' keys and stored records are made of, below everything that keys a cache (the call
cache, the aggregates, the checks' memo): the bytes a text hashes, the fingerprint of the code that
computed a stored value, and whether a record survives a JSON round trip unchanged."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def cache_dir() -> Path:
    """The folder of glotbench's caches: GLOTBENCH_CACHE_DIR, else the platform's user cache directory
    (platformdirs: XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on
    Windows). The call cache lives there, and what is derived once per machine (the language
    identifier's model, unpacked: checks/language.py)."""
    import os

    root = os.environ.get("GLOTBENCH_CACHE_DIR")
    if not root:
        from platformdirs import user_cache_dir

        root = user_cache_dir("glotbench", appauthor=False)
    return Path(root)


def hash_text(text: str) -> bytes:
    """The bytes a key hashes: UTF-8, a lone surrogate passed through (a key is never decoded)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def code_fingerprint(*objects: Any) -> str | None:
    """SHA-256 of the files defining `objects` (classes, their bases, functions): a development
    checkout that edits aggregation code without a version bump gets a new key. None when one of
    them has no file to read (a notebook cell, `python -c`, exec): such code is never keyed."""
    import sys

    files: set[str] = set()
    for obj in objects:
        for cls in getattr(obj, "__mro__", (obj,)):
            name = getattr(cls, "__module__", "") or ""
            if name == "builtins":
                continue
            path = getattr(sys.modules.get(name), "__file__", None)
            if not path:
                return None
            files.add(path)
    h = hashlib.sha256()
    for path in sorted(files):
        try:
            h.update(Path(path).read_bytes())
        except OSError:  # no readable source: the code cannot be told apart from an edited one
            return None
        h.update(b"\0")
    return h.hexdigest()


def storable(record: Any) -> str | None:
    """`record` as JSON when it survives the round trip unchanged (no NaN, no tuples, no objects).
    A record of JSON's own types only (dict with str keys, list, str, int, float, bool, None: `_plain`)
    survives it by construction, so it is not parsed back: parsing a run's checks memo back made a
    second copy of it where a run's memory peaks (docs/performance.md). Any other record (a number
    or text subclass, a tuple) takes the round trip."""
    try:
        blob = json.dumps(record, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    try:
        if _plain(record):
            return blob
    except RecursionError:
        pass
    return blob if json.loads(blob) == record else None


_SCALARS = frozenset((str, int, float, bool, type(None)))


def _plain(x: Any) -> bool:
    """Whether `x` is made of JSON's own types only: what json.loads gives back equal (NaN and
    infinity are refused by the dump before this is asked)."""
    t = type(x)
    if t in _SCALARS:
        return True
    if t is dict:
        return all(type(k) is str and _plain(v) for k, v in x.items())
    if t is list:
        return all(_plain(v) for v in x)
    return False
