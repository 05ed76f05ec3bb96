"""The Benchmark interface: stateless rules over a loaded Dataset.

`load() -> Dataset`; `render(PublicItem) -> Prompt`; `extract(text, PublicItem) -> Extraction`
(the answer may be any type: a letter, a number, a verdict object); `score(answer, Item) -> ItemScore`;
`aggregate(samples, dataset)`. A benchmark object holds settings only (its `--bench-opt`s), never
dataset state, so the runner, the service, `compare` and the judge pipelines share one object model.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import types
import typing
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Literal, Mapping, Sequence

from glotbench.benchmarks import settings as run_settings
from glotbench.benchmarks.settings import Permute, RunSettings, WrongLanguage
from glotbench.core import Dataset
from glotbench.datasheet import Datasheet, Declared
from glotbench.extract import Extraction
from glotbench.items import Item, PublicItem
from glotbench.metrics import ItemScore, Metric, aggregate, repeat_stability
from glotbench.core import GenerateConfig, Prompt
from glotbench.rundir.schema import JudgedKind
from glotbench.signature import Signature

if TYPE_CHECKING:
    from glotbench.contract import ScoredBenchmark
    from glotbench.judges.pipeline import JudgedDeclaration
    from glotbench.rundir.schema import DataLabel

AnswerKind = Literal["letter", "number", "text"]
__all__ = ["AnswerKind", "Benchmark", "RescorePlan", "RunSettings", "WrongLanguage", "bundled_label", "contract_fault",
           "target_of_pair"]


@dataclass(frozen=True)
class RescorePlan:
    """What `glotbench rescore` varies for a benchmark (checks/rescore.py), declared by the benchmark
    (`Benchmark.rescore_plan`): the metric kinds it re-scores ("bleu", "chrf", "chrf++", "token_f1",
    "exact"), the gold keys that hold the references (the first present), the group it reports per,
    token F1's references rule and normalisation, the run's metric name of each kind where it is not
    the kind's own, the run's BLEU tokenizer over segmented text, and whether each sample's
    language is the item's expected output language (`output_language`) or the benchmark's `lang`."""

    kinds: tuple[str, ...]
    refs: tuple[str, ...]
    group: str | None = None
    f1: tuple[str, str] = ("max", "unicode")
    names: Mapping[str, str] | None = None
    bleu_tokenize: str | None = None
    per_item_language: bool = True

# The prompt hash's JSON, as json.dumps(..., sort_keys=True, ensure_ascii=False, default=str) writes
# it; one encoder for every item (json.dumps with options builds one per call).
_PROMPT_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


def bundled_label(kind: str | None, modelled_on: str | None, source: str, n: int) -> DataLabel | None:
    """The label of `n` items from `source` when it is bundled data of this `kind` ("sample", "own")."""
    if kind is None or not str(source).startswith("bundled:"):
        return None
    if kind == "sample":
        text = f"sample data ({n} items written for glotbench, not the published benchmark)"
    else:
        text = (f"glotbench's own set ({n} items), not the published {modelled_on} data" if modelled_on
                else f"glotbench's own set ({n} items; the task has no published data set)")
    return {"kind": kind, "sample": kind == "sample", "items": n, "label": text}


def target_of_pair(pair: str) -> str | None:
    """A language pair's target: `en-th_TH` -> th; `lo-en` -> en."""
    from glotbench.languages import resolve_code

    _, _, tgt = str(pair).partition("-")
    return resolve_code(tgt) if tgt else None


def _item_key(item: Any) -> str:
    """An item's identity and content (id, public fields, gold, meta) as one string."""
    return _PROMPT_JSON.encode([item.id, dict(item.public), dict(item.gold), dict(item.meta)])


