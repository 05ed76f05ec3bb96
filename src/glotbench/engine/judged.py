"""The judged pipeline: a judged run is a run. `evaluate_async` dispatches every judged benchmark here
(run, sweep, the service's jobs and the Python API take this path).

The flow a judged run shares (judges/pipeline.py says what a benchmark declares): its checks; the run
directory (an unfinished or invalid one set aside, a finished valid one refused); the judge panel
(judges/panel.py `select_judges`: a judge that is the candidate, or a contestant, is skipped); the
judges' cards; the items selected (`--limit`); the answer phases; the games; each judge's phase
(`run_panel`); the benchmark's score over them; the one results.json (`write_judged`: the candidate's
run as every reader reads one, with its phases, judges and validity). Each phase is an ordinary run
(cached, resumable) in its own directory under the run's."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence, cast

from glotbench.benchmarks.base import Benchmark
from glotbench.contract import ScoredBenchmark
from glotbench.core import Dataset, RunResult
from glotbench.engine.cost import RunBudget
from glotbench.engine.evaluate import RunOptions, data_place, evaluate_async, evaluate_phase, versions_used
from glotbench.engine.options import model_options
from glotbench.errors import GlotbenchError
from glotbench.judges.cards import validation
from glotbench.judges.panel import build_judge, select_judges
from glotbench.judges.pipeline import JudgedContext, JudgedDeclaration, JudgeSampling, check_kind
from glotbench.judges.stats import JudgedMetrics, JudgedStats
from glotbench.models.base import Model
from glotbench.models.openai_compat import OpenAICompatModel
from glotbench.registry import get_benchmark, load_model
from glotbench.rundir import RESULTS, read_results, set_aside_invalid, slug, write_json_atomic
from glotbench.rundir.schema import (BenchmarkInfo, RunConfig, SelectionRecord, Timing, ValidityRecord, bootstrap_record,
                                     results_record, run_record)
from glotbench.stats import DEFAULT_SEED
from glotbench.rundir.selection import select


async def judged_result(bench: Benchmark, spec: str | Benchmark, model: str | Model, options: RunOptions,
                        dataset: Dataset | None = None) -> RunResult:
    """`evaluate_async`'s judged branch: the pipeline the benchmark declares
    (`Benchmark.judged_declaration`); the result is the candidate's judged run (results.json, the
    mean of judges its headline; no judge a model of it)."""
    declared = bench.judged_declaration()
    if declared is None:
        raise GlotbenchError(f"{bench.name} is judged but declares no judged run (Benchmark.judged_declaration)")
    return (await run_declared(declared, model, options, dataset, spec=spec))[0]


async def run_judged(benchmark: str | Benchmark, model: str | Model, judges: list[str], options: RunOptions,
                     judge_cards: str | None = None) -> dict[str, Any]:
    """A rubric task's judged run with its judges as an argument (default: its scorer.judges); its
    summary (results.json's `judged.summary`, with `out_dir`)."""
    bench = get_benchmark(benchmark, **dict(options.bench_options)) if isinstance(benchmark, str) else benchmark
    declared = bench.judged_declaration() if bench.judged else None
    if declared is None:
        raise GlotbenchError(f"{bench.name} is not scored by a rubric: --judge is for tasks with scorer kind rubric")
    res, summary = await run_declared(declared, model, replace(options, judge_cards=judge_cards), None,
                                      judges or None, spec=benchmark)
    return {**summary, "out_dir": str(res.out_dir)}


async def run_declared(decl: JudgedDeclaration, model: str | Model, options: RunOptions,
                       dataset: Dataset | None = None, judges: Sequence[str] | None = None,
                       spec: str | Benchmark | None = None) -> tuple[RunResult, Mapping[str, Any]]:
    """The judged run of a declaration: (the candidate's judged run, results.json's judged summary).
    `judges`: the panel as named (default: --judge, else the benchmark's default judges); `spec`:
    the benchmark as the run named it (a phase of the benchmark itself runs it under that name)."""
    check_kind(decl)
    started = datetime.now(timezone.utc).isoformat()
    named = list(judges if judges is not None else options.judges or decl.default_judges)
    if not named:
        raise GlotbenchError(decl.no_judge())
    own = decl.own_selection
    budget = RunBudget.of(options)  # one --max-cost for every phase, each at its model's prices
    cand_name = model if isinstance(model, str) else model.spec
    priced = {spec for spec, _, _ in options.model_prices}
    if unused := sorted(priced - set(named) - {decl.baseline or ""} - {cand_name}):
        raise GlotbenchError(f"--price-of {', '.join(unused)}: no judge or baseline of this run; its judges: "
                             f"{', '.join(named)}" + (f"; its baseline: {decl.baseline}" if decl.baseline else ""))
    if cand_name in priced:
        raise GlotbenchError(f"--price-of {cand_name}: that is the candidate; its prices are --price-in and --price-out")
    check_judged_options(decl.name, options, own_selection=own)
    phase = replace(phase_options(options), out=None, data=None, limit=None)
    cand_spec = model if isinstance(model, str) else model.spec
    out = Path(options.out or f"runs/{decl.out_root}/{datetime.now():%Y%m%d-%H%M%S}-{slug(cand_spec)}")
    # a finished valid run: an error; an invalid or unfinished one is kept aside and runs again
    set_aside_invalid(out, RESULTS, decl.answer_dirs, older=decl.older)
    # bad data: before any model call (a phase that selects its own items loads them itself; the whole
    # data is read again only where a --limit or --subset leaves some out: a verdict file's known ids)
    all_items = (dataset if dataset is not None else decl.load(options.data) if not own or options.limit is not None
                 or options.subset else Dataset(()))
    try:
        selection = None if own else select(all_items, (), limit=options.limit)  # a subset says so in every view
        items = all_items if selection is None else selection.items
        decl.prepare(cand_spec, items, options)
        kept, skipped = await _panel(decl, named, cand_spec, model, options)
        judge_validation = validation(kept, decl.lang, options.judge_cards)  # a bad cards directory fails here
        done: dict[str, RunResult] = {}
        validity: dict[str, Any] = {}
        while (step := decl.next_phase(cand_spec, items, done)) is not None:
            runner: str | Model = (model if step.role == "candidate" else decl.baseline or "")
            who, cand = (cand_spec, True) if step.role == "candidate" else (decl.baseline or "", False)
            if not isinstance(runner, str):  # the candidate's object: closed once, after its last phase
                runner = _KeptOpen(runner)
            task: str | Benchmark | None = _benchmark(step.task, decl.name) if step.task is not None else spec
            if task is None:  # a caller's error, not a user's
                raise ValueError(f"{decl.name}: a phase of the judged benchmark itself needs `spec`")
            if step.items is None:  # a plain run's own selection, data and options
                res = await evaluate_phase(task, runner, budget.options(replace(options, out=str(out / step.directory),
                                                                                phase=step.name), who, cand), dataset=dataset)
                items = res.dataset if res.dataset is not None else items
            else:
                res = await evaluate_phase(task, runner, budget.options(replace(phase, out=str(out / step.directory),
                                                                                phase=step.name), who, cand),
                                           dataset=step.items)
            budget.charge(step.name, who, res.results, cand)
            _not_stopped(decl.name, step.name, res, budget)
            done[step.name] = res
            validity[step.validity_key or step.name] = res.results.get("validity")
    finally:
        if not isinstance(model, str):
            await model.aclose()
    ctx = JudgedContext(cand_spec, tuple(named), tuple(kept), tuple(skipped), all_items, items, selection, done,
                        validity, judge_validation, options.bootstrap_resamples, options, decl.judged_metrics)
    games = decl.games(ctx)
    runs = await run_panel(_benchmark(decl.judge_games, decl.name), games, kept, judge_options(phase, decl.sampling), out,
                           budget, decl.name)
    outcome = decl.judged_score(ctx, games, runs)
    write_judged(out, decl.judge_pipeline, outcome.summary, outcome.base,
                 {**{name: run.out_dir.name for name, run in done.items()},
                  **{f"judge {judge}": run.out_dir.name for judge, run in runs.items()}},
                 outcome.stats, outcome.metrics, decl.judged_metrics,
                 run=JudgedRun(options, spec, all_items, started, list(sys.argv)), cost=budget.block())
    return RunResult(out, read_results(out), tuple(outcome.samples), outcome.dataset), outcome.summary


def _not_stopped(name: str, phase: str, res: RunResult, budget: RunBudget) -> None:
    """A phase cut short by --max-cost (its record's `status: stopped`) stops the judged run there, its
    phases kept and no results.json written (an unfinished run: the same command resumes it): its
    items not asked would be scored as unanswered (0 for every judge) or left unjudged, and the run
    written complete and valid."""
    if res.results.get("status") == "stopped":
        not_sent = (res.results.get("stopped") or {}).get("not_sent", "some")
        raise GlotbenchError(f"{name}: its {phase} phase was stopped by --max-cost ({not_sent} requests not sent): "
                             f"{budget.stop_text()}; the judged run is not scored (its phases are kept in "
                             f"{res.out_dir.parent}); raise --max-cost and run the same command again (what was "
                             "answered comes from the cache)")


async def _panel(decl: JudgedDeclaration, named: list[str], cand_spec: str, model: str | Model,
                 options: RunOptions) -> tuple[list[str], list[str]]:
    """The judges kept and skipped (the candidate, its family where declared, a contestant)."""
    cand = (None if decl.answered_elsewhere(cand_spec) else
            load_model(model, **model_options(options)) if isinstance(model, str) else model)
    base = load_model(decl.baseline, **model_options(options)) if decl.baseline else None
    try:
        kept, skipped = await select_judges(named, cand_spec, cand, options, decl.self_judging,
                                            check=lambda judge: decl.check_endpoints and isinstance(judge, OpenAICompatModel),
                                            contestants=(base,) if base is not None else ())
    finally:
        if base is not None:
            await base.aclose()
        if isinstance(model, str) and cand is not None:
            await cand.aclose()
    if not kept:
        raise GlotbenchError(decl.no_panel(cand_spec, skipped))
    return kept, skipped


class _KeptOpen:
    """A model object lent to a phase that must not close it (a later phase asks it again)."""

    def __init__(self, model: Model) -> None:
        self._model = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    async def aclose(self) -> None:
        return None


def judge_options(phase: RunOptions, sampling: JudgeSampling) -> RunOptions:
    """The judges' phase options: their own sampling (or the run's: `JudgeSampling.own`), never the
    answers' --max-tokens."""
    if not sampling.own:
        return replace(phase, repeats=sampling.repeats, max_tokens=None)
    return replace(phase, repeats=sampling.repeats, temperature=sampling.temperature, max_tokens=None,
                   seed=sampling.seed, stop=(), structured_output=False, thinking=None)


def _benchmark(task: ScoredBenchmark, name: str) -> Benchmark:
    """A declaration's task as the engine runs it: a Benchmark (judges/ sits below benchmarks/ and
    declares it by the narrower protocol)."""
    if not isinstance(task, Benchmark):
        raise TypeError(f"{name}: a judged declaration's task is a Benchmark, not {type(task).__name__}")
    return task


async def run_panel(bench: Benchmark, dataset: Dataset, judges: Sequence[str], options: RunOptions,
                    out: Path, budget: RunBudget | None = None, name: str = "") -> dict[str, RunResult]:
    """Run every judge (those `select_judges` kept) over `dataset`; one run directory per judge under `out`.
    `budget`: the judged run's cap and prices (each judge at its own; one stopped by the cap stops
    the run there, one error line)."""
    runs: dict[str, RunResult] = {}
    phase = replace(options, data=None, limit=None)
    budget = budget if budget is not None else RunBudget.of(phase)
    for spec in judges:
        step = replace(phase, out=str(out / f"judge-{slug(spec)}"), phase=f"judge {spec}")
        runs[spec] = await evaluate_async(bench, build_judge(spec, options), budget.options(step, spec), dataset=dataset)
        budget.charge(f"judge {spec}", spec, runs[spec].results)
        _not_stopped(name or bench.name, f"judge {spec}", runs[spec], budget)
    return runs


def check_judged_options(name: str, options: RunOptions, own_selection: bool = False) -> None:
    """The run settings a judged benchmark refuses: --subset where the pipeline selects the items
    (arena, AraGen: each phase sets its own), --repeats always (one answer per item is judged: a
    rubric task's answers with repeats had only their last repeat judged, under a repeats-1 signature)."""
    if options.subset is not None and not own_selection:
        raise GlotbenchError(f"{name} takes --limit N (the first N items), not --subset")
    if options.repeats != 1:
        raise GlotbenchError(f"{name} judges one answer per item: --repeats must be 1, got {options.repeats}")


def phase_options(options: RunOptions) -> RunOptions:
    """The run's options as its phases take them: the benchmark's own options and the judges are the
    judged run's, not a phase's (a phase is a plain run)."""
    return replace(options, bench_options=(), judges=(), judge_cards=None)


def write_judged(out: Path, kind: str, summary: Mapping[str, Any], base: Mapping[str, Any],
                 phases: Mapping[str, str], stats: JudgedStats | None = None,
                 metrics: Mapping[str, Mapping[str, Any]] | None = None,
                 rule: JudgedMetrics | None = None, *, run: JudgedRun | None = None,
                 cost: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The judged run's results.json (a rubric task, an arena, AraGen, SEA-MT-Bench, a plugin's): the
    run record every run writes (rundir.schema `results_record`: the run's benchmark with its data and
    `--data`, its config with its `--bench-opt`s, argv, versions, bootstrap, cost), as the candidate's
    run (`report.rundata.view_of`: the mean of judges its headline, the candidate's model, counts and
    tokens from its answers' results `base`), with the judges, each phase's directory (relative to
    `out`), the kind's `summary`, the per-item, per-judge values (`stats`, judges/stats.py
    `JudgedStats`) and the metrics over them by name (`metrics`) in its `judged` section
    (rundir.schema.JudgedSection), with the declared rule of those metrics (`rule`, which compare
    pairs two runs' items by). `run`: what the judged run itself was given (`JudgedRun`); `cost`: the
    whole run's (every phase's: `RunBudget.block`), in `judged.cost`. Written once every phase has finished."""
    from glotbench.report.rundata import view_of

    view, _ = view_of(kind, summary, base)
    own = run if run is not None else JudgedRun(RunOptions(), None, Dataset(()), "", [])
    info = own.benchmark_info(base)
    bench = {**info, **view["benchmark"]}
    bench.update({k: v for k, v in info.items() if bench.get(k) is None})  # the view's None left to the run's facts
    o = own.options  # a replayed candidate's answers (AraGen) have no phase config: the run's own settings
    config = {"repeats": o.repeats, "limit": o.limit, "subset": o.subset, "max_failure_rate": o.max_failure_rate,
              "timeout_s": o.timeout_s, "max_retries": o.max_retries, "cache": o.use_cache,
              **view.get("config", {}), "bench_options": dict(o.bench_options),
              **({"max_cost_usd": o.max_cost_usd} if o.max_cost_usd is not None else {})}
    record = run_record(cast(BenchmarkInfo, bench), view["model"], cast(RunConfig, config),
                        own.started or str(view.get("started") or ""), own.argv, None)
    facts: dict[str, Any] = {k: view[k] for k in ("task", "judge_validation") if k in view}
    results = results_record(
        record, status="complete", stopped=None, concurrency=None, batch=None,
        finished=datetime.now(timezone.utc).isoformat(), model=view["model"], signature=view["signature"],
        selection=cast(SelectionRecord, view.get("selection")), validity=cast(ValidityRecord, view.get("validity")),
        data_label=view.get("data_label"),
        facts=facts, headline=view["headline"], metrics=view["metrics"], scores=view["scores"], checks={},
        counts=view["counts"], tokens=view["tokens"], cost=view.get("cost"),
        coverage=base.get("coverage"), timing=cast(Timing, view.get("timing") or {}), versions=versions_used(),
        bootstrap=bootstrap_record(own.options.bootstrap_resamples, DEFAULT_SEED,
                                   "the judged metrics (results.json `judged.metrics`): the percentile bootstrap "
                                   "over items, wilson_fallback where it collapsed (judges/stats.py)"))
    out_record = {**{k: v for k, v in results.items() if v is not None or k in ("data_label", "cost", "coverage")},
                  "judged": {**view["judged"], "phases": dict(phases), "summary": dict(summary),
                             **({"cost": dict(cost)} if cost else {}),
                             **({"metrics": {k: dict(v) for k, v in metrics.items()}} if metrics else {}),
                             **({"stats": stats.record()} if stats is not None else {}),
                             **({"rule": rule.record()} if rule is not None and stats is not None else {})}}
    write_json_atomic(out / RESULTS, out_record)
    return out_record


@dataclass(frozen=True)
class JudgedRun:
    """What a judged run itself was given, for its record: its options (`--data`, `--bench-opt`s, the
    bootstrap, the cap), the benchmark as named (`spec`), every item it could judge (`items`), when it
    started and the command line."""

    options: RunOptions
    spec: str | Benchmark | None
    items: Dataset
    started: str
    argv: list[str]

    def benchmark_info(self, base: Mapping[str, Any]) -> dict[str, Any]:
        """The record's benchmark facts the view leaves out: its spec, its `--data` (absolute), the data
        read (the items it could judge, else its answers' data) and its answers' prompt hash and language."""
        answered = base.get("benchmark") or {}
        data = {k: answered[k] for k in ("data", "data_sha256", "prompt_hash", "language") if answered.get(k) is not None}
        if len(self.items):
            data.update(data=self.items.source, data_sha256=self.items.sha256)
        return {**data, "data_path": data_place(self.options.data),
                "spec": self.spec if isinstance(self.spec, str) else None}
