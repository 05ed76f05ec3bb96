"""Task templates: Jinja2 in its sandboxed environment with `StrictUndefined`, one environment for
every template a task holds (prompts, field mappings, data settings).

A template may read the values it is given and nothing else: the sandbox refuses attribute access
to Python internals, and an undefined name is an error (never an empty string). Filters added to
Jinja's own: `letter(base=0)` (0 -> A; `letter(1)`: 1 -> A, as Belebele's `correct_answer_num`),
`language_name` (`lao_Laoo` -> Lao), `native_digits(code)` (ASCII digits in the language's own) and
`digest` (SHA-256, 12 hex: a short key for a long field, such as a passage that makes a cluster) and
`regex_replace(pattern, repl)` (`re.sub`, lm-eval's filter of that name). Trailing newlines are kept,
as lm-eval's environment keeps them.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Iterable, Iterator, Mapping

from glotbench.errors import DataError

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def letter(value: Any, base: int = 0) -> str:
    """The option letter of an index: `0 | letter` is A, `"1" | letter(1)` is A; a whole number
    written as a float (`1.0`: a pandas label column that held a missing value) reads as that number."""
    try:
        text = str(value).strip()
        number = float(text) if isinstance(value, float) or "." in text else int(text)
        if isinstance(value, bool) or not float(number).is_integer():
            raise ValueError
        i = int(number) - base
    except (ValueError, OverflowError):
        raise ValueError(f"letter: {value!r} is not a whole number") from None
    if not 0 <= i < len(LETTERS):
        raise ValueError(f"letter: {value!r} is out of range (base {base})")
    return LETTERS[i]


def language_name(code: Any) -> str:
    from glotbench.languages import profile, resolve_code

    p = profile(resolve_code(str(code)))
    return p.name if p else str(code)


def native_digits(value: Any, code: str) -> str:
    from glotbench.languages import profile, resolve_code

    p = profile(resolve_code(code))
    text = str(value)
    return text if p is None else "".join(p.digits[int(c)] if c.isascii() and c.isdigit() else c for c in text)


def digest(value: Any) -> str:
    """SHA-256 (12 hex) of a value's text: a short key for a long field (a passage, for clusters)."""
    import hashlib

    return hashlib.sha256(str(value).encode("utf-8")).hexdigest()[:12]


def regex_replace(text: Any, pattern: str, repl: str, count: int = 0) -> str:
    """`re.sub` as a filter, under lm-eval's name, so its templates render here as there."""
    import re

    return re.sub(pattern, repl, str(text), count=count)


def column(context: Any, name: Any) -> Any:
    """The row's column named by `name`: a column chosen by an option, in a table with a column per
    language (NTREX-128: `{{ opt.target | column }}`). A name the row lacks is an error naming it."""
    from jinja2.utils import missing

    if not isinstance(name, str) or name in ("opt",):
        raise ValueError(f"column: {name!r} is not a column name")
    value = context.resolve_or_missing(name)
    if value is missing:
        raise ValueError(f"column: the row has no column {name!r}")
    return value


def lm_eval_target(value: Any, choices: Any, rendered: bool = False) -> str:
    """The gold option's label by lm-eval's rule for a multiple-choice `doc_to_target`: a whole number
    is the option's index, and so is a rendered template that gives digits (lm-eval reads it with
    `ast.literal_eval`); any other text is the option with that text. `choices`: the options, or a
    rendered list literal (lm-eval's doc_to_choice template). Used by `glotbench tasks import-lm-eval`."""
    import ast

    if isinstance(choices, str):
        try:
            choices = ast.literal_eval(choices)
        except (ValueError, SyntaxError):
            raise ValueError(f"lm_eval_target: the choices {choices[:80]!r} are not a list literal") from None
    texts = [str(c) for c in choices]
    if rendered and isinstance(value, str):
        text = value
        if text.isdigit():
            value = int(text)
        elif text.startswith("[") and text.endswith("]"):
            raise ValueError(f"lm_eval_target: {text[:80]!r} is several targets (not translated)")
    if isinstance(value, int) and not isinstance(value, bool):
        index = value
    elif isinstance(value, str) and value in texts:
        index = texts.index(value)
    else:
        raise ValueError(f"lm_eval_target: {value!r} is neither an option's index nor one of {texts}")
    if not 0 <= index < len(texts):
        raise ValueError(f"lm_eval_target: index {index} is out of range ({len(texts)} options)")
    return LETTERS[index]


# Bounds of one rendering (a template is data a stranger may write: it must not hang a run or fill
# the memory). A prompt of the library's tasks is at most a few thousand characters.
MAX_CHARS = 2_000_000  # the text a template renders, and any string or list it builds on the way
MAX_STEPS = 1_000_000  # template lines executed (loops within loops)
MAX_POWER = 256  # the largest exponent of `**`


