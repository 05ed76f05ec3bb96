"""Sweep files: a matrix of models × benchmarks × seeds, validated (pydantic) and expanded to runs.

```yaml
out: runs/my-sweep            # output root: OUT/BENCHMARK/MODEL/seed-S
repeats: 1                    # items repeated within a run (stability), as `run --repeats`
max_failure_rate: 0.05        # above it a run is invalid (as `run --max-failure-rate`) and runs again
seeds: [1, 2]                 # one run per seed (default: one run, the benchmark's seed)
models:
  - spec: openai:qwen3-8b@http://127.0.0.1:8000/v1
    name: qwen3-8b            # label in directories and tables (default: from the spec)
    concurrency: 64           # this endpoint's budget, shared by all runs against it
    thinking: false
    price_in: 0.05            # USD per million tokens, for the cost column
  - spec: vllm:/models/qwen3-32b
    options: {tensor_parallel_size: 2}   # passed to the backend
benchmarks:
  - name: laobench-mcq
    options: {method: loglik} # --bench-opt KEY=VALUE
    data: data/laobench.jsonl
    limit: 500
    subset: quick             # as `run --subset` (recorded as the run's item set)
  - name: laobench-translation
    metric_checkpoint: ckpt/comet22   # as `run --metric-checkpoint DIR` (translation benchmarks only)
```
A run's output directory is fixed by the matrix cell (OUT/BENCHMARK/MODEL/SEED, with `-quick` or
`-limitN` for a subset, so a smoke test never stands for the full run), so a re-run sweep skips
finished runs and resumes unfinished ones from the call cache; a finished run there on other data
is an error before anything runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from glotbench.engine.evaluate import RunOptions
from glotbench.rundir import slug
from glotbench.rundir.validity import DEFAULT_MAX_FAILURE_RATE
from glotbench.errors import GlotbenchError

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark

Scalar = str | int | float | bool


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str = Field(min_length=1)
    name: Optional[str] = None
    concurrency: Optional[int] = Field(None, ge=1, le=100_000)
    timeout: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=0)
    temperature: Optional[float] = Field(None, ge=0)
    max_tokens: Optional[int] = Field(None, ge=1)
    thinking: Optional[bool] = None
    stop: tuple[str, ...] = ()
    structured_output: bool = False
    price_in: Optional[float] = Field(None, ge=0)
    price_out: Optional[float] = Field(None, ge=0)
    api_key_env: Optional[str] = None
    options: dict[str, Scalar] = Field(default_factory=dict)  # backend settings (vllm: tensor_parallel_size...)
    resources: dict[str, float] = Field(default_factory=dict)  # Ray: num_cpus, num_gpus, custom resources

    @field_validator("spec")
    @classmethod
    def _known_backend(cls, v: str) -> str:
        from glotbench.registry import models

        if v.partition(":")[0] not in models():
            raise ValueError(f"unknown model spec {v!r}: it must start with one of {', '.join(models())}")
        if v.startswith("openai:"):  # a base URL without a scheme: refused here, before any run starts
            from glotbench.errors import SpecError
            from glotbench.models.endpoint import parse_endpoint

            try:
                parse_endpoint(v.partition(":")[2], v)
            except SpecError as e:
                raise ValueError(str(e)) from None
        return v

    @property
    def label(self) -> str:
        return self.name or slug(self.spec.split("@", 1)[0])

    @property
    def kind(self) -> str:
        return self.spec.partition(":")[0]

    @property
    def endpoint(self) -> str:
        """What a concurrency budget belongs to: the server's base URL, or the local model."""
        if self.kind == "openai":
            from glotbench.models.endpoint import parse_endpoint

            return parse_endpoint(self.spec.partition(":")[2], self.spec).base_url
        return self.spec


class BenchmarkEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    label: Optional[str] = None
    data: Optional[str] = None
    limit: Optional[int] = Field(None, ge=1)
    subset: Optional[str] = None
    repeats: Optional[int] = Field(None, ge=1)
    options: dict[str, Scalar] = Field(default_factory=dict)
    metric_checkpoint: Optional[str] = None  # a learned translation metric's local checkpoint DIR (engine/learned.py)

    @field_validator("subset")
    @classmethod
    def _known_subset(cls, v: Optional[str]) -> Optional[str]:
        from glotbench.rundir.selection import SUBSETS

        if v is not None and v not in SUBSETS:
            raise ValueError(f"unknown subset {v!r}; available: {', '.join(SUBSETS)}")
        return v

    @field_validator("name")
    @classmethod
    def _known_benchmark(cls, v: str) -> str:
        from glotbench.registry import benchmarks
        from glotbench.tasks.files import is_task_path, task_names

        known = v in benchmarks(hidden=True) or is_task_path(v) or v in task_names()
        if not known and ":" not in v:  # MODULE:CLASS is checked when expanded
            raise ValueError(f"unknown benchmark {v!r}; available: {', '.join([*benchmarks(), *task_names()])}")
        return v

    @property
    def display(self) -> str:
        return self.label or (self.name + "".join(f"-{k}={v}" for k, v in sorted(self.options.items())))


class SlurmSection(BaseModel):
    """`slurm:` of a sweep file: the sbatch options of every run's job (engine/sweep_slurm.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    partition: Optional[str] = None   # --partition
    account: Optional[str] = None     # --account
    qos: Optional[str] = None         # --qos
    constraint: Optional[str] = None  # --constraint
    time: str | int = 240             # --time: minutes, or [D-]HH:MM:SS
    mem_gb: Optional[float] = Field(None, gt=0)  # --mem
    cpus_per_task: Optional[int] = Field(None, ge=1)  # --cpus-per-task (default: the model's num_cpus, else 1)
    gpus_per_node: Optional[int] = Field(None, ge=0)  # --gpus-per-node (default: by model kind)
    additional: dict[str, Scalar] = Field(default_factory=dict)  # any other sbatch option, e.g. {exclude: node3}
    setup: list[str] = Field(default_factory=list)  # shell lines run before each job (module load, venv)
    folder: Optional[str] = None      # job scripts and logs (default: OUT/.slurm)
    cluster: str = Field("slurm", pattern="^(slurm|local|debug)$")  # local/debug: submitit's local executors
    poll_s: float = Field(2.0, gt=0)  # how often the driver checks its jobs

    @field_validator("time")
    @classmethod
    def _time(cls, v: str | int) -> str | int:
        minutes(v)
        return v


def minutes(value: str | int) -> int:
    """Slurm's --time as minutes: an integer, MM, HH:MM:SS or D-HH:MM:SS."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ValueError("time must be at least 1 minute")
        return value
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", str(value).strip())
    if not m:
        raise ValueError(f"time {value!r} is not minutes, HH:MM:SS or D-HH:MM:SS")
    d, a, b, c = (int(x) if x else 0 for x in m.groups())
    # The leading field is unbounded (`90`, `30:00:00`); hours after a day and every later minute or
    # second field are clock fields (`1-25:00:00` and `99:99` are typos, not 2 days or 100 minutes).
    if (m.group(1) and a > 23) or (m.group(3) is not None and b > 59) or (m.group(4) is not None and c > 59):
        raise ValueError(f"time {value!r}: hours after a day are 0-23, minutes and seconds 0-59")
    if m.group(3) is None:  # D-HH or MM
        total = d * 1440 + (a * 60 if m.group(1) else a)
    elif m.group(4) is None:  # MM:SS, or D-HH:MM
        total = d * 1440 + a * 60 + b if m.group(1) else a + (1 if b else 0)
    else:
        total = d * 1440 + a * 60 + b + (1 if c else 0)
    if total < 1:
        raise ValueError("time must be at least 1 minute")
    return total


_UNSEEDED: list[Optional[int]] = [None]  # one run per benchmark and model, unseeded


class SweepSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Optional[str] = None
    out: str = "runs/sweep"
    repeats: int = Field(1, ge=1)
    seeds: list[Optional[int]] = Field(default_factory=lambda: _UNSEEDED.copy(), min_length=1)
    cache: Optional[str] = None       # call cache: a SQLite path (default: the user cache)
    store: Optional[str | bool] = None  # results store URL; false: do not index (default: the user store)
    retries: int = Field(2, ge=0)     # Ray, Slurm: times a failed or killed run is retried
    runs_per_endpoint: int = Field(4, ge=1)  # Ray, Slurm: runs in flight against one endpoint at once
    bootstrap_resamples: int = Field(1000, ge=0)
    max_failure_rate: float = Field(DEFAULT_MAX_FAILURE_RATE, ge=0, le=1)
    judges: list[str] = Field(default_factory=list)  # judged tasks' judges (default: each task's scorer.judges)
    slurm: SlurmSection = SlurmSection()  # --slurm: sbatch options
    models: list[ModelEntry] = Field(min_length=1)
    benchmarks: list[BenchmarkEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> "SweepSpec":
        for what, labels in (("model name", [m.label for m in self.models]),
                             ("benchmark label", [b.display for b in self.benchmarks])):
            dup = sorted({x for x in labels if labels.count(x) > 1})
            if dup:
                raise ValueError(f"duplicate {what} {dup[0]!r}: give each entry its own name/label")
            # a run's directory is the slug of its labels: two labels of one slug (ກ.yaml, ຂ.yaml: the
            # letters a path name drops) would write their runs into one directory, the last one's kept
            dirs: dict[str, str] = {}
            for x in labels:
                if dirs.setdefault(slug(x), x) != x:
                    raise ValueError(f"{what}s {dirs[slug(x)]!r} and {x!r} would share one run directory "
                                     f"({slug(x)!r}): name one of them (`name:`/`label:`) in A-Z, a-z, 0-9, '.', "
                                     "'_' or '-' (a path name keeps only those, and 80 of them)")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError("seeds repeat a value")
        return self


@dataclass(frozen=True)
class Run:
    """One cell of the matrix."""

    run_id: str
    model: ModelEntry
    benchmark: BenchmarkEntry
    seed: int | None
    out_dir: str
    options: RunOptions
    items: int
    repeats: int

    @property
    def calls(self) -> int:
        """Model calls the run makes when nothing is cached: one per item and repeat."""
        return self.items * self.repeats

    @property
    def done(self) -> bool:
        """Finished: a results.json whose run is complete and valid. An invalid run (too many failed
        calls) or one stopped by --max-cost runs again, resuming from the call cache, as `glotbench
        run` with the same --out does (rundir/files.py `finished_run`)."""
        from glotbench.rundir import OLD_SUMMARIES, finished_run, invalid_run

        older = Path(self.out_dir) / OLD_SUMMARIES["rubric"]  # a rubric run of an earlier release: its summary's validity
        return finished_run(self.out_dir) or (older.is_file() and not invalid_run(older))


def _error_line(e: ValidationError, source: str) -> str:
    parts = []
    for err in e.errors():
        loc = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in err["loc"]).replace(".[", "[")
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    more = f" (and {len(parts) - 3} more)" if len(parts) > 3 else ""
    return f"{source}: " + "; ".join(parts[:3]) + more


