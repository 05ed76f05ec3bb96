"""One evaluation, end to end: load items and model, run, aggregate, write the run directory.

The run directory holds `run.json` (written first: config, status), `samples.jsonl` (one line per
sample, appended as each finishes) and `results.json` (written last, atomically). A directory with no
`results.json` is an unfinished run; re-running the command resumes from the call cache.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import platform
import re
import sys
import time
from dataclasses import dataclass
from functools import partial
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from glotbench import __version__
from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset, RunResult, Sample, jsonable
from glotbench.engine.cache import (aggregate_key, code_fingerprint, default_cache_path, json_bytes, open_cache,
                                    storable)
from glotbench.engine.prompts import PromptTemplate, probes, whole
from glotbench.engine.runner import RetryPolicy, Runner, prompt_form
from glotbench.rundir.selection import select
from glotbench.rundir.validity import DEFAULT_MAX_FAILURE_RATE, run_validity
from glotbench.errors import GlotbenchError
from glotbench.metrics.ratio import aggregate as aggregate_metrics
from glotbench.metrics.ratio import interval
from glotbench.models.base import REQUEST_LATENCY, GenerateConfig, Model
from glotbench.registry import get_benchmark, load_model
from glotbench.stats import DEFAULT_SEED, bootstrap_many, prepare_draws, wilson

RESULTS_FORMAT = 1
# The code an aggregate depends on besides the benchmark's and its metrics' classes: the files that
# define these are hashed into the aggregate's cache key (`code_fingerprint`), so an aggregate made
# with other interval code (the percentile bootstrap before Wilson) is never served.
AGGREGATE_CODE = (bootstrap_many, wilson, aggregate_metrics, interval)
THINKING = {None: "default", True: "on", False: "off"}


@dataclass(frozen=True)
class RunOptions:
    """Everything a run is configured with; all of it is recorded in results.json."""

    data: str | None = None
    limit: int | None = None
    subset: str | None = None  # a named subset of the data (`quick`): rundir/selection.py
    repeats: int = 1
    concurrency: int | str | None = None  # default: the model backend's; "auto": engine/concurrency.py
    max_concurrency: int = 64  # the ceiling of --concurrency auto
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    structured_output: bool = False
    thinking: bool | None = None
    bench_options: tuple[tuple[str, str], ...] = ()
    timeout_s: float = 120.0
    max_retries: int = 5
    use_cache: bool = True
    cache_path: str | None = None
    out: str | None = None
    price_in_per_mtok: float | None = None
    price_out_per_mtok: float | None = None
    api_key_env: str | None = None
    progress: bool = True
    bootstrap_resamples: int = 1000
    max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE  # above it the run is invalid: rundir/validity.py
    max_cost_usd: float | None = None  # engine/cost.py
    batch: bool = False  # the provider's Batch API (engine/batch.py)
    batch_discount: float = 0.5  # the batch price as a fraction off the listed prices
    batch_poll_s: float = 30.0

    def __post_init__(self) -> None:
        """Refuse values that would make a run meaningless or hang, before any model is called. Messages
        name the command-line option (`--timeout`), which is how most users set them."""
        import math

        def bad(name: str, value: Any, rule: str) -> None:
            option = _OPTION_NAMES.get(name, "--" + name.replace("_", "-"))
            raise GlotbenchError(f"{option} must be {rule}, got {value!r}")

        if self.concurrency == "auto":
            if not self.max_concurrency or isinstance(self.max_concurrency, bool) \
                    or not isinstance(self.max_concurrency, int) or self.max_concurrency < 1:
                bad("max_concurrency", self.max_concurrency, "a whole number >= 1")
        elif isinstance(self.concurrency, str):
            bad("concurrency", self.concurrency, "a whole number >= 1 or auto")
        for name, low in (("limit", 1), ("repeats", 1), ("concurrency", 1), ("max_tokens", 1),
                          ("max_retries", 0), ("bootstrap_resamples", 0)):
            if name == "concurrency" and self.concurrency == "auto":
                continue
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
                bad(name, value, f"at least {low}" if isinstance(value, int) and not isinstance(value, bool)
                    else f"a whole number >= {low}")
        for name, allow_zero in (("timeout_s", False), ("temperature", True), ("price_in_per_mtok", True),
                                 ("price_out_per_mtok", True), ("max_cost_usd", True), ("batch_poll_s", False)):
            value = getattr(self, name)
            if value is None and name != "timeout_s":
                continue
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                and (value >= 0 if allow_zero else value > 0)
            if not ok:
                bad(name, value, "a finite number >= 0" if allow_zero else "a finite number > 0")
        rate = self.max_failure_rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            bad("max_failure_rate", rate, "a number from 0 to 1 (a share of the items)")
        if not (isinstance(self.batch_discount, (int, float)) and 0 <= self.batch_discount < 1):
            bad("batch_discount", self.batch_discount, "a number from 0 to below 1")
        if self.max_cost_usd is not None and (self.price_in_per_mtok is None or self.price_out_per_mtok is None):
            raise GlotbenchError("--max-cost needs --price-in and --price-out (USD per million tokens): "
                                 "the cost is counted from the reported token usage")
        if self.max_cost_usd is not None and self.batch:
            raise GlotbenchError("--max-cost and --batch cannot be combined: a batch is submitted, and "
                                 "billed, as a whole; estimate it first with --dry-run --batch")


_OPTION_NAMES = {"timeout_s": "--timeout", "price_in_per_mtok": "--price-in", "price_out_per_mtok": "--price-out",
                 "bootstrap_resamples": "--resamples", "max_failure_rate": "--max-failure-rate",
                 "max_cost_usd": "--max-cost", "batch_poll_s": "--batch-poll"}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:60] or "model"


def _versions() -> dict[str, str]:
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


def _prepare_finish(n_items: int, options: RunOptions) -> None:
    """What the end of a run needs, prepared in a worker thread from the first request on, while
    the CPU mostly waits for replies: numpy (imported by nothing before the aggregate), the
    bootstrap's resample draws (they depend only on the item count and the seed) and rich, which
    prints the results table. A fully cached run makes no request and does all of it at the end.
    Measured on a 2,000-item run at 100 ms latency (docs/performance.md)."""
    prepare_draws(n_items, options.bootstrap_resamples, DEFAULT_SEED)
    import rich.console  # noqa: F401
    import rich.table  # noqa: F401


def _sacrebleu_version() -> str | None:
    """sacrebleu's installed version, imported or not (a cached re-run does not import it)."""
    from importlib import metadata

    try:
        return metadata.version("sacrebleu")
    except metadata.PackageNotFoundError:
        return None


