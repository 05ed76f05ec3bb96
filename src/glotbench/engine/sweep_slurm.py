"""Running a sweep on Slurm through submitit: each run is one job (`sbatch`), with resources by
model kind, retried when it fails, resuming from the call cache.

- **Resources.** `hf:` runs ask for one GPU, `vllm:` runs for `tensor_parallel_size` GPUs, endpoint
  runs for none (`--gpus-per-node`); CPUs from the model's `resources.num_cpus` (else 1), or the
  sweep's `slurm.cpus_per_task`. A model's `resources.num_gpus` overrides the GPU count, as on Ray.
  The sweep file's `slurm:` section maps to sbatch options: partition, account, qos, constraint,
  time (--time), mem_gb (--mem), gpus_per_node, any other option under `additional`, and `setup`
  lines run before the job (module load, a virtual environment).
- **Budgets.** As on Ray: at most `runs_per_endpoint` runs against one endpoint are submitted at
  once, each with budget / runs in flight requests, so the endpoint never sees more than its budget.
- **Retries.** A job that fails (an exception, a node lost, the process killed, the time limit) is
  submitted again, up to `retries` times; the new job reuses the run directory and resumes from the
  call cache, so finished calls are not made again. A bad input (GlotbenchError) is not retried.
  For the cache to survive a retry on another node it must be shared: `cache:` a PostgreSQL URL, or
  a path on a filesystem with working locks (docs/sweeps.md); the default per-user path is per node.
- **Progress.** Each job writes its call count to a file in the jobs folder every 0.5 s; the driver
  reads them for the same matrix view as the local and Ray executors.
- `slurm.cluster: local` (or `debug`) runs the jobs with submitit's local executor (real processes
  on this machine, no Slurm): what the tests use, and a way to try a sweep file before a cluster.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from glotbench.engine.sweep import Run, SweepSpec, endpoint_budgets, minutes
from glotbench.engine.sweep_run import (MatrixProgress, RunOutcome, endpoint_queues, execute_run, exhausted,
                                        outcome_from_results, outcome_of)
from glotbench.errors import GlotbenchError


def import_submitit() -> Any:
    try:
        import submitit
    except ImportError:
        raise GlotbenchError("--slurm needs submitit: pip install 'glotbench[slurm]'") from None
    return submitit


def slurm_parameters(run: Run, spec: SweepSpec) -> dict[str, Any]:
    """submitit parameters of one run's job: the generic ones (translated for the cluster) and the
    sbatch options (`slurm_*`)."""
    m, s = run.model, spec.slurm
    gpus = 0
    if m.kind in ("hf", "vllm"):
        gpus = int(m.options.get("tensor_parallel_size", 1)) if m.kind == "vllm" else 1
    if "num_gpus" in m.resources:
        gpus = int(m.resources["num_gpus"])
    if s.gpus_per_node is not None:
        gpus = s.gpus_per_node
    cpus = s.cpus_per_task or max(1, int(m.resources.get("num_cpus", 1)))
    params: dict[str, Any] = {"name": f"glotbench:{run.run_id}"[:120], "timeout_min": minutes(s.time),
                              "cpus_per_task": cpus, "nodes": 1, "tasks_per_node": 1}
    if s.mem_gb is not None:
        params["mem_gb"] = s.mem_gb
    if gpus:
        params["gpus_per_node"] = gpus
    for key in ("partition", "account", "qos", "constraint"):
        if getattr(s, key) is not None:
            params[f"slurm_{key}"] = getattr(s, key)
    if s.additional:
        params["slurm_additional_parameters"] = {k: v for k, v in s.additional.items()}
    if s.setup:
        params["slurm_setup"] = list(s.setup)
    return params


def _job(run: Run, concurrency: int, store: str | bool | None, progress_file: str) -> dict[str, Any]:
    """The body of a job (in its own process, on a node): `execute_run`, its call count written
    to `progress_file` for the driver."""
    path = Path(progress_file)
    total = [0]

    def report(n: int) -> None:
        total[0] += n
        tmp = path.with_suffix(".tmp")
        tmp.write_text(str(total[0]), encoding="utf-8")
        tmp.replace(path)

    return execute_run(run, concurrency, store, report)


def _calls(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def run_slurm(spec: SweepSpec, runs: list[Run], *, progress: bool = True,
              on_outcome: Callable[[RunOutcome], None] | None = None) -> list[RunOutcome]:
    submitit = import_submitit()
    s = spec.slurm
    folder = Path(s.folder or Path(spec.out) / ".slurm")
    (folder / "progress").mkdir(parents=True, exist_ok=True)
    if s.cluster == "slurm" and spec.cache is None:
        import logging

        logging.getLogger("glotbench").warning(
            "warning: no shared call cache (`cache:` is unset): a run retried on another node repeats the "
            "calls its first job made; set `cache:` to a PostgreSQL URL or a path every node shares")
    try:
        executor = submitit.AutoExecutor(folder=str(folder / "%j"), cluster=s.cluster)
    except Exception as e:  # noqa: BLE001 - no sbatch on this machine, or a bad folder: one line
        raise GlotbenchError(f"cannot use Slurm here ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); "
                             f"`slurm: {{cluster: local}}` runs the jobs on this machine") from None
    budgets = endpoint_budgets(spec)
    queues, slots = endpoint_queues(spec, runs, budgets)
    view = MatrixProgress(runs, enabled=progress)
    outcomes: list[RunOutcome] = []
    in_flight: dict[str, tuple[Any, Run, str, int]] = {}  # run id -> (job, run, endpoint, attempt)
    submitted: dict[str, float] = {}

    def progress_file(run: Run) -> Path:
        return folder / "progress" / (run.run_id.replace("/", "__") + ".calls")

    def submit(run: Run, ep: str, attempt: int) -> None:
        per_run = max(1, budgets[ep] // slots[ep])
        executor.update_parameters(**slurm_parameters(run, spec))
        job = executor.submit(_job, run, per_run, spec.store, str(progress_file(run)))
        in_flight[run.run_id] = (job, run, ep, attempt)
        submitted.setdefault(run.run_id, time.perf_counter())

    def fill(ep: str) -> None:
        while queues[ep] and sum(1 for _, _, e, _ in in_flight.values() if e == ep) < slots[ep]:
            run = queues[ep].popleft()
            if run.done:  # finished before: skipped here, indexed as the other executors do
                from glotbench.engine.sweep_run import index_run
                from glotbench.rundir import read_results

                index_run(spec.store, run.out_dir)
                finish(outcome_from_results(run, read_results(run.out_dir), "skipped", 0.0))
                continue
            progress_file(run).unlink(missing_ok=True)
            submit(run, ep, 0)
            view.started(run.run_id)

    def finish(o: RunOutcome) -> None:
        if o.calls:
            view.set_calls(o.run.run_id, o.calls)
        view.finished(o.run.run_id, o.status != "failed")
        outcomes.append(o)
        if on_outcome is not None:
            on_outcome(o)

    try:
        for ep in queues:
            fill(ep)
        while in_flight:
            time.sleep(s.poll_s)
            for rid, (job, run, ep, attempt) in list(in_flight.items()):
                n = _calls(progress_file(run))
                if n is not None:
                    view.set_calls(rid, n)
                if not job.done():
                    continue
                del in_flight[rid]
                try:
                    out = job.result()
                except Exception as e:  # noqa: BLE001 - the job failed, was killed or timed out
                    if attempt < spec.retries:
                        submit(run, ep, attempt + 1)  # resumes from the call cache
                        continue
                    o = exhausted(run, spec.retries, e)
                else:
                    o = outcome_of(run, out)
                o.seconds = time.perf_counter() - submitted[rid]
                o.phases = {"attempts": attempt + 1}
                finish(o)
                fill(ep)
    except KeyboardInterrupt:
        for job, *_ in in_flight.values():
            job.cancel(check=False)
        raise
    finally:
        view.close()
    order = {r.run_id: i for i, r in enumerate(runs)}
    return sorted(outcomes, key=lambda o: order[o.run.run_id])

