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

import functools
from typing import Any, Mapping

from glotbench.errors import DataError

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def letter(value: Any, base: int = 0) -> str:
    """The option letter of an index: `0 | letter` is A, `"1" | letter(1)` is A."""
    try:
        i = int(str(value).strip()) - base
    except ValueError:
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


@functools.lru_cache(maxsize=1)
def environment() -> Any:
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)
    env.filters.update(letter=letter, language_name=language_name, native_digits=native_digits, digest=digest,
                       regex_replace=regex_replace, lm_eval_target=lm_eval_target)
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
    """`source` rendered with `context`; an undefined name, a filter's error or a refused attribute is
    a DataError naming `where` (the task file's line, the item)."""
    from jinja2 import TemplateError
    from jinja2.exceptions import SecurityError

    try:
        return compile_template(source).render(context)
    except (TemplateError, SecurityError, ValueError, TypeError, IndexError, KeyError) as e:
        msg = getattr(e, "message", None) or str(e)
        raise DataError(f"{where}: {msg}" if where else msg) from None


def value_of(spec: str, row: Mapping[str, Any], where: str = "") -> Any:
    """A field mapping's value: a template (text), or a column name, dotted for a joined role
    (`source.text`); a column the row lacks is an error naming it."""
    if is_template(spec):
        return render(spec, row, where)
    value: Any = row
    for part in spec.split("."):
        if not isinstance(value, Mapping) or part not in value:
            have = (", ".join(sorted(str(k) for k in value if k != "opt")) if isinstance(value, Mapping)
                    else type(value).__name__)
            raise DataError(f"{where}: no column {spec!r} (the row has: {have})")
        value = value[part]
    return value
