"""Running a sweep on one machine: every run in one event loop, interleaved, under a concurrency
budget per endpoint (runs against the same server share one semaphore), with one progress view over
the whole matrix. Finished runs are skipped, unfinished ones resume from the call cache, and every
finished run is indexed in the results store."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

from glotbench.engine.sweep import Run, SweepSpec, endpoint_budgets
from glotbench.errors import GlotbenchError
from glotbench.report.rundata import run_results


@dataclass
class RunOutcome:
    run: Run
    status: str  # done | invalid (finished, too many failed calls) | skipped (finished before) | failed
    error: str | None = None
    headline: str | None = None
    score: float | None = None
    scale: str = "fraction"  # the headline metric's: fraction (printed as percent) or points
    estimate: dict[str, Any] | None = None  # the headline's overall estimate (interval, n, clusters, †) as results.json holds it
    calls: int = 0
    seconds: float = 0.0
    phases: dict[str, float] | None = None  # Ray: queued_s (submit to start), in_task_s, transfer_s
    notes: tuple[str, ...] = ()  # what must be read with the number besides `error` (rundir/validity.py `notes`)


@dataclass
class MatrixProgress:
    """Runs done/running/failed, model calls and an ETA over the whole matrix. A rich live line on a
    terminal; a plain status line every `every_s` seconds on a pipe; nothing when disabled."""

    runs: list[Run]
    enabled: bool = True
    every_s: float = 10.0
    done: int = 0
    failed: int = 0
    running: set[str] = field(default_factory=set)
    calls: dict[str, int] = field(default_factory=dict)
    finished_units: int = 0

    def __post_init__(self) -> None:
        self.total_units = sum(r.calls for r in self.runs) or 1
        self._units = {r.run_id: r.calls for r in self.runs}
        self._t0 = time.perf_counter()
        self._last = 0.0
        self._live: Any = None
        if self.enabled and sys.stderr.isatty():
            from rich.live import Live

            from glotbench.console import console

            self._live = Live(self.line(), console=console(stderr=True), refresh_per_second=4, transient=False)
            self._live.__enter__()

    def line(self) -> str:
        units = self.finished_units + sum(self.calls.get(r, 0) for r in self.running)
        elapsed = time.perf_counter() - self._t0
        rate = units / elapsed if elapsed > 0 else 0.0
        eta = f"{(self.total_units - units) / rate:.0f} s" if rate > 0 and units < self.total_units else "-"
        return (f"sweep: {self.done}/{len(self.runs)} runs done, {len(self.running)} running, "
                f"{self.failed} failed · {sum(self.calls.values())} calls · {elapsed:.0f} s · ETA {eta}")

    def _show(self, force: bool = False) -> None:
        if not self.enabled:
            return
        if self._live is not None:
            self._live.update(self.line())
            return
        now = time.perf_counter()
        if force or now - self._last >= self.every_s:
            self._last = now
            print(self.line(), file=sys.stderr, flush=True)

    def started(self, run_id: str) -> None:
        self.running.add(run_id)
        self._show()

    def add_calls(self, run_id: str, n: int) -> None:
        self.calls[run_id] = self.calls.get(run_id, 0) + n
        self._show()

    def set_calls(self, run_id: str, n: int) -> None:
        """A count reported from elsewhere (a Ray worker); reports can arrive out of order."""
        self.calls[run_id] = max(self.calls.get(run_id, 0), n)
        self._show()

    def finished(self, run_id: str, ok: bool) -> None:
        self.running.discard(run_id)
        self.finished_units += self._units.get(run_id, 0)
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self._show(force=True)

    def close(self) -> None:
        if self._live is not None:
            self._live.update(self.line())
            self._live.__exit__(None, None, None)
            self._live = None
        elif self.enabled:
            self._show(force=True)


def build_model(run: Run) -> Any:
    """The backend object for a run's model, with the sweep's per-model settings."""
    from glotbench.registry import load_model

    m = run.model
    opts: dict[str, Any] = {"timeout_s": m.timeout, **m.options}
    if m.concurrency is not None:
        opts["concurrency"] = m.concurrency
    if m.api_key_env is not None:
        opts["api_key_env"] = m.api_key_env
    return load_model(m.spec, **opts)


_STORES: dict[str | None, Any] = {}  # per process: a Ray worker reused for many runs migrates once


def index_run(store_url: str | bool | None, out_dir: str) -> None:
    """Put a finished run into the results store (no-op when the sweep says `store: false`)."""
    if store_url is False:
        return
    from glotbench.store import ResultsStore

    key = store_url if isinstance(store_url, str) else None
    if key not in _STORES:
        _STORES[key] = ResultsStore(key)
    _STORES[key].index_dir(out_dir)


def outcome_from_results(run: Run, results: dict[str, Any], status: str, seconds: float) -> RunOutcome:
    """A finished run's outcome; `invalid` (with why) when its validity says so (rundir/validity.py)."""
    from glotbench.rundir.validity import notes, validity_text

    head = results.get("headline")
    est = (results.get("scores", {}).get("overall") or {}).get(head) or {}
    invalid = validity_text(results)
    scale = ((results.get("metrics") or {}).get(head) or {}).get("scale", "fraction")
    return RunOutcome(run, "invalid" if invalid else status, error=invalid, headline=head, score=est.get("value"),
                      scale=scale, estimate=dict(est) or None,
                      calls=int(results.get("counts", {}).get("model_calls", 0)), seconds=seconds,
                      notes=tuple(n for n in notes(results) if n != invalid))


def outcome_of(run: Run, out: dict[str, Any]) -> RunOutcome:
    """The outcome of an `execute_run` result (from a Ray task or a Slurm job)."""
    if out["status"] == "failed":
        return RunOutcome(run, "failed", error=out["error"])
    return outcome_from_results(run, out["results"], out["status"], 0.0)


