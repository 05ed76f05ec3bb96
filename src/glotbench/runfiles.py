"""The schemas of the judged runs' summaries other commands read back (`judge-audit`, `arena-report`,
`report`): an arena's, AraGen's and a rubric task's (results.json's `judged.summary`; their own
arena.json, aragen.json, rubric.json in older runs), the human-label files given next to them, and the annotators'
label files of `build review` (CSV, JSONL, a Label Studio export). A run directory's own files
(run.json, results.json, samples.jsonl) are typed in `glotbench.rundir.schema`. They go through
`glotbench.data` like any other file, so a damaged or foreign file is one `FILE:LINE: field:
problem` error. Only what the readers use is declared; other fields are kept as they are."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Mapping, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, RootModel, ValidationError, model_validator

from glotbench.data import ItemId, NonEmptyStr, Row, json_type, not_bool, read_dict, read_rows
from glotbench.errors import DataError, GlotbenchError
from glotbench.rundir.files import OLD_SUMMARIES, RESULTS, judged_section

S = TypeVar("S", bound=BaseModel)

Count = Annotated[int, Field(ge=0)]


class _Open(BaseModel):
    model_config = ConfigDict(frozen=True, strict=True, extra="allow")


# -- arena.json ---------------------------------------------------------------------------------

class _Estimate(_Open):
    value: float | None = None


class _ArenaScores(_Open):
    judges: dict[str, _Estimate]


class ArenaScores(_Open):
    """What `arena-report` reads of an arena.json: the candidate and each judge's score."""

    candidate: NonEmptyStr
    scores: _ArenaScores
    per_prompt: dict[str, dict[str, float]] = {}  # judge -> prompt id -> the candidate's score


class _FinalEstimate(_Open):
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None


class _ArenaPageScores(_ArenaScores):
    final: _FinalEstimate


class ArenaFile(ArenaScores):
    """What the arena report page reads of an arena.json."""

    baseline: NonEmptyStr
    scores: _ArenaPageScores
    skipped_judges: list[str] = []
    failures: dict[str, Any] = {}
    position_consistency: dict[str, float | None] = {}
    tie_rate: dict[str, Any] | float | None = None


# -- rubric.json (a task scored by a rubric: tasks/rubric.py RubricRun) ------------------------------

class _RubricScores(_Open):
    final: _FinalEstimate
    judges: dict[str, _Estimate]


class RubricFile(_Open):
    """What the board, `runs import` and `report` read of a rubric.json."""

    benchmark: NonEmptyStr
    model: NonEmptyStr
    scores: _RubricScores
    signature: str
    items: Count
    answers_run: str


class JudgedFile(_Open):
    """What `report`, the board and `runs import` read of a judged run of any other kind (a plugin's
    declaration; judges/pipeline.py `panel_summary`): the panel's scores under its headline."""

    benchmark: NonEmptyStr
    model: NonEmptyStr
    headline: NonEmptyStr
    label: str = ""
    scores: _RubricScores
    signature: NonEmptyStr
    items: Count
    skipped_judges: list[str] = []


class _MtBenchScores(_RubricScores):
    turns: dict[str, _Estimate]
    categories: dict[str, _Estimate]


class MtBenchFile(_Open):
    """What `report`, the board and `runs import` read of a SEA-MT-Bench run's summary (benchmarks/sea_mt_bench.py)."""

    benchmark: NonEmptyStr
    model: NonEmptyStr
    language: NonEmptyStr
    baseline: NonEmptyStr
    scores: _MtBenchScores
    signature: NonEmptyStr
    items: Count
    turn_values: dict[str, dict[str, list[float]]]


# -- aragen.json --------------------------------------------------------------------------------

class _FirstVerdict(Row):
    Correct: float
    Complete: float


class _AragenJudge(_Open):
    item_scores: dict[str, float]
    item_repeats: dict[str, list[float]]
    dataset_3c3h_by_repeat: list[float | None]
    first_verdicts: dict[str, _FirstVerdict]
    family: str
    verdicts_asked: Count
    parse_failures: Count
    zeroing_breaks: Count