class TemplateRefused(Exception):
    """A template went past one of the bounds above, or printed a null."""


def _sized(value: Any) -> Any:
    if isinstance(value, (str, list, tuple)) and len(value) > MAX_CHARS:
        raise TemplateRefused(f"builds a value of {len(value):,} items, above the bound of {MAX_CHARS:,}")
    return value


def _check_args(name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    """A width or count argument past MAX_CHARS (`center(10**9)`, `"x".ljust(10**9)`) is refused before
    the call allocates it; `replace` is bounded by its largest possible result."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, int) and not isinstance(a, bool) and abs(a) > MAX_CHARS:
            raise TemplateRefused(f"{name}: the argument {a} is above the bound of {MAX_CHARS:,}")
    if name in ("replace",) and len(args) >= 3 and all(isinstance(a, str) for a in args[:3]):
        text, old, new = args[:3]
        if len(new) > len(old) and len(text) * max(1, len(new)) > MAX_CHARS:
            raise TemplateRefused(f"replace: could build up to {len(text) * len(new):,} characters, "
                                f"above the bound of {MAX_CHARS:,}")


def _not_null(value: Any) -> Any:
    """`{{ x }}` of a null value is an error, as an undefined name is: Jinja would write `None` into
    the prompt. `{{ x or '' }}` renders a null as empty where that is meant."""
    if value is None:
        raise TemplateRefused("a value is null (None); write {{ x or '' }} to render a null as empty")
    return value


def _bounded_filter(name: str, f: Any) -> Any:
    import functools as ft

    skip = 1 if getattr(f, "jinja_pass_arg", None) is not None else 0  # its context or environment

    @ft.wraps(f)
    def run(*args: Any, **kwargs: Any) -> Any:
        _check_args(name, args[skip:], kwargs)
        return _sized(f(*args, **kwargs))

    return run


@functools.lru_cache(maxsize=1)
def environment() -> Any:
    from jinja2 import StrictUndefined
    from jinja2.compiler import CodeGenerator
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Bounded(CodeGenerator):
        def visit_Concat(self, node: Any, frame: Any) -> None:  # `a ~ b`: its result is bounded too
            self.write("environment.sized(")
            super().visit_Concat(node, frame)
            self.write(")")

    class Sandbox(ImmutableSandboxedEnvironment):
        """The sandbox with bounds: `*`, `+`, `**` and string methods checked before they allocate,
        every built value and the output at most MAX_CHARS (see `render` for the steps)."""

        code_generator_class = Bounded
        intercepted_binops = frozenset({"*", "+", "**"})
        sized = staticmethod(_sized)

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            if operator == "**":
                if isinstance(right, (int, float)) and abs(right) > MAX_POWER:
                    raise TemplateRefused(f"** {right}: an exponent above {MAX_POWER}")
            elif operator == "*":
                for seq, n in ((left, right), (right, left)):
                    if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_CHARS:
                        raise TemplateRefused(f"* {n}: builds {len(seq) * n:,} items, above the bound of {MAX_CHARS:,}")
            return _sized(super().call_binop(context, operator, left, right))

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
            name = getattr(__obj, "__name__", "call")
            _check_args("range" if name == "safe_range" else name, args if getattr(__obj, "__self__", None) is None
                        else (__obj.__self__, *args), kwargs)
            return _sized(super().call(__context, __obj, *args, **kwargs))

    env = Sandbox(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False, finalize=_not_null)
    from jinja2 import pass_context

    env.filters.update(letter=letter, language_name=language_name, native_digits=native_digits, digest=digest,
                       regex_replace=regex_replace, lm_eval_target=lm_eval_target, column=pass_context(column))
    env.filters.update({name: _bounded_filter(name, f) for name, f in env.filters.items()})
    env.tests.update(true=lambda v: _truth_test(v, True), false=lambda v: _truth_test(v, False))
    return env


@functools.lru_cache(maxsize=2048)
def compile_template(source: str) -> Any:
    """The compiled template (cached: a task renders the same few templates for every item).
    Raises ValueError with Jinja's message on a syntax error."""
    from jinja2 import TemplateSyntaxError

    try:
        return environment().from_string(source)
    except TemplateSyntaxError as e:
        raise ValueError(f"not a valid template: {e.message} (template line {e.lineno})") from None


def is_template(text: str) -> bool:
    return "{{" in text or "{%" in text


def render(source: str, context: Mapping[str, Any], where: str = "") -> str:
    """`source` rendered with `context`; an undefined name, a filter's error, a refused attribute or a
    template past its bounds (MAX_CHARS of output, MAX_STEPS lines, MAX_POWER) is a DataError naming
    `where` (the task file's line, the item): one line, never a traceback or a hang."""
    try:
        template = compile_template(source)
        with _steps() if _loops(source) else contextlib.nullcontext():
            out: list[str] = []
            size = 0
            for chunk in template.generate(context):
                size += len(chunk)
                if size > MAX_CHARS:
                    raise TemplateRefused(f"renders more than {MAX_CHARS:,} characters")
                out.append(chunk)
            return "".join(out)
    except DataError:
        raise
    except Exception as e:  # noqa: BLE001 -- a template is data: whatever it raises is its error
        msg = _message(e)
    raise DataError(f"{where}: {msg}" if where else msg) from None


def _message(e: BaseException) -> str:
    """The one line a template's (or an expression's) error is reported as."""
    from jinja2.exceptions import SecurityError

    if isinstance(e, RecursionError):
        return "calls itself without end (a recursive macro)"
    if isinstance(e, MemoryError):
        return "ran out of memory"
    if isinstance(e, (TemplateRefused, SecurityError)):
        return str(e)
    msg = getattr(e, "message", None) or str(e) or type(e).__name__
    return f"{type(e).__name__}: {msg}" if isinstance(e, (ArithmeticError, OverflowError)) else msg


def one_expression(source: str) -> str | None:
    """The expression of a template that is exactly one `{{ expression }}` (spaces around it
    allowed), else None."""
    import re

    m = re.fullmatch(r"\s*\{\{-?(.*?)-?\}\}\s*", source, flags=re.DOTALL)
    if m is None or "{{" in m.group(1) or "{%" in m.group(1) or not m.group(1).strip():
        return None
    return m.group(1)


def expression_value(expression: str, context: Mapping[str, Any], where: str = "") -> Any:
    """The value of `expression` (`one_expression`'s) over `context`, as it is (a bool, a list, a
    string), not rendered as text; evaluated in the same sandbox, its errors one DataError line. A
    name the context lacks is an error here too (StrictUndefined)."""
    from jinja2 import Undefined

    try:
        value = _sized(environment().compile_expression(expression, undefined_to_none=False)(**context))
        if isinstance(value, Undefined):
            str(value)  # StrictUndefined: raises "'name' is undefined"
    except DataError:
        raise
    except Exception as e:  # noqa: BLE001 -- a template is data: whatever it raises is its error
        msg = _message(e)
        raise DataError(f"{where}: {msg}" if where else msg) from None
    return value


BOOLEAN_WORDS = frozenset({"true", "false", "yes", "no", "0", "1"})
NUMBER_TEXT = r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"  # a number written as text (a CSV's cell)


class NumberText(str):
    """A cell of a column of numbers written as text ("2017", "0.5": a CSV or TSV column) where a verdict
    is read (`data.where`): compared with text, it is the text it is; compared with a number or a
    boolean (`x == 1`, `x != 0`, `x in [1, 2]`: never equal) or asked for its truth value (`not x`: the
    text "0" is true) it refuses, for no text equals a number."""

    column = ""
    kind = "a number"
    fix = "convert it ({column} | float)"

    def _refuse(self) -> TemplateRefused:
        shown = f"{{{{ {self.column} == {str(self)!r} }}}}" if "[" not in self.column else f"== {str(self)!r}"
        return TemplateRefused(f"column {self.column!r} holds the text {str(self)!r}, not {self.kind}: compare it as "
                               f"text ({shown}) or {self.fix.format(column=self.column)}")

    def __bool__(self) -> bool:
        raise self._refuse()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (int, float)):  # bool too
            raise self._refuse()
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__