def _aggregate(bench: Benchmark, full: Dataset, samples: list[Sample], metrics: Any, runner: Runner,
               options: RunOptions, versions: dict[str, str]) -> dict[str, Any]:
    """The benchmark's aggregate, read from the call cache when every sample's score is stored there
    and this exact aggregate was computed before (engine/cache.py `aggregate_key`), else computed
    (and stored when it can be)."""
    cache = runner.cache
    keys = runner.score_keys
    if cache is None or runner.scorer_id is None or len(keys) != len(samples):
        return bench.aggregate(samples, full, resamples=options.bootstrap_resamples)
    code = code_fingerprint(type(bench), *(type(mt) for mt in metrics), *AGGREGATE_CODE)
    # What the aggregate reads: each sample (its score key names the request, the reply and the
    # scorer, so everything the sample holds but its item's meta: engine/cache.py `score_key`), the
    # dataset (an in-memory one, a judge phase's games, has no file hash), the benchmark's
    # settings (an object's attributes, the content of a file an option names: DeepSEA's groups), its
    # metrics, and the numeric libraries (the bootstrap's draws, sacrebleu's formulas).
    settings = {"resamples": options.bootstrap_resamples, "seed": DEFAULT_SEED, "confidence": 0.95,
                "bench": type(bench).__module__ + ":" + type(bench).__qualname__,
                "options": sorted(options.bench_options),
                "state": jsonable({k: v for k, v in getattr(bench, "__dict__", {}).items() if not k.startswith("_")}),
                "group_by": list(bench.group_by), "pooled_overall": bench.pooled_overall,
                "metrics": [[type(mt).__qualname__, jsonable(mt)] for mt in metrics],
                "versions": [versions.get("python"), versions.get("numpy"), _sacrebleu_version()],
                "dataset": [full.source, full.sha256, len(full), jsonable(full.facts)]}
    content = ([keys[(s.id, s.repeat)], s.repeat, dict(s.meta)] for s in samples)
    key = None if code is None else aggregate_key(runner.scorer_id, content, settings, code)
    if key is None or " object at 0x" in json.dumps(settings, default=repr):  # code or state with no stable text
        return bench.aggregate(samples, full, resamples=options.bootstrap_resamples)
    stored = cache.get_aggregate(key)
    if isinstance(stored, dict):
        return stored
    scores = bench.aggregate(samples, full, resamples=options.bootstrap_resamples)
    blob = storable(scores)
    if blob is not None:
        try:
            cache.put_aggregate(key, blob)
        except Exception as e:  # noqa: BLE001 - a locked or read-only cache: recomputed next time
            logging.getLogger(__name__).debug("aggregate not stored: %s", e)
    return scores


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    text = json.dumps(data, ensure_ascii=False, indent=2)
    try:
        blob = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a data file: written as its \u escape
        blob = json.dumps(data, ensure_ascii=True, indent=2).encode("ascii")
    tmp.write_bytes(blob)
    os.replace(tmp, path)


