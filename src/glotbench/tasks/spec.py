"""What a task is made of, as typed, frozen data: the schema of a task file (YAML) and of the Python
API (`glotbench.tasks.task`), which validate into the same `TaskSpec`.

Parts: `data` (a hub dataset at a pinned revision, or a local file), `fields` (which columns are the
id, the public part, the choices, the gold and the meta; renamed or derived by templates), `prompt`
(chat and plain-text templates, a system prompt, named variants), `fewshot`, `loglik`, `extract`
(named extraction pipelines, scored side by side), `scorer`, `groups`, `cluster`, `version`.
Every key is documented in docs/tasks.md. Templates are checked when the task is built
(`glotbench.tasks.benchmark.TaskBenchmark`), after the options are filled in.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import (BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, PlainValidator, Tag, field_validator,
                      model_validator)

from glotbench.datasheet import Datasheet

LOGLIK_NORMS = ("sum", "token", "char", "byte", "grapheme")
FORMATS = ("jsonl", "json", "csv", "tsv", "parquet")
NORMALISERS = ("strip", "lower", "casefold", "nfkc", "collapse_spaces", "remove_punct", "ascii_digits",
               "remove_zero_width", "remove_ascii_punct", "remove_ascii_digits")
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


class Part(BaseModel):
    """Base of every part: frozen, strict types, and an unknown key is an error (a typo in a task file
    must not pass silently)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


Scalar = Union[str, int, float, bool, None]


class OptionSpec(Part):
    """A setting a run may change (`--bench-opt NAME=VALUE`); `default: null` makes it required."""

    default: Scalar = None
    help: str = ""
    choices: list[Scalar] | None = None
    pattern: str | None = None  # a regular expression the whole value must match (a FLORES code: [a-z]{3}_[A-Z][a-z]{3})

    @model_validator(mode="after")
    def _pattern_compiles(self) -> "OptionSpec":
        if self.pattern is not None:
            import regex

            try:
                regex.compile(self.pattern)
            except regex.error as e:
                raise ValueError(f"pattern: not a valid regular expression ({e})") from None
        return self


class DataSpec(Part):
    hub: str | None = None  # OWNER/NAME of a hub dataset
    file: str | None = None  # a local file (relative to the task file)
    config: str | None = None  # the hub's config (subset) name
    split: str = "test"
    revision: str | None = None  # a commit hash (40 hex): the data cannot change under a pinned task
    files: str | list[str] | None = None  # patterns of the repository's files; default: the dataset card's
    sha256: dict[str, str] = {}  # repository path -> SHA-256 of the file (the LFS oid the hub shows)
    format: Literal["jsonl", "json", "csv", "tsv", "parquet"] | None = None  # default: from the extension
    roles: dict[str, str] = {}  # several configs, e.g. {source: eng_Latn, target: lao_Laoo}, joined on `join`
    join: str | None = None  # the column that pairs the roles' rows (FLORES+: id)
    role_by: str | None = None  # with --data FILE: a template giving each row's config (which role it is)
    language_by: str | None = None  # a template giving each row's language (Belebele: {{ dialect }}), checked against `language`
    # a template over each row rendering True or False: only the rows it keeps are items (TyDi QA's
    # one split of eleven languages: {{ id.startswith(...) }}); part of the signature
    where: str | None = None

    @field_validator("where")
    @classmethod
    def _where_is_one_expression(cls, v: str | None) -> str | None:
        """A verdict per row, read as a value, not as text: exactly one `{{ expression }}` giving True or
        False. Text (`"False"`, `"no"`, `""`) is refused here: read as a template it would keep or drop
        every row, whatever the text says."""
        from glotbench.tasks.template import one_expression

        if v is not None and one_expression(v) is None:
            raise ValueError(f"{v[:40]!r} is not one template expression giving True or False per row, e.g. "
                             "\"{{ lang == 'my' }}\" (leave data.where out to keep every row)")
        return v

    @model_validator(mode="after")
    def _one_source(self) -> "DataSpec":
        if (self.hub is None) == (self.file is None):
            raise ValueError("give exactly one of hub (a hub dataset) or file (a local file)")
        if self.hub is not None and not self.revision:
            raise ValueError("revision: missing (a hub dataset is pinned to a commit hash)")
        if self.roles and not self.join:
            raise ValueError("join: missing (the column that pairs the rows of the roles)")
        if self.roles and self.config:
            raise ValueError("config and roles: give one (roles name a config each)")
        return self


