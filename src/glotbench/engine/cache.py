"""The call cache: every model reply stored in SQLite (WAL), keyed by model and endpoint, prompt,
generation config and repeat index. A finished command re-run makes zero calls; a killed run resumes
from what was committed. Replies are written behind in small transactions (the runner flushes every
50 ms), which costs a killed run at most the last 50 ms of replies and keeps SQLite off the hot path.

Next to each reply the cache keeps its extraction and score (table `scores`), keyed by the reply's
key, the scorer (benchmark signature, which carries its version, and the glotbench version) and the
item's id and gold: a re-run of unchanged code reads the score instead of re-scoring; a new benchmark
version, signature, glotbench release or gold scores afresh."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from glotbench.models.base import Response

SCHEMA_VERSION = 1


def default_cache_path() -> Path:
    """GLOTBENCH_CACHE_DIR, else the platform's user cache directory (platformdirs: XDG_CACHE_HOME
    or ~/.cache on Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows)."""
    root = os.environ.get("GLOTBENCH_CACHE_DIR")
    if not root:
        from platformdirs import user_cache_dir

        root = user_cache_dir("glotbench", appauthor=False)
    return Path(root) / "calls.sqlite"


def cache_key(model_id: str, prompt_payload: Any, config: dict[str, Any], repeat: int) -> str:
    """SHA-256 of the canonical JSON of everything that can change a reply."""
    blob = json.dumps(
        {"v": SCHEMA_VERSION, "model": model_id, "prompt": prompt_payload, "config": config,
         "repeat": repeat},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def score_key(call_key: str, scorer_id: str, item_id: str, gold: Any) -> str:
    """The key of a stored score: the reply, the scorer and the item it was scored against."""
    blob = json.dumps([call_key, scorer_id, item_id, gold], sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"), default=repr)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def open_cache(path: str | Path) -> "CallCache":
    """The cache at `path`: a SQLite file, or a PostgreSQL URL (a cache shared by a cluster)."""
    if isinstance(path, str) and path.startswith(("postgresql:", "postgresql+")):
        from glotbench.engine.cache_sql import SqlCallCache  # SQLAlchemy only when asked for

        return SqlCallCache(path)  # type: ignore[return-value]
    return CallCache(path)


class CallCache:
    """A small key -> Response store. Only successful replies are stored: errors are retried next run."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable across process kills
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, model TEXT NOT NULL,"
            " response TEXT NOT NULL, created REAL DEFAULT (unixepoch('subsec')))")
        self._db.execute("CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, record TEXT NOT NULL)")
        self._pending: dict[str, tuple[str, str, str]] = {}
        self._pending_scores: dict[str, tuple[str, str]] = {}

    def get(self, key: str) -> Response | None:
        pending = self._pending.get(key)
        if pending is not None:
            return Response.from_dict(json.loads(pending[2]))
        row = self._db.execute("SELECT response FROM calls WHERE key = ?", (key,)).fetchone()
        return Response.from_dict(json.loads(row[0])) if row else None

    def put(self, key: str, model_id: str, response: Response) -> None:
        """Queue a reply; `flush()` commits it."""
        self._pending[key] = (key, model_id, json.dumps(response.to_dict(), ensure_ascii=False))

    def get_score(self, key: str) -> dict[str, Any] | None:
        pending = self._pending_scores.get(key)
        if pending is not None:
            return json.loads(pending[1])
        row = self._db.execute("SELECT record FROM scores WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_score(self, key: str, record: dict[str, Any]) -> None:
        """Queue a scored record (see `engine.scoring.score_record`); `flush()` commits it."""
        self._pending_scores[key] = (key, json.dumps(record, ensure_ascii=False))

    def flush(self) -> None:
        if not self._pending and not self._pending_scores:
            return
        rows, scores = list(self._pending.values()), list(self._pending_scores.values())
        self._db.execute("BEGIN")
        try:
            self._db.executemany("INSERT OR REPLACE INTO calls (key, model, response) VALUES (?, ?, ?)", rows)
            self._db.executemany("INSERT OR REPLACE INTO scores (key, record) VALUES (?, ?)", scores)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._pending.clear()
        self._pending_scores.clear()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def close(self) -> None:
        self.flush()
        self._db.close()
