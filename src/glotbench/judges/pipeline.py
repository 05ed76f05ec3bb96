"""What a judged benchmark declares, and what the one judged pipeline (engine/judged.py) does with it.

The pipeline owns the flow every judged run shares: its checks, the run directory (an unfinished or
invalid one set aside), the judge panel (self-judging, a judge never a contestant), the judges' cards,
the item selection, the answer phases, the judge phases, each phase's validity and the one
results.json. The benchmark declares the parts that are its own (`JudgedDeclaration`):

| part              | declared as                                                      |
|-------------------|------------------------------------------------------------------|
| its own checks    | `prepare` (before any call: a file of answers, its settings)     |
| its answer phases | `next_phase`: the next `AnswerPhase` from those done             |
| its games         | `games`: the judge task's items, built from the answers          |
| the judges' task  | `judge_games`, and the judges' sampling (`JudgeSampling`)        |
| its statistics    | `judged_score`: per item, per judge, the values (`JudgedStats`)  |
| its metrics       | `judged_metrics`: which metrics over them (`JudgedMetrics`: mean |
|                   | of judges, each judge, its rule), computed by judges/stats.py    |

A phase is an ordinary run (cached, resumable, in its own directory under the run's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Protocol, Sequence

from glotbench.contract import ScoredBenchmark
from glotbench.core import Dataset, RunResult
from glotbench.errors import GlotbenchError
from glotbench.judges.panel import SelfJudging
from glotbench.judges.stats import JudgedMetrics, JudgedStats, judged_metrics
from glotbench.rundir.schema import JudgedKind


@dataclass(frozen=True)
class AnswerPhase:
    """One answer phase: `task` (a benchmark) run by the candidate or the baseline over `items`, in
    OUT/`directory`; `name` is its key in results.json's phases and validity."""

    name: str
    directory: str
    role: Literal["candidate", "baseline"]
    task: ScoredBenchmark | None  # a Benchmark (benchmarks/ sits above judges/); None: the judged benchmark itself, as the run named it
    items: Dataset | None  # None: the phase loads and selects its items as a plain run does (`own_selection`)
    validity_key: str = ""  # its key in the run's validity (default: `name`)


@dataclass(frozen=True)
class JudgeSampling:
    """The judges' own sampling (the answers' --temperature, --max-tokens... are not theirs)."""

    repeats: int = 1
    temperature: float | None = None
    seed: int | None = None
    own: bool = True  # False: the run's sampling (--temperature, --seed...), less its --max-tokens


@dataclass(frozen=True)
class JudgedContext:
    """What the pipeline has done when it asks the benchmark for its games and its score."""

    candidate: str  # the candidate's spec
    judges: tuple[str, ...]  # as named
    kept: tuple[str, ...]  # the panel: those not skipped
    skipped: tuple[str, ...]
    all_items: Dataset  # every item of the data (beyond a --limit; with `own_selection`, only where a --limit or --subset is given)
    items: Dataset  # the items selected (with `own_selection`: the last answer phase's)
    selection: Any  # rundir.selection.Selection (None with `own_selection`: the phase's run records its own)
    phases: Mapping[str, RunResult]  # answer phases by name, in order
    validity: Mapping[str, Any]  # each phase's validity, by name
    judge_validation: Any
    resamples: int
    options: Any  # the run's options (engine/options.py RunOptions: engine/ sits above judges/)
    declared: JudgedMetrics = JudgedMetrics()  # the benchmark's `judged_metrics`

    def measure(self, stats: JudgedStats) -> dict[str, dict[str, Any]]:
        """The metrics the benchmark declares over its values, by name, with the run's bootstrap
        (judges/stats.py `judged_metrics`): a declaration names them, never computes them."""
        return judged_metrics(stats, self.declared, resamples=self.resamples)


@dataclass(frozen=True)
class JudgedOutcome:
    """The benchmark's score of a judged run: results.json's `judged.summary`, the answers' results
    the candidate's run is read from (`base`), the samples and items `evaluate_async` returns, the
    per-item, per-judge values (`stats`, results.json's `judged.stats`) and the metrics over them
    (`metrics`: judges/stats.py `judged_metrics`, results.json's `judged.metrics`)."""

    summary: Mapping[str, Any]
    base: Mapping[str, Any]
    samples: Sequence[Any]
    dataset: Dataset | None
    stats: JudgedStats | None = None
    metrics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


class Declared:
    """The defaults of a declaration's hooks (a benchmark that declares its judged run derives from it),
    and its self-judging policy: the options `skip_same_family` and `families` (SPEC=FAMILY;...), or
    a caller's policy object (`panel_policy`)."""

    skip_same_family: bool = False
    families: str = ""
    panel_policy: SelfJudging | None = None

    @property
    def self_judging(self) -> SelfJudging:
        return self.panel_policy or SelfJudging.declared(self.skip_same_family, self.families)

    def no_panel(self, candidate: str, skipped: Sequence[str]) -> str:
        return (f"no judge produced a valid verdict: every judge was skipped as the candidate or the baseline "
                f"(skipped: {', '.join(skipped)})")

    def prepare(self, candidate: str, items: Dataset, options: Any) -> None:
        return None

    def answered_elsewhere(self, candidate: str) -> bool:
        return False

    check_endpoints: bool = False


