"""The typed records of a run directory: run.json (`RunJson`), results.json (`Results`) and a
samples.jsonl line (`SampleRecord`; what readers need of one: `SampleRow`, `ReportSampleRow`).

Each record is a TypedDict: the writer builds it (`rundir.records`: the keys in the file's order, a
section that did not happen left out) and readers validate a file against the same class through
pydantic (`glotbench.data`; strict: no "1" for 1, and a number keeps its JSON type, `Number`), so a
damaged or foreign file is one `FILE:LINE: field: problem` error. TypedDicts rather than pydantic
models: defining the ~20 models cost a fully cached 2,000-item re-run 8-10 ms (docs/performance.md,
"The run directory's records"), while these cost nothing until a reader validates a file.

Sections added by later releases (`selection`, `validity`, `data_label`, `prompt_template`,
`stopped`, `concurrency`, `batch`, `cost`, `timing.latency`) are not required, so results.json files
written before them still read; a key a record does not declare is kept as it is (a benchmark's own
facts, `Benchmark.extra_results`, sit between `data_label` and `headline`).
"""

from typing import Annotated, Any, Literal, cast

from pydantic import BeforeValidator, ConfigDict, Field, with_config
from typing_extensions import NotRequired, Required, TypedDict

from glotbench.data import ItemId, NonEmptyStr

Number = int | float  # kept as the JSON type it was written with (a strict float would read 1 as 1.0)
Count = Annotated[int, Field(ge=0)]
_OPEN = ConfigDict(strict=True, extra="allow")


# -- run.json and results.json: what was run ------------------------------------------------------

@with_config(_OPEN)
class BenchmarkInfo(TypedDict, total=False):
    name: Required[NonEmptyStr]
    version: Required[str]
    prompt_hash: str
    data: str | None
    data_sha256: str | None
    data_path: str | None
    spec: str | None  # the name or MODULE:CLASS it was run by; None for an object
    language: str  # the one language group the run covers (Benchmark.run_language), where it is one
    task_file: dict[str, str]  # a user's task file: resolved path, sha256, the run's copy (rundir.keep_task_file)
    files: list[dict[str, str]]  # files options name (spm model, fewshot_data): option, value, path, sha256 (rundir.file_record)


@with_config(_OPEN)
class ModelInfo(TypedDict, total=False):
    """The model's spec and its backend's description (backend, model, endpoint, ...: open)."""

    spec: Required[str]
    latency: str  # what each sample's latency_s measures (models/base.py: REQUEST_LATENCY, LOGLIK_LATENCY)


@with_config(_OPEN)
class RunConfig(TypedDict, total=False):
    """`config`: the generation settings (`GenerateConfig.to_dict`), then the run's options."""

    temperature: Number | None
    max_tokens: int | None  # the reply cap sent (the largest, where prompts cap their own); null: log-likelihood
    max_tokens_min: int  # only when the caps sent differ (a per-item cap)
    max_tokens_setting: int  # only when the caps sent are not the setting (--max-tokens or the benchmark's)
    seed: int | None
    stop: list[str]
    structured_output: bool
    thinking: bool  # only when set
    concurrency: int | Literal["auto"]
    max_concurrency: int  # only with --concurrency auto
    max_cost_usd: Number  # only with --max-cost
    batch: bool  # only with --batch, with batch_discount
    batch_discount: Number
    repeats: int
    limit: int | None
    subset: str | None
    items: int
    max_failure_rate: Number
    phase: str  # only in a judged run's phase (its answers, a judge's verdicts): never a contestant of its own
    timeout_s: Number
    max_retries: int
    cache: bool
    prompt_form: str
    bench_options: dict[str, Any]
    method: str


@with_config(_OPEN)
class PromptPart(TypedDict):
    head: str
    tail: str


@with_config(_OPEN)
class PromptTemplateRecord(TypedDict, total=False):
    """`prompt_template` (engine/prompts.py): each prompt part's shared head and tail."""

    form: Required[Literal["chat", "text"]]
    roles: list[str] | None
    parts: Required[list[PromptPart]]


