"""Writing and reading a run directory, and the rule that says whether it holds a finished run.

    run.json        written first (`status: running`), its status set again at the end
    samples.jsonl   one line per sample, appended as each finishes (`SampleSink`), then put in item order
    results.json    written last, atomically: a directory without it is an unfinished run

Every JSON file glotbench writes goes through `to_json`/`json_bytes` (a string no UTF-8 can carry, a
lone surrogate from a data file, is written as its `\\u` escape, never a crash) and, when it replaces a
file, `write_json_atomic` (a temporary file renamed over it: a reader never sees half a file).
"""

from __future__ import annotations

import json
import os
from array import array
import re
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Mapping, Sequence, TypeVar


from glotbench.errors import GlotbenchError

RUN_JSON, SAMPLES, RESULTS = "run.json", "samples.jsonl", "results.json"
# Where a judged run kept its summary before its results.json held it (`judged`): read, never written.
OLD_SUMMARIES = {"arena": "arena.json", "aragen": "aragen.json", "rubric": "rubric.json"}
S = TypeVar("S")  # a row's schema: a pydantic model or a TypedDict (rundir/schema.py)

_TEXT = json.JSONEncoder(ensure_ascii=False)
_ASCII = json.JSONEncoder(ensure_ascii=True)


def to_json(value: Any) -> str:
    """JSON text (UTF-8 kept), as json.dumps(value, ensure_ascii=False) writes it; a value holding a
    string no UTF-8 can carry (a lone surrogate, read from a `\\ud800` escape in a data file) is
    written with `\\u` escapes instead, so no writer stops on what it was given."""
    text = _TEXT.encode(value)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return _ASCII.encode(value)
    return text


def json_bytes(value: Any) -> bytes:
    """`to_json(value)` as UTF-8 bytes, with one encoding on the usual path."""
    try:
        return _TEXT.encode(value).encode("utf-8")
    except UnicodeEncodeError:
        return _ASCII.encode(value).encode("ascii")


