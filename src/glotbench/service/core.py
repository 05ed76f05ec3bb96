"""The service's logic, without HTTP: test sets, keys, submissions, limits, scoring, leaderboard.

Replies carry aggregates only: the headline score with its CI, per-subdomain scores for subdomains
of at least `min_group` items, coverage and counts — never an item id, an item's correctness or gold.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import shutil
import tempfile
import threading
import time
from collections import defaultdict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Mapping

from sqlalchemy import func, select

from glotbench.benchmarks.base import Benchmark
from glotbench.registry import get_benchmark
from glotbench.errors import GlotbenchError
from glotbench.core import Dataset, Sample
from glotbench.items import Item
from glotbench.service.db import ApiKey, SetItem, Submission, TestSet, session_factory, utcnow


class ServiceError(Exception):
    def __init__(self, status: int, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.status, self.message, self.retry_after = status, message, retry_after


@dataclass(frozen=True)
class Settings:
    db_url: str = "sqlite:///glotbench-service.sqlite"
    min_group: int = 20
    round_digits: int = 1
    daily_limit: int = 3
    rate_per_minute: int = 60
    max_body_bytes: int = 5 * 2**20
    allow_hosts: tuple[str, ...] = ()
    endpoint_timeout_s: float = 900.0
    endpoint_max_requests: int = 50_000
    endpoint_max_response_bytes: int = 2**20
    endpoint_concurrency: int = 8
    resamples: int = 1000


class RateLimiter:
    """A sliding one-minute window per key and per address; check-and-record under one lock, so
    concurrent requests cannot both pass the last slot."""

    def __init__(self, per_minute: int):
        self.per_minute = per_minute
        self._hits: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def hit(self, *who: str) -> None:
        now = time.monotonic()
        with self._lock:
            for w in who:
                q = self._hits[w]
                while q and now - q[0] > 60:
                    q.popleft()
                if len(q) >= self.per_minute:
                    raise ServiceError(429, "rate limit reached; slow down", retry_after=60 - (now - q[0]))
            for w in who:
                self._hits[w].append(now)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class Service:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.Session = session_factory(settings.db_url)
        self.limiter = RateLimiter(settings.rate_per_minute)
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="glotbench-endpoint")
        self._sets: dict[int, tuple[Benchmark, Dataset]] = {}  # sets never change once loaded
        self._sets_lock = threading.Lock()
        self._board: tuple[float, list[dict[str, Any]]] | None = None
        self.board_ttl_s = 2.0  # admin commands from another process show within this time

    # -- administration --------------------------------------------------------------------

    def load_set(self, name: str, benchmark: str, data: str, *, options: Mapping[str, str] | None = None,
                 blind_until: datetime | None = None, release_date: datetime | None = None) -> int:
        bench = get_benchmark(benchmark, **dict(options or {}))
        items = bench.load(data)
        if not items.sha256:
            raise GlotbenchError(f"{data}: the benchmark gave no data hash")
        with self.Session.begin() as s:
            if s.scalar(select(TestSet).where(TestSet.name == name)):
                raise GlotbenchError(f"a set named {name!r} exists already")
            ts = TestSet(name=name, benchmark=benchmark, options=dict(options or {}), status="pending",
                         blind_until=blind_until, release_date=release_date, data_sha256=items.sha256)
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

    def set_window(self, name: str, blind_until: datetime | None, release_date: datetime | None) -> None:
        with self.Session.begin() as s:
            ts = self._set(s, name)
            ts.blind_until, ts.release_date = blind_until, release_date

    def rotate(self, new_name: str) -> str | None:
        """`new_name` becomes its benchmark's current set; the previous current set is released (its
        items and gold become downloadable; its scores stay on the leaderboard, marked released)."""
        with self.Session.begin() as s:
            new = self._set(s, new_name)
            old = s.scalar(select(TestSet).where(TestSet.benchmark == new.benchmark, TestSet.status == "current"))
            if old is not None and old.id != new.id:
                old.status, old.released_at = "released", utcnow()
            new.status = "current"
            self._board = None
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

    def _is_released(self, ts: TestSet) -> bool:
        return ts.status == "released" or (ts.release_date is not None and utcnow() >= ts.release_date)

    def _load(self, s: Any, ts: TestSet) -> tuple[Benchmark, Dataset]:
        """The set's benchmark (with its options) and its items as the benchmark's own Dataset, with
        the facts it derives (a macro average's subjects): the same objects a run gets."""
        with self._sets_lock:
            if ts.id not in self._sets:
                bench = get_benchmark(ts.benchmark, **ts.options)
                rows = s.scalars(select(SetItem).where(SetItem.set_id == ts.id).order_by(SetItem.position)).all()
                items = [Item.create(r.item_id, r.public, r.gold, r.meta) for r in rows]
                self._sets[ts.id] = (bench, bench.dataset(items, f"service set {ts.name}", ts.data_sha256))
            return self._sets[ts.id]

    def _target_set(self, s: Any, set_name: str | None, benchmark: str | None) -> TestSet:
        if set_name:
            ts = s.scalar(select(TestSet).where(TestSet.name == set_name))
        else:
            ts = s.scalar(select(TestSet).where(TestSet.benchmark == benchmark, TestSet.status == "current"))
        if ts is None or ts.status != "current" or self._is_released(ts):
            raise ServiceError(404, "no open test set by that name or for that benchmark")
        return ts

    def _score(self, bench: Benchmark, dataset: Dataset, samples: Mapping[str, Sample]) -> dict[str, Any]:
        """The benchmark's own aggregate, projected down to what may be revealed: the headline with
        its CI, groups of at least `min_group` items, coverage. `samples` maps an item id to its
        scored sample; a missing id takes the failure score "missing"."""
        from glotbench.engine.scoring import score_output

        rows = [samples.get(it.id) or score_output(bench, it, None, model_failure="missing") for it in dataset]
        agg = bench.aggregate(rows, dataset, resamples=self.settings.resamples)
        metric = bench.metrics_for(dataset)[0]
        f = 100.0 if metric.scale == "fraction" else 1.0
        d = self.settings.round_digits

        def r(x: float | None) -> float | None:
            return None if x is None or x != x else round(f * x, d)

        est = agg["overall"].get(metric.name)
        if est is not None:
            score, ci = r(est["value"]), [r(est["ci_low"]), r(est["ci_high"])]
        else:  # per-group benchmarks (DeepSEA per language): the benchmark's mean over its groups
            sea = agg.get("resource_groups", {}).get("southeast_asia", {}).get("value")
            per = [g[metric.name]["value"] for g in agg["groups"].get(bench.group_by[0], {}).values()
                   if g[metric.name]["value"] is not None]
            score, ci = r(sea if sea is not None else (sum(per) / len(per) if per else None)), [None, None]
        group_key = bench.group_by[-1] if bench.group_by else None
        sizes: dict[str, int] = defaultdict(int)
        for it in dataset:
            if group_key:
                sizes[str(it.meta.get(group_key, "unknown"))] += 1
        groups = agg["groups"].get(group_key, {}) if group_key else {}
        subs = {g: r(est_g[metric.name]["value"]) for g, est_g in sorted(groups.items())
                if sizes.get(g, 0) >= self.settings.min_group}
        answered = sum(1 for it in dataset if it.id in samples)
        return {"metric": metric.name, "score": score, "ci95": ci,
                "coverage": round(answered / len(dataset), 4) if len(dataset) else 0.0, "items": len(dataset),
                "subdomains": subs, "subdomains_hidden_below": self.settings.min_group}

    def _insert_within_limit(self, key_id: int, sub: Submission) -> int:
        """Check the daily limit and store, in one serialised transaction."""
        with self.Session.begin() as s:
            s.scalar(select(ApiKey).where(ApiKey.id == key_id).with_for_update())  # PostgreSQL: lock the key row
            since = utcnow() - timedelta(days=1)
            n = s.scalar(select(func.count()).select_from(Submission).where(
                Submission.key_id == key_id, Submission.created >= since))
            if n >= self.settings.daily_limit:
                raise ServiceError(429, f"daily submission limit reached ({self.settings.daily_limit} per 24 h)",
                                   retry_after=3600)
            s.add(sub)
            s.flush()
            return sub.id

    # -- submissions -------------------------------------------------------------------------

    def submit_answers(self, key_id: int, answers: Mapping[str, Any], *, set_name: str | None = None,
                       benchmark: str | None = None, model: str = "", description: str = "") -> dict[str, Any]:
        with self.Session() as s:
            ts = self._target_set(s, set_name, benchmark)
            bench, items = self._load(s, ts)
            set_id, name = ts.id, ts.name
        known = {it.id for it in items}
        unknown = sum(1 for k in answers if k not in known)
        if unknown:
            raise ServiceError(400, f"{unknown} answer id(s) are not in the set")  # which ones is not said
        if any(not isinstance(v, str) for v in answers.values()):
            raise ServiceError(400, "every answer must be a string")
        from glotbench.engine.scoring import score_output

        by_id = items.by_id()
        per_item = {i: score_output(bench, by_id[i], a, answer_given=not bench.answers_are_outputs)
                    for i, a in answers.items()}
        result = {"set": name, "benchmark": bench.name, **self._score(bench, items, per_item)}
        sid = self._insert_within_limit(key_id, Submission(
            key_id=key_id, set_id=set_id, kind="answers", model=model[:300] or "unnamed", description=description[:2000],
            status="done", score=result["score"], result=result, finished=utcnow()))
        return {"id": sid, "status": "done", "result": result}

    def submit_endpoint(self, key_id: int, url: str, model_name: str, *, set_name: str | None = None,
                        benchmark: str | None = None, description: str = "") -> dict[str, Any]:
        from glotbench.service.ssrf import UnsafeEndpoint, check_url

        try:
            check_url(url, self.settings.allow_hosts)
        except UnsafeEndpoint as e:
            raise ServiceError(400, str(e)) from None
        with self.Session() as s:
            ts = self._target_set(s, set_name, benchmark)
            set_id = ts.id
        sid = self._insert_within_limit(key_id, Submission(
            key_id=key_id, set_id=set_id, kind="endpoint", model=f"{model_name} @ {url}"[:300],
            description=description[:2000], status="queued"))
        self.pool.submit(self._run_endpoint, sid, url, model_name)
        return {"id": sid, "status": "queued"}

    def _run_endpoint(self, sid: int, url: str, model_name: str) -> None:
        from glotbench.engine.evaluate import RunOptions, evaluate_async
        from glotbench.models.openai_compat import OpenAICompatModel
        from glotbench.service.ssrf import check_url, guarded_resolver

        st = self.settings
        with self.Session.begin() as s:
            sub = s.get(Submission, sid)
            sub.status = "running"
            ts = s.get(TestSet, sub.set_id)
            bench, items = self._load(s, ts)
        tmp = tempfile.mkdtemp(prefix="glotbench-sub-")
        try:
            if len(items) > st.endpoint_max_requests:
                raise GlotbenchError(f"the set needs more requests than the limit ({st.endpoint_max_requests})")
            model = OpenAICompatModel(model_name, url, concurrency=st.endpoint_concurrency, timeout_s=60,
                                      url_guard=lambda u: check_url(u, st.allow_hosts),
                                      resolver=lambda: guarded_resolver(st.allow_hosts),
                                      max_response_bytes=st.endpoint_max_response_bytes)
            opts = RunOptions(progress=False, use_cache=False, out=f"{tmp}/run", max_retries=2, timeout_s=60,
                              concurrency=st.endpoint_concurrency, bootstrap_resamples=0)
            res = asyncio.run(asyncio.wait_for(evaluate_async(bench, model, opts, dataset=items),
                                               st.endpoint_timeout_s))
            per_item = {smp.id: smp for smp in res.samples if smp.repeat == 0}
            result = {"set": ts.name, "benchmark": bench.name, **self._score(bench, items, per_item),
                      "failed_requests": res.results["counts"]["failed"]}
            with self.Session.begin() as s:
                sub = s.get(Submission, sid)
                sub.status, sub.result, sub.score, sub.finished = "done", result, result["score"], utcnow()
        except Exception as e:  # noqa: BLE001 - recorded on the submission, never leaked as a traceback
            msg = "timed out" if isinstance(e, asyncio.TimeoutError) else f"{type(e).__name__}: {str(e)[:300]}"
            with self.Session.begin() as s:
                sub = s.get(Submission, sid)
                sub.status, sub.error, sub.finished = "failed", msg, utcnow()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def get_submission(self, key_id: int, sid: int) -> dict[str, Any]:
        with self.Session() as s:
            sub = s.get(Submission, sid)
            if sub is None or sub.key_id != key_id:
                raise ServiceError(404, "no such submission for this key")
            return {"id": sub.id, "status": sub.status, "kind": sub.kind, "model": sub.model, "public": sub.public,
                    "error": sub.error, "result": sub.result, "created": sub.created.isoformat()}

    def publish(self, key_id: int, sid: int, public: bool = True) -> dict[str, Any]:
        with self.Session.begin() as s:
            sub = s.get(Submission, sid)
            if sub is None or sub.key_id != key_id:
                raise ServiceError(404, "no such submission for this key")
            if sub.status != "done":
                raise ServiceError(409, "only a finished submission can be published")
            sub.public = public
        self._board = None
        return self.get_submission(key_id, sid)

    # -- public views ------------------------------------------------------------------------

    def sets(self) -> list[dict[str, Any]]:
        with self.Session() as s:
            out = []
            for ts in s.scalars(select(TestSet).order_by(TestSet.benchmark, TestSet.created)):
                n = s.scalar(select(func.count()).select_from(SetItem).where(SetItem.set_id == ts.id))
                out.append({"name": ts.name, "benchmark": ts.benchmark, "status": "released" if self._is_released(ts) else ts.status,
                            "items": n, "blind_until": _iso(ts.blind_until), "release_date": _iso(ts.release_date),
                            "released_at": _iso(ts.released_at)})
            return out

    def download(self, name: str) -> dict[str, Any]:
        with self.Session() as s:
            ts = s.scalar(select(TestSet).where(TestSet.name == name))
            if ts is None or not self._is_released(ts):
                raise ServiceError(404, "no released set by that name")
            rows = s.scalars(select(SetItem).where(SetItem.set_id == ts.id).order_by(SetItem.position)).all()
            return {"name": ts.name, "benchmark": ts.benchmark, "data_sha256": ts.data_sha256,
                    "items": [{"id": r.item_id, "public": r.public, "gold": r.gold, "meta": r.meta} for r in rows]}

    def board_stale(self) -> bool:
        c = self._board
        return c is None or time.monotonic() - c[0] >= self.board_ttl_s

    def leaderboard(self) -> list[dict[str, Any]]:
        """Cached for `board_ttl_s`; publishing or rotating in this process refreshes it at once."""
        cached = self._board
        if cached is not None and time.monotonic() - cached[0] < self.board_ttl_s:
            return cached[1]
        board = self._leaderboard()
        self._board = (time.monotonic(), board)
        return board

    def _leaderboard(self) -> list[dict[str, Any]]:
        with self.Session() as s:
            tables = []
            for ts in s.scalars(select(TestSet).where(TestSet.status != "pending").order_by(TestSet.benchmark, TestSet.created.desc())):
                subs = s.scalars(select(Submission).where(Submission.set_id == ts.id, Submission.public.is_(True),
                                                          Submission.status == "done").order_by(Submission.score.desc())).all()
                groups = sorted({g for x in subs for g in (x.result or {}).get("subdomains", {})})
                tables.append({
                    "set": ts.name, "benchmark": ts.benchmark, "released": self._is_released(ts),
                    "release_date": _iso(ts.released_at or ts.release_date), "blind_until": _iso(ts.blind_until),
                    "metric": (subs[0].result or {}).get("metric") if subs else None, "subdomains": groups,
                    "rows": [{"model": x.model, "description": x.description, "score": x.score,
                              "ci95": (x.result or {}).get("ci95"), "coverage": (x.result or {}).get("coverage"),
                              "subdomains": (x.result or {}).get("subdomains", {}), "date": x.created.date().isoformat()}
                             for x in subs],
                })
            return tables


def _iso(d: datetime | None) -> str | None:
    return d.isoformat() if d else None


def _plain(m: Any) -> Any:
    import json

    return json.loads(json.dumps(m, default=dict))
