"""Settings every benchmark takes beside its own `--bench-opt`s, applied by wrapping it:

- `permute=circular`: every option item asked in each rotation of its options (checks/circular.py);
- `wrong_language=fail`: an answer in the wrong language or script is a failure of its own kind,
  `wrong_language`, scored as the benchmark scores a failure (checks/language.py says what is
  wrong); the default, `flag`, only records and counts it (results.json `checks.language`).

`registry.get_benchmark` takes them out of the options before the benchmark is built and wraps what
it built: a subclass made here of the benchmark's own class with the setting's mixin first, holding
the same settings (so it is still that benchmark: its name, data, metrics and `isinstance`), with
the setting in its signature. Every command that rebuilds a run's benchmark from its recorded
options (report, compare, rescore) gets the same object.
"""

from __future__ import annotations

from typing import Any, Mapping, cast

from glotbench.benchmarks.base import Benchmark
from glotbench.checks.circular import Circular
from glotbench.errors import SpecError
from glotbench.extract import Extraction

OPTIONS = {"permute": ("circular",), "wrong_language": ("flag", "fail")}


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(the benchmark's own options, the wrapper settings), each wrapper value checked."""
    own, outer = {}, {}
    for k, v in options.items():
        if k in OPTIONS:
            if str(v) not in OPTIONS[k]:
                raise SpecError(f"{k} must be one of {', '.join(OPTIONS[k])}, got {v!r}")
            outer[k] = str(v)
        else:
            own[k] = v
    return own, outer


class LanguageFailure:
    """The mixin of `wrong_language=fail`: an answer whose language check fails is no answer."""

    wrong_language = "fail"

    def extract(self, text: str, item: Any) -> Extraction:
        from glotbench.checks.language import answer_text, expected_language, verdict

        ext = super().extract(text, item)  # type: ignore[misc]
        if ext.answer is None:
            return ext
        bench = cast(Benchmark, self)  # a mixin: `wrap` puts it before a benchmark's own class
        lang = expected_language(bench, item.fields, item.meta)
        body = answer_text(bench, ext.answer)
        if lang is None or body is None:
            return ext
        got = verdict(bench, body, lang, item.fields)
        if got["verdict"] in ("wrong_script", "wrong_language"):
            return Extraction(None, "wrong_language", f"{got['verdict']}: {got['why']}")
        return ext

    def answer_before_check(self, text: str, item: Any) -> Any:
        """The answer the benchmark's own rule reads, before the language check."""
        return super().extract(text, item).answer  # type: ignore[misc]

    def signature_parts(self) -> Mapping[str, str]:
        from glotbench.checks import language as L

        return {**super().signature_parts(),  # type: ignore[misc]
                "wrong_language": f"fail({L.library()},share{L.SHARE},p{L.MIN_CONFIDENCE},min{L.MIN_LID_LETTERS})"}


def wrap(bench: Any, settings: Mapping[str, str]) -> Any:
    """`bench` with the wrapper settings applied (itself when there are none to apply)."""
    from glotbench.checks.language import expectation

    mixins: list[type] = []
    if settings.get("wrong_language") == "fail":
        if expectation(bench) is None:
            raise SpecError(f"{bench.name}: wrong_language=fail needs a task whose answers have an expected "
                            "language (translation, summaries, spans, open answers); this one's are letters, "
                            "numbers or labels")
        mixins.append(LanguageFailure)
    if settings.get("permute") == "circular":
        mixins.append(Circular)
    if not mixins:
        return bench
    base = type(bench)
    cls = type("".join(m.__name__ for m in mixins) + base.__name__, (*mixins, base), {"__module__": __name__})
    obj: Any = object.__new__(cls)
    obj.__dict__.update(bench.__dict__)
    for k, v in settings.items():
        if k == "permute" or v == "fail":
            setattr(obj, k, v)
    return obj


def expand_units(bench: Any, items: Any) -> Any:
    """The items a run asks (a circular run: every rotation of each selected item)."""
    expand = getattr(bench, "expand", None)
    return expand(items) if callable(expand) else items