class AragenFile(_Open):
    """What `judge-audit` and the AraGen report page read of an aragen.json."""

    model: str
    family: str
    per_judge: dict[str, _AragenJudge]
    item_scores: dict[str, dict[str, float]]

    @model_validator(mode="before")
    @classmethod
    def _this_version(cls, v: Any) -> Any:
        need = ("model", "family", "per_judge", "item_scores")
        if isinstance(v, dict) and any(k not in v for k in need):
            raise ValueError(f"not an aragen.json of this glotbench version (needs {', '.join(need)}); "
                             "re-run `glotbench aragen` (its calls are cached)")
        return v


# -- human labels given next to a judged run ----------------------------------------------------

class ArenaHumanRow(Row):
    """One human verdict for `arena-report --human`."""

    candidate: NonEmptyStr
    prompt_id: ItemId
    winner: Literal["candidate", "baseline", "tie"]


ZeroOne = Annotated[Literal[0, 1], BeforeValidator(not_bool)]


class AragenHumanRow(Row):
    """One human label for `judge-audit --human`: 0/1 Correct and Complete of an answer, its score."""

    model: NonEmptyStr  # the candidate's spec
    sn: ItemId
    Correct: ZeroOne
    Complete: ZeroOne
    score: Annotated[float, Field(ge=0, le=1)]


# -- annotators' labels for `build review` -------------------------------------------------------

class LabelRow(Row):
    """One annotator's label of one item (a JSONL line): numbers are read as their text."""

    id: ItemId
    annotator: ItemId
    label: ItemId  # a string or a whole number: 1.0 and 1 would be two categories


class LabelCsvRow(Row):
    """A row of a label CSV (`build review export --format csv`, filled in): an empty label cell is
    an item this annotator did not label (counted, not an error); a label needs its annotator."""

    id: ItemId
    annotator: str
    label: str

    @model_validator(mode="after")
    def _labelled(self) -> "LabelCsvRow":
        if self.label and not self.label.strip():
            raise ValueError("label: only spaces (leave the cell empty for an item not labelled)")
        if self.label and not self.annotator.strip():
            raise ValueError("annotator: must not be empty when a label is given")
        return self


class FlagRow(Row):
    """A flag of `build check` (its flags.jsonl), shown beside its item by `build review export`."""

    id: ItemId
    check: NonEmptyStr
    flags: list[str]
    reason: str | None = None


class AdjudicationRow(Row):
    """A decision in the adjudication file (`build review adjudicate` appends them)."""

    id: ItemId
    label: NonEmptyStr
    decided_by: NonEmptyStr


class _LsUser(_Open):
    id: int | None = None
    email: str | None = None


class _LsValue(_Open):
    choices: list[NonEmptyStr] | None = None


class _LsResult(_Open):
    """One result of an annotation; results of other controls (a TextArea note, a Rating) are
    kept out of the label."""

    type: str = "choices"
    value: _LsValue

    @model_validator(mode="after")
    def _choices(self) -> "_LsResult":
        if self.type == "choices" and self.value.choices is None:
            raise ValueError("value.choices: missing (a choices result)")
        return self


class LsAnnotation(_Open):
    completed_by: int | NonEmptyStr | _LsUser
    was_cancelled: bool = False  # skipped in Label Studio's interface: no label, counted
    result: list[_LsResult] = []

    @property
    def choices(self) -> list[str]:
        return [c for r in self.result if r.type == "choices" for c in r.value.choices or []]

    @property
    def annotator(self) -> str:
        who = self.completed_by
        return str(who) if not isinstance(who, _LsUser) else who.email or str(who.id)

    @model_validator(mode="after")
    def _one_choice(self) -> "LsAnnotation":
        if isinstance(self.completed_by, _LsUser) and not self.completed_by.email and self.completed_by.id is None:
            raise ValueError("completed_by: names no annotator (needs id or email)")
        if not self.was_cancelled and len(self.choices) != 1:
            raise ValueError(f"expected one choice per annotation, got {self.choices}")
        return self


