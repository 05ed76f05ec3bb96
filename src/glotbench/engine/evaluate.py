"""One evaluation, end to end, as docs/architecture.md draws it: load → select → render → generate →
score → aggregate → write.

The run directory (glotbench.rundir) holds `run.json` (written first: config, status), `samples.jsonl`
(one line per sample, appended as each finishes) and `results.json` (written last, atomically). A
directory with no `results.json` is an unfinished run; re-running the command resumes from the call
cache.
"""

from __future__ import annotations

import asyncio
import platform
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, cast

from glotbench import __version__
from glotbench.benchmarks.base import Benchmark, contract_fault
from glotbench.checks import RunChecks
from glotbench.core import Dataset, RunResult, Sample
from glotbench.engine.aggregate import aggregate_run
from glotbench.engine.cache import default_cache_path, open_cache
from glotbench.engine.learned import learned_results, merged, open_learned, signed
from glotbench.engine.options import THINKING, RunOptions, generation_config, model_options
from glotbench.engine.prompts import PromptTemplate, probes, whole
from glotbench.engine.runner import RetryPolicy, RunCounters, Runner, effective_config, prompt_form
from glotbench.errors import GlotbenchError, SpecError
from glotbench.models.base import LOGLIK_LATENCY, REQUEST_LATENCY, Model
from glotbench.metrics.ratio import RatioMetric
from glotbench.core import GenerateConfig, Prompt
from glotbench.registry import get_benchmark, load_model
from glotbench.rundir import RESULTS, RUN_JSON, SAMPLES, SampleSink, new_run_dir, write_json_atomic
from glotbench.rundir.schema import (BenchmarkInfo, Counts, MetricInfo, ModelInfo, Results, RunConfig, RunJson, Stopped, Timing,
                                     Tokens, bootstrap_record, results_record, run_record)
from glotbench.rundir.selection import Selection, select
from glotbench.rundir.validity import run_validity
from glotbench.scoring import SCORER_ERROR
from glotbench.signature import Signature
from glotbench.stats import DEFAULT_SEED, forget_draws, prepare_draws

__all__ = ["RunOptions", "evaluate", "evaluate_async", "evaluate_phase", "generation_config", "model_options"]