def parse_sweep(data: Any, source: str = "sweep") -> SweepSpec:
    if not isinstance(data, dict):
        raise GlotbenchError(f"{source}: a sweep file is a mapping with models and benchmarks")
    try:
        return SweepSpec.model_validate(data)
    except ValidationError as e:
        raise GlotbenchError(_error_line(e, source)) from None


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a sweep file (YAML or JSON). Errors name the file and the field."""
    p = Path(path)
    spec = parse_sweep(read_sweep_file(p), str(p))
    base = p.parent
    # A relative data path is looked up next to the sweep file first, then in the working directory,
    # and kept absolute: the run records it, and `compare`, `rescore` or `checks` from another folder
    # read the data again from there.

    def located(data: str | None) -> str | None:
        if not data or Path(data).is_absolute():
            return data
        found = next((c for c in (base / data, Path(data)) if c.exists()), None)
        return str(found.resolve()) if found is not None else data

    fixed_b = [b.model_copy(update={"data": located(b.data), "metric_checkpoint": located(b.metric_checkpoint)})
               for b in spec.benchmarks]
    return spec.model_copy(update={"benchmarks": fixed_b})


def read_sweep_file(path: str | Path) -> Any:
    """A sweep file's YAML (or JSON) as data, not yet validated."""
    import yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise GlotbenchError(f"cannot read the sweep file {p}: {e.strerror or e}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise GlotbenchError(f"{p}{where}: not valid YAML ({problem})") from None
    return data


def expand(spec: SweepSpec, *, count_items: bool = True) -> list[Run]:
    """The runs of a sweep, benchmark-major. Loads each benchmark's data once to count its items
    (bad data fails here, before anything runs)."""
    from glotbench.registry import get_benchmark

    runs: list[Run] = []
    for b in spec.benchmarks:
        opts = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in b.options.items()}
        n_items, data_sha256 = 0, None
        if count_items:
            bench = get_benchmark(b.name, **opts)
            if b.data is not None and not Path(b.data).exists():
                raise GlotbenchError(f"benchmark {b.display}: data file {b.data} does not exist")
            from glotbench.rundir.selection import select

            full = bench.load(b.data)
            n_items, data_sha256 = len(select(full, bench.group_by, limit=b.limit, subset=b.subset).items), full.sha256
            if b.metric_checkpoint is not None:
                from glotbench.engine.learned import open_learned

                try:
                    open_learned(bench, b.metric_checkpoint, weights=False)
                except GlotbenchError as e:
                    raise GlotbenchError(f"benchmark {b.display}: {e}") from None
        repeats = b.repeats or spec.repeats
        built = get_benchmark(b.name, **opts)
        _check_judged_entry(b.display, built, opts, spec.judges)
        judged = bool(spec.judges) and built.judged  # judges go to judged tasks only
        # A subset of the items has a directory of its own: a smoke test (limit: 5) never stands for the
        # cell's full run, nor the full run for a smoke test (rundir/selection.py).
        subset = "-".join(([b.subset] if b.subset else []) + ([f"limit{b.limit}"] if b.limit is not None else []))
        for m in spec.models:
            for seed in spec.seeds:
                cell = (f"seed-{seed}" if seed is not None else "default-seed") + (f"-{subset}" if subset else "")
                out_dir = str(Path(spec.out) / slug(b.display) / slug(m.label) / cell)
                _check_finished_data(out_dir, data_sha256)
                if built.judged:
                    _check_finished_judges(out_dir, spec.judges if judged else built.default_judges)
                _check_finished_settings(out_dir, m.spec, opts, {
                    "temperature": m.temperature, "max_tokens": m.max_tokens, "thinking": m.thinking,
                    "stop": m.stop, "repeats": repeats}, built)
                options = RunOptions(
                    data=b.data, limit=b.limit, subset=b.subset, repeats=repeats, concurrency=m.concurrency,
                    temperature=m.temperature, max_tokens=m.max_tokens, seed=seed, stop=tuple(m.stop),
                    structured_output=m.structured_output, thinking=m.thinking,
                    bench_options=tuple(sorted(opts.items())), timeout_s=m.timeout, max_retries=m.max_retries,
                    cache_path=spec.cache, out=out_dir, price_in_per_mtok=m.price_in,
                    price_out_per_mtok=m.price_out, api_key_env=m.api_key_env, progress=False,
                    bootstrap_resamples=spec.bootstrap_resamples, max_failure_rate=spec.max_failure_rate,
                    judges=tuple(spec.judges) if judged else (), metric_checkpoint=b.metric_checkpoint,
                    # a judge or baseline that is one of the sweep's models is priced at its prices
                    model_prices=tuple((e.spec, e.price_in, e.price_out) for e in spec.models
                                       if e.spec != m.spec and e.price_in is not None and e.price_out is not None
                                       and built.judged and e.spec in {*(spec.judges if judged else built.default_judges),
                                                                       *opts.values()}),
                )
                runs.append(Run(f"{slug(b.display)}/{slug(m.label)}/{cell}", m, b, seed, out_dir, options,
                                n_items, repeats))
    return runs


