"""The call cache: every model reply stored in SQLite (WAL), keyed by model and endpoint, prompt,
generation config and repeat index. A finished command re-run makes zero calls; a killed run resumes
from what was committed. Replies are written behind in small transactions (the runner flushes every
50 ms), which costs a killed run at most the last 50 ms of replies and keeps SQLite off the hot path.

Next to each reply the cache keeps its extraction and score (table `scores`), keyed by the request's
key and the reply itself (text, finish reason, token counts), the scorer (benchmark signature, which
carries its version, and the glotbench version) and the item (id, gold, public fields, meta): a re-run of unchanged code reads the score instead of re-scoring; a new benchmark
version, signature, glotbench release or gold scores afresh.

A run whose every sample has a stored score also keeps its aggregate (table `aggregates`: scores and
CIs), keyed by what the aggregate reads: the samples in item order (score keys and meta), the scorer, the
bootstrap settings, the benchmark's options and state, its metrics, the dataset, the numeric
libraries' versions and the source of the code that aggregates (`aggregate_key`; the caller builds
the parts, engine/evaluate.py `_aggregate`). The bootstrap is seeded, so the aggregate is a function
of exactly these; a fully cached re-run reads it instead of importing numpy and resampling."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from glotbench.errors import GlotbenchError
from glotbench.items import Item
from glotbench.keys import code_fingerprint, hash_text, storable  # noqa: F401 - the cache's key parts
from glotbench.models.base import Response
from glotbench.rundir.files import to_json

SCHEMA_VERSION = 1


def default_cache_path() -> Path:
    """GLOTBENCH_CACHE_DIR, else the platform's user cache directory (`keys.cache_dir`)."""
    from glotbench.keys import cache_dir

    return cache_dir() / "calls.sqlite"


# Canonical JSON for keys; encoder objects are built once (json.dumps with options builds one per
# call, once per cached unit).
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
_CANONICAL_REPR = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)


def cache_key(model_id: str, prompt_payload: Any, config: dict[str, Any], repeat: int, *,
              head: str | None = None) -> str:
    """SHA-256 of the canonical JSON of everything that can change a reply:
    {"config", "model", "prompt", "repeat", "v"} with sorted keys. `head`: `cache_key_head(model_id,
    config)`, which a run computes once per config instead of once per unit."""
    blob = (f"{head or cache_key_head(model_id, config)}{_CANONICAL.encode(prompt_payload)}"
            f',"repeat":{int(repeat)},"v":{SCHEMA_VERSION}}}')  # an int's JSON is its digits
    return hashlib.sha256(hash_text(blob)).hexdigest()


def cache_key_head(model_id: str, config: dict[str, Any]) -> str:
    """The canonical JSON of a cache key up to its prompt (sorted keys: config, model, prompt...)."""
    return f'{{"config":{_CANONICAL.encode(config)},"model":{_CANONICAL.encode(model_id)},"prompt":'


def score_key(call_key: str, scorer_id: str, item: Item, reply: Response) -> str:
    """The key of a stored score: the request and the reply (its text, finish reason and token
    counts: a reply replaced under the same request, by a re-run after its row was deleted or by a
    concurrent writer, is another score), the scorer and the item it was scored against: its id,
    gold, public fields and meta (extraction and scoring read them: LaoBench's direction, DeepSEA's
    language and subject; the prompt need not show them). What a sample holds is therefore a
    function of this key."""
    u = reply.usage
    blob = _CANONICAL_REPR.encode([call_key, scorer_id, item.id, dict(item.gold), reply.text, reply.finish_reason,
                                   u.prompt_tokens, u.completion_tokens, dict(item.public), dict(item.meta)])
    return hashlib.sha256(hash_text(blob)).hexdigest()


def aggregate_key(scorer_id: str, samples: Iterable[Any], settings: Any, code: str) -> str:
    """The key of a stored aggregate: the samples it was computed from, in order (each its stored
    score's key, which fixes the reply and its score, and its item's meta), the scorer, the
    aggregate's settings (resamples, seed, options, the benchmark's state, the dataset, the numeric
    libraries' versions) and the code fingerprint. Hashed 256 samples at a time: no document of
    every sample is built, and one encoder call per sample cost 10 us each."""
    from itertools import islice

    h = hashlib.sha256(hash_text(_CONTENT.encode(["aggregate", SCHEMA_VERSION, scorer_id, settings, code])))
    it = iter(samples)
    while chunk := list(islice(it, 256)):
        h.update(b"\n")
        h.update(hash_text(_CONTENT.encode(chunk)))
    return h.hexdigest()


def _plain(value: Any) -> Any:
    """A frozen mapping as the dict it holds (sorted like one); anything else by its repr."""
    return dict(value) if isinstance(value, Mapping) else repr(value)


_CONTENT = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_plain)


_SCORE_FIELDS = ("answer", "answer_key", "stats", "score_flags", "failure", "flags")


def decode_response(text: str) -> Response | None:
    """A stored reply, or None for a damaged row (asked again and, in SQLite, replaced)."""
    try:
        return Response.from_dict(json.loads(text))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def decode_score(text: str) -> dict[str, Any] | None:
    """A stored score record, or None for a damaged row (scored again and, in SQLite, replaced)."""
    try:
        record = json.loads(text)
    except ValueError:
        return None
    ok = (isinstance(record, dict) and all(k in record for k in _SCORE_FIELDS)
          and isinstance(record["stats"], dict) and isinstance(record["score_flags"], list)
          and isinstance(record["flags"], list))
    return record if ok else None


