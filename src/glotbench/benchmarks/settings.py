"""The run settings every benchmark takes beside its own `--bench-opt`s: declared, typed and frozen
(`RunSettings`, held by the benchmark as `Benchmark.settings`), applied explicitly by the stations
the evaluation line calls (`Benchmark.expand`, `combined`, `run_extract`, `run_score`,
`run_failure_score`, `run_metrics`, `run_aggregate`, `run_signature_parts`). The benchmark object
stays of its own class: its own `extract`, `score`, `metrics_for`, `aggregate` and
`signature_parts` are its rules, and the functions here apply the settings around them.

| setting | values | what changes |
|---|---|---|
| `permute` | `circular` | every option item asked in each rotation of its options (benchmarks/circular.py); scores per original item, the worst rotation's |
| `wrong_language` | `flag` (default) | nothing: the language check records and counts (results.json `checks.language`) |
| | `fail` | an answer in the wrong language or script is a failure of its own kind, `wrong_language` |
| | `zero` | the answer is scored, then every metric's credit taken from it (`metrics.zero_credit`); a corpus metric becomes the mean of its sentence scores (EuroEval's chrF) |
| `pivot` | `en(SPEC)` | the task asked through English (engine/pivot.py): the signature names it |
| `given` | item id → failure kind | the pivot's last phase: the reply is the answer as it is; these items fail as named |

`permute` and `wrong_language` are `--bench-opt`s (`split_options` takes them out before the
benchmark is built); `pivot` and `given` are set by engine/pivot.py. Each setting is a part of the
signature after the benchmark's own parts, in this order: permute, wrong_language, pivot.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Mapping, Sequence, TypeVar

from glotbench.errors import SpecError
from glotbench.extract import Extraction, free_text

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark
    from glotbench.core import Dataset
    from glotbench.items import Item, PublicItem
    from glotbench.metrics import ItemScore, Metric

WrongLanguage = Literal["flag", "fail", "zero"]
Permute = Literal["circular"]
B = TypeVar("B", bound="Benchmark")

# The `--bench-opt`s every benchmark takes, with their values.
OPTIONS: Mapping[str, tuple[str, ...]] = MappingProxyType({"permute": ("circular",),
                                                           "wrong_language": ("flag", "fail", "zero")})


@dataclass(frozen=True)
class RunSettings:
    """How a run applies a benchmark's rules (the module's table). The default changes nothing."""

    permute: Permute | None = None
    wrong_language: WrongLanguage = "flag"
    pivot: str | None = None
    given: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        if self.permute not in (None, *OPTIONS["permute"]):
            raise SpecError(f"permute must be one of {', '.join(OPTIONS['permute'])}, got {self.permute!r}")
        if self.wrong_language not in OPTIONS["wrong_language"]:
            raise SpecError(f"wrong_language must be one of {', '.join(OPTIONS['wrong_language'])}, "
                            f"got {self.wrong_language!r}")
        if self.given is not None and not isinstance(self.given, MappingProxyType):
            object.__setattr__(self, "given", MappingProxyType(dict(self.given)))

    @property
    def default(self) -> bool:
        return self == RunSettings()

    def options(self) -> dict[str, str]:
        """The settings that are `--bench-opt`s, as a run records them (none at their default)."""
        return {**({"permute": self.permute} if self.permute else {}),
                **({"wrong_language": self.wrong_language} if self.wrong_language != "flag" else {})}


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], RunSettings]:
    """(the benchmark's own options, the run settings among them), each setting's value checked."""
    own, outer = {}, {}
    for k, v in options.items():
        if k in OPTIONS:
            if str(v) not in OPTIONS[k]:
                raise SpecError(f"{k} must be one of {', '.join(OPTIONS[k])}, got {v!r}")
            outer[k] = str(v)
        else:
            own[k] = v
    return own, RunSettings(**outer)  # type: ignore[arg-type]  # each value checked above


def check(bench: Benchmark, settings: RunSettings) -> None:
    """Refuse a setting the benchmark cannot take (before anything runs)."""
    from glotbench.checks.language import expectation

    policy = settings.wrong_language
    if policy != "flag" and expectation(bench) is None:
        raise SpecError(f"{bench.name}: wrong_language={policy} needs a task whose answers have an expected "
                        "language (translation, summaries, spans, open answers); this one's are letters, "
                        "numbers or labels")


# -- the stations, settings applied ---------------------------------------------------------------

def check_settings() -> str:
    """The language check's identifier and thresholds, as the wrong_language signature part names them."""
    from glotbench.checks import language as L

    return f"{L.library()},share{L.SHARE},p{L.MIN_CONFIDENCE},min{L.MIN_LID_LETTERS}"


def wrong_language(bench: Benchmark, answer: Any, fields: Mapping[str, Any], meta: Mapping[str, Any]) -> str | None:
    """Why `answer` is in the wrong language or script for its item ("wrong_script: ..."), or None."""
    from glotbench.checks.language import answer_text, expected_language, verdict

    lang = expected_language(bench, fields, meta)
    body = answer_text(bench, answer)
    if lang is None or body is None:
        return None
    got = verdict(bench, body, lang, fields)
    return f"{got['verdict']}: {got['why']}" if got["verdict"] in ("wrong_script", "wrong_language") else None


def signature_parts(bench: Benchmark) -> dict[str, str]:
    """The benchmark's own parts, then its settings' (permute, wrong_language, pivot)."""
    s = bench.settings
    parts = dict(bench.signature_parts())
    if s.permute:
        parts["permute"] = s.permute
    if s.wrong_language != "flag":
        parts["wrong_language"] = f"{s.wrong_language}({check_settings()})"
    if s.pivot:
        parts["pivot"] = s.pivot
    return parts


def answer_before_check(bench: Benchmark, text: str, item: PublicItem) -> Any:
    """The answer the run reads in a reply before the language check: the given answer (the pivot's
    last phase) or the benchmark's own extraction."""
    if bench.settings.given is not None:
        return _given(bench, text, item).answer
    return bench.extract(text, item).answer


def _given(bench: Benchmark, text: str, item: PublicItem) -> Extraction:
    """The pivot's last phase: the reply is the back-translated answer itself (every pipeline's, for
    a task file); an item whose answer did not come through fails as its kind (`answer_<kind>`,
    `pivot_failed`)."""
    kind = (bench.settings.given or {}).get(item.id)
    if kind:
        return Extraction(None, kind)
    got = free_text(text)
    return got if got.answer is None else Extraction(bench.answer_from_text(got.answer))


def extract(bench: Benchmark, text: str, item: PublicItem) -> Extraction:
    """The run's extraction: the given answer (pivot), else the benchmark's own; under
    `wrong_language=fail` an answer whose language check fails is no answer (`wrong_language`)."""
    if bench.settings.given is not None:
        return _given(bench, text, item)
    ext = bench.extract(text, item)
    if bench.settings.wrong_language != "fail" or ext.answer is None:
        return ext
    wrong = wrong_language(bench, ext.answer, item.fields, item.meta)
    return ext if wrong is None else Extraction(None, "wrong_language", wrong)


def _own(bench: Benchmark, dataset: Dataset | None) -> tuple[Metric, ...]:
    """The benchmark's own metrics (`metrics_for`); circular: relabelled, with the rotation figures."""
    from glotbench.benchmarks import circular

    own = tuple(bench.metrics_for(dataset))
    return circular.metrics(own) if bench.settings.permute == "circular" else own


def metrics(bench: Benchmark, dataset: Dataset | None) -> tuple[Metric, ...]:
    """The run's metrics: `_own`; `wrong_language=zero`: each corpus metric as the mean of its
    sentence scores."""
    out = _own(bench, dataset)
    if bench.settings.wrong_language == "zero":
        out = tuple(m.sentence_mean() or m for m in out)
    return out


def _with_sentences(bench: Benchmark, stats: Mapping[str, float]) -> dict[str, float]:
    """`stats` with each corpus metric's sentence statistics (what its `sentence_mean` reads)."""
    from glotbench.metrics.corpus import sentence_stats

    out = dict(stats)
    for m in _own(bench, None):
        mean: Any = m.sentence_mean()  # a RatioMetric over `PREFIX.sentence`
        if mean is not None:
            out.update(sentence_stats(m, mean.numerator.rsplit(".", 1)[0], stats))
    return out


def score(bench: Benchmark, answer: Any, item: Item) -> ItemScore:
    """The benchmark's score; `wrong_language=zero`: with sentence statistics, and an answer whose
    language check fails loses every metric's credit (flagged `wrong_language`)."""
    from glotbench.metrics import ItemScore, zero_credit

    base = bench.score(answer, item)
    if bench.settings.wrong_language != "zero":
        return base
    stats = _with_sentences(bench, base.stats)
    if base.failure is not None or wrong_language(bench, answer, item.public, item.meta) is None:
        return ItemScore(stats, base.flags, base.failure)
    return ItemScore(zero_credit(metrics(bench, None), stats), (*base.flags, "wrong_language"), None)


def failure_score(bench: Benchmark, failure: str, item: Item) -> ItemScore:
    """The benchmark's failure score; `wrong_language=zero`: with sentence statistics."""
    from glotbench.metrics import ItemScore

    base = bench.failure_score(failure, item)
    if bench.settings.wrong_language != "zero":
        return base
    return ItemScore(_with_sentences(bench, base.stats), base.flags, base.failure)


def expand(bench: Benchmark, items: Dataset) -> Dataset:
    """The units a run asks: the items; circular: each in every rotation of its options."""
    if bench.settings.permute != "circular":
        return items
    from glotbench.benchmarks import circular

    return circular.expand(items)


def combined(bench: Benchmark, samples: Sequence[Any], dataset: Dataset | Sequence[Item] | None) -> Sequence[Any]:
    """The samples per original item, as the headline counts them (circular: one per item)."""
    if bench.settings.permute != "circular":
        return samples
    from glotbench.benchmarks import circular

    own = bench.metrics_for(dataset)  # type: ignore[arg-type]  # the items, as the checks pass them
    return circular.per_item(own, samples, dataset)


def aggregate(bench: Benchmark, samples: Sequence[Any], dataset: Dataset | None = None, **kw: Any) -> dict[str, Any]:
    """The benchmark's aggregate over the run's metrics; circular: over one sample per original item,
    with `circular` (items, rotations, items named apart)."""
    if bench.settings.permute != "circular":
        return bench.aggregate(samples, dataset, **kw)
    from glotbench.benchmarks import circular

    per_item = combined(bench, samples, dataset)
    out = bench.aggregate(per_item, dataset, **kw)
    out["circular"] = circular.block(samples, per_item, dataset)
    return out


def replace(bench: B, **changes: Any) -> B:
    """A copy of `bench` (the same class, the same settings of its own) with these run settings
    changed; `bench` itself is left as it is."""
    import copy

    new = dataclasses.replace(bench.settings, **changes)
    check(bench, new)
    out = copy.copy(bench)
    out.settings = new
    return out