def invalid_run(path: Path) -> bool:
    """A results.json that records an invalid run: the same command may finish it in place."""
    try:
        validity = json.loads(path.read_text(encoding="utf-8")).get("validity")
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(validity, dict) and validity.get("valid") is False


def set_aside_invalid(out_dir: Path, summary: str) -> bool:
    """A judged run's directory whose `summary` file (arena.json, aragen.json) records an invalid
    run is renamed to `DIR.invalid-TIME` (kept, not deleted), so the same command runs it again in
    `out_dir`, its successful calls from the cache. True when it was; False when there is no such
    file; an error when the run there is finished and valid."""
    path = out_dir / summary
    if not path.exists():
        return False
    if not invalid_run(path):
        raise GlotbenchError(f"{out_dir} already holds a finished run; choose another --out")
    os.replace(out_dir, out_dir.with_name(f"{out_dir.name}.invalid-{datetime.now():%Y%m%d-%H%M%S}"))
    return True


def _prepare_out_dir(bench: Benchmark, model: Model, out: str | None) -> Path:
    if out is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        out_dir = Path("runs") / bench.name / f"{stamp}-{_slug(model.spec)}"
        n = 1
        while out_dir.exists():
            n += 1
            out_dir = out_dir.with_name(f"{stamp}-{_slug(model.spec)}-{n}")
    else:
        out_dir = Path(out)
        if finished_run(out_dir):
            raise GlotbenchError(f"{out_dir} already holds a finished run; choose another --out")
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir


def run_status(out_dir: str | Path) -> str | None:
    """The status a run directory's results.json records ("complete", or "stopped": a run cut short by
    --max-cost, which the same command resumes); None without a readable one."""
    try:
        status = json.loads((Path(out_dir) / "results.json").read_text(encoding="utf-8")).get("status")
    except (OSError, ValueError, AttributeError):
        return None
    return status if isinstance(status, str) else None


def finished_run(out_dir: str | Path) -> bool:
    """The finished-run rule: a results.json whose status is complete and whose run is valid. An
    invalid run (too many failed calls) and one stopped by --max-cost are run again in place by the
    same command, resuming from the call cache; `--out` refuses only a finished run."""
    path = Path(out_dir) / "results.json"
    return path.is_file() and run_status(out_dir) == "complete" and not invalid_run(path)


def model_options(options: RunOptions) -> dict[str, Any]:
    """What the model backend is built with (`--concurrency auto` sizes its pool to the ceiling)."""
    opts: dict[str, Any] = {"timeout_s": options.timeout_s}
    if options.concurrency == "auto":
        opts["concurrency"] = options.max_concurrency
    elif options.concurrency is not None:
        opts["concurrency"] = options.concurrency
    if options.api_key_env is not None:
        opts["api_key_env"] = options.api_key_env
    return opts


