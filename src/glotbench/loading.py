"""Reading data files: JSONL with errors that name the file, the line and the field; SHA-256 pins."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterator

from glotbench.errors import DataError

MAX_FILE_BYTES = 512 * 1024 * 1024


def sha256_file(path: str | Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def read_jsonl(path: str | Path, *, expected_sha256: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-empty line; a bad line raises DataError naming it."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"data file not found: {p}")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise DataError(f"{p}: larger than {MAX_FILE_BYTES // 2**20} MiB")
    if expected_sha256 is not None:
        actual = sha256_file(p)
        if actual != expected_sha256:
            raise DataError(f"{p}: sha256 is {actual}, expected {expected_sha256}")
    with p.open(encoding="utf-8") as f:
        try:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    raise DataError(f"{p}:{n}: not valid JSON ({e.msg} at column {e.colno})") from None
                if not isinstance(obj, dict):
                    raise DataError(f"{p}:{n}: expected a JSON object, got {type(obj).__name__}")
                yield n, obj
        except UnicodeDecodeError as e:
            raise DataError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def field(obj: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str,
          *, required: bool = True, default: Any = None) -> Any:
    """obj[name], checked against `kind`; `where` is "file:line" for the error message."""
    if name not in obj or obj[name] is None:
        if required:
            raise DataError(f"{where}: missing field '{name}'")
        return default
    value = obj[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise DataError(f"{where}: field '{name}' must be {want}, got {type(value).__name__}")
    return value