class TruthText(NumberText):
    """A cell of a column of truth values written as text ("False", "no", "0": a CSV or TSV flag) where a
    verdict is read (`data.where`): as NumberText, and asked for its truth value (`not x`, `x and y`,
    `if x`, `x is true`) or compared with a boolean (`x == true`) it refuses, for Python calls any
    non-empty text true and no text equal to True."""

    kind = "true/false"
    fix = "give the column as booleans"


def _truth_test(value: Any, truth: bool) -> bool:
    """Jinja's `is true` / `is false`, refusing a flag written as text (`TruthText`)."""
    if isinstance(value, TruthText):
        raise value._refuse()
    return value is truth


CellPath = tuple[str, ...]  # a cell's place in a row: its column, and the keys (or "[]", a list's elements) inside it


def cells(value: Any, path: CellPath) -> Iterator[tuple[CellPath, Any]]:
    """Every leaf of a row's value with its path: nested mappings and lists are walked."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from cells(v, (*path, str(k)))
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from cells(v, (*path, "[]"))
    else:
        yield path, value


def text_columns(rows: Iterable[Mapping[str, Any]]) -> dict[CellPath, type[NumberText]]:
    """The columns, or fields inside a column (`meta.flag`, a list's elements), whose every cell (nulls
    aside) is text spelling a truth value (BOOLEAN_WORDS, any case: flags written as text, TruthText) or
    a number (NumberText): a CSV's. A column of other text too (a UI string "No" among others) is text."""
    import re

    number = re.compile(NUMBER_TEXT)
    seen: dict[CellPath, tuple[bool, bool]] = {}  # every cell so far: (a truth word, a number)
    for row in rows:
        for path, v in cells(row, ()):
            if v is None or seen.get(path) == (False, False):
                continue
            was = seen.get(path, (True, True))
            text = v.strip() if isinstance(v, str) else None
            seen[path] = (was[0] and text is not None and text.lower() in BOOLEAN_WORDS,
                          was[1] and text is not None and number.fullmatch(text) is not None)
    return {p: TruthText if truth else NumberText for p, (truth, num) in seen.items() if truth or num}