class Benchmark(ABC):
    """One benchmark. Subclasses set the class attributes and implement the stations.

    The declared facts below are typed attributes with class-level defaults, not ClassVars: a
    built-in sets them in its class body, a benchmark built from a task file (tasks/benchmark.py,
    DeepSea's tasks) sets them on its instance; mypy checks both against these declarations.

    The prompt hash in the signature is computed from what `render` produces over the dataset's
    items (both forms), so a changed prompt is a changed signature.
    """

    name: str
    version: str
    description: str
    metrics: tuple[Metric, ...]  # the first one is the headline
    group_by: tuple[str, ...] = ()
    pooled_overall: bool = True  # False: metrics are only meaningful within a group
    # A meta key whose equal values form a cluster of dependent items (Belebele's passage, XQuAD's
    # context): the intervals then resample clusters (metrics.ratio.clustered_interval, docs/metrics.md).
    cluster_by: str | None = None
    default_config: GenerateConfig = GenerateConfig()
    method: str = "generate"  # "loglik": the runner picks the option with the highest log-likelihood
    answers_are_outputs: bool = False  # answer files hold raw outputs (extracted) or answers
    # Extraction failures (kinds before any ":") for which the runner asks a fresh reply again, under
    # the run's retry policy (a judge's malformed verdict): the reply is extracted once, never cached,
    # and an item whose retries run out fails as `bad_response` ("malformed <reply_name> (...)").
    retry_failures: tuple[str, ...] = ()
    reply_name: str = "reply"
    # Scored by judges after the answers (a task with a rubric scorer): `evaluate_async` runs it through
    # the one judged pipeline (engine/judged.py), whoever calls it (run, sweep, evaluate()).
    judged: bool = False
    # Its replies are a judge's verdicts on another model's answers (the judged pipelines' judge tasks):
    # a verdict that cannot be read counts against --max-failure-rate like a failed call
    # (rundir/validity.py), since the item is then not measured at all.
    judge_task: bool = False
    # Its kind of judged run (results.json's judged.kind): "rubric" (a task's rubric scorer), "arena"
    # (pairs against a baseline), "aragen" (3C3H over the release's rounds) or "mt-bench" (two turns
    # against a fixed baseline, SEA-HELM's weighted win rate), or a plugin's own name (its summary the
    # panel's: judges/pipeline.py `panel_summary`). engine/judged.py runs every one; what is the
    # benchmark's own it declares (`judged_declaration`), its score the metrics it declares over its
    # per-item, per-judge values (judges/stats.py).
    judge_pipeline: JudgedKind = "rubric"
    # The judges a judged run takes when none is named (--judge): a task file's scorer.judges.
    default_judges: tuple[str, ...] = ()
    # The options whose values are model specs (the arena's `baseline`): `run` says where their
    # requests go before anything is called, as it does for the model and the judges.
    model_options: tuple[str, ...] = ()
    # Of those, the ones a run can do without (SEA-MT-Bench's baseline: the data's answers stand in);
    # a sweep or a language suite refuses or skips an entry that lacks any other.
    optional_model_options: tuple[str, ...] = ()
    # Requests a run makes beyond one per item that a dry run cannot price, in words (SEA-MT-Bench's
    # second turns, whose prompts hold the first turn's answers): `--dry-run` lists them as not counted.
    uncounted_requests: tuple[str, ...] = ()
    # Licence, origin, upstream, citation and the languages covered, with the options that select
    # each (glotbench/datasheet.py): what `tasks list --language` and the language suite read.
    datasheet: Datasheet | None = None

    def judged_declaration(self) -> JudgedDeclaration | None:
        """The parts of its judged run that are its own (judges/pipeline.py): its answer phases, its
        games, its judges' task and sampling, its statistics and metrics; the one judged pipeline
        (engine/judged.py) runs the rest. None: a plain benchmark."""
        return None

    def task_file(self) -> Path | None:
        """The user's task file this benchmark was read from (resolved), or None (a built-in, a
        shipped library task, a class): a run keeps a copy and its SHA-256 (engine/evaluate.py)."""
        return None
    # What the bundled data is, when it is not the published benchmark's (`data_label`): "sample"
    # (items written for glotbench as a stand-in) or "own" (glotbench's own set, modelled on
    # `modelled_on`). None: the bundled data is the benchmark, or there is none.
    bundled_data: str | None = None
    modelled_on: str | None = None
    # The public field whose text is itself a possible answer: restoration and correction (the input
    # unchanged), translation (the source copied). A run then scores that text as every item's answer,
    # the do-nothing floor every view shows beside the score (`input_floor`), as a multiple-choice
    # table shows the random baseline. None: the input is no answer (a question, options).
    input_answer: str | None = None
    # What the checks that read a run need to know (checks/extraction.py, errors.py, language.py, the
    # pivot): declared here, so a plugin or a task file gets every check a built-in gets.
    # The kind of answer the benchmark's rule extracts from a reply: "letter" (an option), "number" or
    # "text" (a span, a rewritten sentence); None: the reply is taken as it is (translation, summaries)
    # or is judged.
    answer_kind: AnswerKind | None = None
    # The public field an answer rewrites keeping its words (diacritics restored, tones corrected): such
    # an answer is in the input's language by construction and is not identified (checks/language.py).
    rewrites: str | None = None
    # The one language of the items (a task file's `language`; "vi" for vi-diacritics), when fixed.
    lang: str | None = None
    # The language every item's input is written in, when it is one (WMT24++'s English sources):
    # `--pivot` into that language has nothing to translate.
    input_language: str | None = None
    # In words, how `output_language` decides the language an answer is expected in (the language
    # check shows it); None: the answers have no expected language (letters, numbers, labels).
    output_language_rule: str | None = None
    # The extraction pipeline whose answer is the headline's, when answers are read several ways side
    # by side (a task file's `pipelines`): the text the checks read of a mapping answer.
    headline_pipeline: str | None = None
    # A log-likelihood run keeps every choice's log-probability and token count (task files).
    loglik_detail: bool = False
    # The run settings (benchmarks/settings.py): the permutation ("circular": each option item asked in
    # every rotation), the wrong-language policy ("flag": recorded and counted; "fail": a failure of
    # its own kind; "zero": no credit) and the pivot. Declared and frozen; `registry.get_benchmark`
    # sets them from `--bench-opt permute=`/`wrong_language=` on the benchmark it built, which stays
    # of its own class: the `run_*` stations below, `expand` and `combined` apply them.
    settings: RunSettings = RunSettings()

    @property
    def wrong_language(self) -> WrongLanguage:
        """The wrong-language policy of the run (`settings.wrong_language`), read by the checks,
        `rescore` and `compare`."""
        return self.settings.wrong_language

    @property
    def permute(self) -> Permute | None:
        """The permutation of the run (`settings.permute`)."""
        return self.settings.permute

    def expand(self, items: Dataset) -> Dataset:
        """The units a run asks for these items: the items themselves (`permute=circular`: each item
        in every rotation of its options, benchmarks/circular.py)."""
        return run_settings.expand(self, items)

    def combined(self, samples: Sequence[Any], dataset: Dataset | Sequence[Item] | None) -> Sequence[Any]:
        """The samples per original item, as the headline counts them: the samples themselves
        (`permute=circular`: one per item over its rotations)."""
        return run_settings.combined(self, samples, dataset)

    def answer_before_check(self, text: str, item: PublicItem) -> Any:
        """The answer the run reads in a reply before any run setting's check (`wrong_language=fail`
        makes a wrong-language answer a failure; its check reads this)."""
        return run_settings.answer_before_check(self, text, item)

    # The stations as a run applies them: the benchmark's own rule with its settings around it
    # (benchmarks/settings.py). The evaluation line (scoring.py, engine/, compare, the service) calls
    # these; a benchmark overrides the rules (`extract`, `score`, ...), never these.

    def run_extract(self, text: str, item: PublicItem) -> Extraction:
        return run_settings.extract(self, text, item)

    def run_score(self, answer: Any, item: Item) -> ItemScore:
        return run_settings.score(self, answer, item)

    def run_failure_score(self, failure: str, item: Item) -> ItemScore:
        return run_settings.failure_score(self, failure, item)

    def run_metrics(self, dataset: Dataset | None) -> tuple[Metric, ...]:
        return run_settings.metrics(self, dataset)

    def run_aggregate(self, samples: Sequence[Any], dataset: Dataset | None = None, **kw: Any) -> dict[str, Any]:
        return run_settings.aggregate(self, samples, dataset, **kw)

    def run_signature_parts(self) -> Mapping[str, str]:
        return run_settings.signature_parts(self)

    def answer_from_text(self, text: str) -> Any:
        """A text as `score` takes an answer, read as it is (the extraction check's lenient reading):
        the text itself; a task file's benchmark: the text for every extraction pipeline."""
        return text

    def translation_pair(self, item: Item) -> tuple[str, str, str] | None:
        """(source language code, source text, target reference) of a translation item, or None: an
        item whose `lp` (meta or public: `en-lo`) names the pair, with a public `source` and a gold
        `target` (the tokenizer check's parallel texts)."""
        from glotbench.languages import resolve_code

        pair = item.meta.get("lp") or item.public.get("lp")
        if pair and isinstance(item.public.get("source"), str) and isinstance(item.gold.get("target"), str):
            return resolve_code(str(pair).split("-")[0]) or "", item.public["source"], item.gold["target"]
        return None

    def word_diff(self, answer: str, gold: Mapping[str, Any]) -> list[tuple[str, str]] | None:
        """The answer's words against the gold as the report's sample browser shows them, each
        `(word, kind)` (ok, tone, mark, extra, missing: text/vietnamese.word_diff); None: no diff."""
        return None

    def rescore_plan(self) -> RescorePlan | None:
        """What `glotbench rescore` varies for this benchmark; None: it has nothing to re-score
        (its metrics are not corpus metrics, token F1 or an exact match over references)."""
        return None

    def output_language(self, item: PublicItem) -> str | None:
        """The language an answer to `item` is expected in (see `output_language_rule`): `lang` unless
        the benchmark decides per item (a translation's target)."""
        return self.lang

    def output_language_words(self) -> str | None:
        """In words, how `output_language` decides (the language check shows it): the declared
        `output_language_rule`; a plugin that overrides `output_language` without words for it: "the
        benchmark's output_language()"; None: the answers have no expected language."""
        if self.output_language_rule is None and type(self).output_language is not Benchmark.output_language:
            return "the benchmark's output_language()"
        return self.output_language_rule

    @abstractmethod
    def load(self, path: str | None = None) -> Dataset:
        """The bundled items, or those of a user's file in the documented format (validated)."""

    @abstractmethod
    def render(self, item: PublicItem) -> Prompt:
        """The prompt, built from the public part only: a PublicItem has no gold to leak."""

    @abstractmethod
    def extract(self, text: str, item: PublicItem) -> Extraction:
        """The answer in a model's reply (think blocks already stripped), or None with the failure kind."""

    @abstractmethod
    def score(self, answer: Any, item: Item) -> ItemScore:
        """Score one extracted answer against the item's gold."""

    @abstractmethod
    def failure_score(self, failure: str, item: Item) -> ItemScore:
        """The score of a sample with no answer (model error, format failure): usually zero, with
        the same statistic keys as a real score."""

    # -- datasets -------------------------------------------------------------------------------

    def dataset(self, items: Iterable[Item], source: str = "memory", sha256: str | None = None, *,
                rows_left_out: int | None = None) -> Dataset:
        """A Dataset of these items with the facts this benchmark derives from them. `load()` and
        anyone holding items from elsewhere (the service's database) build datasets this one way.
        `rows_left_out`: the data's rows a filter (a task's `data.where`) left out before the items."""
        items = tuple(items)
        return Dataset(items, source, sha256, self.facts(items), rows_left_out=rows_left_out)

    def facts(self, items: Sequence[Item]) -> Mapping[str, Any]:
        """Facts derived from the data (e.g. the subject list of a macro average)."""
        return {}

    def metrics_for(self, dataset: Dataset | None) -> tuple[Metric, ...]:
        """The metrics over this dataset (a macro average needs the dataset's groups)."""
        return self.metrics

    # -- answers and signatures -----------------------------------------------------------------

    def answer_key(self, answer: Any) -> str | None:
        """A normalised answer, used to measure agreement across repeats."""
        return None if answer is None else str(answer)

    def prompt_probe(self, dataset: Dataset) -> Iterable[PublicItem]:
        """The items whose rendered prompts define the prompt hash: the dataset's own. Judge tasks,
        whose items hold the answers being judged, substitute placeholders for them."""
        return dataset.public_items()

    def prompt_hash(self, dataset: Dataset) -> str:
        """SHA-256 (12 hex) over what `render` produces for the dataset: chat messages, plain text,
        stops, caps, schema and choices, item by item (a lone surrogate from a data file's `\\ud800`
        escape is hashed as it is, not a crash)."""
        h = hashlib.sha256()
        encode = _PROMPT_JSON.encode
        for item in self.prompt_probe(dataset):
            p = self.render(item)
            h.update(encode([[dict(m) for m in p.messages], p.text, list(p.text_stop), p.text_max_tokens,
                             None if p.json_schema is None else dict(p.json_schema),
                             None if p.choices is None else list(p.choices),
                             *(() if p.loglik_encoding == "joint" else (p.loglik_encoding,))]).encode("utf-8", "surrogatepass"))
            h.update(b"\n")
        return h.hexdigest()[:12]

    def signature(self, dataset: Dataset, prompt_hash: str | None = None) -> str:
        """Everything that changes the numbers, sacrebleu style (`prompt_hash`: already computed)."""
        return Signature.build(("glotbench", self.name), ("v", self.version),
                               ("prompt", prompt_hash or self.prompt_hash(dataset)),
                               ("data", (dataset.sha256 or "none")[:12]), self.run_signature_parts()).format()

    def signature_parts(self) -> Mapping[str, str]:
        return {}

    def data_label(self, dataset: Dataset) -> DataLabel | None:
        """results.json's `data_label` for a run on bundled data that is not the published benchmark:
        its kind, item count and the words every view shows. A user's own file (`--data`, a hub
        revision) has none, unless its items are bundled ones: a copy of the bundled file, in any
        bytes (CRLF, re-serialised JSON, another format) or a part of it (every item one of the
        bundled items, id and content alike)."""
        source = str(dataset.source)
        if self.bundled_data is not None and not source.startswith("bundled:") and len(dataset):
            try:
                bundled = self.load(None)
            except Exception:  # noqa: BLE001 - no bundled file to compare with
                bundled = None
            if bundled is not None and (bundled.sha256 == dataset.sha256 or (
                    len(dataset) <= len(bundled) and {_item_key(it) for it in dataset} <= {_item_key(it) for it in bundled})):
                source = str(bundled.source)
        return bundled_label(self.bundled_data, self.modelled_on, source, len(dataset))

    def extra_results(self, dataset: Dataset) -> dict[str, Any]:
        """Benchmark-specific facts for results.json (e.g. a random baseline, per-language signatures)."""
        return {}

    def run_language(self) -> str | None:
        """The one language group a run covers (results.json `benchmark.language`, which the board's
        language tables and cards read): the items' `lang`, else the datasheet's only language; None
        where the run covers several (a `lang` group reports each, as DeepSEA's does)."""
        from glotbench.languages import language_group

        if self.lang:
            return language_group(self.lang) or self.lang
        langs = list(self.datasheet.languages) if self.datasheet else []
        return langs[0] if len(langs) == 1 else None

    def input_floor_score(self, item: Item) -> tuple[ItemScore, bool]:
        """The item's score when answered with its own `input_answer` field (`input_floor`), and
        whether the scorer failed on it (as in a run, scoring.score_output: a scorer error is that
        item's failure score, and a failure score that fails too is one with no statistics). It never
        raises: a run scores it as each reply comes in (engine/evaluate.py `on_sample`)."""
        assert self.input_answer is not None
        try:
            return self.run_score(self.input_as_answer(item.public[self.input_answer], item), item), False
        except Exception:  # noqa: BLE001 - recorded as the item's failure score, counted
            try:
                return self.run_failure_score("scorer_error", item), True
            except Exception:  # noqa: BLE001 - the failure score itself is broken: no statistics to give
                return ItemScore({}, failure="scorer_error"), True

    def input_floor(self, dataset: Dataset, items: Sequence[Item] | None = None,
                    scored: Mapping[str, tuple[ItemScore, bool]] | None = None) -> dict[str, Any] | None:
        """results.json's `input_floor`: each metric's value (overall and per group) when every item of
        `items` (default: the dataset's) is answered with its own `input_answer` field, scored by the
        benchmark's own `score`; None when the benchmark declares no such field. `scored`: items'
        `input_floor_score`s made already (a run makes each as the item's reply is scored, while the
        scorer's caches hold its references: 10 µs an item of vi-diacritics, against 22 µs in a
        pass of its own; docs/performance.md)."""
        if self.input_answer is None:
            return None
        from glotbench.metrics import ScoredSample

        items = list(dataset if items is None else items)
        samples, errors = [], 0
        for it in items:
            made = scored.get(it.id) if scored is not None else None
            score, failed = made if made is not None else self.input_floor_score(it)
            errors += failed
            samples.append(ScoredSample(it.id, 0, it.meta, score))
        if not samples:
            return None
        # the metrics' own values, without intervals (the run's aggregate, not a second one of it)
        try:
            agg = aggregate(self.run_metrics(dataset), samples, self.group_by, resamples=0)
        except Exception as e:  # noqa: BLE001 - a floor its own scorer cannot aggregate (a failure score
            # with no statistics) is not given, and says why; the run it stands beside is kept
            return {"field": self.input_answer, "items": len(items), **({"scorer_errors": errors} if errors else {}),
                    "error": f"{type(e).__name__}: {e}", "overall": {}, "groups": {}}
        if not self.pooled_overall:
            agg["overall"] = {}

        def values(ests: Mapping[str, Any]) -> dict[str, Any]:
            return {k: v.get("value") for k, v in ests.items() if isinstance(v, Mapping) and "value" in v}

        return {"field": self.input_answer, "items": len(items), **({"scorer_errors": errors} if errors else {}),
                "overall": values(agg.get("overall") or {}),
                "groups": {key: {g: values(e) for g, e in groups.items()} for key, groups in (agg.get("groups") or {}).items()}}

    def input_as_answer(self, text: str, item: Item) -> Any:
        """The input field's text as `score` takes an answer (for `input_floor`): the text itself."""
        return text

    @property
    def headline(self) -> Metric:
        return self.metrics[0]

    def aggregate(self, samples: Sequence[Any], dataset: Dataset | None = None, **kw: Any) -> dict[str, Any]:
        """Scores overall and per group with bootstrap CIs; samples need `item_id`, `repeat`, `meta`,
        `score` (and `answer_key` for repeat stability), over the run's metrics (`run_metrics`)."""
        metrics = self.run_metrics(dataset)
        out = aggregate(metrics, samples, self.group_by, cluster=self.cluster_by, **kw)
        if not self.pooled_overall:
            out["overall"] = {}
        stability = repeat_stability(metrics[0], samples)
        if stability is not None:
            out["stability"] = stability
        return out


