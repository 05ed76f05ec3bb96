"""Benchmark settings (`--bench-opt KEY=VALUE`): the one place where their text becomes typed values.

A benchmark declares its settings as typed keyword parameters of its constructor
(`native_digits: bool = True`, `method: str = "generate"`); `build` checks the names and converts
each value to the declared type, so a boolean that is neither true nor false is an error, never a
silent default. Values for undeclared types go through `parse_value` (bool, int, float, else text).
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any, Callable, Mapping

from glotbench.errors import SpecError

TRUE = frozenset({"true", "yes", "1", "on"})
FALSE = frozenset({"false", "no", "0", "off"})


def parse_bool(text: str, key: str = "value") -> bool:
    """`true/yes/1/on` or `false/no/0/off` (any case); anything else is an error naming the key."""
    t = text.strip().lower()
    if t in TRUE:
        return True
    if t in FALSE:
        return False
    raise SpecError(f"{key} must be true or false (or yes/no, 1/0), got {text!r}")


def parse_value(text: str) -> bool | int | float | str:
    """A value of undeclared type: true/false/yes/no → bool, an integer → int, a number → float, else the text."""
    t = text.strip().lower()
    if t in ("true", "yes"):
        return True
    if t in ("false", "no"):
        return False
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _convert(key: str, text: Any, hint: Any) -> Any:
    if not isinstance(text, str):
        return text  # already typed (programmatic use)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1:
        hint = args[0]  # Optional[X] -> X
    if hint is bool:
        return parse_bool(text, key)
    if hint in (int, float):
        try:
            return hint(text)
        except ValueError:
            raise SpecError(f"{key} must be {'an integer' if hint is int else 'a number'}, got {text!r}") from None
    if hint is str:
        return text
    return parse_value(text)


def convert_options(target: Callable[..., Any], options: Mapping[str, Any], *, name: str) -> dict[str, Any]:
    """`options` checked against `target`'s keyword parameters and converted to their declared types.

    An unknown name is an error listing the accepted ones; `name` (the benchmark) is in every message.
    """
    fn = target.__init__ if inspect.isclass(target) else target
    if fn is object.__init__:  # a class without settings (stateless benchmarks often have none)
        fn = lambda: None  # noqa: E731
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # unresolvable annotations: fall back to untyped parsing
        hints = {}
    params = {p.name: p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"}
    takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    out: dict[str, Any] = {}
    for key, text in options.items():
        if key not in params and not takes_any:
            accepted = ", ".join(sorted(k for k, p in params.items() if p.default is not p.empty)) or "none"
            raise SpecError(f"{name} has no option {key!r}; its options: {accepted}")
        try:
            out[key] = _convert(key, text, hints.get(key))
        except SpecError as e:
            raise SpecError(f"bad option for {name}: {e}") from None
    return out


def build(cls: Callable[..., Any], options: Mapping[str, Any], *args: Any, name: str | None = None) -> Any:
    """`cls(*args, **options)` with `options` checked and converted by `convert_options`."""
    return cls(*args, **convert_options(cls, options, name=name or str(getattr(cls, "__name__", "benchmark"))))
