"""A finished run as a results-store row, and indexing it without SQLAlchemy where that is safe.

`glotbench run` indexes every run it finishes. Importing SQLAlchemy and asking Alembic whether the
schema is current cost more than a whole fully cached re-run (0.34 s for 2,000 items:
docs/performance.md), so a SQLite store whose schema is already at `HEAD_REVISION` is written with
the standard library's sqlite3, one `INSERT ... ON CONFLICT DO NOTHING` with the columns and value
formats SQLAlchemy uses (tests/test_store.py reads such a row back through the ORM); any other
store (a new or older SQLite file, PostgreSQL) goes through `ResultsStore`. Nothing here imports
SQLAlchemy."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from glotbench.errors import GlotbenchError

VERSION_TABLE = "glotbench_store_version"
HEAD_REVISION = "s0004"  # the newest migration (store/migrations/versions); a test checks it
JSON_COLUMNS = ("model_info", "options", "scores", "selection", "validity", "judge_validation")


def default_store_url() -> str:
    """SQLite next to the call cache, unless GLOTBENCH_STORE_URL names another database."""
    if os.environ.get("GLOTBENCH_STORE_URL"):
        return os.environ["GLOTBENCH_STORE_URL"]
    root = os.environ.get("GLOTBENCH_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "glotbench")
    return f"sqlite:///{Path(root) / 'results.sqlite'}"


def sqlite_path(url: str) -> str | None:
    path = url.split("///", 1)[-1] if url.startswith("sqlite") else None
    return path if path and path != ":memory:" else None


def run_key(results: dict[str, Any], run_dir: str | Path) -> str:
    """A run's identity: its directory name and start time (stable across machines and re-imports)."""
    blob = json.dumps([Path(run_dir).name, results.get("started"), results.get("benchmark", {}).get("name"),
                       results.get("model", {}).get("spec")], ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def record_of(res: dict[str, Any], run_dir: str | Path) -> dict[str, Any]:
    """The store's row for a finished run's results (results.json's content, already validated)."""
    from glotbench.rundir.selection import selection_of
    from glotbench.rundir.validity import data_label_text, judge_validation_of

    bench, model, cfg = res["benchmark"], res["model"], res.get("config", {})
    head = res.get("headline") or ""
    overall = (res["scores"].get("overall") or {}).get(head) or {}
    tokens, counts = res.get("tokens") or {}, res.get("counts") or {}
    cost = res.get("cost") or {}
    scale = ((res.get("metrics") or {}).get(head) or {}).get("scale", "fraction")
    return {
        "run_key": run_key(res, run_dir),
        "benchmark": str(bench["name"]), "benchmark_version": str(bench.get("version", "")),
        "signature": str(res.get("signature", "")),
        "model": str(model["spec"]), "model_info": dict(model), "options": dict(cfg),
        "headline": str(head), "score": overall.get("value"), "scale": str(scale),
        "ci_low": overall.get("ci_low"), "ci_high": overall.get("ci_high"),
        "scores": res["scores"], "items": int(counts.get("items", 0)), "failed": int(counts.get("failed", 0)),
        "prompt_tokens": int(tokens.get("prompt", 0)), "completion_tokens": int(tokens.get("completion", 0)),
        "cost_usd": cost.get("run"), "run_dir": str(Path(run_dir).resolve()),
        "selection": selection_of(res), "validity": res.get("validity"), "data_label": data_label_text(res),
        "judge_validation": judge_validation_of(res),
        "started": str(res.get("started", "")), "finished": str(res.get("finished", "")),
    }


def _sqlite_insert(path: str, record: dict[str, Any]) -> bool | None:
    """Insert into a current SQLite store with sqlite3: True (added), False (already there), None
    (no store file yet, or its schema is not HEAD_REVISION: the caller migrates through SQLAlchemy)."""
    import sqlite3

    if not Path(path).is_file():
        return None
    con = sqlite3.connect(path, timeout=60, isolation_level=None)
    try:
        con.execute("PRAGMA busy_timeout=60000")
        # an index that `runs import` rebuilds: no fsync of the write-ahead log at commit (3-30 ms)
        con.execute("PRAGMA synchronous=NORMAL")
        try:
            version = con.execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchone()
        except sqlite3.DatabaseError:
            return None
        if version is None or version[0] != HEAD_REVISION:
            return None
        row = {k: (json.dumps(v) if k in JSON_COLUMNS else v) for k, v in record.items()}
        # SQLAlchemy's DateTime on SQLite: naive UTC as "YYYY-MM-DD HH:MM:SS.ffffff"
        row["indexed"] = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
        cols = ", ".join(row)
        marks = ", ".join(f":{k}" for k in row)
        con.execute("BEGIN IMMEDIATE")
        # a directory holds one run: an earlier run there (an invalid run finished in place) is gone
        con.execute("DELETE FROM runs WHERE run_dir = :run_dir AND run_key != :run_key", row)
        cur = con.execute(f"INSERT INTO runs ({cols}) VALUES ({marks}) ON CONFLICT (run_key) DO NOTHING", row)
        added = cur.rowcount == 1
        if not added:  # indexed already: refreshed with the record as read today (ResultsStore.add)
            fresh = [k for k in row if k not in ("run_key", "indexed")]
            con.execute(f"UPDATE runs SET {', '.join(f'{k} = :{k}' for k in fresh)} WHERE run_key = :run_key", row)
        con.execute("COMMIT")
        return added
    finally:
        con.close()


def index_run(results: dict[str, Any], run_dir: str | Path, url: str | None = None) -> bool:
    """Put a run just finished into the results store (`url`, default `default_store_url()`):
    True when added, False when it was there already. Raises GlotbenchError when it cannot."""
    url = url or default_store_url()
    record = record_of(results, run_dir)
    path = sqlite_path(url)
    if path is not None and url.startswith("sqlite:///"):
        try:
            added = _sqlite_insert(path, record)
        except Exception as e:  # noqa: BLE001 - a locked, damaged or unwritable file: one line
            raise GlotbenchError(f"cannot write the results store {path}: {type(e).__name__}: {e}") from None
        if added is not None:
            return added
    from glotbench.store.db import ResultsStore

    store = ResultsStore(url)
    try:
        return store.add(record)
    except Exception as e:  # noqa: BLE001
        if isinstance(e, GlotbenchError):
            raise
        raise GlotbenchError(f"cannot write the results store: {type(e).__name__}: {str(e).splitlines()[0]}") from None
    finally:
        store.close()