def typed_texts(row: Mapping[str, Any], columns: Mapping[CellPath, type[NumberText]]) -> dict[str, Any]:
    """`row` with the cells at `columns` (`text_columns`) as TruthText or NumberText: a verdict that
    reads such a text as true or false, or compares it with a number, is an error, never a guess."""
    prefixes = {p[:i] for p in columns for i in range(1, len(p) + 1)}

    def wrap(value: Any, path: CellPath) -> Any:
        if path not in prefixes:
            return value
        if isinstance(value, str) and path in columns:
            t = columns[path](value)
            t.column = ".".join(path).replace(".[]", "[]")
            return t
        if isinstance(value, Mapping):
            return {k: wrap(v, (*path, str(k))) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [wrap(v, (*path, "[]")) for v in value]
        return value

    return {k: wrap(v, (k,)) for k, v in row.items()}


def _list_expression(source: str, context: Mapping[str, Any], where: str) -> list[Any] | None:
    """The value of a template that is one `{{ expression }}` when it is a list (else None: the
    template is rendered as text)."""
    expression = one_expression(source)
    if expression is None:
        return None
    value = expression_value(expression, context, where)
    return list(value) if isinstance(value, (list, tuple)) else None


@functools.lru_cache(maxsize=2048)
def _loops(source: str) -> bool:
    """Whether a template can repeat (a for loop, a macro that may call itself): only those pay for
    the step count (a line trace: about 3x the time of a prompt that has one)."""
    import re

    return re.search(r"\{%[-+]?\s*(for|macro|call)\b", source) is not None


class _steps:
    """Counts the lines a template executes (its compiled code, `<template>`), refusing more than
    MAX_STEPS: nested loops cannot hang a run. A tracer already set (coverage, a debugger) keeps
    tracing every other frame: it is called on for them, and set back afterwards."""

    def __enter__(self) -> None:
        import sys

        self.before = sys.gettrace()
        self.count = 0
        sys.settrace(self._call)

    def __exit__(self, *exc: Any) -> None:
        import sys

        sys.settrace(self.before)

    def _call(self, frame: Any, event: Any, arg: Any) -> Any:  # event: sys.settrace's Literal kinds
        if frame.f_code.co_filename == "<template>":
            return self._line
        return self.before(frame, event, arg) if self.before is not None else None

    def _line(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            self.count += 1
            if self.count > MAX_STEPS:
                raise TemplateRefused(f"runs more than {MAX_STEPS:,} steps (loops within loops)")
        return self._line


def value_of(spec: str, row: Mapping[str, Any], where: str = "", lists: bool = False) -> Any:
    """A field mapping's value: a template (text), or a column name, dotted for a joined role
    (`source.text`); a column the row lacks is an error naming it. With `lists` (gold fields), a
    template that is one expression giving a list keeps the list (MKQA's answers and their aliases
    in the run's language: `{{ answers[opt.config] | map(attribute='text') | list }}`)."""
    if is_template(spec):
        if lists:
            found = _list_expression(spec, row, where)
            if found is not None:
                return found
        return render(spec, row, where)
    value: Any = row
    for part in spec.split("."):
        if not isinstance(value, Mapping) or part not in value:
            have = (", ".join(sorted(str(k) for k in value if k != "opt")) if isinstance(value, Mapping)
                    else type(value).__name__)
            raise DataError(f"{where}: no column {spec!r} (the row has: {have})")
        value = value[part]
    from glotbench.tasks.source import Binary

    if isinstance(value, Binary):  # bytes in the row: an image, audio
        raise DataError(f"{where}: column {spec!r}: {value.problem()}")
    return value