if TYPE_CHECKING:
    def _scored(bench: Benchmark) -> ScoredBenchmark:
        """Every Benchmark is what the scoring path reads (glotbench/contract.py): mypy checks it here."""
        return bench


@functools.cache
def _declared() -> dict[str, Any]:
    """Every declared fact of a Benchmark (its class-level annotations), with its type."""
    return typing.get_type_hints(Benchmark)


def _fits(value: Any, hint: Any) -> bool:
    """`value` is of the declared type `hint` (the kinds of type the declared facts use: a class,
    `X | None`, a Literal, a tuple; a protocol, such as Metric, is mypy's to check: True)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        return any(value == a and type(value) is type(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_fits(v, args[0]) for v in value)
        return len(args) == len(value) and all(_fits(v, a) for v, a in zip(value, args))
    if hint is type(None):
        return value is None
    if isinstance(hint, type) and not getattr(hint, "_is_protocol", False):
        return isinstance(value, hint) and (hint is bool or not isinstance(value, bool))
    return True


def _type_words(hint: Any) -> str:
    """A declared type as its annotation reads: `tuple[Metric, ...]`, `'letter' | 'number' | 'text' | None`."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        return " | ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_words(a) for a in args)
    if origin is tuple:
        return f"tuple[{_type_words(args[0])}, ...]" if len(args) == 2 and args[1] is Ellipsis else str(hint)
    return "None" if hint is type(None) else getattr(hint, "__name__", str(hint))