class JudgedDeclaration(Protocol):
    """The parts of a judged benchmark's run that are its own (module docstring)."""

    @property
    def judge_pipeline(self) -> JudgedKind:
        """Its kind: results.json's judged.kind (report.rundata reads the summary by it)."""
        ...

    @property
    def name(self) -> str: ...

    @property
    def lang(self) -> str | None:
        """The language the judges judge in (their cards: judges/cards.py)."""
        ...

    @property
    def out_root(self) -> str:
        """runs/ROOT/TIME-MODEL when no --out is given."""
        ...

    @property
    def answer_dirs(self) -> tuple[str, ...]:
        """The answer phases' directories (an unfinished run is set aside by them)."""
        ...

    @property
    def older(self) -> tuple[str, ...]:
        """The summary files of older run directories of this kind."""
        ...

    @property
    def baseline(self) -> str | None:
        """The baseline model's spec (a contestant: never a judge), when a model answers as the baseline."""
        ...

    @property
    def self_judging(self) -> SelfJudging: ...

    @property
    def judge_games(self) -> ScoredBenchmark:
        """The judges' benchmark (a Benchmark: the engine checks it)."""
        ...

    @property
    def sampling(self) -> JudgeSampling: ...

    @property
    def default_judges(self) -> tuple[str, ...]:
        """The panel when no --judge is named."""
        ...

    def load(self, path: str | None) -> Dataset:
        """The items (the bundled ones, or the file at `path`)."""
        ...

    @property
    def own_selection(self) -> bool:
        """The answer phase selects the items itself, as a plain run does (--limit, --subset, --repeats
        and --data its own), rather than the pipeline (--limit only)."""
        ...

    def no_judge(self) -> str:
        """The error when no judge is named."""
        ...

    def no_panel(self, candidate: str, skipped: Sequence[str]) -> str:
        """The error when every judge named is skipped (the candidate, its family, a contestant)."""
        ...

    def prepare(self, candidate: str, items: Dataset, options: Any) -> None:
        """The benchmark's own checks of the run, before any model is called (a file of answers)."""
        ...

    def answered_elsewhere(self, candidate: str) -> bool:
        """The candidate's answers come from a file (AraGen's replay:FILE): no model answers, and the
        panel's self-judging compares families only."""
        ...

    @property
    def check_endpoints(self) -> bool:
        """The panel checks each HTTP judge's endpoint before any call."""
        ...

    def next_phase(self, candidate: str, items: Dataset, done: Mapping[str, RunResult]) -> AnswerPhase | None:
        """The answer phase after those `done` (in order), or None when the answers are complete."""
        ...

    def games(self, ctx: JudgedContext) -> Dataset:
        """The judge task's items, from the answers."""
        ...

    @property
    def judged_metrics(self) -> JudgedMetrics:
        """Which metrics its score is, over its per-item, per-judge values (judges/stats.py)."""
        ...

    def judged_score(self, ctx: JudgedContext, games: Dataset, runs: Mapping[str, RunResult]) -> JudgedOutcome:
        """Per item, per judge, the values (`JudgedStats`); the declared metrics over them
        (judges/stats.py `judged_metrics`); the summary."""
        ...


def check_kind(decl: JudgedDeclaration) -> None:
    """A declaration's kind names a judged run: never `run`, the readers' word for a plain one
    (report/rundata.py `RunData.kind`); refused before any call."""
    if decl.judge_pipeline == "run":
        raise GlotbenchError(f"{decl.name}: its judged kind (judge_pipeline) cannot be 'run': name it after the benchmark")


def panel_summary(ctx: JudgedContext, runs: Mapping[str, RunResult], stats: JudgedStats,
                  found: Mapping[str, Mapping[str, Any]], *, benchmark: str, headline: str, label: str,
                  signature: str, baseline: str | None = None) -> dict[str, Any]:
    """The summary of a judged run whose kind has no summary of its own (a plugin's declaration):
    what every reader reads of it (runfiles.JudgedFile): its headline and label, the panel's scores
    (the mean of judges, each judge: `found`, judges/stats.py `judged_metrics` over `stats`), the
    items, the signature, the skipped judges, and its validity (each phase's; invalid where no item
    has a judged value)."""
    from glotbench.judges.stats import panel_scores
    from glotbench.rundir.validity import combine

    scores = panel_scores(stats, found)
    phases = {**ctx.validity, **{f"judge {spec}": run.results.get("validity") for spec, run in runs.items()}}
    return {"benchmark": benchmark, "model": ctx.candidate, "judges": list(ctx.judges),
            "skipped_judges": list(ctx.skipped), "headline": headline, "label": label, "scores": scores,
            "items": len(stats.items), "signature": signature, "judge_validation": ctx.judge_validation,
            **({"baseline": baseline} if baseline else {}),
            "validity": combine(phases, judged=scores["final"].get("n"), of=len(stats.items))}


def merged_base(runs: Sequence[RunResult]) -> dict[str, Any]:
    """The candidate's answers as one run's results for the judged view: the last phase's record, with
    every phase's counts and tokens added up (the candidate's own calls; the judges' are not its)."""
    base = dict(runs[-1].results)
    for key in ("counts", "tokens"):
        merged: dict[str, Any] = {}
        for r in runs:
            for k, v in (r.results.get(key) or {}).items():
                merged[k] = merged.get(k, 0) + v if isinstance(v, (int, float)) and not isinstance(v, bool) else v
        base[key] = merged
    return base
