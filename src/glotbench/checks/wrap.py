"""Settings every benchmark takes beside its own `--bench-opt`s, applied by wrapping it:

- `permute=circular`: every option item asked in each rotation of its options (checks/circular.py);
- `wrong_language=fail`: an answer in the wrong language or script is a failure of its own kind,
  `wrong_language`, scored as the benchmark scores a failure (checks/language.py says what is
  wrong); the default, `flag`, only records and counts it (results.json `checks.language`);
- `wrong_language=zero`: the answer is scored, then every metric's credit is taken from it
  (`metrics.zero_credit`: a ratio's numerator, a corpus metric's matched n-grams, its lengths kept),
  so a wrong-language reply can never raise a score, as EuroEval's chrF multiplies each sentence's
  score by 0 and SEA-HELM counts an instruction passed only in the expected language.

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

OPTIONS = {"permute": ("circular",), "wrong_language": ("flag", "fail", "zero")}


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
        ext = super().extract(text, item)  # type: ignore[misc]
        if ext.answer is None:
            return ext
        wrong = wrong_language(cast(Benchmark, self), ext.answer, item.fields, item.meta)
        return ext if wrong is None else Extraction(None, "wrong_language", wrong)

    def answer_before_check(self, text: str, item: Any) -> Any:
        """The answer the benchmark's own rule reads, before the language check."""
        return super().extract(text, item).answer  # type: ignore[misc]

    def signature_parts(self) -> Mapping[str, str]:
        return {**super().signature_parts(), "wrong_language": f"fail({_check_settings()})"}  # type: ignore[misc]


class LanguageZero:
    """The mixin of `wrong_language=zero`: EuroEval's rule. A corpus metric becomes the mean of its
    sentence scores (`metrics.corpus.sentence_mean`: EuroEval's chrF, sacrebleu's sentence score
    per reply, averaged), and an answer whose language check fails loses every metric's credit
    (`metrics.zero_credit`: its sentence score, a ratio's numerator), flagged `wrong_language`. A
    sentence score or a ratio's numerator is never below 0, so a wrong-language reply can never
    score above another reply; as SEA-HELM counts an instruction passed only in the expected language."""

    wrong_language = "zero"

    def metrics_for(self, dataset: Any) -> tuple[Any, ...]:
        return tuple(m.sentence_mean() or m for m in super().metrics_for(dataset))  # type: ignore[misc]

    def _with_sentences(self, stats: Mapping[str, float]) -> dict[str, float]:
        from glotbench.metrics.corpus import sentence_stats

        out = dict(stats)
        for m in super().metrics_for(None):  # type: ignore[misc]
            mean = m.sentence_mean()
            if mean is not None:
                out.update(sentence_stats(m, mean.numerator.rsplit(".", 1)[0], stats))
        return out

    def score(self, answer: Any, item: Any) -> Any:
        from glotbench.metrics import ItemScore, zero_credit

        base = super().score(answer, item)  # type: ignore[misc]
        stats = self._with_sentences(base.stats)
        if base.failure is not None or wrong_language(cast(Benchmark, self), answer, item.public, item.meta) is None:
            return ItemScore(stats, base.flags, base.failure)
        return ItemScore(zero_credit(self.metrics_for(None), stats), (*base.flags, "wrong_language"), None)

    def failure_score(self, failure: str, item: Any) -> Any:
        from glotbench.metrics import ItemScore

        base = super().failure_score(failure, item)  # type: ignore[misc]
        return ItemScore(self._with_sentences(base.stats), base.flags, base.failure)

    def signature_parts(self) -> Mapping[str, str]:
        return {**super().signature_parts(), "wrong_language": f"zero({_check_settings()})"}  # type: ignore[misc]


def _check_settings() -> str:
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


def wrap(bench: Any, settings: Mapping[str, str]) -> Any:
    """`bench` with the wrapper settings applied (itself when there are none to apply)."""
    from glotbench.checks.language import expectation

    mixins: list[type] = []
    policy = settings.get("wrong_language")
    if policy in ("fail", "zero"):
        if expectation(bench) is None:
            raise SpecError(f"{bench.name}: wrong_language={policy} needs a task whose answers have an expected "
                            "language (translation, summaries, spans, open answers); this one's are letters, "
                            "numbers or labels")
        mixins.append(LanguageFailure if policy == "fail" else LanguageZero)
    if settings.get("permute") == "circular":
        mixins.append(Circular)
    if not mixins:
        return bench
    base = type(bench)
    cls = type("".join(m.__name__ for m in mixins) + base.__name__, (*mixins, base), {"__module__": __name__})
    obj: Any = object.__new__(cls)
    obj.__dict__.update(bench.__dict__)
    for k, v in settings.items():
        if k == "permute" or v in ("fail", "zero"):
            setattr(obj, k, v)
    return obj


def expand_units(bench: Any, items: Any) -> Any:
    """The items a run asks (a circular run: every rotation of each selected item)."""
    return bench.expand(items)