class FixedChoices(Part):
    fixed: list[Annotated[str, Field(min_length=1)]] = Field(min_length=2)


class FieldsSpec(Part):
    """Each value is a column name (dotted for a role: `target.text`) or a template over the row."""

    id: str | None = None  # default: the row's position
    public: dict[str, str] | list[str] = {}  # what a model may see; a list keeps the column names
    # per-item option texts (columns or templates), the same for every item (fixed), or one column
    # holding a list or one template rendering a list literal (lm-eval's doc_to_choice: "{{choices.text}}")
    choices: list[str] | FixedChoices | str | None = None
    gold: dict[str, str | list[str]] = {}  # never shown to a model; `answer` for choices and matches
    meta: dict[str, str] = {}  # groups, clusters, facts kept with each sample


class FewShotSpec(Part):
    n: int = Field(0, ge=0)
    split: str | None = None  # the hub split the shots come from; default: the evaluated one (never the item itself)
    seed: int = 1234
    # random: drawn per item with its own seed; first_n: the first n; sequential: one random stream over
    # the items in order, as lm-eval's default sampler draws (Random(seed).sample, the item left out)
    sampler: Literal["random", "first_n", "sequential"] = "random"
    ids: list[str] = []  # fixed shots, by id (then n is their number)
    match: str | None = None  # a public or meta field the examples share with the item (MMLU: subject)
    multiturn: bool = False  # each shot its own user/assistant turn (lm-eval's fewshot_as_multiturn)
    answer: str | None = None  # a shot's answer, a template over its public and gold fields (default:
    # its option label, else its reference, else its answer)
    delimiter: str = "\n\n"  # between shots in one turn and in the plain-text prompt
    # sequential: draw one example more and drop the item if drawn. Default: when the pool is the
    # evaluated split. lm-eval does it whenever its few-shot split is named as its test split, or
    # neither is named (XNLI's, drawn from train)
    draw_spare: bool | None = None


class LoglikSpec(Part):
    # " A".." D", the option texts, or one template per choice over the item's public fields (lm-eval's
    # doc_to_choice when it differs from the options shown: XNLI's whole sentences)
    continuations: Literal["labels", "texts"] | list[str] = "labels"
    delimiter: str = " "  # before each continuation
    norm: Literal["sum", "token", "char", "byte", "grapheme"] = "sum"  # the headline normalisation
    # how context and continuation are tokenised (glotbench.models.base.LoglikEncoding): lm-eval's rule
    # moves the context's trailing whitespace into the continuation (prompt=lm-eval, imported tasks)
    encoding: Literal["joint", "lm-eval"] = "joint"


def _kind(v: Any) -> Any:
    return {"kind": v} if isinstance(v, str) else v


class OptionAccuracy(Part):
    kind: Literal["option_accuracy"]
    # true: also balanced accuracy (mean recall over gold classes) and SEA-HELM's normalized_accuracy
    # (balanced accuracy against the 1/k floor), the headline, as SEA-HELM's F1AccMetric scores
    balanced: bool = False


class ExactMatch(Part):
    kind: Literal["exact_match"]
    ignore: list[str] = []  # regexes removed from answer and gold first (lm-eval's regexes_to_ignore)
    normalise: list[Literal["strip", "lower", "casefold", "nfkc", "collapse_spaces", "remove_punct",
                            "ascii_digits", "remove_zero_width", "remove_ascii_punct",
                            "remove_ascii_digits"]] = ["strip", "collapse_spaces"]
    # The closed set the gold answers come from (MASSIVE's 60 intent names), or [] for none: a gold
    # outside it (after `normalise`) is an error when the data is loaded, not an item nobody can answer.
    # A check, not a setting: left out of the task's hash.
    labels: list[str] = []

    @field_validator("ignore")
    @classmethod
    def _patterns(cls, v: list[str]) -> list[str]:
        for p in v:
            try:
                re.compile(p)
            except re.error as e:
                raise ValueError(f"{p!r} is not a valid regex ({e})") from None
        return v


class NumericMatch(Part):
    kind: Literal["numeric_match"]


class TokenF1(Part):
    kind: Literal["token_f1"]
    refs: Literal["max", "first"] = "max"
    norm: Literal["unicode", "squad", "mkqa"] = "unicode"
    empty: Literal["v1.1", "v2.0", "mkqa"] = "v1.1"  # an empty answer or reference (metrics/token_f1.py)
    exact_match: bool = False  # also SQuAD's exact match, under the same normalisation