@with_config(_OPEN)
class RunJson(TypedDict, total=False):
    """run.json: written when the run starts (`status: running`), its status set when it ends."""

    status: str
    benchmark: BenchmarkInfo
    model: Required[ModelInfo]
    config: RunConfig
    started: str
    argv: list[str]
    prompt_template: PromptTemplateRecord | None


# -- results.json: what came of it ----------------------------------------------------------------

@with_config(_OPEN)
class Stopped(TypedDict, total=False):
    """`stopped`: why --max-cost cut the run short (engine/cost.py), and the requests not sent."""

    reason: Required[str]
    cap_usd: Number
    spent_usd_at_stop: Number
    reserved_usd_at_stop: Number
    next_request_worst_case_usd: Number
    message: str
    not_sent: Count


@with_config(_OPEN)
class SelectionRecord(TypedDict, total=False):
    """`selection` (rundir/selection.py): which items were scored."""

    full: Required[bool]
    subset: str | None
    limit: int | None
    n: int | None
    of: int | None
    repeats: int
    items_sha256: str | None
    where_left_out: int  # rows a task's data.where left out (only a task with data.where)
    rows_read: int  # the rows read before it (`of` + `where_left_out`)


@with_config(_OPEN)
class ValidityRecord(TypedDict, total=False):
    """`validity` (rundir/validity.py): the share of samples whose model call failed, and the limit."""

    valid: Required[bool]
    failed: int
    of: int
    unit: str
    failure_share: Number
    kinds: dict[str, int]
    http_status: dict[str, int]
    max_failure_rate: Number
    counts: str
    reason: str  # a judged run with no judged item (rundir/validity.py `combine`)


@with_config(_OPEN)
class DataLabel(TypedDict):
    """`data_label`: bundled data that is not the published benchmark (benchmarks/base.py)."""

    kind: str
    sample: bool
    items: int
    label: str


@with_config(_OPEN)
class MetricInfo(TypedDict, total=False):
    description: str
    show_ci: bool
    label: str | None
    keys: list[str]
    scale: Literal["fraction", "points"]
    lower_is_better: bool  # written only when true (an error or failure rate); absent: higher is better or unknown
    signature: str  # a metric the run's signature names as a part of its own (`learned:`: --metric-checkpoint)


@with_config(_OPEN)
class Counts(TypedDict, total=False):
    samples: Required[int]
    items: Required[int]
    failed: Required[int]
    failures: dict[str, int]
    flags: dict[str, int]
    model_calls: Required[int]
    retries: Required[int]
    cache_hits: Required[int]
    not_sent: Count  # only when the cost cap left requests unsent
    structured_output: dict[str, int] | None


@with_config(_OPEN)
class Tokens(TypedDict, total=False):
    prompt: Required[int]
    completion: Required[int]
    prompt_billed_now: int
    completion_billed_now: int
    not_counted: int  # replies whose tokens the backend could not count


@with_config(_OPEN)
class Timing(TypedDict, total=False):
    run_s: Number
    samples_per_s: Number | None  # samples the model answered in this invocation per second of run_s
    samples_sent: int  # ... how many (its calls and --batch's replies; none, a cached re-run: null speed)
    request_phase_s: Number | None
    latency: str  # what each sample's latency_s measures


@with_config(_OPEN)
class Bootstrap(TypedDict, total=False):
    resamples: int
    confidence: Number
    seed: int
    method: str
    intervals: str


# The kinds of judged run (the record's `judged.kind`, and the judged pipeline a benchmark declares:
# Benchmark.judge_pipeline): the built-in ones, a task's rubric, the arena, AraGen, SEA-MT-Bench's
# turns against a baseline, each with its own summary schema (runfiles.py); any other name is a
# plugin's, whose summary is the panel's (runfiles.JudgedFile) and whose metrics every reader reads
# from `judged.metrics`.
BUILTIN_JUDGED_KINDS = ("rubric", "arena", "aragen", "mt-bench")
JudgedKind = NonEmptyStr