def contract_fault(subject: type | Benchmark) -> str | None:
    """What a benchmark class or object lacks of the contract, in one line; None: it holds. A class:
    a station it does not implement (`load`, `render`, `extract`, `score`, `failure_score`). An object:
    besides, a declared fact it does not set (`name`, `version`, `description`, `metrics`: they have no
    default) or sets to a value not of its declared type (`answer_kind = "letters"`, `metrics` a list),
    and `metrics` empty (the first one is the headline). Checked when a benchmark is registered or
    built (registry.get_benchmark) and when a run is given an object (engine/evaluate.py)."""
    cls = subject if isinstance(subject, type) else type(subject)
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        return f"{cls.__name__} does not implement {missing} (every Benchmark implements load, render, extract, score, failure_score)"
    if isinstance(subject, type):
        return None
    for fact, hint in _declared().items():
        if isinstance(inspect.getattr_static(subject, fact, None), Declared):
            continue  # a datasheet made when first read (datasheet.Declared checks its type then)
        if not hasattr(subject, fact):
            return f"{cls.__name__} declares no {fact} ({_type_words(hint)}: a fact every Benchmark declares)"
        value = getattr(subject, fact)
        if not _fits(value, hint):
            return f"{cls.__name__}.{fact} is {value!r}, not of its declared type {_type_words(hint)}"
    if not subject.metrics:
        return f"{cls.__name__}.metrics is empty: a Benchmark declares at least one metric (the first is the headline)"
    return None