class Corpus(Part):
    kind: Literal["corpus"]
    metrics: list[Literal["chrf++", "chrf", "bleu"]] = Field(["chrf++", "bleu"], min_length=1)
    bleu_tokenize: Literal["none", "13a"] = "none"  # over segmented text (lo, th, km, my)
    segment: bool = True  # false: sacrebleu's defaults on the text as written (BLEU 13a), as lm-eval scores


class Rouge(Part):
    kind: Literal["rouge"]
    # segmenter: the language's glotbench segmenter; seahelm: SEA-HELM's multilingual rouge tokenizer
    tokenize: Literal["segmenter", "seahelm"] = "segmenter"


class IFEval(Part):
    kind: Literal["ifeval"]
    # word counts of a language written without spaces: its word segmenter (Thai, Lao; Khmer and
    # Burmese have none: left out), or SEA-HELM's rule (left out for th, lo, km, my)
    words: Literal["segmenter", "seahelm"] = "segmenter"
    language_gate: bool = True  # an instruction counts as followed only in the expected language (SEA-HELM)


class EntityF1(Part):
    kind: Literal["entity_f1"]
    # the tag names of integer gold tags, by index (WikiANN's ner_tags: O, B-PER, I-PER, ...); empty:
    # the gold tags are the names themselves
    labels: list[str] = []


class InspectScore(Part):
    """One of Inspect's scorers, as inspect_ai 0.3.285 scores (glotbench.tasks.inspect_rules): an
    imported eval.yaml's `exact`, `f1`, `match` (not numeric), `includes`, `pattern` or `answer`."""

    kind: Literal["inspect"]
    scorer: Literal["exact", "f1", "match", "includes", "pattern"]
    location: Literal["begin", "end", "any", "exact"] = "end"  # match's
    ignore_case: bool = True  # match's, includes' and pattern's
    stop_words: list[str] | None = None  # f1's
    pattern: str | None = None  # pattern's regular expression (Python's re; answer's letter/word/line ones)
    match_all: bool = False  # pattern's: every group must match

    @model_validator(mode="after")
    def _pattern(self) -> "InspectScore":
        if (self.scorer == "pattern") != (self.pattern is not None):
            raise ValueError("pattern: given with scorer pattern, and only then")
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as e:
                raise ValueError(f"pattern: not a valid regular expression ({e})") from None
        return self


class Criterion(Part):
    name: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_]*$")]
    description: str
    scale: tuple[int, int] = (1, 5)  # lowest and highest score

    @field_validator("scale", mode="before")
    @classmethod
    def _scale(cls, v: Any) -> Any:
        return tuple(v) if isinstance(v, list) else v

    @model_validator(mode="after")
    def _order(self) -> "Criterion":
        if self.scale[0] >= self.scale[1]:
            raise ValueError(f"scale: the lowest score must be below the highest, got {list(self.scale)}")
        return self


class Rubric(Part):
    kind: Literal["rubric"]
    criteria: list[Criterion] = Field(default_factory=list)  # pointwise: each scored on its scale
    reference: bool = True  # the gold `reference` is shown to the judge
    pairwise: bool = False  # the answer against the reference answer, both orders, win/tie/loss
    judges: list[str] = []  # judge model specs (--judge overrides)
    same_family: bool = False  # also skip judges of the candidate's family, not only the candidate itself
    language: str | None = None  # the language named to the judge (default: the task's)

    @model_validator(mode="after")
    def _shape(self) -> "Rubric":
        if not self.pairwise and not self.criteria:
            raise ValueError("criteria: a pointwise rubric needs at least one criterion")
        if self.pairwise and not self.reference:
            raise ValueError("pairwise: the answer is compared with the reference, so reference must be true")
        names = [c.name for c in self.criteria]
        if len(set(names)) != len(names):
            raise ValueError("criteria: a name is given twice")
        return self


class ScorerSpec(Part):
    """What every scorer's keys have: its kind. A scorer kind registered from outside validates its
    keys with its own model (`Spec`, with `kind: Literal["KIND"]`): in a TaskSpec it is one of these."""

    model_config = ConfigDict(frozen=True, extra="allow", strict=True)
    kind: str


BUILT_IN_SCORERS: tuple[type[Part], ...] = (OptionAccuracy, ExactMatch, NumericMatch, TokenF1, Corpus, Rouge, IFEval,
                                             EntityF1, InspectScore, Rubric)
_BUILT_IN_KINDS = {c.model_fields["kind"].annotation.__args__[0]: c for c in BUILT_IN_SCORERS}  # type: ignore[union-attr]