def _check_judged_entry(name: str, bench: Benchmark, opts: Mapping[str, str], judges: Sequence[str]) -> None:
    """A judged entry that could not start (no judge, the arena's baseline not given) is refused when
    the sweep is read, as a bad option value is, never a failed run after the others ran."""
    if bench.judged and not judges and not bench.default_judges:
        raise GlotbenchError(f"benchmark {name}: it is judged and the sweep names no judge: add `judges: [SPEC]`")
    if missing := [n for n in bench.model_options if n not in opts and n not in bench.optional_model_options]:
        raise GlotbenchError(f"benchmark {name}: needs " + ", ".join(f"options: {{{n}: SPEC}}" for n in missing)
                             + " (a model it is compared with)")


DATA_SUFFIXES = (".jsonl", ".json", ".parquet")


@dataclass(frozen=True)
class Suite:
    """A language's suite: a benchmark entry per family whose datasheet covers the language (with
    the options selecting it), and the families left out, each with its reason."""

    language: str
    benchmarks: tuple[BenchmarkEntry, ...]
    skipped: tuple[tuple[str, str], ...]
    unread: tuple[tuple[str, str], ...] = ()  # what in --data DIR the suite does not read, and why

    def unread_line(self, data_dir: str) -> str | None:
        """One warning line naming every entry of --data DIR that no benchmark of the suite reads."""
        if not self.unread:
            return None
        return (f"--data {data_dir}: {len(self.unread)} not read by the {self.language} suite (it reads NAME.jsonl, "
                f".json or .parquet of each family it runs): " + "; ".join(f"{n} ({why})" for n, why in self.unread))