class _LsData(_Open):
    id: ItemId  # the item's id (`build review export` puts it there); Label Studio's own task id is not it


class LsTask(_Open):
    data: _LsData
    annotations: list[LsAnnotation] = []  # an unannotated task (exported with "all tasks"): counted


class LabelStudioExport(RootModel[list[LsTask]]):
    """Label Studio's JSON export: a list of tasks, each with `data` and its `annotations`."""

    model_config = ConfigDict(frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _a_list(cls, v: Any) -> Any:
        if not isinstance(v, list):
            raise ValueError(f"a Label Studio export is a JSON list of tasks, got {json_type(v)}")
        return v


def label_studio_place(loc: tuple[Any, ...]) -> str:
    """Where in a Label Studio export: `task N: annotations.0.result.1` (N counts from 0)."""
    if loc and isinstance(loc[0], int):
        return f"task {loc[0]}" + (": " + ".".join(map(str, loc[1:])) if len(loc) > 1 else "")
    return ".".join(map(str, loc))


def read_unique_rows(path: str | Path, schema: type[S], key: Callable[[S], tuple[str, ...]],
                     what: str) -> list[tuple[str, S]]:
    """`read_rows`, refusing a second row for the same key (a label given twice would count twice
    or silently replace the first)."""
    rows = read_rows(path, schema)
    if not rows:
        raise DataError(f"{path}: no labels ({what})")
    seen: dict[tuple[str, ...], str] = {}
    for n, row in rows:
        k = key(row)
        if k in seen:
            raise DataError(f"{path}:{n}: a second row for {' '.join(k)} (the first is on line {seen[k]})")
        seen[k] = n
    return rows


def aragen_place(loc: tuple[Any, ...]) -> str:
    """Where in an aragen.json: `judge SPEC: 'field'` (a judge's spec has dots and colons)."""
    if len(loc) >= 3 and loc[0] in ("per_judge", "item_scores"):
        head = f"judge {loc[1]}: '{loc[2]}'" if loc[0] == "per_judge" else f"item_scores of judge {loc[1]}: '{loc[2]}'"
        return head + "".join(f"[{x!r}]" for x in loc[3:])
    return ".".join(map(str, loc))


def read_judged(run_dir: str | Path, kind: str, schema: type[BaseModel], what: str,
                where: Callable[[tuple[Any, ...]], str] | None = None) -> dict[str, Any]:
    """A judged run's summary (`kind`: arena, aragen, rubric) validated against `schema`, as a dict: its
    results.json's `judged.summary`, or the summary file an older run wrote (OLD_SUMMARIES); a
    directory with neither is `what`'s error."""
    d = Path(run_dir)
    if not d.is_dir():
        raise GlotbenchError(f"{d} is not a directory")
    judged = judged_section(d)
    if judged is not None and judged["kind"] == kind:
        return judged_summary(d, judged, schema, where)
    p = d / OLD_SUMMARIES[kind]
    if not p.exists():
        raise GlotbenchError(f"{d} is not {what} (no results.json of one, nor an older {p.name})")
    return read_dict(p, schema, allow_nan=True, where=where)


def judged_summary(d: Path, judged: Mapping[str, Any], schema: type[BaseModel],
                   where: Callable[[tuple[Any, ...]], str] | None = None) -> dict[str, Any]:
    """A judged run's summary (results.json's `judged.summary`) validated against its kind's `schema`,
    as the dict the file holds; a damaged one is one error naming the field."""
    summary = judged.get("summary")
    try:
        schema.model_validate(summary)
    except ValidationError as e:
        err = e.errors()[0]
        loc = where(err["loc"]) if where else ".".join(map(str, err["loc"]))
        raise GlotbenchError(f"{d / RESULTS}: judged.summary.{loc}: {err['msg']}") from None
    return dict(summary)  # type: ignore[arg-type]  # validated: an object