def _replace(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as f:
        write(f)
    os.replace(tmp, path)


def write_json_atomic(path: str | Path, data: Any) -> None:
    """`data` as indented JSON in `path`, through a temporary file renamed over it."""
    text = json.dumps(data, ensure_ascii=False, indent=2)
    try:
        blob = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a data file: written as its \u escape
        blob = json.dumps(data, ensure_ascii=True, indent=2).encode("ascii")
    _replace(Path(path), lambda f: f.write(blob))


def write_jsonl_atomic(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """One JSON line per row in `path`, through a temporary file renamed over it."""
    _replace(Path(path), lambda f: f.writelines(json_bytes(r) + b"\n" for r in rows))


def slug(text: str, fallback: str = "model") -> str:
    """THE one rule for a name in a path (a run, judge or sweep directory, a judge card's file): a model
    spec or any name with each run of characters outside `A-Za-z0-9._-` made one `_`, at most 80
    characters (`judge-openai_gpt-4o_http_...`); `fallback` when nothing is left (`ລາວ`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80].strip("_") or fallback


# -- a task file kept with its run ------------------------------------------------------------------

TASK_COPY = "task"  # + the file's suffix: `task.yaml`


def keep_task_file(path: Path, out_dir: Path) -> dict[str, str]:
    """Copy a user's task file into the run directory; the record run.json and results.json keep
    (`benchmark.task_file`): its resolved path, its SHA-256 and the copy's absolute path."""
    import hashlib
    import shutil

    src = Path(path).resolve()
    copy = (Path(out_dir) / (TASK_COPY + (src.suffix or ".yaml"))).resolve()
    if src != copy:
        shutil.copyfile(src, copy)
    return {"path": str(src), "sha256": hashlib.sha256(copy.read_bytes()).hexdigest(), "copy": str(copy)}


def task_file_of(benchmark: Mapping[str, Any], run_dir: str | Path | None = None) -> tuple[str, str] | None:
    """The run's task file to rebuild its benchmark from, and the folder its relative paths start in
    (the original's): the copy in `run_dir` (or where it was written), else the original file, each
    only when its SHA-256 is the recorded one. None: the run recorded no task file, or neither is left."""
    import hashlib

    tf = benchmark.get("task_file")
    if not isinstance(tf, Mapping) or not tf.get("path"):
        return None
    original = Path(str(tf["path"]))
    places = [Path(run_dir) / Path(str(tf.get("copy") or "")).name] if run_dir is not None and tf.get("copy") else []
    places += [Path(str(tf["copy"]))] if tf.get("copy") else []
    for p in (*places, original):
        try:
            if hashlib.sha256(p.read_bytes()).hexdigest() == tf.get("sha256"):
                return str(p), str(original.parent)
        except OSError:
            continue
    return None


# -- files a run read by path (a SentencePiece model, a few-shot file) ------------------------------

_MOVED: dict[str, str] = {}  # SHA-256 -> a file's new place (`--moved FILE`: rescore, report, compare)


def _sha256(path: Path) -> str:
    import hashlib

    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def file_record(option: str, value: str, path: str) -> dict[str, str]:
    """What a run keeps of a file an option names (`benchmark.files`): the option, its value (with the
    resolved path in it), the path and the file's SHA-256, so that a reader finds it after a move."""
    p = Path(path).resolve()
    return {"option": option, "value": value.replace(path, str(p)), "path": str(p), "sha256": _sha256(p)}


def add_moved(paths: Iterable[str | Path]) -> None:
    """`--moved FILE`: files a run read, at their new places, known by their SHA-256 (`relocated`)."""
    for given in paths:
        if not str(given).strip():  # Path("") is the current folder: never what an empty value meant
            raise GlotbenchError("--moved: an empty path; give the file")
        p = Path(given).expanduser()
        if not p.is_file():
            raise GlotbenchError(f"--moved {given}: " + ("is a directory; give the file" if p.is_dir() else "no such file"))
        try:
            _MOVED[_sha256(p)] = str(p.resolve())
        except OSError as e:
            raise GlotbenchError(f"--moved {given}: cannot be read ({e.strerror or e})") from None


def relocated(record: Mapping[str, Any]) -> str:
    """An option's value (`file_record`) with its file where it is now: at its recorded path when the
    file there has the recorded SHA-256, else at a `--moved` file's place with that SHA-256; else one
    GlotbenchError line naming the file and how to give its new place (a `--moved` file with another
    SHA-256 is refused: it is not the file the run read)."""
    path, sha, value = str(record["path"]), str(record["sha256"]), str(record["value"])
    p = Path(path)  # `sha256`: the whole digest, or its first 12 hex digits (an older run's signature)
    try:
        if p.is_file() and _sha256(p).startswith(sha):
            return value
    except OSError:
        pass
    for digest, new in _MOVED.items():
        if digest.startswith(sha):
            return value.replace(path, new)
    state = "has changed since the run" if p.exists() else "is gone"
    what = f"the run's {record['option']} file {path} {state} (SHA-256 {sha[:12]})"
    if _MOVED:
        raise GlotbenchError(f"{what}; --moved {', '.join(_MOVED.values())}: not that file (SHA-256 "
                             f"{', '.join(k[:12] for k in _MOVED)})")
    raise GlotbenchError(f"{what}: give its new place with --moved FILE")


# -- the finished-run rule -------------------------------------------------------------------------

def _results_field(path: Path, key: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError, AttributeError):
        return None


def invalid_run(path: str | Path) -> bool:
    """A results.json (or an older judged run's summary, OLD_SUMMARIES) that records an invalid run: the same command may
    finish it in place."""
    validity = _results_field(Path(path), "validity")
    return isinstance(validity, dict) and validity.get("valid") is False


def judged_section(run_dir: str | Path) -> dict[str, Any] | None:
    """The `judged` section of a run directory's results.json (schema.JudgedSection): a judged run's
    top directory; None for a plain run, an unreadable file or no results.json."""
    judged = _results_field(Path(run_dir) / RESULTS, "judged")
    return judged if isinstance(judged, dict) and isinstance(judged.get("kind"), str) else None


def run_status(out_dir: str | Path) -> str | None:
    """The status a run directory's results.json records ("complete", or "stopped": a run cut short by
    --max-cost, which the same command resumes); None without a readable one."""
    status = _results_field(Path(out_dir) / RESULTS, "status")
    return status if isinstance(status, str) else None


def finished_run(out_dir: str | Path) -> bool:
    """The finished-run rule: a results.json whose status is complete and whose run is valid. An
    invalid run (too many failed calls) and one stopped by --max-cost are run again in place by the
    same command, resuming from the call cache; `--out` refuses only a finished run."""
    path = Path(out_dir) / RESULTS
    return path.is_file() and run_status(out_dir) == "complete" and not invalid_run(path)


def set_aside_invalid(out_dir: Path, summary: str, phases: tuple[str, ...] = (), older: tuple[str, ...] = ()) -> bool:
    """Make room for a judged run (arena, AraGen, a rubric task) in `out_dir`: a directory whose `summary`
    file (its results.json) records an invalid run is renamed `DIR.invalid-TIME`, and one that
    holds a phase's run (`phases`: its directory names; a `judge-*` one too) but no summary, a run
    stopped before it finished (Ctrl-C while judging, no prompt left to judge), `DIR.unfinished-TIME`:
    kept, not deleted, so the same command runs it again in `out_dir`, its successful calls from the
    cache. True when it was renamed; an error when the run there is finished and valid. `older`: the
    names an earlier release gave the summary (OLD_SUMMARIES), read the same way where no `summary` is."""
    path = next((p for p in (out_dir / n for n in (summary, *older)) if p.exists()), out_dir / summary)
    if path.exists():
        if not invalid_run(path):
            raise GlotbenchError(f"{out_dir} already holds a finished run; choose another --out")
        kind = "invalid"
    elif out_dir.is_dir() and any((d / RUN_JSON).is_file() for d in out_dir.iterdir()
                                  if d.is_dir() and (d.name in phases or d.name.startswith("judge-"))):
        kind = "unfinished"
    else:
        return False
    os.replace(out_dir, out_dir.with_name(f"{out_dir.name}.{kind}-{datetime.now():%Y%m%d-%H%M%S}"))
    return True


def new_run_dir(bench: str, model_spec: str, out: str | None) -> Path:
    """The run's directory, made: `out` (refused when it holds a finished run; an unfinished, invalid
    or stopped one is run again in place), or `runs/BENCH/TIME-MODEL` (with `-N` when taken)."""
    if out is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        out_dir = Path("runs") / bench / f"{stamp}-{slug(model_spec)}"
        n = 1
        while out_dir.exists():
            n += 1
            out_dir = out_dir.with_name(f"{stamp}-{slug(model_spec)}-{n}")
    else:
        out_dir = Path(out)
        if finished_run(out_dir):
            raise GlotbenchError(f"{out_dir} already holds a finished run; choose another --out")
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir


# -- samples.jsonl ----------------------------------------------------------------------------------

class SampleSink:
    """samples.jsonl while a run is under way: each sample's line appended as it finishes (the
    runner flushes every 50 ms, so a killed run keeps what it scored), then `in_order` rewrites the
    file in item order when the samples came in another (a fully cached run appends them in order
    already). Only where each line lies is kept, not the line (10k lines are ~13 MB)."""

    def __init__(self, path: Path):
        self.path = path
        self._file: IO[bytes] = path.open("wb")
        # Line i: its sample's id and repeat, where it ends in the file (it starts where line i - 1
        # ends). Arrays, not a tuple per line: 16 bytes a line instead of ~140 (issue 32).
        self._ids: list[str] = []
        self._repeats = array("q")
        self._ends = array("q")
        self._written = 0

    def add(self, record: Mapping[str, Any]) -> None:
        """Append one sample's record (`core.Sample.to_record`)."""
        line = json_bytes(record) + b"\n"
        self._file.write(line)
        self._ids.append(record["id"])
        self._repeats.append(record["repeat"])
        self._written += len(line)
        self._ends.append(self._written)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "SampleSink":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def in_order(self, order: Mapping[str, int],
                 extra: Callable[[str, int], Mapping[str, Any] | None] | None = None,
                 fields: Callable[[str, int], Mapping[str, Any] | None] | None = None) -> None:
        """Rewrite the closed file with its lines sorted by (item position in `order`, repeat), each
        line with its `checks` from `extra(id, repeat)` added as the record's last key (the checks
        run once the requests are done: the lines appended during the run have none), then the keys
        `fields(id, repeat)` gives (`learned`: the learned metric's score of the sample)."""
        ids, repeats, ends = self._ids, self._repeats, self._ends
        by_item = [(order[sid], r) for sid, r in zip(ids, repeats)]
        if extra is None and fields is None and all(by_item[i] <= by_item[i + 1] for i in range(len(by_item) - 1)):
            return
        tmp = self.path.with_suffix(".jsonl.tmp")
        # the checks a line gets, encoded once per object `extra` gives (a run's verdicts repeat: one
        # object each, RunChecks.check_all); the object is held with its text, so no id is reused
        encoded: dict[int, tuple[Any, bytes]] = {}
        with self.path.open("rb") as src, tmp.open("wb") as dst:
            for i in sorted(range(len(by_item)), key=by_item.__getitem__):
                start = ends[i - 1] if i else 0
                src.seek(start)
                line = src.read(ends[i] - start)
                sid, repeat = ids[i], repeats[i]
                checks = extra(sid, repeat) if extra is not None else None
                if checks is not None:  # `{...}\n` -> `{..., "checks": {...}}\n`: as json_bytes writes the key
                    kept = encoded.get(id(checks))
                    if kept is None:
                        kept = (checks, json_bytes(checks))
                        if len(encoded) < 4096:  # bounded: a run of distinct verdicts keeps none of their text
                            encoded[id(checks)] = kept
                    line = line[:-2] + b', "checks": ' + kept[1] + b"}\n"
                for key, value in ((fields(sid, repeat) or {}) if fields is not None else {}).items():
                    line = line[:-2] + b", " + json_bytes(key) + b": " + json_bytes(value) + b"}\n"
                dst.write(line)
        os.replace(tmp, self.path)


# -- reading a run back -----------------------------------------------------------------------------

def read_results(run_dir: str | Path, schema: type[Any] | None = None) -> dict[str, Any]:
    """A run directory's results.json validated against `schema` (default `Results`; `FinishedResults`
    for a completed run), as the dict the file holds; an unfinished run or another directory is one
    error saying which."""
    from glotbench.data import read_dict
    from glotbench.rundir.schema import Results

    d = Path(run_dir)
    path = d / RESULTS
    if not path.is_file():
        if (d / RUN_JSON).is_file():
            raise GlotbenchError(f"{d} is an unfinished run (no results.json); run the same command again "
                                 "to resume it")
        raise GlotbenchError(f"{d} is not a run directory (no results.json)")
    return _task_copy_here(d, read_dict(path, schema or Results, allow_nan=True))  # a bad file: one error naming the field


def _task_copy_here(d: Path, res: dict[str, Any]) -> dict[str, Any]:
    """The record as read from `d`: a kept task file's `copy` names where the copy is now when the run
    directory was moved (or copied) since it was written: beside this results.json, or in one of a
    judged run's phases (`answers/task.yaml`). The SHA-256 is still checked by whoever reads it."""
    tf = (res.get("benchmark") or {}).get("task_file")
    if not isinstance(tf, dict) or not tf.get("copy") or Path(str(tf["copy"])).is_file():
        return res
    name = Path(str(tf["copy"])).name
    phases = ((res.get("judged") or {}).get("phases") or {}).values()
    for place in (d / name, *(d / str(sub) / name for sub in phases)):
        if place.is_file():
            res["benchmark"] = {**res["benchmark"], "task_file": {**tf, "copy": str(place.resolve())}}
            break
    return res


def read_run_json(run_dir: str | Path) -> dict[str, Any]:
    """A run directory's run.json (written when the run starts), validated."""
    from glotbench.data import read_dict
    from glotbench.rundir.schema import RunJson

    return read_dict(Path(run_dir) / RUN_JSON, RunJson, allow_nan=True)


def read_samples(run_dir: str | Path, schema: type[S]) -> list[dict[str, Any]]:
    """Every samples.jsonl line, each checked against `schema` (`SampleRow`, `ReportSampleRow`), as the
    dicts the file holds (a report reads 10,000 lines: the checked rows are not kept)."""
    from glotbench.data import raw_rows, validate_rows

    path = Path(run_dir) / SAMPLES
    if not path.exists():
        judged = judged_section(run_dir) or next(({"kind": k} for k, name in OLD_SUMMARIES.items()
                                                  if (Path(run_dir) / name).is_file()), None)
        if judged is not None:  # its items are in its phases, judged item by item: not a damaged run
            raise GlotbenchError(f"{run_dir} is a judged run ({judged['kind']}): this view reads a plain run's samples "
                                 "and is not there for judged runs; `glotbench compare RUN_A RUN_B` tests judged "
                                 "scores item by item, `glotbench report RUN` prints each judge's")
        raise GlotbenchError(f"{run_dir} has no samples.jsonl")
    raw = list(raw_rows(path, "jsonl", allow_nan=True))
    validate_rows(path, raw, schema)
    return [rec for _, rec in raw]


def samples_counted(run_dir: str | Path, n: int) -> None:
    """A finished run's samples.jsonl rows (`n`) against its results.json's `counts.samples`: a file
    emptied or cut at a line's end is one GlotbenchError line, never a view of what is left."""
    if not (Path(run_dir) / RESULTS).is_file():
        return
    counts = read_results(Path(run_dir)).get("counts") or {}
    want = counts.get("samples") if isinstance(counts, dict) else None
    if isinstance(want, int) and not isinstance(want, bool) and want != n:
        raise GlotbenchError(f"{Path(run_dir) / SAMPLES}: {n} samples, results.json counts {want} "
                             "(the file emptied or cut short: run the same command again)")


def sample_outputs(run_dir: str | Path) -> dict[str, str]:
    """Each item's raw reply in a run directory (repeat 0; a failed call's as ""), by item id: what the
    judge cards' length bias and the arena ranking's style control read of a phase's answers."""
    from glotbench.rundir.schema import SampleRow

    return {r["id"]: r.get("output") or "" for r in read_samples(run_dir, SampleRow) if r.get("repeat", 0) == 0}


def sample_rows(run_dir: str | Path, schema: type[S]) -> list[tuple[str, S]]:
    """Every samples.jsonl line validated into `schema`: (line number, row)."""
    from glotbench.data import read_rows

    return read_rows(Path(run_dir) / SAMPLES, schema, fmt="jsonl", allow_nan=True)


def order_of(ids: Sequence[str]) -> dict[str, int]:
    """Each item id's position: the order samples.jsonl is kept in."""
    return {x: i for i, x in enumerate(ids)}