def evaluate(benchmark: str | Benchmark, model: str | Model, options: RunOptions = RunOptions(), *,
             dataset: Dataset | None = None) -> RunResult:
    """Run a benchmark on a model and write the run directory. Raises GlotbenchError on bad input.
    Inside a running event loop (Jupyter) use `await evaluate_async(...)`."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(evaluate_async(benchmark, model, options, dataset=dataset))
    raise GlotbenchError("evaluate() was called inside a running event loop; use `await evaluate_async(...)`")


async def evaluate_async(benchmark: str | Benchmark, model: str | Model,
                         options: RunOptions = RunOptions(), *, dataset: Dataset | Selection | None = None) -> RunResult:
    """Run a benchmark (a registered name, `pkg.mod:Class`, or an object) on a model. `dataset`:
    items already loaded (a judge phase's games, a service set), or a `Selection` of a larger dataset's
    items (recorded as that selection: a --pivot run's phases); default: `benchmark.load(options.data)`. Returns
    the results and the samples in item order. THE dispatch of every caller (run, sweep, evaluate(),
    the service): a judged benchmark (`judged`) runs its answers, then its judges, through the
    one judged pipeline (engine/judged.py) with the parts it declares; its results
    are the candidate's judged view (the mean of judges)."""
    bench = _benchmark(benchmark, options)
    if options.judges and not bench.judged:
        raise GlotbenchError(f"{bench.name} is not scored by a rubric or judges: --judge is for judged benchmarks "
                             "(laobench-arena, aragen, tasks with scorer kind rubric)")
    if options.model_prices and not bench.judged:
        raise GlotbenchError(f"--price-of prices a judged run's judges and baseline: {bench.name} is not judged "
                             "(its model's prices are --price-in and --price-out)")
    if bench.judged and options.metric_checkpoint is not None:  # before any phase calls a model
        raise GlotbenchError(f"--metric-checkpoint: {bench.name} is judged by a rubric or judges, not a translation benchmark")
    if bench.judged:  # the one judged pipeline (engine/judged.py), with the parts the benchmark declares
        if isinstance(dataset, Selection):  # a judged run chooses its own items (--limit)
            raise GlotbenchError(f"{bench.name}: a judged benchmark takes its items whole, not a selection")
        from glotbench.engine.judged import judged_result

        return await judged_result(bench, benchmark, model, options, dataset)
    return await _evaluate(bench, benchmark, model, options, dataset)


async def evaluate_phase(benchmark: str | Benchmark, model: str | Model, options: RunOptions = RunOptions(), *,
                         dataset: Dataset | Selection | None = None) -> RunResult:
    """One phase: the answers of a judged benchmark, or a whole plain run (`evaluate_async` without
    its dispatch)."""
    bench = _benchmark(benchmark, options)
    return await _evaluate(bench, benchmark, model, options, dataset)


def _benchmark(benchmark: str | Benchmark, options: RunOptions) -> Benchmark:
    """The benchmark a run names, built with its options; an object, as it is, once it holds the
    contract (benchmarks/base.py `contract_fault`: a station or a declared fact missing)."""
    if isinstance(benchmark, str):
        return get_benchmark(benchmark, **dict(options.bench_options))
    if (fault := contract_fault(benchmark)) is not None:
        raise SpecError(fault)
    return benchmark


async def _evaluate(bench: Benchmark, benchmark: str | Benchmark, model: str | Model, options: RunOptions,
                    dataset: Dataset | Selection | None) -> RunResult:
    if isinstance(dataset, Selection):  # items chosen already from a larger dataset (a --pivot run's
        full, selection = dataset.items, dataset  # phases): recorded as that selection, `subset:` signed
    else:
        full = bench.load(options.data) if dataset is None else dataset  # load
        selection = select(full, bench.group_by, limit=options.limit, subset=options.subset,  # select
                           repeats=options.repeats)
    signature = _signature(bench, full, options)
    learned = open_learned(bench, options.metric_checkpoint)  # a bad DIR or benchmark: before any model
    m = load_model(model, **model_options(options)) if isinstance(model, str) else model
    cache = None
    try:
        plan = _plan(bench, full, selection, signature, m, options)  # render: the prompt template
        cache = open_cache(options.cache_path or default_cache_path()) if options.use_cache else None
        out_dir = new_run_dir(bench.name, m.spec, options.out)
        run = _start(bench, benchmark, full, m, plan, options, out_dir)
        checks = RunChecks(bench, plan.items, m, cache)  # glotbench.checks: after the requests
        done = await _generate(bench, full, m, plan, options, cache, out_dir, checks)  # generate and score
        run = _with_reply_caps(run, bench, plan, done.runner.max_tokens_sent)  # the caps really sent
        results = _results(bench, full, m, plan, run, done, options, checks, learned)  # aggregate
        write_json_atomic(out_dir / RESULTS, results)  # write
        write_json_atomic(out_dir / RUN_JSON, {**run, "status": results["status"]})
        return RunResult(out_dir, dict(results), tuple(done.samples), plan.items)
    finally:
        await m.aclose()
        if cache is not None:
            cache.close()


# -- the stations' helpers -------------------------------------------------------------------------

def _signature(bench: Benchmark, full: Dataset, options: RunOptions) -> tuple[str, str]:
    """The prompt hash, and the signature cached scores are keyed by (an item's score does not
    depend on the selection). The thinking mode changes the numbers: it is in the signature, so
    `compare` refuses to mix modes."""
    phash = bench.prompt_hash(full)
    return phash, Signature.parse(bench.signature(full, phash)).plus(thinking=THINKING[options.thinking]).format()


@dataclass(frozen=True)
class _Plan:
    """What the run sends and how: the items, the signature, the generation settings, the
    concurrency, and the prompt template each sample's prompt is kept against (engine/prompts.py)."""

    selection: Selection
    prompt_hash: str
    scorer_signature: str
    signature: str  # the scorer's, and the item set's when the run is on fewer items than the dataset's
    config: GenerateConfig
    concurrency: int
    auto: bool
    coverage: dict[str, Any] | None  # a replay model's coverage of the run's items
    form: str  # the form prompts are sent in: chat or text
    template: PromptTemplate | None
    reply_caps: Counter  # max_tokens of the probed prompts as sent (a base model's prompt has its own cap)
    items: Dataset  # the units sent: the selected items (permute=circular: each in every rotation)


def _plan(bench: Benchmark, full: Dataset, selection: Selection, signature: tuple[str, str], m: Model,
          options: RunOptions) -> _Plan:
    auto = options.concurrency == "auto"
    items = bench.expand(selection.items)  # permute=circular: each selected item in every rotation
    coverage = (m.coverage(sorted(full.data_ids()), [it.id for it in items], options.repeats)  # type: ignore[attr-defined]
                if hasattr(m, "coverage") else None)
    form = prompt_form(bench, m)
    rendered = [bench.render(it.to_public()) for it in probes(items)]
    template = PromptTemplate.learn(rendered, form)
    config = generation_config(bench, options)
    caps = Counter(effective_config(p, config, form).max_tokens for p in rendered)
    phash, scorer = signature
    # a str is "auto" (RunOptions rejects any other)
    conc = options.concurrency
    return _Plan(selection, phash, scorer, selection.signed(scorer), config,
                 options.max_concurrency if isinstance(conc, str) else (conc or m.default_concurrency), auto, coverage,
                 form, template, caps, items)


def reply_cap(setting: int, sent: Counter, loglik: bool) -> dict[str, Any]:
    """run.json's `max_tokens` as the requests carried it: a text-form prompt (a base model) caps its
    reply itself (`Prompt.text_max_tokens`, below the setting), so the setting alone misstated it
    (1024 where 44 was sent). `max_tokens` is then the largest cap sent, `max_tokens_min` the
    smallest where they differ, `max_tokens_setting` the setting; log-likelihood generates nothing
    (`max_tokens` null)."""
    if loglik:
        return {"max_tokens": None, "max_tokens_setting": setting}
    if not sent or set(sent) == {setting}:
        return {}
    return {"max_tokens": max(sent), **({"max_tokens_min": min(sent)} if len(sent) > 1 else {}),
            "max_tokens_setting": setting}


def _with_reply_caps(run: RunJson, bench: Benchmark, plan: _Plan, sent: Counter) -> RunJson:
    """run.json with every unit's cap (the runner's count), where the start had the probes' caps."""
    if not sent:
        return run
    config = {**run["config"], "max_tokens": plan.config.max_tokens}
    config.pop("max_tokens_min", None)
    config.pop("max_tokens_setting", None)
    capped = cast(RunConfig, {**config, **reply_cap(plan.config.max_tokens, sent, bench.method == "loglik")})
    return {**run, "config": capped}


def _task_copy(bench: Benchmark, out_dir: Path) -> dict[str, str] | None:
    """A user's task file kept with the run: its resolved path, SHA-256 and a copy in the run directory
    (`task.yaml`), from which every reader rebuilds the benchmark, from any folder, after a move."""
    from glotbench.rundir import keep_task_file

    path = bench.task_file()
    return None if path is None else keep_task_file(path, out_dir)


def data_place(data: str | None) -> str | None:
    """`--data` as run.json keeps it: a local file or folder by its absolute path (read again from any
    folder: compare, rescore, the report's references); anything else (`hub:...`) as given."""
    return str(Path(data).resolve()) if data is not None and Path(data).exists() else data


def _start(bench: Benchmark, spec: str | Benchmark, full: Dataset, m: Model, plan: _Plan, options: RunOptions,
           out_dir: Path) -> RunJson:
    """run.json, written before the first request: what is run, and the prompt template."""
    auto = plan.auto
    # RunConfig (open): the generation settings, GenerateConfig.to_dict's keys, then the run's options
    config = cast(RunConfig, {**plan.config.to_dict(), "concurrency": "auto" if auto else plan.concurrency,
              **({"max_concurrency": options.max_concurrency} if auto else {}),
              **({"max_cost_usd": options.max_cost_usd} if options.max_cost_usd is not None else {}),
              **({"batch": True, "batch_discount": options.batch_discount} if options.batch else {}),
              "repeats": options.repeats, "limit": options.limit, "subset": options.subset, "items": len(plan.items),
              "max_failure_rate": options.max_failure_rate, "timeout_s": options.timeout_s,
              "max_retries": options.max_retries, "cache": options.use_cache, "prompt_form": m.prompt_form(),
              "bench_options": dict(options.bench_options), "method": bench.method,
              **({"phase": options.phase} if options.phase else {}),
              **({"metric_checkpoint": str(Path(options.metric_checkpoint).resolve())} if options.metric_checkpoint else {}),
              **reply_cap(plan.config.max_tokens, plan.reply_caps, bench.method == "loglik")})
    info: BenchmarkInfo = {
        "name": bench.name, "version": bench.version, "prompt_hash": plan.prompt_hash, "data": full.source,
        "data_sha256": full.sha256, "data_path": data_place(options.data), "spec": spec if isinstance(spec, str) else None}
    if (language := bench.run_language()) is not None:
        info["language"] = language
    if (task_file := _task_copy(bench, out_dir)) is not None:
        info["task_file"] = task_file
    if files := options.files():  # found again by their SHA-256 after a move (rundir.relocated)
        from glotbench.rundir import file_record

        opts = dict(options.bench_options)
        info["files"] = [file_record(k, opts[k], path) for k, path in files.items()]
    run = run_record(
        info, _model_info(m, bench), config,
        datetime.now(timezone.utc).isoformat(), sys.argv, None if plan.template is None else plan.template.to_json())
    write_json_atomic(out_dir / RUN_JSON, run)
    return run


@dataclass(frozen=True)
class _Generated:
    samples: list[Sample]  # in item order
    runner: Runner
    wall_s: float
    gate: Any  # engine/concurrency.py AdaptiveLimit (--concurrency auto)
    budget: Any  # engine/cost.py CostCap (--max-cost)
    batch: dict[str, Any] | None  # engine/batch.py (--batch)
    # results.json's input floor (Benchmark.input_floor): its items' scores, each made as the item's
    # reply is scored (`on_sample`), while the scorer's caches hold what it read of the item
    floor_scores: dict[str, Any]
    # the checks run, each added to its samples.jsonl line (with the keys a `fields(id, repeat)` gives:
    # the learned metric's score), the file in item order
    lines_checked: Callable[..., None]


_CHECK_BATCH = 256  # answers language-checked at a time in a worker thread during a run


async def _generate(bench: Benchmark, full: Dataset, m: Model, plan: _Plan, options: RunOptions, cache: Any,
                    out_dir: Path, checks: RunChecks) -> _Generated:
    """Every (item, repeat) through the runner: prompts sent (a batch first with --batch), replies
    scored, each sample's line appended to samples.jsonl as it finishes, then the file in item order."""
    from glotbench.engine.progress import ProgressBar

    items = plan.items
    template = plan.template
    prepared: list[asyncio.Task] = []

    def prepare() -> None:  # once the first request is out: the CPU waits on replies from then on
        draws = _draws_ahead(bench, full, options)
        prepared.append(asyncio.ensure_future(asyncio.to_thread(_prepare_finish, len(items), options, draws)))

    # The answers' language checks, a batch at a time in a worker thread once requests are in flight
    # (one batch after the other: RunChecks is not shared between threads); check_all makes the rest.
    # At the end of a run they cost 47 ms of its wall time at 2,000 answers (docs/performance.md).
    unchecked: list[Sample] = []
    checking: list[asyncio.Future] = []

    async def check_batch(batch: list[Sample], before: asyncio.Future | None) -> None:
        if before is not None:
            await before
        await asyncio.to_thread(checks.check_many, batch)

    floor_scores: dict[str, Any] = {}
    floor_of = {it.id: it for it in items} if bench.input_answer is not None else None

    def on_sample(s: Sample, prompt: Mapping[str, Any] | None) -> None:
        record = s.to_record()
        if prompt is not None:  # the sample's prompt record, kept in its line only (Runner._finish)
            record["prompt"] = dict(prompt)
        sink.add(record)
        if floor_of is not None and s.id not in floor_scores:
            floor_scores[s.id] = bench.input_floor_score(floor_of[s.id])
        if checks.rule is None:
            return
        unchecked.append(s)
        if len(unchecked) >= _CHECK_BATCH and prepared:
            checking.append(asyncio.ensure_future(check_batch(unchecked.copy(), checking[-1] if checking else None)))
            unchecked.clear()

    gate = budget = batch = None
    if plan.auto:
        from glotbench.engine.concurrency import AdaptiveLimit

        gate = AdaptiveLimit(options.max_concurrency)
    if options.max_cost_usd is not None:
        from glotbench.engine.cost import cost_cap

        budget = cost_cap(options, m, bench)
    with SampleSink(out_dir / SAMPLES) as sink, \
            ProgressBar(f"{bench.name} · {m.spec}", enabled=options.progress, total=len(items) * options.repeats,
                        concurrency=plan.concurrency) as bar:
        runner = Runner(bench, m, plan.config, concurrency=plan.concurrency, repeats=options.repeats,
                        cache=cache, retry=RetryPolicy(max_retries=options.max_retries),
                        on_sample=on_sample, on_progress=bar.update, on_flush=sink.flush,
                        on_first_call=prepare, scorer_id=f"glotbench:{__version__}|{plan.scorer_signature}",
                        prompt_record=template.record if template else partial(_whole, plan.form),
                        gate=gate, budget=budget)
        t0 = time.perf_counter()
        try:
            if options.batch:
                from glotbench.engine.batch import prefill_from_batch

                batch = await prefill_from_batch(runner, items, out_dir, options)
            samples = await runner.run(iter(items), len(items))
        finally:
            for task in [*prepared, *checking]:
                await task
        wall = time.perf_counter() - t0
    order = {it.id: i for i, it in enumerate(items)}
    samples.sort(key=lambda x: (order[x.id], x.repeat))
    # The checks (those not made while requests were in flight: `check_all`) go into each line as
    # the file is put in item order (appended in completion order), once the aggregate is made.
    return _Generated(samples, runner, wall, gate, budget, batch, floor_scores,
                      lambda fields=None: sink.in_order(order, checks.check_all(samples), fields))


def _whole(form: str, prompt: Prompt, loglik_choices: Sequence[str] | None = None) -> dict[str, Any]:
    """A sample's prompt kept whole (a run whose prompts fit no template): the runner's `prompt_record`."""
    return whole(prompt, form, loglik_choices)


def _unreadable(c: RunCounters) -> dict[str, int]:
    """A judge's replies that came back but held no verdict it could read, by failure kind: every
    failed sample that is neither a failed call nor a scorer error."""
    other = Counter(c.call_failures) + Counter({SCORER_ERROR: c.failures.get(SCORER_ERROR, 0)})
    return dict(Counter(c.failures) - other)


def _results(bench: Benchmark, full: Dataset, m: Model, plan: _Plan, run: RunJson, done: _Generated,
             options: RunOptions, checks: RunChecks, learned: Any = None) -> Results:
    """results.json: the aggregate (from the cache when it can be), the counts, validity, cost, timing;
    with `--metric-checkpoint`, the learned metric's estimates (engine/learned.py) and its signature."""
    from glotbench.engine.cost import cost_block

    c, runner, wall = done.runner.counters, done.runner, done.wall_s
    metrics = bench.run_metrics(full)
    versions = versions_used()
    scores = aggregate_run(bench, full, done.samples, metrics, runner, options, versions)
    infos: dict[str, MetricInfo] = {
        mt.name: {"description": mt.description, "show_ci": mt.show_ci, "label": mt.label or mt.name,
                  "keys": list(mt.keys), "scale": mt.scale, **({"lower_is_better": True} if _lower_is_better(mt) else {})}
        for mt in metrics}
    signature = plan.signature
    per_sample = None
    if learned is not None:
        extra, info, per_sample = learned_results(bench, learned, done.samples, plan.items, options.bootstrap_resamples)
        scores, signature = merged(scores, extra), signed(signature, learned)
        infos[learned.checkpoint.kind] = cast(MetricInfo, info)
    forget_draws()  # the bootstrap's draws are not held through the checks, where memory peaks
    content = checks.content_key(done.samples, runner.score_keys)
    runner.score_keys.clear()  # read by the aggregate's and the checks' keys only (about 200 bytes a sample)
    done.lines_checked(per_sample)
    checked = checks.summary(done.samples, metrics, content)
    stopped: Stopped | None = done.budget.stopped if done.budget is not None and c.not_sent else None
    facts = dict(bench.extra_results(full))
    floor = bench.input_floor(full, plan.items, done.floor_scores)
    if floor:
        facts["input_floor"] = floor
    counts: Counts = {"samples": c.done, "items": len(plan.items), "failed": c.errors, "failures": dict(c.failures),
                      "flags": dict(c.flags), "model_calls": c.calls, "retries": c.retries, "cache_hits": c.cache_hits,
                      "not_sent": c.not_sent, "structured_output": dict(runner.structured_modes) or None}
    if not c.not_sent:
        del counts["not_sent"]
    tokens: Tokens = {"prompt": c.prompt_tokens, "completion": c.completion_tokens,
                      "prompt_billed_now": c.new_prompt_tokens, "completion_billed_now": c.new_completion_tokens}
    if c.tokens_not_counted:  # replies whose tokens the backend could not count (log-likelihood without a tokenizer)
        tokens["not_counted"] = c.tokens_not_counted
    return results_record(
        run, status="complete" if stopped is None else "stopped",
        stopped=None if stopped is None else {**stopped, "not_sent": c.not_sent},
        concurrency=done.gate.summary() if done.gate is not None else None, batch=done.batch,
        finished=datetime.now(timezone.utc).isoformat(), model=_model_info(m, bench),
        signature=signature, selection=plan.selection.record(),
        validity=run_validity(c.call_failures, c.done, options.repeats, options.max_failure_rate,
                              c.call_failure_status, scorer_errors=c.failures.get(SCORER_ERROR, 0),
                              unreadable=_unreadable(c) if bench.judge_task else None),
        data_label=bench.data_label(full),
        facts=facts,
        headline=metrics[0].name,
        metrics=infos,
        scores=scores, checks=checked,
        counts=counts, tokens=tokens,
        cost=cost_block(options, c, done.batch, done.budget), coverage=plan.coverage,
        timing=_timing(wall, c, runner, done.batch, REQUEST_LATENCY if bench.method != "loglik" else LOGLIK_LATENCY, m),
        versions=versions,
        bootstrap=bootstrap_record(options.bootstrap_resamples, DEFAULT_SEED,
                                   "each estimate's ci_method: wilson (a proportion of 0/1 items), "
                                   "bootstrap, or wilson_fallback (the bootstrap collapsed); with a cluster "
                                   "field (scores.clusters) cluster_bootstrap or wilson_clusters_fallback"))


def _model_info(m: Model, bench: Benchmark) -> ModelInfo:
    """The model block: its spec and description; a log-likelihood run's latency is the runner's
    (LOGLIK_LATENCY), not the one the backend describes for its generation (a batch's share)."""
    info = cast(ModelInfo, {"spec": m.spec, **m.description()})  # open: the backend's own keys
    if bench.method == "loglik" and "latency" in info:
        info["latency"] = LOGLIK_LATENCY
    return info


def _timing(wall: float, c: Any, runner: Runner, batch: dict[str, Any] | None, default_latency: str,
            m: Model) -> Timing:
    """results.json's timing. The speed counts the samples the model answered in this invocation
    (its calls, and --batch's replies): the cache's read-back is no model speed (a cached re-run
    "ran" 4,786 samples a second), so a run that sent nothing has none (`samples_per_s` null,
    `samples_sent` 0)."""
    sent = c.done - c.cache_hits + int((batch or {}).get("filled") or 0)
    return {"run_s": round(wall, 3), "samples_per_s": round(sent / wall, 2) if sent and wall else None,
            "samples_sent": sent,
            # From the first model call sent to the last sample scored (excludes model loading).
            "request_phase_s": (round(runner.last_done_at - runner.first_call_at, 3)
                                if runner.first_call_at and runner.last_done_at else None),
            # what each sample's latency_s measures: a batched backend's a share of its batch; the
            # log-likelihood method's is the runner's own (engine/runner.py), whatever the backend
            "latency": default_latency if default_latency == LOGLIK_LATENCY
            else m.description().get("latency", REQUEST_LATENCY)}


def versions_used() -> dict[str, str]:
    """Versions of what the run used: a package's own `__version__` where it has one (reading
    installed metadata imports the email parser: 10-20 ms of a cached re-run), else its metadata."""
    out = {"glotbench": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "aiohttp", "rich", "typer", "torch", "transformers", "gguf"):
        if pkg in sys.modules or pkg in ("numpy",):
            version = getattr(sys.modules.get(pkg), "__version__", None)
            if isinstance(version, str):
                out[pkg] = version
                continue
            from importlib import metadata

            try:
                out[pkg] = metadata.version(pkg)
            except metadata.PackageNotFoundError:
                pass
    return out


def _prepare_finish(n_items: int, options: RunOptions, draws: bool) -> None:
    """What the end of a run needs, prepared in a worker thread from the first request on, while
    the CPU mostly waits for replies: numpy (imported by nothing before the aggregate), the
    bootstrap's resample draws where the aggregate will read them (`_draws_ahead`; they depend only
    on the item count and the seed) and rich, which prints the results table. A fully cached run
    makes no request and does all of it at the end. Measured on a 2,000-item run at 100 ms latency
    (docs/performance.md)."""
    if draws:
        prepare_draws(n_items, options.bootstrap_resamples, DEFAULT_SEED)
    else:
        import numpy  # noqa: F401
    import rich.console  # noqa: F401
    import rich.table  # noqa: F401


def _draws_ahead(bench: Benchmark, full: Dataset, options: RunOptions) -> bool:
    """Whether the aggregate will resample the run's items: a metric that is not a ratio of sums (a
    corpus metric, a plugin's), or a learned metric's mean. A ratio is a proportion (Wilson) or a
    bounded ratio (Wilson on the effective n) unless an item's numerator lies outside [0, its
    denominator], which the aggregate then draws for itself; clustered intervals resample clusters,
    not items. vi-diacritics' 2,000 items: 2 million draws (40 ms of CPU) no interval read
    (docs/performance.md)."""
    if bench.cluster_by or options.bootstrap_resamples <= 0:
        return False
    return options.metric_checkpoint is not None or not all(
        isinstance(m, RatioMetric) for m in bench.run_metrics(full))


def _lower_is_better(metric: Any) -> bool:
    """A metric's declared direction (Metric.lower_is_better). A plugin's metric written to the
    protocol before it declared a direction has none: higher is better, as every metric then read."""
    return bool(getattr(metric, "lower_is_better", False))
