"""Where a task's rows come from: a hub dataset at a pinned revision (through `huggingface_hub`, in
the hub's own cache), a local file, or `--data FILE` in the hub's own schema.

Hub files are the `data.files` patterns of the task, or else those the dataset card declares for
the config and split (`configs:` in README.md, as the hub's own loader reads them). With
`HF_HUB_OFFLINE=1` only the cache is read. Each failure is one line that says what to do: a gated
dataset without a token, a repository or revision that does not exist, a cache without the files.
Rows are read by `glotbench.data` (JSONL, JSON, CSV, TSV, parquet): every row keeps its `FILE:LINE`.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from glotbench.errors import DataError

_SHA = re.compile(r"[0-9a-f]{40}")
Row = tuple[str, dict[str, Any]]  # (FILE:LINE, the row's columns)


@dataclass(frozen=True)
class Rows:
    rows: list[Row]
    source: str  # what the rows are, for results.json ("hub:OWNER/NAME@SHA config/split", a path)
    sha256: str  # of the file, or of the files' hashes in path order
    left_out: int | None = None  # the rows a task's `data.where` left out; None: no filter


COMPRESSED = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}  # as the hub's datasets often ship JSONL and CSV


def named_format(path: str | Path) -> str | None:
    """The format a file's name says (`rows.tsv`, `rows.jsonl.gz`), or None where it says none."""
    path = Path(path)
    suffixes = [x.lower() for x in path.suffixes]
    suffix = suffixes[-2] if len(suffixes) > 1 and suffixes[-1] in COMPRESSED else path.suffix.lower()
    return {".json": "json", ".jsonl": "jsonl", ".parquet": "parquet", ".csv": "csv", ".tsv": "tsv"}.get(suffix)


def _fmt(path: Path, fmt: str | None) -> str:
    return fmt or named_format(path) or "jsonl"


def user_file_format(path: str | Path, declared: str | None) -> str | None:
    """The format of a user's --data file: the one its name says (a task whose hub files are TSV
    read from `rows.jsonl` reads JSON lines, never each line as a TSV row); the task's declared
    format where the name says none."""
    return named_format(path) or declared


def _decompressed(p: Path, folder: Path) -> Path:
    """A compressed file (`rows.jsonl.gz`) decompressed into `folder`, at most the size limit of a
    data file (a small archive that expands without end is refused, not written out)."""
    import importlib

    from glotbench.data import MAX_FILE_BYTES

    module = importlib.import_module(COMPRESSED[p.suffix.lower()])
    out = folder / p.name[: -len(p.suffix)]
    size = 0
    try:
        with module.open(p, "rb") as src, open(out, "wb") as dst:
            while chunk := src.read(1 << 20):
                size += len(chunk)
                if size > MAX_FILE_BYTES:
                    raise DataError(f"{p}: expands to more than {MAX_FILE_BYTES // 2**20} MiB")
                dst.write(chunk)
    except (OSError, EOFError, ValueError) as e:  # gzip.BadGzipFile, lzma.LZMAError are OSError / ValueError
        raise DataError(f"{p}: not a readable {p.suffix[1:]} file ({type(e).__name__}: {e})") from None
    return out


class Binary:
    """A cell of bytes (an image, audio) in a row: kept out of the way of the columns a task reads,
    an error where a field or a template uses it."""

    def __init__(self, size: int):
        self.size = size

    def problem(self) -> str:
        return f"binary data ({self.size:,} bytes: an image or audio?); a task reads text, numbers and lists of them"

    def __str__(self) -> str:
        raise ValueError(self.problem())

    __repr__ = __str__


