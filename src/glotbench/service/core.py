"""The service's logic, without HTTP: test sets, keys, submissions, quota, scoring through the Ladder.

Replies carry what the Ladder releases for the caller's key (service/scoring.py) — never an item id,
an item's correctness or gold. Endpoint runs are queued jobs (service/jobs.py); the public views
(sets, downloads, leaderboard) are in service/views.py.

At ~400 lines: the facade is one transaction boundary per call (a key's limits checked and charged
in the transaction that stores the submission); its parts are already modules of their own.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, Mapping, Sequence

import numpy as np
from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError

from glotbench.errors import GlotbenchError
from glotbench.items import Item
from glotbench.registry import get_benchmark
from glotbench.service import keys as keys_
from glotbench.service.db import (ApiKey, LadderState, Organisation, SetItem, Submission, TestSet, session_factory,
                                  utcnow)
from glotbench.service.duplicates import fingerprint, nearest_copy, probing
from glotbench.service.scoring import RELEASE_NOISE, Aggregate, Rung, Step, aggregate, groups_of, release
from glotbench.service.sets import (LoadedSet, answer_cap, answer_options, body_budget, count_unreadable, identity,
                                    judged_set, pinned, row_count, settle_heap)

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
    release_noise: float = RELEASE_NOISE  # a headline's noise is release_noise / sqrt(m) points; 0 = none
    daily_limit: int = 3  # submissions per key per 24 h
    org_daily_limit: int = 0  # per organisation (all its keys) per 24 h, unless the org sets its own; 0: 2 x daily_limit
    rate_per_minute: int = 60
    rate_storage: str = "memory://"  # or redis://host:port/db to share limits between processes
    min_body_bytes: int = 64 * 2**10  # the body limit is what the largest open set needs, at least this
    body_timeout_s: float = 30.0  # a request body must have arrived this long after its headers
    allow_hosts: tuple[str, ...] = ()
    endpoint_workers: int = 4  # endpoint runs in flight per server process
    endpoint_per_key: int = 1  # endpoint runs in flight per key, over all processes
    endpoint_per_org: int = 2  # endpoint runs in flight per organisation, over all processes
    endpoint_timeout_s: float = 300.0  # a run's whole time budget
    endpoint_stall_s: float = 60.0  # a run with no reply for this long is stopped
    endpoint_max_requests: int = 50_000
    endpoint_max_response_bytes: int = 2**20
    endpoint_concurrency: int = 8
    lease_s: float = 30.0  # a running job whose process stops renewing this lease is taken back
    resamples: int = 1000
    scoring_workers: int = 2  # answers submissions scored at once per process
    max_pending: int = 8  # submissions in progress per process (body, parse, scoring): 503 beyond, before the body


HOLD_MIN_S = 5.0  # PostgreSQL ends a session idle inside a transaction this long, or a lease if longer

REFUSED = ("refused: a submission answers every item of the set ({n} items), each with a valid answer of at most "
           "{cap} characters, and names no other id; nothing was charged")  # one message: which ids exist is never told
REVOKED_WHILE_SCORED = "the API key was revoked while this submission was scored; nothing was stored or charged"
IDEMPOTENCY_REUSED = "this Idempotency-Key was used with another request by this key; use a new key for a new submission"


class Service:
    def __init__(self, settings: Settings, *, freeze_sets: bool = False):
        """`freeze_sets`: call `settle_heap` after caching a set (the server does; a library user's
        process is left alone)."""
        self.settings = settings
        self.freeze_sets = freeze_sets
        # a transaction idle longer than a lease (at least HOLD_MIN_S) is a paused process's: ended
        self.Session = session_factory(settings.db_url, max(HOLD_MIN_S, settings.lease_s))
        self.step = Step(settings.ladder_step, settings.release_noise)
        self._sets: dict[int, LoadedSet] = {}  # by set id; reloaded when the row's identity changes
        self._sets_lock = threading.Lock()
        self._limits: tuple[float, tuple[int, int]] | None = None
        self._scoring = threading.BoundedSemaphore(max(1, settings.scoring_workers))
        self.jobs: Any = None  # a JobRunner when serving (service/jobs.py)

    # -- administration --------------------------------------------------------------------

    def load_set(self, name: str, benchmark: str, data: str | None, *, options: Mapping[str, str] | None = None,
                 blind_until: datetime | None = None, release_date: datetime | None = None,
                 endpoint_mode: bool = True, allow_unused_rows: bool = False, judges: Sequence[str] = ()) -> int:
        """Load a set; its id. A file with rows the benchmark does not take (a LaoBench file's
        translation rows in an MCQ set) is refused unless `allow_unused_rows`; what was loaded, and
        how many rows the file has, is in `loaded_last`. A judged benchmark's set keeps its `judges`
        (default: the benchmark's own) and its `options` (the arena's baseline): every endpoint run
        of the set is judged by them (`judged_set` checks them first)."""
        bench = get_benchmark(benchmark, **dict(options or {}))
        judges = judged_set(bench, benchmark, dict(options or {}), judges)
        items = bench.load(data)
        if not items.sha256:
            raise GlotbenchError(f"{data}: the benchmark gave no data hash")
        rows = row_count(data)
        if rows is not None and rows > len(items) and not allow_unused_rows:
            raise GlotbenchError(f"{data}: {rows - len(items)} of its {rows} rows are not {benchmark} items and "
                                 "would not be loaded (rows of another task, such as translation rows in a "
                                 "multiple-choice set); load them with their own benchmark, or allow it "
                                 "(--allow-unused-rows)")
        n, body = body_budget(bench, items)
        with self.Session.begin() as s:
            if s.scalar(select(TestSet).where(TestSet.name == name)):
                raise GlotbenchError(f"a set named {name!r} exists already")
            ts = TestSet(name=name, benchmark=benchmark, options=dict(options or {}), status="pending",
                         blind_until=blind_until, release_date=release_date, data_sha256=items.sha256,
                         endpoint_mode=endpoint_mode, items=n, body_bytes=body, judges=list(judges) or None)
            s.add(ts)
            s.flush()
            s.add_all(SetItem(set_id=ts.id, position=i, item_id=it.id, public=_plain(it.public), gold=_plain(it.gold),
                              meta=_plain(it.meta)) for i, it in enumerate(items))
            self.loaded_last = {"items": n, "rows": rows, "source": items.source, "judges": judges}
            return ts.id

    def create_org(self, name: str, *, daily_limit: int | None = None, max_keys: int = 5) -> int:
        with self.Session.begin() as s:
            return keys_.create_org(s, name, daily_limit=daily_limit, max_keys=max_keys).id

    def create_key(self, name: str, org: str | None = None) -> tuple[int, str]:
        """A key for organisation `org` (or for a new organisation of its own); shown once, stored as a hash."""
        with self.Session.begin() as s:
            return keys_.create_key(s, name, org)

    def revoke_key(self, key_id: int) -> int:
        """Revoke a key; its queued endpoint runs fail (returned: how many), running ones stop."""
        with self.Session.begin() as s:
            return keys_.revoke_key(s, key_id)

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
        with self.Session() as s:
            return keys_.authenticate(s, key).key_id

    def body_limits(self, ttl_s: float = 2.0) -> tuple[int, int]:
        """(answers, bytes): the most answers and the largest body a submission to an open set can
        need (at least `min_body_bytes`); read again every `ttl_s` (a set made current by an admin
        command in another process counts within that time)."""
        hit = self._limits
        if hit is not None and time.monotonic() - hit[0] < ttl_s:
            return hit[1]
        with self.Session() as s:
            sizes = s.execute(select(TestSet.id, TestSet.items, TestSet.body_bytes).where(
                TestSet.status == "current")).all()
        if any(r.items is None or r.body_bytes is None for r in sizes):  # sets loaded before these were kept
            with self.Session.begin() as s:
                for ts in s.scalars(select(TestSet).where(TestSet.status == "current", or_(
                        TestSet.items.is_(None), TestSet.body_bytes.is_(None)))):
                    loaded = self.load_items(s, ts)
                    ts.items, ts.body_bytes = body_budget(loaded.bench, loaded.dataset)
            return self.body_limits(ttl_s)
        limits = (max((r.items for r in sizes), default=0),
                  max([self.settings.min_body_bytes, *(r.body_bytes for r in sizes)]))
        self._limits = (time.monotonic(), limits)
        return limits

    @staticmethod
    def is_released(ts: TestSet) -> bool:
        return ts.status == "released" or (ts.release_date is not None and utcnow() >= ts.release_date)

    def load_items(self, s: Any, ts: TestSet) -> LoadedSet:
        """The set's benchmark (with its options) and its items as the benchmark's own Dataset, with
        the facts it derives (a macro average's subjects): the same objects a run gets. Cached per
        process under the set's identity (id, name, benchmark, options, data hash): a set's items never
        change once loaded, and a row that no longer matches what was cached (a set deleted and
        another loaded under its id) is read again, so stale gold is never used."""
        ident = identity(ts)
        with self._sets_lock:
            hit = self._sets.get(ts.id)
            if hit is not None and hit.identity == ident:
                return hit
            bench = get_benchmark(ts.benchmark, **ts.options)
            rows = s.scalars(select(SetItem).where(SetItem.set_id == ts.id).order_by(SetItem.position)).all()
            items = [Item.create(r.item_id, r.public, r.gold, r.meta) for r in rows]
            dataset = bench.dataset(items, f"service set {ts.name}", ts.data_sha256)
            loaded = LoadedSet(ident, bench, dataset, {it.id: it for it in dataset}, answer_options(dataset),
                               groups_of(bench, dataset), answer_cap(bench, dataset), tuple(ts.judges or bench.default_judges),
                               MappingProxyType(dict(ts.options or {})))
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
        """Serialise limit checks of one key and of its organisation (PostgreSQL row locks, key then
        organisation; SQLite serialises every writer with BEGIN IMMEDIATE)."""
        org = s.scalar(select(ApiKey.org_id).where(ApiKey.id == key_id).with_for_update())
        if org is not None:
            s.scalar(select(Organisation.id).where(Organisation.id == org).with_for_update())

    def _check_limit(self, s: Any, key_id: int) -> None:
        try:
            st = self.settings
            keys_.check_limits(s, key_id, st.daily_limit, st.org_daily_limit or 2 * st.daily_limit)
        except keys_.LimitReached as e:
            raise ServiceError(429, e.message, retry_after=3600) from None

    def insert_within_limit(self, key_id: int, sub: Submission) -> int:
        """Check the daily limit and store, in one serialised transaction."""
        with self.Session.begin() as s:
            self._lock_key(s, key_id)
            self._check_limit(s, key_id)
            s.add(sub)
            s.flush()
            return sub.id

    def record(self, key_id: int, sub: Submission, agg: Aggregate) -> tuple[int, dict[str, Any]]:
        """Answers: re-check that the key is live and the limit, store the submission and climb the
        key's Ladder, in one serialised transaction (the limit was checked once already, before
        scoring; a key revoked meanwhile stores nothing)."""
        with self.Session.begin() as s:
            self._lock_key(s, key_id)
            if not keys_.key_is_live(s, key_id):
                raise ServiceError(401, REVOKED_WHILE_SCORED)
            self._check_limit(s, key_id)
            sub.flag = nearest_copy(s, sub)
            s.add(sub)
            s.flush()
            return sub.id, self._climb(s, sub, agg)

    def replay(self, key_id: int, idem: tuple[str, str] | None) -> dict[str, Any] | None:
        """The submission this key made with this Idempotency-Key (`idem`: the key and the request's
        hash), as its reply says it now, or None; 422 when the key came with another request."""
        if idem is None:
            return None
        with self.Session() as s:
            sub = s.scalar(select(Submission).where(Submission.key_id == key_id,
                                                    Submission.idempotency_key == idem[0]))
            if sub is None:
                return None
            if sub.request_sha256 != idem[1]:
                raise ServiceError(422, IDEMPOTENCY_REUSED)
            sid = sub.id
        out = self.get_submission(key_id, sid)
        return {"id": sid, "status": out["status"], "result": out["result"], "replayed": True,
                **({"queue_position": out["queue_position"]} if "queue_position" in out else {})}

    def submissions(self, key_id: int, idempotency_key: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """The key's own submissions, newest first (or the one made with `idempotency_key`)."""
        q = select(Submission.id).where(Submission.key_id == key_id)
        if idempotency_key is not None:
            q = q.where(Submission.idempotency_key == idempotency_key)
        with self.Session() as s:
            ids = s.scalars(q.order_by(Submission.id.desc()).limit(limit)).all()
        return [self.get_submission(key_id, sid) for sid in ids]

    def finish(self, sid: int, agg: Aggregate, extra: Mapping[str, Any] | None = None,
               fp: bytes | None = None) -> dict[str, Any] | None:
        """Endpoint runs: pass the aggregate through the key's Ladder and store the released result
        (None, nothing released, when the run was failed meanwhile: its key revoked)."""
        with self.Session.begin() as s:
            sub = s.get(Submission, sid)
            self._lock_key(s, sub.key_id)
            if sub.status != "running":  # failed or handed back meanwhile
                return None
            if not keys_.key_is_live(s, sub.key_id):
                sub.status, sub.error, sub.finished = "failed", keys_.REVOKED, utcnow()
                sub.lease_owner = sub.lease_until = sub.key_holder = None
                return None
            sub.fingerprint = fp
            sub.flag = nearest_copy(s, sub)
            return self._climb(s, sub, agg, extra)

    def _climb(self, s: Any, sub: Submission, agg: Aggregate, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        st = self.settings
        ts = s.get(TestSet, sub.set_id)
        rows = {r.cell: r for r in s.scalars(select(LadderState).where(
            LadderState.key_id == sub.key_id, LadderState.set_id == sub.set_id))}
        rungs = {c: Rung(r.best, r.released, r.step, r.ci95, np.frombuffer(r.vector, dtype=np.float32))
                 for c, r in rows.items()}
        secret = keys_.key_secret(s, sub.key_id)
        out, new = release(agg, rungs, step=self.step, min_group=st.min_group, digits=st.round_digits,
                           offsets=lambda cell, what: keys_.grid_offset(secret, sub.set_id, cell, what),
                           decide=lambda cell: keys_.release_margin(secret, sub.set_id, cell, sub.id),
                           noise=lambda cell: keys_.release_noise(secret, sub.set_id, cell, sub.id))
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
        """Fail a run. `refund` returns its quota only if no prompt of the set has left yet: a run
        that showed any private prompt to an endpoint is charged whatever happened after."""
        with self.Session.begin() as s:
            sub = s.get(Submission, sid)
            sub.status, sub.error, sub.finished = "failed", message, utcnow()
            sub.lease_owner = sub.lease_until = sub.key_holder = None
            if refund and sub.prompts_sent_at is None:
                sub.charged = False

    # -- submissions -------------------------------------------------------------------------

    def submit_answers(self, key_id: int, answers: Mapping[str, Any], *, set_name: str | None = None,
                       benchmark: str | None = None, model: str = "", description: str = "",
                       idem: tuple[str, str] | None = None) -> dict[str, Any]:
        """`idem`: (Idempotency-Key, the request's hash): a retry gets the stored reply, uncharged."""
        done = self.replay(key_id, idem)
        if done is not None:
            return done
        with self.Session() as s:
            ts = self._target_set(s, set_name, benchmark)
            loaded = self.load_items(s, ts)
            set_id = ts.id
            self._check_limit(s, key_id)  # before any other check or scoring; checked again when storing
        bench, items, by_id = loaded.bench, loaded.dataset, loaded.by_id
        if bench.judged:  # answers alone have no score here: their judges run in an endpoint run
            raise ServiceError(400, "this set is scored by judges: submit an endpoint run, whose answers its judges score")
        refused = ServiceError(400, REFUSED.format(n=len(items), cap=loaded.answer_cap))
        # Unknown ids, missing items, blank or oversized answers: refused before anything is scored,
        # with the same work per answer, in one message (neither the reply nor its time tells which
        # ids exist). Only a complete submission of the set's ids is scored.
        if not loaded.admissible(answers):
            raise refused
        from glotbench.scoring import score_output

        given = not bench.answers_are_outputs
        with self._scoring:  # at most `scoring_workers` at once
            samples = {i: score_output(bench, by_id[i], a, answer_given=given) for i, a in answers.items()}
            if count_unreadable(samples, loaded.options):  # no answer in it: a known zero, refused
                raise refused
            agg = aggregate(bench, items, samples, resamples=self.settings.resamples, groups=loaded.groups)
        sub = Submission(key_id=key_id, set_id=set_id, kind="answers", model=model[:300] or "unnamed",
                         description=description[:2000], status="running", fingerprint=fingerprint(items, samples),
                         idempotency_key=idem[0] if idem else None, request_sha256=idem[1] if idem else None)
        try:
            sid, result = self.record(key_id, sub, agg)
        except IntegrityError:  # the same Idempotency-Key stored meanwhile by a concurrent retry
            done = self.replay(key_id, idem)
            if done is None:
                raise
            return done
        return {"id": sid, "status": "done", "result": result}

    def submit_endpoint(self, key_id: int, url: str, model_name: str, *, api_key: str | None = None,
                        set_name: str | None = None, benchmark: str | None = None,
                        description: str = "", idem: tuple[str, str] | None = None,
                        judges: Sequence[str] | None = None, bench_options: Mapping[str, str] | None = None
                        ) -> dict[str, Any]:
        """`judges`, `bench_options`: what the submitter expects the set to be scored with (a pin;
        the set's own are its operator's, `LoadedSet.public`): one that differs is refused, uncharged."""
        from glotbench.service.ssrf import UnsafeEndpoint, check_url

        done = self.replay(key_id, idem)
        if done is not None:
            return done

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
            loaded = self.load_items(s, ts)
            set_id = ts.id
        unfit = endpoint_unfit(loaded, self.settings.endpoint_max_requests)
        if unfit:  # refused now: a run that could never send a prompt would fail charged, for our reason
            raise ServiceError(403, f"endpoint submissions cannot run this set: {unfit}; submit answers")
        public = loaded.public()
        wrong = (pinned("judges", None if judges is None else list(judges), public["judges"])
                 or pinned("bench_options", None if bench_options is None else dict(bench_options), public["bench_options"]))
        if wrong:
            raise ServiceError(400, wrong)
        try:
            sid = self.jobs.enqueue(key_id, Submission(
                key_id=key_id, set_id=set_id, kind="endpoint", model=model_name[:300], endpoint_url=url,
                description=description[:2000], status="queued", idempotency_key=idem[0] if idem else None,
                request_sha256=idem[1] if idem else None), api_key)
        except IntegrityError:  # a concurrent retry with the same Idempotency-Key was queued first
            done = self.replay(key_id, idem)
            if done is None:
                raise
            return done
        return {"id": sid, "status": "queued", "queue_position": self.jobs.position(sid)}

    def flagged(self) -> list[dict[str, Any]]:
        """Submissions flagged as near-copies of another key's (service/duplicates.py), newest first."""
        with self.Session() as s:
            rows = s.execute(select(Submission.id, Submission.key_id, TestSet.name, Submission.created,
                                    Submission.flag).join(TestSet, TestSet.id == Submission.set_id)
                             .where(Submission.flag.is_not(None)).order_by(Submission.id.desc())).all()
            return [{"id": r.id, "key_id": r.key_id, "set": r.name, "created": r.created.isoformat(), "flag": r.flag}
                    for r in rows]

    def probing(self) -> list[dict[str, Any]]:
        """Per set, how many keys and organisations submitted probes of their own submissions (last 30 days)."""
        with self.Session() as s:
            return probing(s)

    def get_submission(self, key_id: int, sid: int) -> dict[str, Any]:
        with self.Session() as s:
            sub = s.get(Submission, sid)
            if sub is None or sub.key_id != key_id:
                raise ServiceError(404, "no such submission for this key")
            out = {"id": sub.id, "status": sub.status, "kind": sub.kind, "model": sub.model, "public": sub.public,
                   "error": sub.error, "result": sub.result, "counts_against_limit": sub.charged,
                   "prompts_sent": sub.prompts_sent_at is not None, "created": sub.created.isoformat()}
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


def endpoint_unfit(loaded: LoadedSet, max_requests: int) -> str | None:
    """Why no endpoint run can score this set (None: one can): what an OpenAI-compatible endpoint
    cannot answer, or more requests than a run may make."""
    if loaded.bench.method == "loglik":
        return "it is scored by log-likelihood, which needs a local model"
    if len(loaded.dataset) > max_requests:
        return f"it needs {len(loaded.dataset)} requests, more than a run may make ({max_requests})"
    return None


def iso(d: datetime | None) -> str | None:
    return d.isoformat() if d else None


def _plain(m: Any) -> Any:
    return json.loads(json.dumps(m, default=dict))