@with_config(_OPEN)
class JudgedSection(TypedDict, total=False):
    """`judged`: a judged run's results.json (its top directory; engine/judged.py). The record
    above it is the candidate's run as every reader reads one (the mean of judges as the headline, the
    candidate's model, its answers' counts and tokens); here, what only a judged run has: its kind,
    the judges whose verdicts are in the score, each phase's directory (relative to the run's), and
    the kind's own summary (a rubric's: runfiles.RubricFile, what `rubric.json` held before)."""

    kind: Required[JudgedKind]
    judges: Required[list[str]]
    phases: dict[str, str]
    baseline: str  # an arena's
    summary: dict[str, Any]
    metrics: dict[str, dict[str, Any]]  # the declared metrics by name (judges/stats.py `judged_metrics`)
    stats: dict[str, Any]  # per item, per judge, the values (judges/stats.py `JudgedStats`, which reads it)
    rule: dict[str, Any]  # the declared rule of `metrics` (judges/stats.py `JudgedMetrics`, which reads it)
    cost: dict[str, Any]  # every phase's cost, their sums and the one --max-cost (engine/cost.py `RunBudget.block`)


@with_config(_OPEN)
class Results(TypedDict, total=False):
    """results.json: written last and atomically; a directory without it is an unfinished run.
    Required: what every reader needs. The keys in the order the file holds them."""

    format: Required[int]
    benchmark: Required[BenchmarkInfo]
    model: Required[ModelInfo]
    config: RunConfig
    started: str
    argv: list[str]
    prompt_template: PromptTemplateRecord | None
    status: str  # "complete", or "stopped" (--max-cost): not a finished run
    stopped: Stopped  # only when stopped
    concurrency: dict[str, Any]  # only with --concurrency auto: engine/concurrency.py summary()
    batch: dict[str, Any]  # only with --batch: engine/batch.py
    finished: str
    signature: Required[NonEmptyStr]
    selection: SelectionRecord
    validity: ValidityRecord
    data_label: DataLabel | None
    # the benchmark's own facts (Benchmark.extra_results) come here, and `input_floor`: the scores of
    # the input unchanged as every answer (Benchmark.input_answer), where the input is a possible answer
    headline: Required[str]
    metrics: Required[dict[str, MetricInfo]]
    scores: Required[dict[str, Any]]
    checks: dict[str, Any]  # glotbench.checks: language, extraction bounds, error types, token premium
    counts: Required[Counts]
    tokens: Required[Tokens]
    cost: dict[str, Any] | None  # engine/cost.py cost_block; None without prices
    coverage: dict[str, Any] | None  # a replay file's coverage
    timing: Timing
    versions: dict[str, str]
    bootstrap: Bootstrap
    judged: JudgedSection  # only in a judged run's top directory


def _complete(v: Any) -> Any:
    if isinstance(v, dict) and v.get("status") != "complete":
        raise ValueError(f"not a finished glotbench run (status: {v.get('status')!r})")
    return v


# The results.json of a completed run (what `runs import` and `build items` read).
FinishedResults = Annotated[Results, BeforeValidator(_complete)]


# -- samples.jsonl --------------------------------------------------------------------------------

@with_config(ConfigDict(strict=True, extra="allow"))
class PromptRecord(TypedDict, total=False):
    """A sample's `prompt`: its fill in the run's template, or the prompt kept whole."""

    fill: list[str]
    text: str | None
    messages: list[dict[str, Any]]
    choices: list[str]


@with_config(_OPEN)
class LearnedSample(TypedDict):
    """A sample's learned-metric score (`run --metric-checkpoint`), as aggregated: metrics/learned.py
    `sample_field`. Lines written before it have none: paired tests then leave the metric out."""

    format: int
    metric: str
    score: Number


