"""Endpoint runs as persisted, leased jobs shared by every server process on one database.

- A job is a `submissions` row (kind "endpoint"). A worker claims one in a serialised transaction
  and holds a lease (`lease_until`) that its process renews; a job whose lease lapses (the process
  was killed, or paused) is taken back by any process. One whose prompts had not left yet is run
  again from the start (at most three tries in all), unless it needed a submitter's key, which lives
  only in the memory of the process that accepted it: then it is failed. One whose prompts had left
  is failed and charged, never run again: a second run would show the set again for one charge.
- Exposure: every prompt leaves under a live lease. The lease is checked before each prompt (from
  memory while the last renewal is fresh, else renewed in the database first); a process whose lease
  was taken back while it was paused (SIGSTOP, a stalled VM) stops before its next prompt. Renewals
  and take-backs are conditional on the row still being this process's (rows locked on PostgreSQL),
  so the two never both win.
- Charging: the moment before a run's first prompt leaves is recorded (`prompts_sent_at`, written
  before the request is made). From then on the run is charged whatever happens (a crash, a lost
  key, an internal error, SIGTERM); a run that fails before any prompt left gets its quota back.
- Keys: a revoked key's queued runs are failed at once (service/keys.py); a run of a revoked key is
  never claimed, is stopped before its first prompt, and a running one is cancelled by the next
  heartbeat of its process.
- Fair scheduling: at most `endpoint_per_key` runs of one key and `endpoint_per_org` of one
  organisation in flight (over all processes), `endpoint_workers` per process, and no key or
  organisation takes a process's last free worker; among the runnable jobs the organisation, then
  the key, with the fewest runs in flight goes first, then the oldest. Each run has
  `endpoint_timeout_s`, and one whose endpoint sends no reply for `endpoint_stall_s` is stopped.
- A run where more than half the items failed (no reply, or no answer read) is invalid and releases
  nothing: an endpoint that fails every item but one would otherwise be a partial submission, whose
  known zeros make its one answer readable from a release.
- Shutdown (SIGTERM): no new claims; runs in flight are cancelled and handed back (requeued if no
  prompt had left; else failed and charged; failed too when their key would be lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
import threading
import time
import uuid
from collections import Counter
from datetime import timedelta
from typing import Any, Callable

from sqlalchemy import func, or_, select

from glotbench.errors import GlotbenchError
from glotbench.judges.panel import PanelIncomplete
from glotbench.models.base import ModelError
from glotbench.service.core import Service, endpoint_unfit
from glotbench.service.db import ApiKey, Submission, TestSet, utcnow
from glotbench.service.duplicates import fingerprint
from glotbench.service.keys import REVOKED
from glotbench.service.scoring import aggregate, judged_aggregate
from glotbench.rundir.validity import DEFAULT_MAX_FAILURE_RATE, validity_text
from glotbench.service.sets import LoadedSet, public_spec

log = logging.getLogger("glotbench.service")
MAX_ATTEMPTS = 3
MAX_FAILED_SHARE = 0.5  # a run with more failed items (no reply, or no answer read) releases nothing
LOST_KEY = "the server restarted while the run waited; its endpoint key is held in memory only: submit again"
INTERRUPTED = "the run was interrupted (its server process stopped or lost its lease) after its prompts were sent: submit again"
SHOWN = " (its prompts had been sent, so it counts against the limit)"


class KeyRevoked(GlotbenchError):
    """The run's key was revoked: stop before the next prompt leaves."""


class NotRunnable(GlotbenchError):
    """No endpoint run can score the set (service/core.py `endpoint_unfit`): failed, refunded."""


class LeaseLost(GlotbenchError):
    """The run is no longer this process's (its lease lapsed and it was taken back): stop, touch nothing."""


def _redact(message: str, key: str | None) -> str:
    """An endpoint may echo the key it was sent in an error: it is never shown back or stored."""
    return message.replace(key, "[the submitted key]") if key else message