def _plugin_scorer(v: Any) -> Any:
    """A scorer kind registered from outside (glotbench.plugins.register_scorer, the entry-point group
    `glotbench.scorers`): its keys validated by the scorer's own `Spec` model."""
    from pydantic import ValidationError

    from glotbench.plugins import scorer_entry, scorers

    if isinstance(v, BaseModel):
        return v
    kind = v.get("kind") if isinstance(v, dict) else None
    entry = scorer_entry(kind) if isinstance(kind, str) else None
    if entry is None:
        raise ValueError(f"unknown scorer kind {kind!r}; kinds: {', '.join([*_BUILT_IN_KINDS, *scorers()])}")
    try:
        model = entry.resolve().Spec
    except Exception as e:  # noqa: BLE001 - the plugin's module, or its class without a Spec
        raise ValueError(f"the plugin scorer {kind} ({entry.target}) cannot be loaded: {type(e).__name__}: {e}") from None
    try:
        return model.model_validate(v)  # type: ignore[no-any-return]
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ValueError(f"{kind}: {where + ': ' if where else ''}{first['msg']}") from None


def _scorer_tag(v: Any) -> str:
    kind = v.get("kind") if isinstance(v, dict) else getattr(v, "kind", None)
    if isinstance(kind, str) and kind in _BUILT_IN_KINDS and not (isinstance(v, BaseModel) and type(v) is not _BUILT_IN_KINDS[kind]):
        return kind
    return "Plugin"  # upper case: an error's location step, not a key (tasks.files.data_path)


# A built-in kind's keys are validated by its model here; any other kind by the registered scorer's
# `Spec` (a task file names a plugin's scorer as it names a built-in one).
Scorer = Annotated[Union[Annotated[OptionAccuracy, Tag("option_accuracy")], Annotated[ExactMatch, Tag("exact_match")],
                         Annotated[NumericMatch, Tag("numeric_match")], Annotated[TokenF1, Tag("token_f1")],
                         Annotated[Corpus, Tag("corpus")], Annotated[Rouge, Tag("rouge")], Annotated[IFEval, Tag("ifeval")],
                         Annotated[EntityF1, Tag("entity_f1")], Annotated[InspectScore, Tag("inspect")],
                         Annotated[Rubric, Tag("rubric")],
                         Annotated[ScorerSpec, PlainValidator(_plugin_scorer), Tag("Plugin")]],
                   Discriminator(_scorer_tag), BeforeValidator(_kind)]
Step = Union[str, dict[str, Any]]


def _free_text() -> dict[str, list[Step]]:
    """The default extraction: one pipeline, the whole reply."""
    return {"answer": ["free_text"]}


PARTS_A_VARIANT_REPLACES = ("fewshot", "loglik", "extract", "scorer")


class PromptVariant(Part):
    system: str | None = None
    preamble: str | None = None  # lm-eval's description: starts the plain-text prompt (before the few-shot
    # examples), and is the chat form's system message (after `system`, joined by the few-shot delimiter)
    user: str | None = None  # the chat user turn; default: the plain-text prompt's template (`text`)
    text: str | None = None  # the plain-text prompt (base models); default: user + "\n" + answer_prefix
    answer_prefix: str = ""  # ends the plain-text prompt ("Answer:")
    stop: list[str] = ["\n"]  # stop sequences of the plain-text form
    labels: Literal["latin", "native"] = "latin"  # option labels shown: A B C D, or the language's own
    max_tokens: int = Field(256, ge=1)  # reply cap
    vars: dict[str, Any] = {}  # constants the prompt templates see as `vars` (per-language words)
    # What a variant changes besides its templates (a variant that scores as another tool scores:
    # `prompt=lm-eval`); each replaces the task's own part when given.
    defaults: dict[str, Scalar] = {}  # option defaults of runs of this variant ({method: loglik, split: validation})
    fewshot: FewShotSpec | None = None
    loglik: LoglikSpec | None = None
    extract: dict[str, list[Step]] | None = None
    scorer: Scorer | None = None

    @model_validator(mode="after")
    def _a_prompt(self) -> "PromptVariant":
        if self.user is None and self.text is None:
            raise ValueError("user: missing (the chat prompt; or give text, the plain-text prompt, used for both)")
        return self


class PromptSpec(PromptVariant):
    variants: dict[str, PromptVariant] = {}  # selected by --bench-opt prompt=NAME

    def variant(self, name: str) -> PromptVariant:
        if name == "default":
            return self
        if name not in self.variants:
            raise ValueError(f"no prompt variant {name!r}; the task has: default"
                             + "".join(f", {v}" for v in self.variants))
        return self.variants[name]