def generation_config(bench: Benchmark, options: RunOptions) -> GenerateConfig:
    d = bench.default_config
    return GenerateConfig(
        temperature=d.temperature if options.temperature is None else options.temperature,
        max_tokens=d.max_tokens if options.max_tokens is None else options.max_tokens,
        seed=options.seed if options.seed is not None else d.seed,
        stop=tuple(dict.fromkeys(d.stop + tuple(options.stop))),
        structured_output=options.structured_output,
        thinking=options.thinking,
    )


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
                         options: RunOptions = RunOptions(), *, dataset: Dataset | None = None) -> RunResult:
    """Run a benchmark (a registered name, `pkg.mod:Class`, or an object) on a model. `dataset`:
    items already loaded (a judge phase's games); default: `benchmark.load(options.data)`. Returns
    the results and the samples in item order."""
    bench = get_benchmark(benchmark, **dict(options.bench_options)) if isinstance(benchmark, str) else benchmark
    full = bench.load(options.data) if dataset is None else dataset
    selection = select(full, bench.group_by, limit=options.limit, subset=options.subset, repeats=options.repeats)
    items = selection.items
    phash = bench.prompt_hash(full)
    # The thinking mode changes the numbers: in the signature, so `compare` refuses to mix modes.
    # A run on fewer items than the dataset's names its item set too (a full run's stays as it was);
    # an item's score does not depend on the selection, so the scorer (cached scores) does not.
    scorer_signature = bench.signature(full, phash) + f"|thinking:{THINKING[options.thinking]}"
    signature = scorer_signature + selection.signature_part()
    m = load_model(model, **model_options(options)) if isinstance(model, str) else model
    auto = options.concurrency == "auto"
    concurrency = options.max_concurrency if auto else (options.concurrency or m.default_concurrency)
    try:
        coverage = (m.coverage([it.id for it in full], [it.id for it in items], options.repeats)  # type: ignore[attr-defined]
                    if hasattr(m, "coverage") else None)
    except BaseException:
        await m.aclose()
        raise
    config = generation_config(bench, options)
    cache = open_cache(options.cache_path or default_cache_path()) if options.use_cache else None
    try:
        out_dir = _prepare_out_dir(bench, m, options.out)
        form = prompt_form(bench, m)  # what was sent is kept: a template here, a fill per sample
        template = PromptTemplate.learn((bench.render(it.to_public()) for it in probes(items)), form)
        started = datetime.now(timezone.utc)
        run_info = {
            "status": "running",
            "benchmark": {"name": bench.name, "version": bench.version, "prompt_hash": phash,
                          "data": full.source, "data_sha256": full.sha256, "data_path": options.data,
                          "spec": benchmark if isinstance(benchmark, str) else None},
            "model": {"spec": m.spec, **m.description()},
            "config": {**config.to_dict(), "concurrency": "auto" if auto else concurrency,
                       **({"max_concurrency": options.max_concurrency} if auto else {}),
                       **({"max_cost_usd": options.max_cost_usd} if options.max_cost_usd is not None else {}),
                       **({"batch": True, "batch_discount": options.batch_discount} if options.batch else {}),
                       "repeats": options.repeats,
                       "limit": options.limit, "subset": options.subset, "items": len(items),
                       "max_failure_rate": options.max_failure_rate, "timeout_s": options.timeout_s,
                       "max_retries": options.max_retries, "cache": options.use_cache,
                       "prompt_form": m.prompt_form(), "bench_options": dict(options.bench_options),
                       "method": bench.method},
            "started": started.isoformat(),
            "argv": sys.argv,
            "prompt_template": None if template is None else template.to_json(),
        }
        _write_json_atomic(out_dir / "run.json", run_info)
        samples_path = out_dir / "samples.jsonl"
        # Where each sample's line lies in the file (not the line itself: 10k lines are ~13 MB).
        lines: list[tuple[str, int, int, int]] = []
        written = 0
        with samples_path.open("wb") as sink:
            def on_sample(sample: Sample) -> None:
                nonlocal written
                line = json_bytes(sample.to_record()) + b"\n"
                sink.write(line)  # flushed every 50 ms
                lines.append((sample.id, sample.repeat, written, len(line)))
                written += len(line)

            from glotbench.engine.progress import ProgressBar

            prepared: list[asyncio.Task] = []

            def prepare() -> None:  # once the first request is out: the CPU waits on replies from then on
                prepared.append(asyncio.ensure_future(asyncio.to_thread(_prepare_finish, len(items), options)))

            with ProgressBar(f"{bench.name} · {m.spec}", enabled=options.progress,
                             total=len(items) * options.repeats) as bar:
                gate = budget = None
                if auto:
                    from glotbench.engine.concurrency import AdaptiveLimit

                    gate = AdaptiveLimit(options.max_concurrency)
                if options.max_cost_usd is not None:
                    from glotbench.engine.cost import cost_cap

                    budget = cost_cap(options, m, bench)
                runner = Runner(bench, m, config, concurrency=concurrency, repeats=options.repeats,
                                cache=cache, retry=RetryPolicy(max_retries=options.max_retries),
                                on_sample=on_sample, on_progress=bar.update, on_flush=sink.flush,
                                on_first_call=prepare, scorer_id=f"glotbench:{__version__}|{scorer_signature}",
                                prompt_record=template.record if template else partial(whole, form),
                                gate=gate, budget=budget)
                t0 = time.perf_counter()
                batch_info = None
                try:
                    if options.batch:
                        from glotbench.engine.batch import prefill_from_batch

                        batch_info = await prefill_from_batch(runner, items, out_dir, options)
                    samples = await runner.run(iter(items), len(items))
                finally:
                    for task in prepared:
                        await task
                wall = time.perf_counter() - t0
        # Rewrite the samples in item order (they were appended in completion order; a fully cached
        # run appends them in order already).
        order = {it.id: i for i, it in enumerate(items)}
        by_item = [(order[x[0]], x[1]) for x in lines]
        if any(by_item[i] > by_item[i + 1] for i in range(len(by_item) - 1)):
            lines.sort(key=lambda x: (order[x[0]], x[1]))
            tmp = samples_path.with_suffix(".jsonl.tmp")
            with samples_path.open("rb") as src, tmp.open("wb") as dst:
                for _, _, offset, size in lines:
                    src.seek(offset)
                    dst.write(src.read(size))
            os.replace(tmp, samples_path)
        samples.sort(key=lambda x: (order[x.id], x.repeat))

        c = runner.counters
        metrics = bench.metrics_for(full)
        versions = _versions()
        scores = _aggregate(bench, full, samples, metrics, runner, options, versions)
        from glotbench.engine.cost import cost_block

        cost = cost_block(options, c, batch_info, budget)
        stopped = budget.stopped if budget is not None and c.not_sent else None
        if stopped is not None:
            stopped = {**stopped, "not_sent": c.not_sent}
        results = {
            "format": RESULTS_FORMAT,
            **{k: v for k, v in run_info.items() if k != "status"},
            "status": "complete" if stopped is None else "stopped",
            **({"stopped": stopped} if stopped is not None else {}),
            **({"concurrency": gate.summary()} if gate is not None else {}),
            **({"batch": batch_info} if batch_info is not None else {}),
            "finished": datetime.now(timezone.utc).isoformat(),
            "model": {"spec": m.spec, **m.description()},
            "signature": signature,
            "selection": selection.record(),
            "validity": run_validity(c.call_failures, c.done, options.repeats, options.max_failure_rate,
                                     c.call_failure_status),
            "data_label": bench.data_label(full),
            **bench.extra_results(full),
            "headline": metrics[0].name,
            "metrics": {mt.name: {"description": mt.description, "show_ci": mt.show_ci,
                                  "label": mt.label or mt.name, "keys": list(mt.keys), "scale": mt.scale}
                        for mt in metrics},
            "scores": scores,
            "counts": {
                "samples": c.done, "items": len(items), "failed": c.errors,
                "failures": dict(c.failures), "flags": dict(c.flags),
                "model_calls": c.calls, "retries": c.retries, "cache_hits": c.cache_hits,
                **({"not_sent": c.not_sent} if c.not_sent else {}),
                "structured_output": dict(runner.structured_modes) or None,
            },
            "tokens": {"prompt": c.prompt_tokens, "completion": c.completion_tokens,
                       "prompt_billed_now": c.new_prompt_tokens,
                       "completion_billed_now": c.new_completion_tokens},
            "cost": cost,
            "coverage": coverage,
            "timing": {
                "run_s": round(wall, 3),
                "samples_per_s": round(c.done / wall, 2) if wall else None,
                # From the first model call sent to the last sample scored (excludes model loading).
                "request_phase_s": (round(runner.last_done_at - runner.first_call_at, 3)
                                    if runner.first_call_at and runner.last_done_at else None),
                # what each sample's latency_s measures (a batched backend: a share of its batch)
                "latency": m.description().get("latency", REQUEST_LATENCY),
            },
            "versions": versions,
            "bootstrap": {"resamples": options.bootstrap_resamples, "confidence": 0.95,
                          "seed": DEFAULT_SEED, "method": "percentile, items resampled",
                          "intervals": "each estimate's ci_method: wilson (a proportion of 0/1 items), "
                                       "bootstrap, or wilson_fallback (the bootstrap collapsed)"},
        }
        _write_json_atomic(out_dir / "results.json", results)
        _write_json_atomic(out_dir / "run.json", {**run_info, "status": results["status"]})
        return RunResult(out_dir, results, tuple(samples), items)
    finally:
        await m.aclose()
        if cache is not None:
            cache.close()