def _give_up(sub: Submission, message: str, now: Any) -> None:
    """Fail a job that did not finish for a reason of ours: refunded only if no prompt had left."""
    shown = sub.prompts_sent_at is not None
    sub.status, sub.finished = "failed", now
    sub.error = message + (SHOWN if shown else "")
    sub.charged = shown
    sub.key_holder = sub.lease_owner = sub.lease_until = None


class _Gate:
    """The endpoint model as a run sees it: before its first prompt leaves, `on_first` records the
    exposure (and re-checks the key) in the database; before every prompt (retries included),
    `fresh()` says whether the lease is known to be held, and when it is not, `renew` renews it in
    the database or raises LeaseLost; `stalled` is the stall watch: a request of the endpoint's
    waiting with no reply for that long (the time between its requests, when a judged set's
    baseline or judges run, is not the endpoint's). Everything else is the wrapped model's."""

    def __init__(self, inner: Any, on_first: Callable[[], None], fresh: Callable[[], bool], renew: Callable[[], None]):
        self.inner, self._on_first, self._fresh, self._renew = inner, on_first, fresh, renew
        self._open = False
        self._lock = asyncio.Lock()
        self.last_reply = time.monotonic()  # the last reply, or the start of a wait when none was pending
        self.pending = 0  # the endpoint's requests waiting for their reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def stalled(self, seconds: float) -> bool:
        return self.pending > 0 and time.monotonic() - self.last_reply > seconds

    async def generate(self, prompt: Any, config: Any, *, item_id: str = "", repeat: int = 0) -> Any:
        if not self._open:
            async with self._lock:
                if not self._open:
                    await asyncio.to_thread(self._on_first)
                    self._open = True
        if not self._fresh():
            async with self._lock:
                if not self._fresh():
                    await asyncio.to_thread(self._renew)
        if not self.pending:
            self.last_reply = time.monotonic()
        self.pending += 1
        try:
            return await self.inner.generate(prompt, config, item_id=item_id, repeat=repeat)
        finally:
            self.pending -= 1
            self.last_reply = time.monotonic()


