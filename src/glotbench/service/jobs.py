"""Endpoint runs as persisted, leased jobs shared by every server process on one database.

- A job is a `submissions` row (kind "endpoint"). A worker claims one in a serialised transaction
  and holds a lease (`lease_until`) that its process renews; a job whose lease lapses (the process
  was killed) is taken back by any process: run again from the start, or — if it needed a
  submitter's key, which lives only in the memory of the process that accepted it — failed with
  its quota returned. A job is retried at most twice.
- Fair scheduling: at most `endpoint_per_key` runs of one key in flight (over all processes),
  `endpoint_workers` per process; among the runnable jobs the one whose key has fewest runs in
  flight goes first, then the oldest. Each run has `endpoint_timeout_s`.
- Shutdown (SIGTERM): no new claims; runs in flight are cancelled and handed back (requeued, or
  failed with quota returned when their key would be lost).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
import uuid
from collections import Counter
from datetime import timedelta
from typing import Any

from sqlalchemy import func, or_, select

from glotbench.errors import GlotbenchError
from glotbench.models.base import ModelError
from glotbench.service.core import Service
from glotbench.service.db import Submission, TestSet, utcnow
from glotbench.service.scoring import aggregate

MAX_ATTEMPTS = 3
LOST_KEY = "the server restarted while the run waited; its endpoint key is held in memory only: submit again"


def _redact(message: str, key: str | None) -> str:
    """An endpoint may echo the key it was sent in an error: it is never shown back or stored."""
    return message.replace(key, "[the submitted key]") if key else message


class JobRunner:
    def __init__(self, service: Service):
        self.svc, self.st = service, service.settings
        self.me = f"{uuid.uuid4().hex[:16]}"
        self._keys: dict[int, str] = {}  # submission id -> the submitter's endpoint key (memory only)
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._running: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Task]] = {}
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        for i in range(max(1, self.st.endpoint_workers)):
            t = threading.Thread(target=self._worker, name=f"glotbench-job-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        t = threading.Thread(target=self._heartbeat, name="glotbench-lease", daemon=True)
        t.start()
        self._threads.append(t)

    def stop(self, wait_s: float = 10.0) -> None:
        """Stop claiming; cancel runs in flight, which hand their jobs back."""
        self._stop.set()
        with self._lock:
            for loop, task in self._running.values():
                loop.call_soon_threadsafe(task.cancel)
        with self._wake:
            self._wake.notify_all()
        for t in self._threads:
            t.join(wait_s)
        with self.svc.Session.begin() as s:  # queued jobs whose key only this process holds
            for sub in s.scalars(select(Submission).where(Submission.key_holder == self.me,
                                                          Submission.status.in_(("queued", "running")))):
                sub.status, sub.error, sub.finished, sub.charged = "failed", LOST_KEY, utcnow(), False
                sub.key_holder = sub.lease_owner = sub.lease_until = None

    # -- queue -------------------------------------------------------------------------------

    def enqueue(self, key_id: int, sub: Submission, api_key: str | None) -> int:
        if api_key:
            sub.key_holder, sub.lease_until = self.me, utcnow() + timedelta(seconds=self.st.lease_s)
        sid = self.svc.insert_within_limit(key_id, sub)
        if api_key:
            self._keys[sid] = api_key
        with self._wake:
            self._wake.notify()
        return sid

    def position(self, sid: int) -> int | None:
        """1 = next to run (jobs queued before it, all keys and processes)."""
        with self.svc.Session() as s:
            sub = s.get(Submission, sid)
            if sub is None or sub.status != "queued":
                return None
            return 1 + s.scalar(select(func.count()).select_from(Submission).where(
                Submission.kind == "endpoint", Submission.status == "queued", Submission.id < sid))

    def _reap(self, s: Any, now: Any) -> None:
        """Jobs whose lease lapsed: requeue, or fail with the quota returned."""
        lapsed = s.scalars(select(Submission).where(
            Submission.kind == "endpoint", Submission.status.in_(("queued", "running")),
            Submission.lease_until.is_not(None), Submission.lease_until < now))
        for sub in lapsed:
            if sub.key_holder is not None or sub.attempts >= MAX_ATTEMPTS:
                sub.status, sub.finished, sub.charged = "failed", now, False
                sub.error = LOST_KEY if sub.key_holder is not None else "the run was interrupted too often"
                sub.key_holder = None
            else:
                sub.status = "queued"
            sub.lease_owner = sub.lease_until = None

    def _claim(self) -> int | None:
        now = utcnow()
        with self.svc.Session.begin() as s:
            s.scalar(select(TestSet.id).limit(1).with_for_update())  # PostgreSQL: one claimer at a time
            self._reap(s, now)
            busy = Counter(dict(s.execute(select(Submission.key_id, func.count()).where(
                Submission.status == "running").group_by(Submission.key_id)).all()))
            queued = s.scalars(select(Submission).where(
                Submission.kind == "endpoint", Submission.status == "queued",
                or_(Submission.key_holder.is_(None), Submission.key_holder == self.me)).order_by(Submission.id)).all()
            ready = [q for q in queued if busy[q.key_id] < self.st.endpoint_per_key]
            if not ready:
                return None
            job = min(ready, key=lambda q: (busy[q.key_id], q.id))
            job.status, job.lease_owner, job.attempts = "running", self.me, job.attempts + 1
            job.lease_until = now + timedelta(seconds=self.st.lease_s)
            return job.id

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.st.lease_s / 3):
            try:
                self._renew()
            except Exception:  # noqa: BLE001 - the next beat tries again; a lease lasts three beats
                continue
            with self._wake:
                self._wake.notify_all()

    def _renew(self) -> None:
        with self.svc.Session.begin() as s:
            until = utcnow() + timedelta(seconds=self.st.lease_s)
            for sub in s.scalars(select(Submission).where(
                    Submission.status.in_(("queued", "running")),
                    or_(Submission.lease_owner == self.me, Submission.key_holder == self.me))):
                sub.lease_until = until

    def _worker(self) -> None:
        while not self._stop.is_set():
            try:
                sid = self._claim()
            except Exception:  # noqa: BLE001 - a busy or briefly unreachable database: try again shortly
                sid = None
            if sid is None:
                with self._wake:
                    self._wake.wait(min(2.0, self.st.lease_s / 3))  # woken at once by a local submission
                continue
            self._run(sid)

    # -- one run -----------------------------------------------------------------------------

    def _run(self, sid: int) -> None:
        with self.svc.Session() as s:
            sub = s.get(Submission, sid)
            ts = s.get(TestSet, sub.set_id)
            loaded = self.svc.load_items(s, ts)
            bench, items = loaded.bench, loaded.dataset
            url, model_name = sub.endpoint_url or "", sub.model
        loop = asyncio.new_event_loop()
        tmp = tempfile.mkdtemp(prefix="glotbench-sub-")
        try:
            if len(items) > self.st.endpoint_max_requests:
                raise GlotbenchError(f"the set needs more requests than the limit ({self.st.endpoint_max_requests})")
            task = loop.create_task(asyncio.wait_for(self._evaluate(bench, items, loaded.groups, url, model_name,
                                                                    self._keys.get(sid), tmp),
                                                     self.st.endpoint_timeout_s))
            with self._lock:
                self._running[sid] = (loop, task)
            if self._stop.is_set():
                task.cancel()
            agg, extra = loop.run_until_complete(task)
            self.svc.finish(sid, agg, extra)
            self._release(sid)
        except asyncio.CancelledError:
            self._hand_back(sid)
        except asyncio.TimeoutError:
            self.svc.fail(sid, f"the run exceeded its time budget ({self.st.endpoint_timeout_s:g} s)", refund=False)
        except (GlotbenchError, ModelError) as e:  # messages written to be shown (service/ssrf.py)
            self.svc.fail(sid, _redact(str(e), self._keys.get(sid))[:300], refund=False)
        except Exception:  # noqa: BLE001 - never shown as a traceback
            self.svc.fail(sid, "internal error during the run", refund=True)
        finally:
            with self._lock:
                self._running.pop(sid, None)
            self._keys.pop(sid, None)
            loop.close()
            shutil.rmtree(tmp, ignore_errors=True)

    async def _evaluate(self, bench: Any, items: Any, groups: Any, url: str, model_name: str, api_key: str | None,
                        tmp: str) -> tuple[Any, dict[str, Any]]:
        from glotbench.engine.evaluate import RunOptions, evaluate_async
        from glotbench.models.openai_compat import OpenAICompatModel
        from glotbench.service.ssrf import GuardedClient

        st = self.st
        client = GuardedClient(st.allow_hosts, max_bytes=st.endpoint_max_response_bytes,
                               concurrency=st.endpoint_concurrency, timeout_s=60)
        model = OpenAICompatModel(model_name, url, client=client, api_key=api_key,
                                  concurrency=st.endpoint_concurrency, timeout_s=60)
        opts = RunOptions(progress=False, use_cache=False, out=f"{tmp}/run", max_retries=2, timeout_s=60,
                          concurrency=st.endpoint_concurrency, bootstrap_resamples=0)
        res = await evaluate_async(bench, model, opts, dataset=items)
        samples = {smp.id: smp for smp in res.samples if smp.repeat == 0}
        answered = sum(1 for smp in samples.values() if smp.failure is None)
        agg = aggregate(bench, items, samples, resamples=st.resamples, groups=groups)
        return agg, {"failed_requests": res.results["counts"]["failed"],
                     "coverage": round(answered / len(items), 4) if len(items) else 0.0}

    def _release(self, sid: int) -> None:
        with self.svc.Session.begin() as s:
            sub = s.get(Submission, sid)
            sub.lease_owner = sub.lease_until = sub.key_holder = None

    def _hand_back(self, sid: int) -> None:
        with self.svc.Session.begin() as s:
            sub = s.get(Submission, sid)
            if sub.key_holder is not None:
                sub.status, sub.error, sub.finished, sub.charged = "failed", LOST_KEY, utcnow(), False
            else:
                sub.status = "queued"
            sub.lease_owner = sub.lease_until = sub.key_holder = None