def exhausted(run: Run, retries: int, e: BaseException) -> RunOutcome:
    """A run whose task or job failed on every attempt: its last error's last line."""
    msg = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
    return RunOutcome(run, "failed", error=f"failed after {retries} retries: {msg}")


async def run_local(spec: SweepSpec, runs: list[Run], *, progress: bool = True,
                    on_outcome: Callable[[RunOutcome], None] | None = None) -> list[RunOutcome]:
    """Every run interleaved in this process; each endpoint's budget shared by its runs."""
    from glotbench.engine.evaluate import evaluate_async
    from glotbench.models.limited import LimitedModel, SharedModel

    budgets = endpoint_budgets(spec)
    semaphores = {ep: asyncio.Semaphore(n) for ep, n in budgets.items()}
    shared: dict[str, SharedModel] = {}
    view = MatrixProgress(runs, enabled=progress)
    outcomes: list[RunOutcome] = []

    async def one(run: Run) -> RunOutcome:
        t0 = time.perf_counter()
        if run.done:
            res = run_results(run.out_dir)
            index_run(spec.store, run.out_dir)
            view.finished(run.run_id, True)
            return outcome_from_results(run, res, "skipped", 0.0)
        view.started(run.run_id)
        try:
            key = run.model.label
            if key not in shared:
                shared[key] = SharedModel(build_model(run))
            model = LimitedModel(shared[key], semaphores[run.model.endpoint],
                                 on_call=partial(view.add_calls, run.run_id))
            opts = _with_concurrency(run, budgets[run.model.endpoint])
            result = await evaluate_async(run.benchmark.name, model, opts)
            await asyncio.to_thread(index_run, spec.store, run.out_dir)
        except GlotbenchError as e:
            view.finished(run.run_id, False)
            return RunOutcome(run, "failed", error=str(e), seconds=time.perf_counter() - t0)
        except Exception as e:  # noqa: BLE001 - one run's bug must not stop the matrix
            view.finished(run.run_id, False)
            return RunOutcome(run, "failed", error=f"{type(e).__name__}: {e}", seconds=time.perf_counter() - t0)
        view.finished(run.run_id, True)
        return outcome_from_results(run, result.results, "done", time.perf_counter() - t0)

    async def tracked(run: Run) -> None:
        o = await one(run)
        outcomes.append(o)
        if on_outcome is not None:
            on_outcome(o)

    try:
        await asyncio.gather(*(tracked(r) for r in runs))
    finally:
        view.close()
        for s in shared.values():
            await s.aclose()
    order = {r.run_id: i for i, r in enumerate(runs)}
    return sorted(outcomes, key=lambda o: order[o.run.run_id])


def execute_run(run: Run, concurrency: int, store: str | bool | None,
                report: Callable[[int], None] | None = None) -> dict[str, Any]:
    """One run in a process of its own (a Ray task, a Slurm job): evaluate it with `concurrency`
    requests in flight, index it, and return its outcome as plain data. `report(n)` receives new
    call counts, at most every 0.5 s and once at the end. A finished run is skipped; a bad input
    (GlotbenchError) is a failed outcome, not an exception, so the executor does not retry it."""
    import dataclasses

    from glotbench.engine.evaluate import evaluate_async
    from glotbench.models.limited import LimitedModel, SharedModel

    t0 = time.perf_counter()
    started_at = time.time()  # wall clock: comparable with the driver's on one machine or a synced cluster
    if run.done:
        index_run(store, run.out_dir)
        return {"status": "skipped", "results": run_results(run.out_dir), "seconds": 0.0,
                "started_at": started_at, "ended_at": time.time()}
    pending = [0]
    last = [time.perf_counter()]

    def on_call(n: int) -> None:
        pending[0] += n
        now = time.perf_counter()
        if report is not None and now - last[0] >= 0.5:
            report(pending[0])
            pending[0], last[0] = 0, now

    try:
        model = LimitedModel(SharedModel(build_model(run)), on_call=on_call)
        opts = dataclasses.replace(run.options, concurrency=concurrency)

        async def go() -> Any:
            try:
                return await evaluate_async(run.benchmark.name, model, opts)
            finally:
                await model.shared.aclose()

        result = asyncio.run(go())
        index_run(store, run.out_dir)
    except GlotbenchError as e:  # bad input: retrying cannot help
        return {"status": "failed", "error": str(e), "seconds": time.perf_counter() - t0,
                "started_at": started_at, "ended_at": time.time()}
    finally:
        if report is not None and pending[0]:
            report(pending[0])
    return {"status": "done", "results": result.results, "seconds": time.perf_counter() - t0,
            "started_at": started_at, "ended_at": time.time()}


def endpoint_queues(spec: SweepSpec, runs: list[Run], budgets: dict[str, int]) -> tuple[dict[str, Any], dict[str, int]]:
    """For executors that run each run in its own process (Ray, Slurm): the runs queued per endpoint,
    and how many of them may be in flight at once (`runs_per_endpoint`, never more than the
    endpoint's budget); each then gets budget // slots requests in flight."""
    from collections import deque

    queues: dict[str, deque[Run]] = {}
    for r in runs:
        queues.setdefault(r.model.endpoint, deque()).append(r)
    slots = {ep: min(spec.runs_per_endpoint, len(q), budgets[ep]) for ep, q in queues.items()}
    return queues, slots


def _with_concurrency(run: Run, budget: int) -> Any:
    """A run's own worker count: the endpoint's whole budget (the shared semaphore does the limiting)."""
    import dataclasses

    return dataclasses.replace(run.options, concurrency=budget)