def _plain(value: Any, where: str) -> Any:
    """A parquet cell as JSON's types, as items keep them: a timestamp or date as ISO 8601 text, a
    decimal as its exact text, NaN as null; bytes (an image, audio) a `Binary` (an error where used)."""
    import datetime
    import decimal

    if isinstance(value, float) and value != value:
        return None  # NaN: pandas' missing value, written to parquet; a null to every check after this
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return Binary(len(value))
    if isinstance(value, dict):
        return {str(k): _plain(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}.{i}") for i, v in enumerate(value)]
    raise DataError(f"{where}: a value of type {type(value).__name__}, which a task cannot read")


def read_file(path: str | Path, fmt: str | None = None, shown: str | None = None) -> list[Row]:
    """Every row of a file as (FILE:LINE, columns); a row that is not an object is an error. A
    `.gz`, `.bz2` or `.xz` file is read decompressed, its rows named by the compressed file."""
    import tempfile

    from glotbench.data import BadRow, check_file, raw_rows

    p = check_file(path)
    name = shown or str(p)
    out = []
    with tempfile.TemporaryDirectory(prefix="glotbench-rows-") as tmp:
        plain = _decompressed(p, Path(tmp)) if p.suffix.lower() in COMPRESSED else p
        try:
            for line, raw in raw_rows(plain, _fmt(p, fmt), shape="a JSON list of rows"):
                if isinstance(raw, BadRow):
                    raise DataError(f"{name}:{line}: {raw}")
                if not isinstance(raw, dict):
                    raise DataError(f"{name}:{line}: row: expected an object, got {type(raw).__name__}")
                out.append((f"{name}:{line}", {k: _plain(v, f"{name}:{line}: {k}") for k, v in raw.items()}))
        except DataError as e:
            raise DataError(str(e).replace(str(plain), name)) from None
    if not out:
        raise DataError(f"{name}: no rows")
    return out


def digest(files: Sequence[tuple[str, Path]]) -> str:
    from glotbench.loading import sha256_file

    if len(files) == 1:
        return sha256_file(files[0][1])
    h = hashlib.sha256()
    for name, p in sorted(files):
        h.update(f"{name} {sha256_file(p)}\n".encode())
    return h.hexdigest()


# -- the hub ------------------------------------------------------------------------------------

def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _download(repo: str, revision: str, patterns: list[str]) -> Path:
    """The snapshot folder of `repo` at `revision` holding the files matching `patterns` (downloaded,
    or read from the hub cache); hub failures become one DataError line saying what to do."""
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import (GatedRepoError, HfHubHTTPError, LocalEntryNotFoundError,
                                        RepositoryNotFoundError, RevisionNotFoundError)

    from huggingface_hub.utils import disable_progress_bars, logging as hub_logging

    disable_progress_bars()  # a run prints its own progress; failures are our one error line
    hub_logging.set_verbosity_error()
    for name in ("httpx", "httpx2", "httpcore", "httpcore2"):  # their INFO lines name every request
        logging.getLogger(name).setLevel(logging.WARNING)
    where = f"{repo}@{revision[:12]}"
    try:
        return Path(snapshot_download(repo, repo_type="dataset", revision=revision, allow_patterns=patterns))
    except GatedRepoError:
        raise DataError(f"{repo} is gated: accept its conditions at https://huggingface.co/datasets/{repo} and set "
                        "HF_TOKEN (or run `hf auth login`); or give the rows with --data FILE") from None
    except RevisionNotFoundError:
        raise DataError(f"{repo} has no revision {revision}: pin a commit that exists (the dataset's history on "
                        "the hub) with --bench-opt revision=SHA") from None
    except RepositoryNotFoundError:
        raise DataError(f"{repo}: no such dataset on the hub (or it is private: set HF_TOKEN); "
                        "or give the rows with --data FILE") from None
    except LocalEntryNotFoundError:
        if _offline():
            raise DataError(f"{where} is not in the hub cache ({constants.HF_HUB_CACHE}) and HF_HUB_OFFLINE=1: "
                            "run once online to fill it, or give the rows with --data FILE") from None
        raise DataError(f"cannot reach the hub ({constants.ENDPOINT}) for {where}: check the network, set "
                        "HF_HUB_OFFLINE=1 to read the cache only, or give the rows with --data FILE") from None
    except HfHubHTTPError as e:
        status = getattr(getattr(e, "response", None), "status_code", "?")
        raise DataError(f"{where}: the hub answered HTTP {status} ({str(e).splitlines()[0]})") from None
    except OSError as e:
        raise DataError(f"{where}: cannot write the hub cache ({e.strerror or e})") from None


def hub_file(repo: str, revision: str, name: str) -> Path:
    """One file of a dataset repository at a pinned revision (through the hub's cache), which may be
    absent (the returned path then does not exist)."""
    return _download(repo, revision, [name]) / name


def _matching(folder: Path, patterns: list[str]) -> list[tuple[str, Path]]:
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return [(f, folder / f) for f in files if any(fnmatch.fnmatch(f, pat) for pat in patterns)]


def card_patterns(readme: Path, repo: str, config: str | None, split: str) -> list[str]:
    """The file patterns the dataset card (README.md's `configs:`) declares for a config's split."""
    from huggingface_hub.repocard import metadata_load

    meta = metadata_load(readme) if readme.is_file() else None
    configs = (meta or {}).get("configs") or []
    name = config or "default"
    found = next((c for c in configs if isinstance(c, dict) and c.get("config_name") == name), None)
    if found is None:
        have = [str(c.get("config_name")) for c in configs if isinstance(c, dict)]
        raise DataError(f"{repo}: the dataset card declares no config {name!r}"
                        + (f" (it has: {', '.join(have[:20])}{' ...' if len(have) > 20 else ''})" if have else
                           "; give the task's data.files patterns"))
    data_files = found.get("data_files") or []
    if isinstance(data_files, (str, list)) and not (isinstance(data_files, list) and data_files and
                                                     isinstance(data_files[0], dict)):
        data_files = [{"split": "train", "path": data_files}]
    for entry in data_files:
        if isinstance(entry, dict) and entry.get("split") == split:
            path = entry.get("path")
            return [path] if isinstance(path, str) else [str(p) for p in path or []]
    splits = [str(e.get("split")) for e in data_files if isinstance(e, dict)]
    raise DataError(f"{repo}: config {name!r} has no split {split!r} (it has: {', '.join(splits) or 'none'})")


def hub_rows(repo: str, revision: str, config: str | None, split: str, files: str | list[str] | None,
             sha256: dict[str, str], fmt: str | None) -> Rows:
    """The rows of a config's split at a pinned revision."""
    if not _SHA.fullmatch(revision):
        raise DataError(f"{repo}: revision {revision!r} is not a commit hash (40 hex): pin the data, "
                        "not a branch that moves (--bench-opt revision=SHA, a commit of the dataset's history)")
    if files is None:
        folder = _download(repo, revision, ["README.md"])
        patterns = card_patterns(folder / "README.md", repo, config, split)
    else:
        patterns = [files] if isinstance(files, str) else list(files)
    folder = _download(repo, revision, patterns)
    found = _matching(folder, patterns)
    if not found:
        if _offline():
            raise DataError(f"{repo}@{revision[:12]}: {', '.join(patterns)} is not in the hub cache and "
                            "HF_HUB_OFFLINE=1: run once online to fill it, or give the rows with --data FILE")
        raise DataError(f"{repo}@{revision[:12]} has no file matching {', '.join(patterns)}")
    for name, p in found:
        want = sha256.get(name)
        if want is not None:
            from glotbench.loading import sha256_file

            got = sha256_file(p)
            if got != want.lower():
                raise DataError(f"{repo}@{revision[:12]}/{name}: SHA-256 is {got}, the task pins {want}")
    rows = [r for name, p in found for r in read_file(p, fmt, shown=f"hub:{repo}/{name}")]
    where = f"hub:{repo}@{revision}" + (f" {config}" if config else "") + f"/{split}"
    return Rows(rows, where, digest(found))


def local_rows(path: str | Path, fmt: str | None) -> Rows:
    from glotbench.loading import sha256_file

    return Rows(read_file(path, fmt), str(path), sha256_file(path))


def join_roles(parts: dict[str, list[Row]], on: str) -> list[Row]:
    """Rows of several roles paired on the `on` column: {role: row, ...}, in the first role's order.
    An id missing from a role, or twice in one, is an error naming the row."""
    by_role: dict[str, dict[str, Row]] = {}
    for role, rows in parts.items():
        index: dict[str, Row] = {}
        for where, row in rows:
            if on not in row:
                raise DataError(f"{where}: {on}: missing (the roles are joined on it)")
            key = str(row[on])
            if key in index:
                raise DataError(f"{where}: {on}: {key!r} appears twice in the rows of {role!r}")
            index[key] = (where, row)
        by_role[role] = index
    first, *others = list(by_role)
    out = []
    for key, (where, _) in by_role[first].items():
        combined: dict[str, Any] = {}
        for role in by_role:
            if key not in by_role[role]:
                raise DataError(f"{where}: {on} {key!r} has no row in {role!r}")
            combined[role] = by_role[role][key][1]
        out.append((where, combined))
    for role in others:
        for key, (where, _) in by_role[role].items():
            if key not in by_role[first]:
                raise DataError(f"{where}: {on} {key!r} has no row in {first!r}")
    return out
