"""Validated rows: every file glotbench reads (benchmark data, replay files, a run's samples and
results) goes through one reader and a declared pydantic schema.

`read_rows(path, Schema)` reads JSONL (one object a line), JSON (a list of objects, or one object),
CSV (`fmt="csv"`, or `"tsv"` tab-separated: a header line, then one row a record, every value a string) or parquet, checks the file against one size limit, validates each row into a frozen `Schema`
instance and returns `(line, row)` pairs. A bad row is reported as `FILE:LINE: field: problem`
(parquet: `FILE:row N: ...`, JSON lists and CSV records: the line the row starts on); when several rows are bad
the first is named and the others counted, so one `error:` line says it all.

`read_object(path, Schema)` reads one JSON document (a DeepSEA task file, a manifest, a run's
results.json) the same way: `FILE:LINE: field: problem`, the line being where the bad value starts.
Both refuse what JSON parsers would silently accept: NaN/Infinity (unless the file is one glotbench
wrote itself, `allow_nan=True`), a key twice in one object (documents); a UTF-8 byte-order mark is
dropped. The schemas of a run's own files are in `glotbench.runfiles`.

Why one module of 428 lines, not split: it is one reader with one error rule. Its parts are the
shared schema words (`Row`, `ItemId`, `validator`, `problem_text`: lines 41-124), the file guards,
the four row formats and their validation (`check_file`, `read_text`, `raw_rows`, JSON/CSV/parquet,
`read_rows`: 125-337), and the JSON documents with their line finder (`read_object`,
`parse_object`, `locate`: 338-428). Rows and documents share the guards (`check_file`, the size
limit, `_decode`, `_no_constant`: NaN refused) and `problem_text`, and both end in the same
`FILE:LINE: field: problem` line; split in two, the document half would import the row half's
guards and error rule, and a reader would look in two places for one rule. It imports nothing of
glotbench but errors.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Sequence, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, TypeAdapter, ValidationError

from glotbench.errors import DataError

MAX_FILE_BYTES = 512 * 1024 * 1024  # the one limit on any file read as rows
_STRICT = json.JSONDecoder(parse_constant=lambda name: _no_constant(name))

def _non_empty(v: str) -> str:
    if not v.strip():
        raise ValueError("must not be empty")
    return v


def _item_id(v: Any) -> str:
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise ValueError(f"must be a string or a whole number, got {type(v).__name__}")
    if isinstance(v, str) and not v.strip():
        raise ValueError("must not be empty")
    return str(v)


def not_bool(v: Any) -> Any:
    """For Literal[0, 1, ...] fields, which would take true as 1 even in strict mode."""
    if isinstance(v, bool):
        raise ValueError("must be a whole number, got true/false")
    return v


NonEmptyStr = Annotated[str, AfterValidator(_non_empty)]  # some non-space character
ItemId = Annotated[str, BeforeValidator(_item_id)]  # a string or a whole number (not true/false), as a string


class Row(BaseModel):
    """Base of every row schema: frozen, strict types (no "1" for 1, no 1 for true), unknown
    fields ignored so that files carrying extra columns still load."""

    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")


S = TypeVar("S")  # a pydantic model, or a TypedDict validated through a TypeAdapter

_TYPE_WORDS = {"string_type": "a string", "int_type": "a whole number", "float_type": "a number",
               "bool_type": "true or false", "list_type": "a list", "dict_type": "an object",
               "model_type": "an object", "model_attributes_type": "an object"}


_ADAPTERS: dict[Any, TypeAdapter] = {}


def validator(schema: Any) -> Callable[[Any], Any]:
    """What validates one value against `schema`: a pydantic model's `model_validate`, or for any
    other type (a TypedDict, such as a run directory's records: glotbench.rundir.schema) a
    TypeAdapter's, built on first use and kept."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_validate
    adapter = _ADAPTERS.get(schema)
    if adapter is None:
        adapter = _ADAPTERS[schema] = TypeAdapter(schema)
    return adapter.validate_python


def required_fields(schema: Any) -> list[str]:
    """The fields a row of `schema` must have (a pydantic model's, or a TypedDict's required keys)."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return [f.alias or name for name, f in schema.model_fields.items() if f.is_required()]
    return sorted(getattr(schema, "__required_keys__", ()))


def json_type(v: Any) -> str:
    return {bool: "true/false", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object", type(None): "null"}.get(type(v), type(v).__name__)


def problem_text(err: ValidationError | list[Any], where: Callable[[tuple[Any, ...]], str] | None = None) -> str:
    """`field: problem` for each error of one row, joined by '; '; `where(loc)` may phrase the
    field's place (default: the dotted path)."""
    parts = []
    for e in err.errors(include_url=False) if isinstance(err, ValidationError) else err:
        loc = where(tuple(e["loc"])) if where else ".".join(str(x) for x in e["loc"])
        msg = e["msg"].removeprefix("Value error, ").replace("Input should be", "must be")
        if e["type"] == "missing":
            msg = "missing"
        elif e["type"] == "too_short":
            n = (e.get("ctx") or {}).get("min_length", 1)
            msg = "must not be empty" if n == 1 else f"must have at least {n} items"
        elif e["type"] in _TYPE_WORDS:
            msg = f"must be {_TYPE_WORDS[e['type']]}, got {json_type(e.get('input'))}"
        parts.append(f"{loc}: {msg}" if loc else msg)  # a row-level rule names its fields itself
    return "; ".join(parts)


def check_file(path: str | Path) -> Path:
    """`path` as a Path when it names a readable file within the one size limit; else DataError."""
    p = Path(path)
    if p.is_dir():
        raise DataError(f"{p}: is a directory, not a file")
    if not p.is_file():
        raise DataError(f"data file not found: {p}")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise DataError(f"{p}: larger than {MAX_FILE_BYTES // 2**20} MiB")
    return p


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _decode(blob: bytes, name: str | Path) -> str:
    """UTF-8 text; a leading byte-order mark is dropped (spreadsheet exports write one)."""
    try:
        return blob.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"{name}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_text(p: Path) -> str:
    try:
        return _decode(p.read_bytes(), p)
    except OSError as e:
        raise DataError(f"{p}: cannot be read ({e.strerror or e})") from None


class BadRow(str):
    """A raw row that is wrong before any field is read (a CSV record with too few cells): its
    problem, counted by `validate_rows` like a row that fails its schema."""


def raw_rows(path: str | Path, fmt: str | None = None, *, allow_nan: bool = False,
             shape: str = "a JSON list of rows", columns: Sequence[str] = ()) -> Iterator[tuple[str, Any]]:
    """(position, raw value) for each row of a JSONL, JSON, CSV or parquet file; position is the
    line number (`row N` for parquet). Unreadable files and lines raise DataError naming the place.
    NaN and Infinity are refused unless `allow_nan` (glotbench's own run files may hold them).
    A CSV file's header must name every one of `columns`."""
    p = check_file(path)
    fmt = fmt or {".json": "json", ".parquet": "parquet"}.get(p.suffix.lower(), "jsonl")  # CSV: asked for
    if fmt == "parquet":
        yield from _parquet_rows(p)
        return
    text = read_text(p)
    if fmt == "json":
        yield from _json_rows(p, text, shape)
        return
    if fmt in ("csv", "tsv"):
        yield from _csv_rows(p, text, columns, "\t" if fmt == "tsv" else ",")
        return
    # One decoder for the file (json.loads with keyword arguments builds a new one per line:
    # a third of loading a 2,000-row file).
    decode = json.loads if allow_nan else _STRICT.decode
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = decode(line)
            if not allow_nan and _ESCAPED_SURROGATE.search(line):
                _refuse_lone_surrogate(row, f"{p}:{n}")
            yield str(n), row
        except RecursionError:
            raise DataError(f"{p}:{n}: JSON nested too deeply") from None
        except json.JSONDecodeError as e:
            raise DataError(f"{p}:{n}: not valid JSON ({e.msg} at column {e.colno})") from None
        except ValueError as e:
            raise DataError(f"{p}:{n}: not valid JSON ({e})") from None


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # a \uD800-\uDFFF escape: maybe a lone surrogate


def _refuse_lone_surrogate(value: Any, where: str) -> None:
    """A user's row holding a lone surrogate (`"\ud800"`: JSON allows the escape, no UTF-8 text can
    carry it) is refused naming the place, before a hash or a prompt fails on it far from the file."""
    def bad(v: Any) -> str | None:
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as e:
                return f"{v[e.start]!r}"[1:-1]
            return None
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, x in items:
            found = bad(k) if isinstance(k, str) else None
            found = found or bad(x)
            if found:
                return found
        return None

    found = bad(value)
    if found:
        raise DataError(f"{where}: a lone surrogate ({found}) is not a character: invalid Unicode; fix the text")


def _json_rows(p: Path, text: str, shape: str) -> Iterator[tuple[str, Any]]:
    """The elements of a top-level JSON list with the line each starts on."""
    dec = _STRICT
    try:
        start = len(text) - len(text.lstrip())
        if not text[start:start + 1] == "[":
            dec.raw_decode(text, start)  # a JSON error first, else the shape
            raise DataError(f"{p}: expected {shape}")
        pos = start + 1
        while True:
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(text):
                raise ValueError("the list is not closed")
            if text[pos] == "]":
                return
            obj, end = _STRICT.raw_decode(text, pos)
            line = text.count("\n", 0, pos) + 1
            if _ESCAPED_SURROGATE.search(text, pos, end):
                _refuse_lone_surrogate(obj, f"{p}:{line}")
            yield str(line), obj
            pos = end
    except RecursionError:
        raise DataError(f"{p}: JSON nested too deeply") from None
    except json.JSONDecodeError as e:
        raise DataError(f"{p}:{e.lineno}: not valid JSON ({e.msg} at column {e.colno})") from None
    except ValueError as e:
        raise DataError(f"{p}: not valid JSON ({e})") from None


def _csv_rows(p: Path, text: str, columns: Sequence[str], delimiter: str = ",") -> Iterator[tuple[str, Any]]:
    """The records of a CSV file (RFC 4180: a header line, quoted cells may hold commas and line
    breaks) as {column: cell} with the line each starts on. Quoting errors stop the reading (the
    rest cannot be trusted); a record with too few or too many cells is a `BadRow`. Records whose
    cells are all empty (a spreadsheet's trailing `,,,`) are blank lines, not rows."""
    csv.field_size_limit(MAX_FILE_BYTES)  # a cell may hold a long item (the default stops at 128 KiB)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True, delimiter=delimiter)
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            why = "a quoted cell is not closed" if "unexpected end of data" in str(e) else str(e)
            raise DataError(f"{p}:{start}: not valid CSV ({why})") from None
        if not any(c.strip() for c in cells):
            continue
        if header is None:
            header = cells
            twice = sorted({c for c in cells if cells.count(c) > 1})
            if twice:
                raise DataError(f"{p}:{start}: the header names the column {twice[0]!r} twice")
            lacking = [c for c in columns if c not in cells]
            if lacking:
                raise DataError(f"{p}:{start}: needs the columns {', '.join(columns)} "
                                f"(the header lacks {', '.join(lacking)})")
            continue
        if len(cells) != len(header):
            yield str(start), BadRow(f"{'fewer' if len(cells) < len(header) else 'more'} cells ({len(cells)}) "
                                     f"than the header's {len(header)} columns")
        else:
            yield str(start), dict(zip(header, cells))
    if header is None:
        raise DataError(f"{p}:1: empty file, expected a CSV header line ({', '.join(columns) or 'column names'})")


def _parquet_rows(p: Path) -> Iterator[tuple[str, Any]]:
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(p)
    except Exception as e:  # noqa: BLE001 - pyarrow raises several types for a bad file
        raise DataError(f"{p}: not a readable parquet file ({type(e).__name__}: {e})") from None
    for i, row in enumerate(table.to_pylist(), 1):
        yield f"row {i}", row


def validate_rows(path: str | Path, rows: Iterator[tuple[str, Any]] | Sequence[tuple[str, Any]],
                  schema: type[S]) -> list[tuple[str, S]]:
    """Validate raw rows; every bad row is counted, the first one named."""
    out: list[tuple[str, S]] = []
    first: str | None = None
    bad = 0
    validate = validator(schema)
    for where, raw in rows:
        if isinstance(raw, BadRow):
            problem = str(raw)
        elif not isinstance(raw, dict):
            problem = f"row: expected a JSON object, got {type(raw).__name__}"
        else:
            try:
                out.append((where, validate(raw)))
                continue
            except ValidationError as e:
                problem = problem_text(e)
        bad += 1
        if first is None:
            first = f"{path}:{where}: {problem}"
    if first is not None:
        raise DataError(first + (f" (and {bad - 1} more bad row{'s' * (bad > 2)})" if bad > 1 else ""))
    return out


def read_rows(path: str | Path, schema: type[S], *, fmt: str | None = None, allow_nan: bool = False,
              shape: str = "a JSON list of rows") -> list[tuple[str, S]]:
    """Read and validate every row of a file: [(line, row)]. See the module docstring; `shape`
    names what a JSON file that is not a list should have been; a CSV header must name the
    schema's required fields."""
    need = required_fields(schema)
    return validate_rows(path, raw_rows(path, fmt, allow_nan=allow_nan, shape=shape, columns=need), schema)


def read_object(path: str | Path, schema: type[S], *, allow_nan: bool = False,
                where: Callable[[tuple[Any, ...]], str] | None = None) -> S:
    """One JSON document (a results.json, a DeepSEA task file, a manifest) validated against
    `schema`; errors as `FILE:LINE: field: problem`. See `parse_object`."""
    p = check_file(path)
    return parse_object(read_text(p), p, schema, allow_nan=allow_nan, where=where)


def parse_object(text: str | bytes, name: str | Path, schema: type[S], *, allow_nan: bool = False,
                 where: Callable[[tuple[Any, ...]], str] | None = None) -> S:
    """Validate JSON `text` (named `name` in errors, e.g. an archive member) against `schema`.
    An object with a key twice is refused (JSON parsers would silently keep the last one), as are
    NaN and Infinity unless `allow_nan`. The first problem is named with the line its value starts
    on; `where(loc)` may phrase the field's place (default: the dotted path); others are counted."""
    if isinstance(text, bytes):
        text = _decode(text, name)
    try:
        raw = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=None if allow_nan else _no_constant)
    except RecursionError:
        raise DataError(f"{name}: JSON nested too deeply") from None
    except json.JSONDecodeError as e:
        what = "empty file, not JSON" if not text.strip() else f"not valid JSON ({e.msg} at column {e.colno})"
        raise DataError(f"{name}:{e.lineno}: {what}") from None
    except ValueError as e:
        raise DataError(f"{name}: not valid JSON ({e})") from None
    try:
        return validator(schema)(raw)
    except ValidationError as e:
        errors = e.errors(include_url=False)
        loc = tuple(errors[0]["loc"])
        same = [x for x in errors if tuple(x["loc"])[:-1] == loc[:-1]]
        more = len(errors) - len(same)
        raise DataError(f"{name}:{locate(text, loc)}: {problem_text(same, where)}"
                        + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")) from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key {k!r} appears twice in one object")
        out[k] = v
    return out