def open_cache(path: str | Path) -> "CallCache":
    """The cache at `path`: a SQLite file, or a PostgreSQL URL (a cache shared by a cluster)."""
    if isinstance(path, str) and path.startswith(("postgresql:", "postgresql+")):
        from glotbench.engine.cache_sql import SqlCallCache  # SQLAlchemy only when asked for

        return SqlCallCache(path)  # type: ignore[return-value]
    return CallCache(path)


_KEYS_PER_QUERY = 500  # under SQLite's oldest bound on a statement's parameters (999)


def queued_replies(keys: Sequence[str], queued: Callable[[str], str | None]) -> tuple[dict[str, Response], list[str]]:
    """`get_many`'s first step, for either store: the replies among `keys` still queued (`queued`:
    a key's queued JSON, or None) and the keys to ask the store for (a damaged queued reply is a
    miss, as `get` gives None for it)."""
    out: dict[str, Response] = {}
    rest: list[str] = []
    for key in keys:
        text = queued(key)
        if text is None:
            rest.append(key)
        elif (resp := decode_response(text)) is not None:
            out[key] = resp
    return out, rest


class CallCache:
    """A small key -> Response store. Only successful replies are stored: errors are retried next run."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:  # a file that is not a SQLite database, a directory, an unwritable place: one error line
            self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable across process kills
            self._db.execute("PRAGMA busy_timeout=10000")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, model TEXT NOT NULL,"
                " response TEXT NOT NULL, created REAL DEFAULT (unixepoch('subsec')))")
            self._db.execute("CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, record TEXT NOT NULL)")
        except sqlite3.Error as e:
            raise GlotbenchError(f"cannot open the call cache {self.path}: {e} (choose another --cache-path, "
                                 "or --no-cache)") from None
        try:  # a read-only cache made before the table existed still serves its replies and scores
            self._db.execute("CREATE TABLE IF NOT EXISTS aggregates (key TEXT PRIMARY KEY, record TEXT NOT NULL)")
        except sqlite3.OperationalError:
            pass
        self._pending: dict[str, tuple[str, str, str]] = {}
        self._pending_scores: dict[str, tuple[str, str]] = {}

    def get(self, key: str) -> Response | None:
        pending = self._pending.get(key)
        if pending is not None:
            return decode_response(pending[2])
        row = self._db.execute("SELECT response FROM calls WHERE key = ?", (key,)).fetchone()
        return decode_response(row[0]) if row else None

    def get_many(self, keys: Sequence[str]) -> dict[str, Response]:
        """The stored replies among `keys` (a damaged row is left out, as `get` gives None for it): a
        query per 500 keys, not one per key (a run asks for its units 64 at a time: 2,000 look-ups
        cost 3.1 ms of CPU one by one, 0.6 ms so; docs/performance.md)."""
        out, rest = queued_replies(keys, lambda key: None if (p := self._pending.get(key)) is None else p[2])
        for i in range(0, len(rest), _KEYS_PER_QUERY):
            chunk = rest[i:i + _KEYS_PER_QUERY]
            rows = self._db.execute(f"SELECT key, response FROM calls WHERE key IN ({','.join('?' * len(chunk))})",
                                    chunk).fetchall()
            for key, text in rows:
                if (resp := decode_response(text)) is not None:
                    out[key] = resp
        return out

    def put(self, key: str, model_id: str, response: Response) -> None:
        """Queue a reply; `flush()` commits it."""
        self._pending[key] = (key, model_id, to_json(response.to_dict()))

    def get_score(self, key: str) -> dict[str, Any] | None:
        pending = self._pending_scores.get(key)
        if pending is not None:
            return decode_score(pending[1])
        row = self._db.execute("SELECT record FROM scores WHERE key = ?", (key,)).fetchone()
        return decode_score(row[0]) if row else None

    def put_score(self, key: str, record: dict[str, Any]) -> None:
        """Queue a scored record (see `scoring.score_record`); `flush()` commits it."""
        self._pending_scores[key] = (key, to_json(record))

    def get_aggregate(self, key: str) -> Any:
        """The stored aggregate, or None (none stored, no table, a damaged row: computed afresh)."""
        try:
            row = self._db.execute("SELECT record FROM aggregates WHERE key = ?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError):
            return None

    def put_aggregate(self, key: str, blob: str) -> None:
        """Store an aggregate (JSON text, see `storable`) at once: it is written once per run."""
        self._db.execute("INSERT OR REPLACE INTO aggregates (key, record) VALUES (?, ?)", (key, blob))

    def flush(self) -> None:
        if not self._pending and not self._pending_scores:
            return
        rows, scores = list(self._pending.values()), list(self._pending_scores.values())
        try:
            self._db.execute("BEGIN")
        except sqlite3.Error as e:  # locked past the busy timeout, disk gone: the replies stay queued
            raise GlotbenchError(f"cannot write to the call cache {self.path}: {e}") from None
        try:
            self._db.executemany("INSERT OR REPLACE INTO calls (key, model, response) VALUES (?, ?, ?)", rows)
            self._db.executemany("INSERT OR REPLACE INTO scores (key, record) VALUES (?, ?)", scores)
            self._db.execute("COMMIT")
        except BaseException as e:
            self._db.execute("ROLLBACK")
            if isinstance(e, sqlite3.Error):  # a full disk, a read-only file: the replies stay queued
                raise GlotbenchError(f"cannot write to the call cache {self.path}: {e}") from None
            raise
        self._pending.clear()
        self._pending_scores.clear()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def close(self) -> None:
        self.flush()
        self._db.close()