class JobRunner:
    def __init__(self, service: Service):
        self.svc, self.st = service, service.settings
        self.me = f"{uuid.uuid4().hex[:16]}"
        self._keys: dict[int, str] = {}  # submission id -> the submitter's endpoint key (memory only)
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._running: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Task]] = {}
        self._reasons: dict[int, str] = {}  # submission id -> why its run was cancelled (not a hand-back)
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        # submission id -> time.monotonic() until which this process knows it holds the run's lease:
        # taken before the transaction that wrote `lease_until` (now + lease_s), so never later than it
        self._held_until: dict[int, float] = {}

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
                _give_up(sub, LOST_KEY, utcnow())

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
        """Jobs whose lease lapsed: requeue one whose prompts had not left; fail the others (charged
        when prompts had left: never run again for free). The rows are locked (PostgreSQL), so a
        renewal committed meanwhile takes them out of the lapsed set."""
        lapsed = s.scalars(select(Submission).where(
            Submission.kind == "endpoint", Submission.status.in_(("queued", "running")),
            Submission.lease_until.is_not(None), Submission.lease_until < now).with_for_update())
        for sub in lapsed:
            if sub.prompts_sent_at is not None:
                _give_up(sub, INTERRUPTED, now)
            elif sub.key_holder is not None or sub.attempts >= MAX_ATTEMPTS:
                _give_up(sub, LOST_KEY if sub.key_holder is not None else "the run was interrupted too often", now)
            else:
                sub.status = "queued"
                sub.lease_owner = sub.lease_until = None

    def _claim(self) -> int | None:
        held_until = time.monotonic() + self.st.lease_s
        now = utcnow()
        st = self.st
        with self.svc.Session.begin() as s:
            s.scalar(select(TestSet.id).limit(1).with_for_update())  # PostgreSQL: one claimer at a time
            self._reap(s, now)
            running = s.execute(select(Submission.key_id, ApiKey.org_id, Submission.lease_owner).join(
                ApiKey, ApiKey.id == Submission.key_id).where(Submission.status == "running")).all()
            by_key = Counter(r.key_id for r in running)
            by_org = Counter(r.org_id for r in running)
            here = [r for r in running if r.lease_owner == self.me]
            key_here, org_here = Counter(r.key_id for r in here), Counter(r.org_id for r in here)
            # No key or organisation takes this process's last free worker (when it has more than one).
            last = st.endpoint_workers > 1 and st.endpoint_workers - len(here) <= 1
            queued = s.execute(select(Submission, ApiKey.org_id, ApiKey.revoked).join(
                ApiKey, ApiKey.id == Submission.key_id).where(
                Submission.kind == "endpoint", Submission.status == "queued",
                or_(Submission.key_holder.is_(None), Submission.key_holder == self.me)).order_by(Submission.id)).all()
            ready = []
            for q, org, revoked in queued:
                if revoked:  # revoked after it was queued (service/keys.py fails these too)
                    _give_up(q, REVOKED, now)
                elif (by_key[q.key_id] < st.endpoint_per_key and by_org[org] < st.endpoint_per_org
                      and not (last and (key_here[q.key_id] or org_here[org]))):
                    ready.append((by_org[org], by_key[q.key_id], q.id, q))
            if not ready:
                return None
            job = min(ready, key=lambda r: r[:3])[3]
            job.status, job.lease_owner, job.attempts = "running", self.me, job.attempts + 1
            job.lease_until = now + timedelta(seconds=st.lease_s)
            sid = job.id
        self._held_until[sid] = held_until  # once committed
        return sid

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.st.lease_s / 3):
            try:
                self._renew()
            except Exception:  # noqa: BLE001 - the next beat tries again; a lease lasts three beats
                continue
            with self._wake:
                self._wake.notify_all()

    def _renew(self, only: int | None = None) -> set[int]:
        """Renew this process's leases (or only run `only`'s); cancel its runs whose key was revoked
        meanwhile. Returns the runs whose lease it renewed. Only rows still this process's are
        touched (locked first on PostgreSQL, where a take-back committed meanwhile drops them)."""
        held_until = time.monotonic() + self.st.lease_s
        revoked, renewed = [], set()
        with self.svc.Session.begin() as s:
            until = utcnow() + timedelta(seconds=self.st.lease_s)
            for sub, dead in s.execute(select(Submission, ApiKey.revoked).join(
                    ApiKey, ApiKey.id == Submission.key_id).where(
                    Submission.status.in_(("queued", "running")),
                    or_(Submission.lease_owner == self.me, Submission.key_holder == self.me),
                    *(() if only is None else (Submission.id == only,))).with_for_update(of=Submission)).all():
                sub.lease_until = until
                if sub.status == "running" and sub.lease_owner == self.me:
                    renewed.add(sub.id)
                    if dead:
                        revoked.append(sub.id)
        for sid in renewed:  # committed: the lease is held until `until`, which is later than this
            self._held_until[sid] = max(self._held_until.get(sid, 0.0), held_until)
        for sid in revoked:
            self._cancel(sid, REVOKED)
        return renewed

    def _lease_fresh(self, sid: int) -> bool:
        """Whether this process knows it holds the run's lease for at least half its length more
        (the heartbeat renews it every third of it: a late heartbeat is a paused or starved process)."""
        return time.monotonic() < self._held_until.get(sid, 0.0) - self.st.lease_s / 2

    def _renew_one(self, sid: int) -> None:
        """Before a prompt leaves on a lease not known to be fresh: renew it, or stop the run."""
        if sid not in self._renew(only=sid):
            raise LeaseLost("the run was taken back")

    def _cancel(self, sid: int, reason: str) -> None:
        with self._lock:
            hit = self._running.get(sid)
            if hit is not None:
                self._reasons[sid] = reason
                hit[0].call_soon_threadsafe(hit[1].cancel)

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
            url, model_name = sub.endpoint_url or "", sub.model
        loop = asyncio.new_event_loop()
        tmp = tempfile.mkdtemp(prefix="glotbench-sub-")
        try:
            unfit = endpoint_unfit(loaded, self.st.endpoint_max_requests)
            if unfit:  # refused at submission; a process with other settings may still meet one: ours, refunded
                raise NotRunnable(f"no endpoint run can score this set: {unfit}")
            task = loop.create_task(asyncio.wait_for(self._evaluate(sid, loaded, url, model_name, self._keys.get(sid), tmp),
                                                     self.st.endpoint_timeout_s))
            with self._lock:
                self._running[sid] = (loop, task)
            if self._stop.is_set():
                task.cancel()
            agg, extra, fp = loop.run_until_complete(task)
            self.svc.finish(sid, agg, extra, fp)
            self._release(sid)
        except asyncio.CancelledError:
            reason = self._reasons.pop(sid, None)
            if reason is None:
                self._hand_back(sid)
            else:
                self._fail(sid, reason, refund=True)
        except asyncio.TimeoutError:
            self._fail(sid, f"the run exceeded its time budget ({self.st.endpoint_timeout_s:g} s)", refund=False)
        except (KeyRevoked, NotRunnable, PanelIncomplete) as e:  # before any prompt left: refunded
            self._fail(sid, str(e), refund=True)
        except LeaseLost:  # another process holds the job now, or ended it
            log.warning("endpoint run %d stopped before its next prompt: its lease was taken back (this process "
                        "was paused or cut off from the database longer than --lease-seconds)", sid)
        except (GlotbenchError, ModelError) as e:  # messages written to be shown (service/ssrf.py)
            self._fail(sid, _redact(str(e), self._keys.get(sid))[:300], refund=False)
        except Exception:  # noqa: BLE001 - never shown as a traceback; refunded only if no prompt had left
            self._fail(sid, "internal error during the run", refund=True)
        finally:
            with self._lock:
                self._running.pop(sid, None)
                self._reasons.pop(sid, None)
            self._keys.pop(sid, None)
            self._held_until.pop(sid, None)
            loop.close()
            shutil.rmtree(tmp, ignore_errors=True)

    def _fail(self, sid: int, message: str, *, refund: bool) -> None:
        """`Service.fail`, only while the run is still this process's: one taken back meanwhile (its
        lease lapsed while this process was paused) is another process's to end."""
        with self.svc.Session() as s:
            sub = s.get(Submission, sid)
            mine = sub is not None and sub.status == "running" and sub.lease_owner == self.me
        if mine:
            self.svc.fail(sid, message, refund=refund)

    def _first_prompt(self, sid: int) -> None:
        """Called before the run's first prompt leaves: record it (charged from now on, whatever
        happens), unless the run's key was revoked or the run is no longer this process's."""
        with self.svc.Session.begin() as s:
            sub = s.get(Submission, sid)
            if s.scalar(select(ApiKey.revoked).where(ApiKey.id == sub.key_id)):
                raise KeyRevoked(REVOKED)
            if sub.status != "running" or sub.lease_owner != self.me:
                raise LeaseLost("the run was taken back")
            if sub.prompts_sent_at is None:
                sub.prompts_sent_at = utcnow()

    async def _evaluate(self, sid: int, loaded: LoadedSet, url: str, model_name: str,
                        api_key: str | None, tmp: str) -> tuple[Any, dict[str, Any], bytes]:
        from glotbench.engine.evaluate import RunOptions, evaluate_async
        from glotbench.models.openai_compat import OpenAICompatModel
        from glotbench.service.ssrf import GuardedClient

        st = self.st
        bench, items, groups = loaded.bench, loaded.dataset, loaded.groups
        client = GuardedClient(st.allow_hosts, max_bytes=st.endpoint_max_response_bytes,
                               concurrency=st.endpoint_concurrency, timeout_s=60)
        model = _Gate(OpenAICompatModel(model_name, url, client=client, api_key=api_key,
                                        concurrency=st.endpoint_concurrency, timeout_s=60),
                      lambda: self._first_prompt(sid), lambda: self._lease_fresh(sid), lambda: self._renew_one(sid))
        # a judged set (a task scored by a rubric, an arena, AraGen) runs the set's judges after the answers,
        # through the same entry point as `glotbench run` (the set's benchmark options are its benchmark's);
        # every judge judges (`every_judge`: a candidate named like a judge stops the run before any
        # prompt, never drops that judge); its interval is the judged run's own (the mean of judges)
        # the judged run's failure threshold is the service's own (MAX_FAILED_SHARE) for every phase: the
        # endpoint's answers as in a plain set; a judge whose verdicts failed beyond it invalidates the run
        opts = RunOptions(progress=False, use_cache=False, out=f"{tmp}/run", max_retries=2, timeout_s=60,
                          concurrency=st.endpoint_concurrency, bootstrap_resamples=st.resamples if bench.judged else 0,
                          judges=loaded.judges, every_judge=True,
                          max_failure_rate=MAX_FAILED_SHARE if bench.judged else DEFAULT_MAX_FAILURE_RATE)
        run = asyncio.ensure_future(evaluate_async(bench, model, opts, dataset=items))
        try:
            while not run.done():  # the stall watch: no reply for endpoint_stall_s stops the run
                await asyncio.wait({run}, timeout=min(1.0, st.endpoint_stall_s / 4))
                if not run.done() and model.stalled(st.endpoint_stall_s):
                    raise GlotbenchError(f"the endpoint sent no reply for {st.endpoint_stall_s:g} s; "
                                         "the run was stopped")
        finally:
            if not run.done():
                run.cancel()
                with contextlib.suppress(BaseException):
                    await run
        res = run.result()
        samples = {smp.id: smp for smp in res.samples if smp.repeat == 0}
        answered = sum(1 for smp in samples.values() if smp.failure is None)
        if len(items) - answered > MAX_FAILED_SHARE * len(items):
            kinds = Counter(smp.failure for smp in samples.values() if smp.failure is not None)
            raise GlotbenchError(f"invalid: {len(items) - answered} of {len(items)} items failed ("
                                 + ", ".join(f"{k} {n}" for k, n in kinds.most_common(4))
                                 + "); nothing was released")
        if bench.judged:  # the judged score (the mean of judges), never the answers' answered rate
            from glotbench.report.rundata import judged_view

            view, rows = judged_view(res.out_dir)
            invalid = validity_text(view)
            if invalid:  # a judge's verdicts mostly unreadable, no item judged: no judged score to release
                for spec in loaded.judges:  # a phase is named by its judge: shown without its endpoint
                    invalid = invalid.replace(spec, public_spec(spec))
                raise GlotbenchError(f"{invalid}; nothing was released")
            agg = judged_aggregate(view, {r["id"]: r["score"]["value"] for r in rows}, items, answered, groups)
        else:
            agg = aggregate(bench, items, samples, resamples=st.resamples, groups=groups)
        failed = sum(1 for smp in res.samples if smp.failure is not None)  # the answers' (a judged view counts items)
        judged = {"judges": loaded.public()["judges"]} if bench.judged else {}  # what judged it, no endpoint
        return agg, {"failed_requests": res.results["counts"].get("failed", failed),
                     "coverage": round(answered / len(items), 4) if len(items) else 0.0, **judged}, fingerprint(items, samples)

    def _release(self, sid: int) -> None:
        with self.svc.Session.begin() as s:
            sub = s.get(Submission, sid)
            sub.lease_owner = sub.lease_until = sub.key_holder = None

    def _hand_back(self, sid: int) -> None:
        """A run cancelled by shutdown: requeued if no prompt had left, else failed (charged: run
        again, it would show the set a second time for one charge); failed too if its key would be
        lost. Only while the run is still this process's."""
        with self.svc.Session.begin() as s:
            sub = s.scalar(select(Submission).where(Submission.id == sid).with_for_update())
            if sub.status != "running" or sub.lease_owner != self.me:
                return  # taken back meanwhile
            if sub.prompts_sent_at is not None:
                _give_up(sub, INTERRUPTED, utcnow())
            elif sub.key_holder is not None:
                _give_up(sub, LOST_KEY, utcnow())
            else:
                sub.status = "queued"
                sub.lease_owner = sub.lease_until = sub.key_holder = None
