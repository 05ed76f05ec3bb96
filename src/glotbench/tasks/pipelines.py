"""Extraction pipelines: named steps over a reply, each reading through the language's habits.

A pipeline is a list of steps; each step takes the text so far and gives the next text, or fails
with a kind that is counted apart from wrong answers. Steps (a name, or `{name: argument}`):

    strip_think            drop <think>...</think> (an unclosed block: no answer)
    json_field: KEY        the string value of KEY in the reply's JSON object (fences and prose tolerated)
    tag: NAME              the content of the last closed <NAME>...</NAME> ({name, missing: keep} keeps
                           a reply without the tag)
    option_letter          the chosen option A-E (glotbench.extract.mc_letter, rule answer_phrase or
                           first_standalone) with whitespace, ZWSP, ZWNJ, WJ, NBSP and BOM read as word
                           breaks in the answer phrase (Khmer, Burmese, Lao and Thai replies carry them:
                           glotbench.languages.breakable); native labels (ก ข ค ง, ກ ຂ ຄ ງ, أ ب ج د) read as
                           A-D; failing a letter ({text: false} turns this off), the one option whose
                           text (or label word) the reply names, zero-width characters ignored
    option_text            the one option whose text the reply names (classification over many labels)
    number                 the last number, native digits read as ASCII ({marker: "####"}: after the
                           marker's last occurrence, word breaks read as in answer phrases)
    regex: PATTERN         group 1 (or the whole match) of the first match ({pattern, group, last: true,
                           missing: keep}: no match keeps the reply);
                           {pattern, select: N}: lm-eval's regex filter (findall's item N, -1 the last,
                           its first non-empty group, stripped)
    inspect_choice         the letter after the last `ANSWER:`, as Inspect's multiple_choice solver reads
                           it (glotbench.tasks.inspect_rules.choice_answer; one answer)
    first_line             the first non-empty line
    remove_zero_width      format characters removed (ZWSP, ZWNJ, ZWJ, WJ, BOM, soft hyphen, bidi marks)
    free_text              the text, stripped; empty is no answer
    raw                    the text as it is, empty included (lm-eval's take_first)
    lower, upper           the text in lower or upper case (lm-eval's lowercase and uppercase filters)
    seahelm_label: {tag}   SEA-HELM's label reading (F1AccMetric): the label after the answer tag, else
                           the whole reply, normalised and matched to an option's text
    bio_tags               every named-entity tag in the reply (O, B-PER, I-LOC, ...), in order, space-
                           separated (a reply echoing each token before its tag gives the tags alone)

Several pipelines run side by side over the same reply (lm-eval's filter_list); the task names one
the headline. Each pipeline's description (its steps and arguments) is part of the signature.

A step from outside the package (`glotbench.plugins.register_step`, or an entry point of the group
`glotbench.steps`) is named in a pipeline as a built-in one is, and described in the signature with
its declared version (`thai_year@v2(...)`); a plugin step that takes a built-in's name is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from glotbench.errors import DataError
from glotbench.extract import Extraction, extract_tag, json_field, last_number, mc_letter, named_option, strip_think
from glotbench.languages import remove_zero_width

StepFn = Callable[[str, Mapping[str, str]], Extraction]  # (text, {label: option text}) -> next text


def _think(_: Any) -> StepFn:
    def step(text: str, options: Mapping[str, str]) -> Extraction:
        body, ok = strip_think(text)
        return Extraction(body) if ok else Extraction(None, "think_unclosed")
    return step


def _json(key: Any) -> StepFn:
    if not isinstance(key, str) or not key:
        raise ValueError("json_field takes the key's name")
    return lambda text, options: json_field(text, key)


def _tag(arg: Any) -> StepFn:
    name, missing = (arg, "fail") if isinstance(arg, str) else (_get(arg, "name", str), _get(arg, "missing", str, "fail"))
    if missing not in ("fail", "keep"):
        raise ValueError("tag: missing must be fail or keep")

    def step(text: str, options: Mapping[str, str]) -> Extraction:
        content, state = extract_tag(text, name)
        if state == "closed":
            return Extraction(content)
        if state == "missing" and missing == "keep":
            return Extraction(text)
        return Extraction(None, "no_tag" if state == "missing" else "tag_unclosed")
    return step


def _letter(arg: Any) -> StepFn:
    rule = _get(arg, "rule", str, "answer_phrase") if arg is not None else "answer_phrase"
    by_text = _get(arg, "text", bool, True) if arg is not None else True
    if rule not in ("answer_phrase", "first_standalone"):
        raise ValueError("option_letter: rule must be answer_phrase or first_standalone")

    def step(text: str, options: Mapping[str, str]) -> Extraction:
        if len(options) > 5:
            raise ValueError("option_letter reads A-E; this item has more options: use option_text")
        got = mc_letter(text, rule=rule)
        if got.answer is None and by_text and options:
            hit = _named(text, options)
            return Extraction(hit) if hit else got
        return got
    return step


def _named(text: str, options: Mapping[str, str]) -> str | None:
    """The option the reply names (format characters removed from both sides by named_option)."""
    return named_option(text, options, longest=True)


def _option_text(_: Any) -> StepFn:
    def step(text: str, options: Mapping[str, str]) -> Extraction:
        hit = _named(text, options)
        return Extraction(None, "no_option") if hit is None else Extraction(hit)
    return step


def _number(arg: Any) -> StepFn:
    marker = _get(arg, "marker", str, None) if arg is not None else None

    def step(text: str, options: Mapping[str, str]) -> Extraction:
        got = last_number(text, marker=marker)
        return Extraction(None, "no_number") if got is None else Extraction(str(got))
    return step


def _regex(arg: Any) -> StepFn:
    import regex

    pattern = arg if isinstance(arg, str) else _get(arg, "pattern", str)
    last = False if isinstance(arg, str) else _get(arg, "last", bool, False)
    try:
        rx = regex.compile(pattern)
    except regex.error as e:
        raise ValueError(f"regex: not a valid pattern ({e})") from None
    if isinstance(arg, Mapping) and "select" in arg:
        return _findall(rx, _get(arg, "select", int))
    group = (1 if rx.groups else 0) if isinstance(arg, str) else _get(arg, "group", int, 1 if rx.groups else 0)
    if group > rx.groups:
        raise ValueError(f"regex: the pattern has {rx.groups} groups, not {group}")
    missing = "fail" if isinstance(arg, str) else _get(arg, "missing", str, "fail")
    if missing not in ("fail", "keep"):
        raise ValueError("regex: missing must be fail or keep")

    def step(text: str, options: Mapping[str, str]) -> Extraction:
        found = list(rx.finditer(text)) if last else [m for m in [rx.search(text)] if m]
        if not found:  # keep: the whole reply (SEA-HELM's return_original_response_on_failure)
            return Extraction(text) if missing == "keep" else Extraction(None, "no_match")
        return Extraction(found[-1].group(group))
    return step


def _findall(rx: Any, select: int) -> StepFn:
    """lm-eval's regex filter: item `select` of findall (negative: from the end); a match of several
    groups gives its first non-empty group; stripped."""
    def step(text: str, options: Mapping[str, str]) -> Extraction:
        found = rx.findall(text)
        if not found or not -len(found) <= select < len(found):
            return Extraction(None, "no_match")
        got = found[select]
        if isinstance(got, tuple):
            got = next((g for g in got if g), None)
            if got is None:
                return Extraction(None, "no_match")
        return Extraction(got.strip())
    return step


def _seahelm_label(arg: Any) -> StepFn:
    """SEA-HELM's F1AccMetric.extract_response: `TAG[\\s\\*]*(LABEL|LABEL...)+` searched case-insensitively
    (the labels unescaped, as SEA-HELM writes them; the options' texts in their order), its group 1,
    else the whole reply; stripped; SEA-HELM's normalize_answer (lower case, ASCII punctuation, spaces
    and newlines stripped from both ends, runs of whitespace made one space); the option whose text
    is that, lower-cased, or no answer (SEA-HELM's "null" label, a miss)."""
    import re
    import string

    tag = _get(arg, "tag", str)

    def step(text: str, options: Mapping[str, str]) -> Extraction:
        labels = "|".join(options.values())
        try:
            found = re.search(tag + rf"[\s\*]*({labels})+", text, flags=re.IGNORECASE)
        except re.error:  # a label or tag that is not a valid pattern: read literally
            found = re.search(re.escape(tag) + r"[\s\*]*(" + "|".join(map(re.escape, options.values())) + ")+",
                              text, flags=re.IGNORECASE)
        got = (found.group(1) if found and found.group(1) is not None else text).strip()
        got = " ".join(got.lower().strip(string.punctuation + " " + "\n").split())
        hit = {t.lower(): label for label, t in reversed(list(options.items()))}.get(got)
        return Extraction(None, "no_option") if hit is None else Extraction(hit)

    return step


def _inspect_choice(_: Any) -> StepFn:
    def step(text: str, options: Mapping[str, str]) -> Extraction:
        from glotbench.tasks.inspect_rules import choice_answer

        got = choice_answer(text, len(options))
        return Extraction(got) if got is not None else Extraction(None, "no_letter")
    return step


def _raw(_: Any) -> StepFn:
    return lambda text, options: Extraction(text)


def _case(upper: bool) -> Callable[[Any], StepFn]:
    return lambda _: (lambda text, options: Extraction(text.upper() if upper else text.lower()))


def _first_line(_: Any) -> StepFn:
    def step(text: str, options: Mapping[str, str]) -> Extraction:
        line = next((x.strip() for x in text.splitlines() if x.strip()), "")
        return Extraction(line) if line else Extraction(None, "empty")
    return step


def _zw(_: Any) -> StepFn:
    return lambda text, options: Extraction(remove_zero_width(text))


_BIO = re.compile(r"(?<![\w-])(?:[BIES]-[A-Za-z]+|O)(?![\w-])")


def _bio_tags(_: Any) -> StepFn:
    """Every named-entity tag in the reply (O, B-PER, I-LOC, ...), in order, space-separated; a reply
    that echoes each token before its tag still gives the tags alone."""
    def step(text: str, options: Mapping[str, str]) -> Extraction:
        tags = _BIO.findall(text)
        return Extraction(" ".join(tags)) if tags else Extraction(None, "no tags")
    return step


def _free(_: Any) -> StepFn:
    return lambda text, options: Extraction(text.strip()) if text.strip() else Extraction(None, "empty")


STEPS: dict[str, Callable[[Any], StepFn]] = {
    "strip_think": _think, "json_field": _json, "tag": _tag, "option_letter": _letter,
    "option_text": _option_text, "number": _number, "regex": _regex, "first_line": _first_line,
    "remove_zero_width": _zw, "free_text": _free, "raw": _raw, "lower": _case(False), "upper": _case(True),
    "seahelm_label": _seahelm_label, "bio_tags": _bio_tags, "inspect_choice": _inspect_choice,
}
_NEEDS_ARG = {"json_field", "tag", "regex", "seahelm_label"}
# The steps that read through glotbench's shared reading rules carry their version in the signature
# (`option_letter@r5`): a changed rule changes every task's signature (extract.READING_VERSION).
READS = frozenset({"option_letter", "option_text", "number", "remove_zero_width"})


def _get(arg: Any, key: str, kind: type, default: Any = ...) -> Any:
    if not isinstance(arg, Mapping):
        raise ValueError(f"takes a mapping with {key!r}")
    unknown = set(arg) - {"name", "missing", "rule", "text", "marker", "pattern", "group", "last", "select", "tag"}
    if unknown:
        raise ValueError(f"unknown argument {sorted(unknown)[0]!r}")
    if key not in arg:
        if default is ...:
            raise ValueError(f"{key}: missing")
        return default
    value = arg[key]
    if not isinstance(value, kind) or kind is int and isinstance(value, bool):
        raise ValueError(f"{key} must be {kind.__name__}, got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class Pipeline:
    name: str
    steps: tuple[StepFn, ...]
    description: str  # the steps and their arguments, as the signature names them

    def __call__(self, text: str, options: Mapping[str, str]) -> Extraction:
        out = Extraction(text)
        for step in self.steps:
            out = step(out.answer or "", options)
            if out.answer is None:
                return Extraction(None, out.failure or "format")
        return out


@dataclass(frozen=True)
class _Step:
    """A step as a pipeline uses it: its factory, whether a bare name is an error, and the name the
    signature gives it (a reading rule's or a plugin's version after `@`)."""

    factory: Callable[[Any], StepFn]
    needs_arg: bool
    signed: str


def _step(name: str) -> _Step | None:
    """The built-in step `name`, else a registered one (plugins), else None; a plugin that takes a
    built-in's name is refused, never silently one or the other."""
    from glotbench.plugins import step_entry

    entry = step_entry(name)
    if name in STEPS:
        if entry is not None:
            raise ValueError(f"{name} is a built-in step and also registered by a plugin ({entry.target}): "
                             "rename the plugin's step")
        return _Step(STEPS[name], name in _NEEDS_ARG, name)
    if entry is None:
        return None
    try:
        factory = entry.resolve()
    except Exception as e:  # noqa: BLE001 - the plugin's module failed: one line, the step named
        raise ValueError(f"the plugin step {name} ({entry.target}) cannot be loaded: {e}") from None
    needs_arg = bool(entry.kwargs.get("needs_arg", getattr(factory, "needs_arg", False)))
    version = entry.kwargs.get("version", getattr(factory, "version", None))
    return _Step(lambda arg: _typed(name, factory, arg), needs_arg, name if version is None else f"{name}@v{version}")


def _typed(name: str, factory: Callable[[Any], Any], arg: Any) -> StepFn:
    """A plugin's step built from its argument (any error of its factory is a bad argument: one line),
    its result made an Extraction: a string is the next text, None no answer (failure `no_answer`);
    anything else is that step's error, raised where the reply is scored (a `scorer_error`)."""
    try:
        fn = factory(arg)
    except Exception as e:  # noqa: BLE001 - the plugin's own check of its argument, or its bug
        raise ValueError(str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}") from None
    if not callable(fn):
        raise ValueError(f"its factory gave {type(fn).__name__}, not a step")

    def step(text: str, options: Mapping[str, str]) -> Extraction:
        got = fn(text, options)
        if isinstance(got, Extraction):
            return got
        if got is None or isinstance(got, str):
            return Extraction(got, None if got is not None else "no_answer")
        raise TypeError(f"step {name} gave {type(got).__name__}, not an Extraction, a string or None")
    return step


def _describe(name: str, arg: Any) -> str:
    if name in READS:
        from glotbench.extract import READING_VERSION  # read when called: a bumped rule is a new signature

        name = f"{name}@r{READING_VERSION}"
    if arg is None:
        return name
    if isinstance(arg, Mapping):
        return name + "(" + ",".join(f"{k}={arg[k]}" for k in sorted(arg)) + ")"
    return f"{name}({arg})"


def build_pipeline(name: str, steps: Sequence[Any], where: Callable[..., str]) -> Pipeline:
    """A pipeline from its steps as a task file writes them; a bad step is an error at `where`."""
    fns, parts = [], []
    if not steps:
        raise DataError(f"{where('extract', name)}: a pipeline needs at least one step")
    for i, raw in enumerate(steps):
        if isinstance(raw, str):
            step, arg = raw, None
        elif isinstance(raw, Mapping) and len(raw) == 1:
            step, arg = next(iter(raw.items()))
        else:
            raise DataError(f"{where('extract', name, i)}: a step is a name or {{name: argument}}")
        try:
            found = _step(str(step))
        except ValueError as e:
            raise DataError(f"{where('extract', name, i)}: {e}") from None
        if found is None:
            from glotbench.plugins import steps as plugin_steps

            raise DataError(f"{where('extract', name, i)}: unknown step {step!r}; steps: {', '.join([*STEPS, *plugin_steps()])}")
        if found.needs_arg and arg is None:
            raise DataError(f"{where('extract', name, i)}: {step} needs an argument ({step}: ...)")
        try:
            fns.append(found.factory(arg))
        except ValueError as e:
            raise DataError(f"{where('extract', name, i)}: {step}: {e}") from None
        parts.append(_describe(found.signed, arg))
    return Pipeline(name, tuple(fns), ">".join(parts))
