"""Benchmark names -> factories. A new benchmark is one module plus one entry here."""

from __future__ import annotations

from typing import Callable

from glotbench.benchmarks.base import Benchmark
from glotbench.benchmarks.options import build
from glotbench.errors import SpecError


def _vi_diacritics(**opts) -> Benchmark:
    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics

    return build(VietnameseDiacritics, opts, name="vi-diacritics")


def _laobench_mcq(**opts) -> Benchmark:
    from glotbench.benchmarks.laobench import LaoBenchMCQ

    return build(LaoBenchMCQ, opts, name="laobench-mcq")


def _laobench_translation(**opts) -> Benchmark:
    from glotbench.benchmarks.laobench import LaoBenchTranslation

    return build(LaoBenchTranslation, opts, name="laobench-translation")


def _deepsea(task: str) -> Callable[..., Benchmark]:
    def make(**opts) -> Benchmark:
        from glotbench.benchmarks.deepsea import DeepSEATask

        return build(DeepSEATask, opts, task, name=f"deepsea-{task}")
    return make


BENCHMARKS: dict[str, tuple[Callable[..., Benchmark], str]] = {
    "deepsea-mgsm": (_deepsea("mgsm"), "DeepSEA MGSM math, numeric exact match"),
    "deepsea-indommlu": (_deepsea("indommlu"), "DeepSEA IndoMMLU subject MCQ, accuracy macro-averaged over subjects"),
    "deepsea-xquad": (_deepsea("xquad"), "DeepSEA XQuAD extractive QA, token F1 (first reference)"),
    "deepsea-crosssum": (_deepsea("crosssum"), "DeepSEA CrossSum summarisation, corpus chrF2"),
    "deepsea-wmt24pp": (_deepsea("wmt24pp"), "DeepSEA WMT24++ translation, corpus chrF2 (not MetricX-24)"),
    "vi-diacritics": (_vi_diacritics, "Vietnamese diacritic restoration (Dấu or Die style)"),
    "laobench-mcq": (_laobench_mcq, "LaoBench multiple choice (options: method=generate|loglik)"),
    "laobench-translation": (_laobench_translation, "LaoBench Lao<->Chinese<->English translation, BLEU and chrF++"),
}


def get_benchmark(name: str, **options: object) -> Benchmark:
    """A benchmark by name; `options` are its documented settings (`--bench-opt KEY=VALUE`), given as
    text or typed values; text is converted to each setting's declared type (benchmarks/options.py)."""
    if name not in BENCHMARKS:
        raise SpecError(f"unknown benchmark {name!r}; available: {', '.join(sorted(BENCHMARKS))}")
    try:
        return BENCHMARKS[name][0](**options)
    except TypeError as e:
        raise SpecError(f"bad option for {name}: {e}") from None