_WS = re.compile(r"[ \t\r\n]*")


def locate(text: str, loc: Sequence[Any]) -> int:
    """The line on which the value at `loc` (keys and list indices, as pydantic reports them)
    starts in JSON `text`; the deepest value reached when the path stops matching."""
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    try:
        for key in loc:
            opener, start = text[pos], pos
            if opener not in "{[":
                break
            pos, found, i = _WS.match(text, pos + 1).end(), False, 0  # type: ignore[union-attr]
            while text[pos] not in "}]":
                if opener == "{":
                    k, pos = _STRICT.raw_decode(text, pos)
                    pos = _WS.match(text, _WS.match(text, pos).end() + 1).end()  # type: ignore[union-attr]
                    hit = k == str(key)
                else:
                    hit = isinstance(key, int) and i == key
                if hit:
                    found = True
                    break
                _, pos = _STRICT.raw_decode(text, pos)
                pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                pos = _WS.match(text, pos + (text[pos] == ",")).end()  # type: ignore[union-attr]
                i += 1
            if not found:
                pos = start
                break
    except (IndexError, ValueError):
        pass
    return text.count("\n", 0, pos) + 1


class AnyObject(BaseModel):
    """Any JSON object (the schema of a file whose structure its reader checks itself)."""

    model_config = ConfigDict(frozen=True, extra="allow")


def read_dict(path: str | Path, schema: Any, **kw: Any) -> dict[str, Any]:
    """`read_object`, returned as the dict of what the file holds (no defaults filled in), for code
    that reads a validated file as plain JSON (a TypedDict schema gives that dict already)."""
    obj = read_object(path, schema, **kw)
    return obj.model_dump(exclude_unset=True) if isinstance(obj, BaseModel) else obj
