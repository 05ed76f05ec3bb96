"""Reading data files: JSONL with errors that name the file, the line and the field; SHA-256 pins."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterator

from glotbench.errors import DataError

from glotbench.data import MAX_FILE_BYTES  # noqa: E402,F401 - the one limit, re-exported


def sha256_file(path: str | Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def read_jsonl(path: str | Path, *, expected_sha256: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-empty line (through `glotbench.data`, its size
    limit and messages); for files whose rows have no declared schema yet."""
    from glotbench.data import check_file, raw_rows

    p = check_file(path)
    if expected_sha256 is not None:
        actual = sha256_file(p)
        if actual != expected_sha256:
            raise DataError(f"{p}: sha256 is {actual}, expected {expected_sha256}")
    for n, obj in raw_rows(p, "jsonl"):
        if not isinstance(obj, dict):
            raise DataError(f"{p}:{n}: row: expected a JSON object, got {type(obj).__name__}")
        yield int(n), obj


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
