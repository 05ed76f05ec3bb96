"""Running a sweep on Ray: each run is a Ray task with resources declared by its model's kind (a GPU
for `hf:`/`vllm:` models, one CPU for endpoints), on a local Ray instance or an existing cluster.

- A task that raises or whose worker dies is retried (`retries` in the sweep file); the retry reuses
  the run's output directory and resumes from the call cache, so finished calls are not repeated.
- An endpoint's concurrency budget is split between the runs against it: at most `runs_per_endpoint`
  of them are in flight, each with budget / runs-in-flight requests.
- Workers report their call counts to one small actor, which the driver reads for the progress view.
- Each worker indexes its finished run in the results store itself (many concurrent writers).
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, Callable

from glotbench.engine.sweep import Run, SweepSpec, endpoint_budgets
from glotbench.engine.sweep_run import (MatrixProgress, RunOutcome, endpoint_queues, execute_run, exhausted,
                                        outcome_of)
from glotbench.errors import GlotbenchError


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise GlotbenchError("--ray needs Ray: pip install 'glotbench[ray]'") from None
    return ray


def resources_for(run: Run) -> dict[str, Any]:
    """Ray resources of one run: GPUs for local models (tensor_parallel_size of them for vLLM)."""
    m = run.model
    res: dict[str, Any] = {"num_cpus": 1}
    if m.kind in ("hf", "vllm"):
        res["num_gpus"] = int(m.options.get("tensor_parallel_size", 1)) if m.kind == "vllm" else 1
    custom = dict(m.resources)
    for k in ("num_cpus", "num_gpus"):
        if k in custom:
            res[k] = custom.pop(k)
    if custom:
        res["resources"] = custom
    return res


def _execute(run: Run, concurrency: int, store: str | bool | None, counter: Any) -> dict[str, Any]:
    """The body of a Ray task: `execute_run`, its call counts sent to the driver's counter actor."""
    report = None if counter is None else (lambda n: counter.add.remote(run.run_id, n))
    return execute_run(run, concurrency, store, report)


def _make_counter(ray: Any) -> Any:
    class CallCounter:
        def __init__(self) -> None:
            self.calls: dict[str, int] = defaultdict(int)

        def add(self, run_id: str, n: int) -> None:
            self.calls[run_id] += n

        def get(self) -> dict[str, int]:
            return dict(self.calls)

    return ray.remote(num_cpus=0)(CallCounter).remote()  # the actor class, as @ray.remote(num_cpus=0) makes it


def run_ray(spec: SweepSpec, runs: list[Run], *, address: str | None = None, progress: bool = True,
            on_outcome: Callable[[RunOutcome], None] | None = None) -> list[RunOutcome]:
    ray = import_ray()
    if not ray.is_initialized():
        try:
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(include_dashboard=False, log_to_driver=False)
        except Exception as e:  # noqa: BLE001 - an unreachable cluster: one line
            raise GlotbenchError(f"cannot start or reach Ray ({address or 'local'}): "
                                 f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    gpus = ray.cluster_resources().get("GPU", 0)
    needs = [r for r in runs if resources_for(r).get("num_gpus", 0) > gpus and not r.done]
    if needs:
        raise GlotbenchError(f"{needs[0].model.spec} needs {resources_for(needs[0])['num_gpus']} GPU(s) "
                             f"per run; the Ray cluster has {gpus:g}")

    task = ray.remote(_execute)
    counter = _make_counter(ray)
    budgets = endpoint_budgets(spec)
    queues, slots = endpoint_queues(spec, runs, budgets)
    in_flight: dict[Any, tuple[Run, str]] = {}
    view = MatrixProgress(runs, enabled=progress)
    outcomes: list[RunOutcome] = []
    submitted: dict[str, float] = {}
    submitted_at: dict[str, float] = {}

    def submit(ep: str) -> None:
        while queues[ep] and sum(1 for _, e in in_flight.values() if e == ep) < slots[ep]:
            run = queues[ep].popleft()
            per_run = max(1, budgets[ep] // slots[ep])
            ref = task.options(max_retries=spec.retries, retry_exceptions=True, name=run.run_id,
                               **resources_for(run)).remote(run, per_run, spec.store, counter)
            in_flight[ref] = (run, ep)
            submitted[run.run_id] = time.perf_counter()
            submitted_at[run.run_id] = time.time()
            view.started(run.run_id)

    for ep in queues:
        submit(ep)
    try:
        while in_flight:
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.5)
            try:
                for rid, n in ray.get(counter.get.remote()).items():
                    view.set_calls(rid, n)
            except Exception:  # noqa: BLE001 - progress only
                pass
            for ref in ready:
                run, ep = in_flight.pop(ref)
                out: dict[str, Any] | None = None
                try:
                    out = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - retries exhausted
                    o = exhausted(run, spec.retries, e)
                else:
                    o = outcome_of(run, out)
                o.seconds = time.perf_counter() - submitted[run.run_id]  # submit to result, as the driver sees it
                if out is not None:
                    o.phases = {"queued_s": out["started_at"] - submitted_at[run.run_id],
                                "in_task_s": out["ended_at"] - out["started_at"],
                                "transfer_s": time.time() - out["ended_at"]}
                if o.calls:
                    view.set_calls(run.run_id, o.calls)  # the run's own count, whatever the actor has seen
                view.finished(run.run_id, o.status != "failed")
                outcomes.append(o)
                if on_outcome is not None:
                    on_outcome(o)
                submit(ep)
    finally:
        view.close()
    order = {r.run_id: i for i, r in enumerate(runs)}
    return sorted(outcomes, key=lambda o: order[o.run.run_id])