@with_config(_OPEN)
class SampleRow(TypedDict, total=False):
    """What `compare` reads of a samples.jsonl line: enough to re-score the recorded reply, and the
    learned metric's stored score."""

    id: Required[ItemId]
    repeat: Count
    output: str | None
    failure: str | None
    finish_reason: str | None
    learned: LearnedSample


@with_config(_OPEN)
class ReportSampleRow(SampleRow, total=False):
    """What the report pages, paired tests and item analysis read of a samples.jsonl line."""

    repeat: Required[Count]  # type: ignore[misc]  # required here: pydantic validates each report row against it
    score: Required[dict[str, float]]
    meta: dict[str, Any]
    prompt: PromptRecord | None


@with_config(_OPEN)
class SampleRecord(TypedDict):
    """A samples.jsonl line as glotbench writes it (`core.Sample.to_record`, whose keys a test holds
    to these, in this order): the item, what was sent and received, the answer and its score."""

    id: ItemId
    repeat: Count
    meta: dict[str, Any]
    input: dict[str, Any] | None
    prompt_form: str | None
    prompt: PromptRecord | None
    output: str | None
    answer: Any
    score: dict[str, Number]
    failure: str | None
    flags: list[str]
    error: str | None
    finish_reason: str | None
    latency_s: Number | None
    tokens: dict[str, int] | None
    retries: int
    cached: bool
    checks: NotRequired[dict[str, Any]]  # the answer's language check (glotbench.checks), where one applies
    learned: NotRequired[LearnedSample]  # the learned metric's score, where the run was scored with one


# -- the writers' side: the records in the files' order ---------------------------------------------

RESULTS_FORMAT = 1
CONFIDENCE = 0.95  # every interval's level: the plain line's and the judged metrics' (stats.bootstrap_many)


def bootstrap_record(resamples: int, seed: int, intervals: str) -> Bootstrap:
    """results.json's `bootstrap`: how the intervals were made (a plain run's and a judged run's)."""
    return {"resamples": resamples, "confidence": CONFIDENCE, "seed": seed, "method": "percentile, items resampled",
            "intervals": intervals}


def run_record(benchmark: BenchmarkInfo, model: ModelInfo, config: RunConfig, started: str, argv: list[str],
               prompt_template: PromptTemplateRecord | None, status: str = "running") -> RunJson:
    """run.json's record."""
    return RunJson(status=status, benchmark=benchmark, model=model, config=config, started=started, argv=argv,
                   prompt_template=prompt_template)


def results_record(run: RunJson, *, status: str, stopped: Stopped | None, concurrency: dict[str, Any] | None,
                   batch: dict[str, Any] | None, finished: str, model: ModelInfo, signature: str,
                   selection: SelectionRecord, validity: ValidityRecord, data_label: DataLabel | None,
                   facts: dict[str, Any], headline: str, metrics: dict[str, MetricInfo], scores: dict[str, Any],
                   checks: dict[str, Any], counts: Counts, tokens: Tokens, cost: dict[str, Any] | None, coverage: dict[str, Any] | None,
                   timing: Timing, versions: dict[str, str], bootstrap: Bootstrap) -> Results:
    """results.json's record: run.json's fields (its status replaced), the sections that happened
    (`stopped`, `concurrency`, `batch` only then), the benchmark's own `facts` before `headline`."""
    return cast(Results, {  # the facts are the benchmark's own keys: no TypedDict names them
        "format": RESULTS_FORMAT,
        **{k: v for k, v in run.items() if k != "status"},
        "status": status,
        **({"stopped": stopped} if stopped is not None else {}),
        **({"concurrency": concurrency} if concurrency is not None else {}),
        **({"batch": batch} if batch is not None else {}),
        "finished": finished, "model": model, "signature": signature, "selection": selection,
        "validity": validity, "data_label": data_label,
        **facts,
        "headline": headline, "metrics": metrics, "scores": scores, "checks": checks,
        "counts": counts, "tokens": tokens,
        "cost": cost, "coverage": coverage, "timing": timing, "versions": versions, "bootstrap": bootstrap,
    })