def language_suite(language: str, data_dir: str | None = None, judges: tuple[str, ...] = ()) -> Suite:
    """Every family covering `language` (registry.families) as a sweep's benchmark entries. With
    `data_dir` (offline), a task file's data is DIR/NAME.jsonl (or .json, .parquet) in the hub's
    schema, and a task without one there is skipped; a built-in runs on its own data. A family whose
    pinned or bundled data lacks the language (its datasheet's `data_only`) runs only on a --data
    file, else is skipped, as is a built-in whose bundled data is only a sample (LaoBench's, DeepSEA's:
    a sample's number is no score of the benchmark), and a family whose data cannot be loaded (offline,
    a file the pinned revision lacks), each named. A judged task with no judge (`judges`, or its scorer.judges) is skipped,
    saying so."""
    from glotbench.languages import checked_group
    from glotbench.registry import families, get_benchmark
    from glotbench.tasks.files import included_task

    try:
        code = checked_group(language)  # zh-TW: zh-Hant's families
    except ValueError as e:
        raise GlotbenchError(f"--language {e}") from None
    if data_dir is not None and not Path(data_dir).is_dir():
        raise GlotbenchError(f"--data {data_dir}: not a folder (the suite's --data is a folder of NAME.jsonl files)")
    entries, skipped = [], []
    read: dict[str, str] = {}  # family -> the file of --data DIR it reads
    problems: dict[str, str] = {}
    found_families = families(code, problems)
    skipped += [(path, f"the task file does not validate ({why}); not known to cover {code}")
                for path, why in problems.items()]
    for fam in found_families:
        assert fam.datasheet is not None  # families(code) keeps only those covering code
        opts = dict(fam.datasheet.options_for(code) or {})
        data = None
        if data_dir is not None:
            found = [Path(data_dir) / f"{fam.name}{suffix}" for suffix in DATA_SUFFIXES]
            data = next((str(f) for f in found if f.is_file()), None)
            if data is None and fam.task_file:
                skipped.append((fam.name, f"no data in {data_dir} ({fam.name}.jsonl, .json or .parquet; offline)"))
                continue
        if data is None and fam.datasheet.needs_data(code):
            skipped.append((fam.name, f"its pinned or bundled data has no {code} rows: give them as "
                                      f"--data DIR/{fam.name}.jsonl"))
            continue
        try:
            bench = get_benchmark(fam.name, **{k: str(v).lower() if isinstance(v, bool) else str(v)
                                              for k, v in opts.items() if v is not None})
        except GlotbenchError as e:
            skipped.append((fam.name, f"cannot be built: {e}"))
            continue
        if data is None and bench.bundled_data == "sample":
            skipped.append((fam.name, f"its bundled data is a sample written for glotbench, not the benchmark: give "
                                      f"the benchmark's rows as --data DIR/{fam.name}.jsonl"))
            continue
        if bench.judged and not judges and not bench.default_judges:
            how = "by a rubric" if bench.judge_pipeline == "rubric" else f"as {bench.judge_pipeline} is"
            skipped.append((fam.name, f"judged {how} and no judge named: give --judge SPEC"))
            continue
        if missing := [n for n in bench.model_options  # the arena's baseline: no default
                       if n not in opts and n not in bench.optional_model_options]:
            skipped.append((fam.name, "needs " + ", ".join(f"options: {{{n}: SPEC}}" for n in missing)
                            + " (a model it is compared with), which a language suite cannot choose"))
            continue
        try:  # a family whose data cannot be had (offline, no such file at the pin) is named, not fatal
            bench.load(data)
        except GlotbenchError as e:
            skipped.append((fam.name, f"its data cannot be loaded: {e}"))
            continue
        label = fam.name + (f"-{code}" if opts else "")
        # a task from an --include-path folder by its file, so Ray and Slurm workers find it too
        entries.append(BenchmarkEntry(name=str(included_task(fam.name) or fam.name), label=label, data=data,
                                      options={k: v for k, v in opts.items() if v is not None}))
        if data is not None:
            read[fam.name] = Path(data).name
    if not entries:
        why = "; ".join(f"{n}: {r}" for n, r in skipped) or "none covers it (glotbench tasks list --language)"
        raise GlotbenchError(f"no benchmark family to run in {code}: {why}")
    return Suite(code, tuple(entries), tuple(skipped), _unread(data_dir, read, skipped, code))


def _unread(data_dir: str | None, ran: dict[str, str], skipped: list[tuple[str, str]],
            code: str) -> tuple[tuple[str, str], ...]:
    """Each entry of the data folder that no benchmark of the suite reads (`ran`: family -> its
    file), with the reason."""
    if data_dir is None:
        return ()
    left = {name for name, _ in skipped}
    out = []
    for p in sorted(Path(data_dir).iterdir()):
        if p.name in ran.values():
            continue
        if p.is_dir():
            why = "a folder (the suite reads the files directly inside --data)"
        elif p.suffix not in DATA_SUFFIXES:
            why = "not .jsonl, .json or .parquet"
        elif p.stem in ran:
            why = f"{ran[p.stem]} is read for {p.stem} instead"
        elif p.stem in left:
            why = f"{p.stem} is skipped"
        else:
            why = f"no family covering {code} is named {p.stem}"
        out.append((p.name, why))
    return tuple(out)


def _check_finished_data(out_dir: str, data_sha256: str | None) -> None:
    """A finished run in a cell's directory is skipped as that cell's run: an error, before anything
    runs, when it scored other data (the entry's data file changed under the same name)."""
    from glotbench.rundir import RESULTS, read_results

    if data_sha256 is None or not (Path(out_dir) / RESULTS).is_file():
        return
    try:
        done = read_results(out_dir)["benchmark"].get("data_sha256")
    except GlotbenchError:  # a results.json that does not read is no finished run: run again in place
        return
    if done and done != data_sha256:
        raise GlotbenchError(f"{out_dir} holds a finished run on other data (SHA-256 {done[:12]}, not "
                             f"{data_sha256[:12]}): move it away, or give the benchmark entry a label of its own")