class TaskSpec(Part):
    name: str
    version: str  # quote it in YAML ("1.0"): a number would lose trailing zeros
    description: str = ""
    options: dict[str, OptionSpec] = {}
    language: str | None = None  # a profile code, ISO 639-3 or a FLORES code (lao_Laoo); templated
    # the language of the public text where it is not the task's (a translation's source); templated.
    # Rows are checked against it; `language` (the target) still picks the segmenter and extraction
    input_language: str | None = None
    data: DataSpec
    fields: FieldsSpec = FieldsSpec()
    groups: list[str] = []  # meta keys the scores are reported by
    cluster: str | None = None  # a meta key: items sharing its value form a cluster (recorded for the CI)
    prompt: PromptSpec
    fewshot: FewShotSpec = FewShotSpec()
    loglik: LoglikSpec = LoglikSpec()
    extract: dict[str, list[Step]] = Field(default_factory=_free_text, min_length=1)
    headline: str | None = None  # the pipeline whose score is the headline (default: the first)
    scorer: Scorer
    # a fields.public key whose text is itself a possible answer (a translation's source copied): the
    # run scores it as every item's reply, the input-unchanged floor shown beside the score
    input_answer: str | None = None
    # licence, origin, upstream, citation, the languages covered and the options selecting each
    # (glotbench/datasheet.py); not part of the signature (it changes no score)
    datasheet: Datasheet | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.fullmatch(v):
            raise ValueError("must be lower-case letters, digits, '.', '_' or '-', starting with a letter or digit")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "TaskSpec":
        if self.headline is not None and self.headline not in self.extract:
            raise ValueError(f"headline: {self.headline!r} is not one of the pipelines ({', '.join(self.extract)})")
        variants = {"": self.prompt, **{f"prompt.variants.{k}.": v for k, v in self.prompt.variants.items()}}
        for where, v in variants.items():
            for name in (v.extract if v.extract is not None else self.extract if not where else {}):
                if not _NAME.fullmatch(name) or name.startswith("loglik") or name == "failures":
                    raise ValueError(f"{where}extract: {name!r} is not a pipeline name (lower-case, not loglik...)")
            scorer = v.scorer or self.scorer
            if scorer.kind == "option_accuracy" and self.fields.choices is None:
                raise ValueError("fields.choices: option_accuracy needs the options (columns, or fixed)"
                                 + (f" ({where[:-1]})" if where else ""))
        if self.input_answer is not None and self.input_answer not in self.fields.public:
            raise ValueError(f"input_answer: {self.input_answer!r} is not one of fields.public")
        if self.cluster is not None and self.cluster not in self.fields.meta:
            raise ValueError(f"cluster: {self.cluster!r} is not one of fields.meta")
        for g in self.groups:
            if g not in self.fields.meta and g != "lang":
                raise ValueError(f"groups: {g!r} is not one of fields.meta (or lang)")
        for code, opts in (self.datasheet.languages.items() if self.datasheet else ()):
            for k, val in opts.items():
                if k not in self.options:
                    raise ValueError(f"datasheet.languages.{code}: {k!r} is not one of options")
                choices = self.options[k].choices
                if choices is not None and val not in choices:
                    raise ValueError(f"datasheet.languages.{code}: {k}={val!r} is not one of its choices")
                pattern = self.options[k].pattern
                if pattern is not None and not re.fullmatch(pattern, str(val)):
                    raise ValueError(f"datasheet.languages.{code}: {k}={val!r} does not match {pattern}")
            ran = self._language_under(opts)
            if ran is not None and ran != code:
                raise ValueError(f"datasheet.languages.{code}: with {', '.join(f'{k}={v}' for k, v in opts.items()) or 'the defaults'}"
                                 f" the task runs in {ran}, not {code}")
        return self

    def _language_under(self, opts: dict[str, Any]) -> str | None:
        """The language group a run with these options (the rest at their defaults) is in
        (languages.language_group: `zho_Hant` is `zh-Hant`); None where the task names none, or its
        language template cannot be filled without a run's other settings."""
        from glotbench.languages import language_group
        from glotbench.tasks.template import is_template, render

        if not self.language:
            return None
        if not is_template(self.language):
            return language_group(self.language)
        values = {k: o.default for k, o in self.options.items()} | dict(opts)
        try:
            return language_group(render(self.language, values))
        except Exception:  # an option without a default the datasheet does not set: not decided here
            return None
