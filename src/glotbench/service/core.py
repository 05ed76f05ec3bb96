"""The service's logic, without HTTP: test sets, keys, submissions, quota, scoring through the Ladder.

Replies carry what the Ladder releases for the caller's key (service/scoring.py) — never an item id,
an item's correctness or gold. Endpoint runs are queued jobs (service/jobs.py); the public views
(sets, downloads, leaderboard) are in service/views.py.
"""

from __future__ import annotations

import gc
import hashlib
import json
import secrets
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping

import numpy as np
from sqlalchemy import func, select

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset
from glotbench.errors import GlotbenchError
from glotbench.items import Item
from glotbench.registry import get_benchmark
from glotbench.service.db import ApiKey, LadderState, SetItem, Submission, TestSet, session_factory, utcnow
from glotbench.service.scoring import Aggregate, Rung, Step, aggregate, groups_of, release

UNSET: Any = object()


class ServiceError(Exception):
    def __init__(self, status: int, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.status, self.message, self.retry_after = status, message, retry_after


@dataclass(frozen=True)
class Settings:
    db_url: str = "sqlite:///glotbench-service.sqlite"
    min_group: int = 20
    round_digits: int = 1
    ladder_step: float = 0.0  # points; 0 = parameter-free (see service/scoring.py)
    daily_limit: int = 3
    rate_per_minute: int = 60
    rate_storage: str = "memory://"  # or redis://host:port/db to share limits between processes
    max_body_bytes: int = 5 * 2**20
    allow_hosts: tuple[str, ...] = ()
    endpoint_workers: int = 4  # endpoint runs in flight per server process
    endpoint_per_key: int = 1  # endpoint runs in flight per key, over all processes
    endpoint_timeout_s: float = 900.0
    endpoint_max_requests: int = 50_000
    endpoint_max_response_bytes: int = 2**20
    endpoint_concurrency: int = 8
    lease_s: float = 30.0  # a running job whose process stops renewing this lease is taken back
    resamples: int = 1000


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def answer_options(items: Iterable[Item]) -> dict[str, frozenset[str] | None]:
    """Per item, the valid answers when it has options (else any answer the benchmark can read)."""
    out: dict[str, frozenset[str] | None] = {}
    for it in items:
        options = it.public.get("options")
        out[it.id] = frozenset(options) if isinstance(options, Mapping) else None
    return out


def count_unreadable(samples: Mapping[str, Any], options: Mapping[str, frozenset[str] | None]) -> int:
    """Answers that are no answer: a failure of extraction (format, empty, think block left open,
    scorer error) or, for an item with options, not one of them. Such an answer scores as a known
    zero, which would let a "complete" submission score one answer alone."""
    bad = 0
    for i, smp in samples.items():
        opts = options[i]
        bad += smp.failure is not None or (opts is not None and str(smp.answer) not in opts)
    return bad


def settle_heap() -> None:
    """Collect, then move every object alive now out of the collector's generations (`gc.freeze`).

    The server calls this once started and after it caches a set: the cached set (~100,000 objects
    for 10,000 items) lives as long as the process, and without this every full collection rescans
    it, which a 10,000-answer submission (~50,000 short-lived objects) triggers every other time
    (~100 ms each). Frozen objects are still freed by reference counting; only cyclic garbage alive
    at the moment of freezing is kept."""
    gc.collect()
    gc.freeze()


@dataclass(frozen=True)
class LoadedSet:
    """A set as scoring needs it, built once per process: the benchmark, its Dataset, items by id,
    each item's valid answers, and the item positions per subdomain."""

    identity: tuple[Any, ...]
    bench: Benchmark
    dataset: Dataset
    by_id: Mapping[str, Item]
    options: Mapping[str, frozenset[str] | None]
    groups: Mapping[str, np.ndarray]


def _identity(ts: TestSet) -> tuple[Any, ...]:
    return (ts.id, ts.name, ts.benchmark, json.dumps(ts.options, sort_keys=True), ts.data_sha256)


class Service:
    def __init__(self, settings: Settings, *, freeze_sets: bool = False):
        """`freeze_sets`: call `settle_heap` after caching a set (the server does; a library user's
        process is left alone)."""
        self.settings = settings
        self.freeze_sets = freeze_sets
        self.Session = session_factory(settings.db_url)
        self.step = Step(settings.ladder_step)
        self._sets: dict[int, LoadedSet] = {}  # by set id; reloaded when the row's identity changes
        self._sets_lock = threading.Lock()
        self.jobs: Any = None  # a JobRunner when serving (service/jobs.py)

    # -- administration --------------------------------------------------------------------

    def load_set(self, name: str, benchmark: str, data: str | None, *, options: Mapping[str, str] | None = None,
                 blind_until: datetime | None = None, release_date: datetime | None = None,
                 endpoint_mode: bool = True) -> int:
        bench = get_benchmark(benchmark, **dict(options or {}))
        items = bench.load(data)
        if not items.sha256:
            raise GlotbenchError(f"{data}: the benchmark gave no data hash")
        with self.Session.begin() as s:
            if s.scalar(select(TestSet).where(TestSet.name == name)):
                raise GlotbenchError(f"a set named {name!r} exists already")
            ts = TestSet(name=name, benchmark=benchmark, options=dict(options or {}), status="pending",
                         blind_until=blind_until, release_date=release_date, data_sha256=items.sha256,
                         endpoint_mode=endpoint_mode)
            s.add(ts)
            s.flush()
            s.add_all(SetItem(set_id=ts.id, position=i, item_id=it.id, public=_plain(it.public), gold=_plain(it.gold),
                              meta=_plain(it.meta)) for i, it in enumerate(items))
            return ts.id

    def create_key(self, name: str) -> tuple[int, str]:
        key = "gb_" + secrets.token_urlsafe(32)
        with self.Session.begin() as s:
            k = ApiKey(name=name, key_hash=hash_key(key))
            s.add(k)
            s.flush()
            return k.id, key  # the key itself is shown once and never stored

    def revoke_key(self, key_id: int) -> None:
        with self.Session.begin() as s:
            k = s.get(ApiKey, key_id)
            if k is None:
                raise GlotbenchError(f"no API key with id {key_id}")
            k.revoked = True

    def set_window(self, name: str, blind_until: Any = UNSET, release_date: Any = UNSET,
                   endpoint_mode: Any = UNSET) -> None:
        """Change only what is given (None clears a date)."""
        with self.Session.begin() as s:
            ts = self._set(s, name)
            if blind_until is not UNSET:
                ts.blind_until = blind_until
            if release_date is not UNSET:
                ts.release_date = release_date
            if endpoint_mode is not UNSET:
                ts.endpoint_mode = bool(endpoint_mode)

    def rotate(self, new_name: str) -> str | None:
        """`new_name` becomes its benchmark's current set; the previous current set is released (its
        items and gold become downloadable; its scores stay on the leaderboard, marked released)."""
        with self.Session.begin() as s:
            new = self._set(s, new_name)
            old = s.scalar(select(TestSet).where(TestSet.benchmark == new.benchmark, TestSet.status == "current"))
            if old is not None and old.id != new.id:
                old.status, old.released_at = "released", utcnow()
            new.status = "current"
            return old.name if old is not None and old.id != new.id else None

    @staticmethod
    def _set(s: Any, name: str) -> TestSet:
        ts = s.scalar(select(TestSet).where(TestSet.name == name))
        if ts is None:
            raise GlotbenchError(f"no test set named {name!r}")
        return ts

    # -- helpers ---------------------------------------------------------------------------

    def authenticate(self, key: str | None) -> int:
        if not key:
            raise ServiceError(401, "missing API key (Authorization: Bearer KEY)")
        with self.Session() as s:
            k = s.scalar(select(ApiKey).where(ApiKey.key_hash == hash_key(key)))
            if k is None or k.revoked:
                raise ServiceError(401, "invalid or revoked API key")
            return k.id

    @staticmethod
    def is_released(ts: TestSet) -> bool:
        return ts.status == "released" or (ts.release_date is not None and utcnow() >= ts.release_date)

    def load_items(self, s: Any, ts: TestSet) -> LoadedSet:
        """The set's benchmark (with its options) and its items as the benchmark's own Dataset, with
        the facts it derives (a macro average's subjects): the same objects a run gets. Cached per
        process under the set's identity (id, name, benchmark, options, data hash): a set's items never
        change once loaded, and a row that no longer matches what was cached (a set deleted and
        another loaded under its id) is read again, so stale gold is never used."""
        ident = _identity(ts)
        with self._sets_lock:
            hit = self._sets.get(ts.id)
            if hit is not None and hit.identity == ident:
                return hit
            bench = get_benchmark(ts.benchmark, **ts.options)
            rows = s.scalars(select(SetItem).where(SetItem.set_id == ts.id).order_by(SetItem.position)).all()
            items = [Item.create(r.item_id, r.public, r.gold, r.meta) for r in rows]
            dataset = bench.dataset(items, f"service set {ts.name}", ts.data_sha256)
            loaded = LoadedSet(ident, bench, dataset, {it.id: it for it in dataset}, answer_options(dataset),
                               groups_of(bench, dataset))
            self._sets[ts.id] = loaded
            if self.freeze_sets:
                settle_heap()
            return loaded

    def _target_set(self, s: Any, set_name: str | None, benchmark: str | None) -> TestSet:
        if set_name:
            ts = s.scalar(select(TestSet).where(TestSet.name == set_name))
        else:
            ts = s.scalar(select(TestSet).where(TestSet.benchmark == benchmark, TestSet.status == "current"))
        if ts is None or ts.status != "current" or self.is_released(ts):
            raise ServiceError(404, "no open test set by that name or for that benchmark")
        return ts

    def _lock_key(self, s: Any, key_id: int) -> None:
        s.scalar(select(ApiKey).where(ApiKey.id == key_id).with_for_update())  # PostgreSQL; SQLite: BEGIN IMMEDIATE

    def _check_limit(self, s: Any, key_id: int) -> None:
        since = utcnow() - timedelta(days=1)
        n = s.scalar(select(func.count()).select_from(Submission).where(
            Submission.key_id == key_id, Submission.created >= since, Submission.charged.is_(True)))
        if n >= self.settings.daily_limit:
            raise ServiceError(429, f"daily submission limit reached ({self.settings.daily_limit} per 24 h)",
                               retry_after=3600)

    def insert_within_limit(self, key_id: int, sub: Submission) -> int:
        """Check the daily limit and store, in one serialised transaction."""
        with self.Session.begin() as s:
            self._lock_key(s, key_id)
            self._check_limit(s, key_id)
            s.add(sub)
            s.flush()
            return sub.id

    def record(self, key_id: int, sub: Submission, agg: Aggregate) -> tuple[int, dict[str, Any]]:
        """Answers: re-check the limit, store the submission and climb the key's Ladder, in one
        serialised transaction (the limit was checked once already, before scoring)."""
        with self.Session.begin() as s:
            self._lock_key(s, key_id)
            self._check_limit(s, key_id)
            s.add(sub)
            s.flush()
            return sub.id, self._climb(s, sub, agg)

    def finish(self, sid: int, agg: Aggregate, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Endpoint runs: pass the aggregate through the key's Ladder and store the released result."""
        with self.Session.begin() as s:
            sub = s.get(Submission, sid)
            self._lock_key(s, sub.key_id)
            return self._climb(s, sub, agg, extra)

    def _climb(self, s: Any, sub: Submission, agg: Aggregate, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        st = self.settings
        ts = s.get(TestSet, sub.set_id)
        rows = {r.cell: r for r in s.scalars(select(LadderState).where(
            LadderState.key_id == sub.key_id, LadderState.set_id == sub.set_id))}
        rungs = {c: Rung(r.best, r.released, r.step, r.ci95, np.frombuffer(r.vector, dtype=np.float32))
                 for c, r in rows.items()}
        out, new = release(agg, rungs, step=self.step, min_group=st.min_group, digits=st.round_digits)
        for cell, rung in new.items():
            if rungs.get(cell) is rung:
                continue
            row = rows.get(cell) or LadderState(key_id=sub.key_id, set_id=sub.set_id, cell=cell)
            row.best, row.released, row.step, row.ci95 = rung.best, rung.released, rung.step, rung.ci95
            row.vector = rung.vector.astype(np.float32).tobytes()
            s.add(row)
        result = {"set": ts.name, "benchmark": ts.benchmark, **out, **(extra or {})}
        sub.status, sub.result, sub.score, sub.finished = "done", result, result["score"], utcnow()
        return result

    def fail(self, sid: int, message: str, *, refund: bool) -> None:
        with self.Session.begin() as s:
            sub = s.get(Submission, sid)
            sub.status, sub.error, sub.finished = "failed", message, utcnow()
            sub.lease_owner = sub.lease_until = sub.key_holder = None
            if refund:
                sub.charged = False

    # -- submissions -------------------------------------------------------------------------

    def submit_answers(self, key_id: int, answers: Mapping[str, Any], *, set_name: str | None = None,
                       benchmark: str | None = None, model: str = "", description: str = "") -> dict[str, Any]:
        with self.Session() as s:
            ts = self._target_set(s, set_name, benchmark)
            loaded = self.load_items(s, ts)
            set_id = ts.id
        bench, items, by_id = loaded.bench, loaded.dataset, loaded.by_id
        unknown = sum(1 for k in answers if k not in by_id)
        if unknown:
            raise ServiceError(400, f"{unknown} answer id(s) are not in the set")  # which ones is not said
        if len(answers) != len(items):
            raise ServiceError(400, f"incomplete submission: {len(answers)} of {len(items)} items answered; "
                                    "answer every item of the set")
        if any(not a.strip() for a in answers.values()):
            raise ServiceError(400, "empty answers: answer every item of the set")
        with self.Session() as s:
            self._check_limit(s, key_id)  # before any scoring work; checked again when storing
        from glotbench.engine.scoring import score_output

        given = not bench.answers_are_outputs
        samples = {i: score_output(bench, by_id[i], a, answer_given=given) for i, a in answers.items()}
        bad = count_unreadable(samples, loaded.options)
        if bad:
            raise ServiceError(400, f"{bad} answer(s) are not valid answers (no answer could be read, or not one of "
                                    "the options)")
        agg = aggregate(bench, items, samples, resamples=self.settings.resamples, groups=loaded.groups)
        sid, result = self.record(key_id, Submission(
            key_id=key_id, set_id=set_id, kind="answers", model=model[:300] or "unnamed",
            description=description[:2000], status="running"), agg)
        return {"id": sid, "status": "done", "result": result}

    def submit_endpoint(self, key_id: int, url: str, model_name: str, *, api_key: str | None = None,
                        set_name: str | None = None, benchmark: str | None = None,
                        description: str = "") -> dict[str, Any]:
        from glotbench.service.ssrf import UnsafeEndpoint, check_url

        if self.jobs is None:
            raise ServiceError(503, "this server does not run endpoint submissions")
        try:
            check_url(url, self.settings.allow_hosts)
        except UnsafeEndpoint as e:
            raise ServiceError(400, str(e)) from None
        with self.Session() as s:
            ts = self._target_set(s, set_name, benchmark)
            if not ts.endpoint_mode:
                raise ServiceError(403, "endpoint submissions are disabled for this set; submit answers")
            set_id = ts.id
        sid = self.jobs.enqueue(key_id, Submission(
            key_id=key_id, set_id=set_id, kind="endpoint", model=model_name[:300], endpoint_url=url,
            description=description[:2000], status="queued"), api_key)
        return {"id": sid, "status": "queued", "queue_position": self.jobs.position(sid)}

    def get_submission(self, key_id: int, sid: int) -> dict[str, Any]:
        with self.Session() as s:
            sub = s.get(Submission, sid)
            if sub is None or sub.key_id != key_id:
                raise ServiceError(404, "no such submission for this key")
            out = {"id": sub.id, "status": sub.status, "kind": sub.kind, "model": sub.model, "public": sub.public,
                   "error": sub.error, "result": sub.result, "counts_against_limit": sub.charged,
                   "created": sub.created.isoformat()}
        if out["status"] == "queued" and self.jobs is not None:
            out["queue_position"] = self.jobs.position(sid)
        return out

    def publish(self, key_id: int, sid: int, public: bool = True) -> dict[str, Any]:
        with self.Session.begin() as s:
            sub = s.get(Submission, sid)
            if sub is None or sub.key_id != key_id:
                raise ServiceError(404, "no such submission for this key")
            if sub.status != "done":
                raise ServiceError(409, "only a finished submission can be published")
            if public and not (sub.result or {}).get("improved"):
                raise ServiceError(409, "this submission did not raise the key's released score, so it has no "
                                        "score of its own to publish")
            sub.public = public
        return self.get_submission(key_id, sid)


def iso(d: datetime | None) -> str | None:
    return d.isoformat() if d else None


def _plain(m: Any) -> Any:
    return json.loads(json.dumps(m, default=dict))