def _check_finished_settings(out_dir: str, model: str, options: Mapping[str, str],
                             config: Mapping[str, Any], bench: Benchmark) -> None:
    """A finished run in a cell's directory is that cell's run only when it ran the cell's model, with
    its `options:` and the generation settings the sweep gives, on the benchmark as it is now (its
    version; a task file's SHA-256): a labelled entry (or a named model) whose options, spec or
    settings changed, or whose task file was edited, keeps its directory, and was skipped with the old
    run's number."""
    from glotbench.rundir import RESULTS, read_results

    if not (Path(out_dir) / RESULTS).is_file():
        return
    try:
        done = read_results(out_dir)
    except GlotbenchError:  # a results.json that does not read is no finished run: run again in place
        return
    ran = done.get("config") or {}
    differ = [f"model {done['model']['spec']} ≠ {model}"] if done.get("model", {}).get("spec") not in (None, model) else []
    if not done.get("judged"):  # a judged run's record keeps a phase's options and settings, not its own
        kept = {str(k): str(v) for k, v in (ran.get("bench_options") or {}).items()}
        if kept != dict(options):
            differ.append(f"options {kept or '{}'} ≠ {dict(options) or '{}'}")
        if str(done.get("benchmark", {}).get("version")) != str(bench.version):
            differ.append(f"benchmark version {done['benchmark'].get('version')} ≠ {bench.version}")
        stop = config.get("stop") or ()  # the run's stops: the benchmark's own and the sweep's
        if not set(stop) <= set(ran.get("stop") or ()):
            differ.append(f"stop {ran.get('stop')} without {list(stop)}")
        differ += [f"{k} {ran.get(k)} ≠ {v}" for k, v in config.items()
                   if k != "stop" and v is not None and ran.get(k) != v]
    task, was = bench.task_file(), (done.get("benchmark", {}).get("task_file") or {}).get("sha256")
    if task is not None and was:
        from glotbench.loading import sha256_file

        if sha256_file(task) != was:
            differ.append(f"task file {task} edited since (SHA-256 {was[:12]} then)")
    if differ:
        raise GlotbenchError(f"{out_dir} holds a finished run with other settings ({'; '.join(differ)}): move it "
                             "away, or give the benchmark entry (or the model) a label of its own")


def _check_finished_judges(out_dir: str, judges: Sequence[str]) -> None:
    """A finished judged run in a cell's directory is that cell's run only when the sweep names the
    panel it was judged by (its judges, those it skipped included): another panel is another number
    (its signature names its judges), never a finished run to skip."""
    from glotbench.rundir import RESULTS, read_results

    if not judges or not (Path(out_dir) / RESULTS).is_file():
        return
    try:
        judged = read_results(out_dir).get("judged") or {}
    except GlotbenchError:  # a results.json that does not read is no finished run: run again in place
        return
    if not judged:
        return
    done = {*judged.get("judges", ()), *((judged.get("summary") or {}).get("skipped_judges") or ())}
    if done != set(judges):
        raise GlotbenchError(f"{out_dir} holds a finished run judged by {', '.join(sorted(done))}, not by the sweep's "
                             f"{', '.join(sorted(judges))}: move it away, or give the benchmark entry a label of its own")


def endpoint_budgets(spec: SweepSpec) -> dict[str, int]:
    """Concurrency per endpoint: the smallest budget any model on it declares (default: the backend's)."""
    from glotbench.registry import load_model

    out: dict[str, int] = {}
    for m in spec.models:
        budget = m.concurrency
        if budget is None:
            budget = _default_concurrency(m, load_model)
        out[m.endpoint] = min(out.get(m.endpoint, budget), budget)
    return out


def _default_concurrency(m: ModelEntry, load_model: Any) -> int:
    try:
        return int(load_model(m.spec, **m.options).default_concurrency)
    except GlotbenchError:
        raise
    except Exception:  # noqa: BLE001 - a backend that cannot even be described: use 16
        return 16
