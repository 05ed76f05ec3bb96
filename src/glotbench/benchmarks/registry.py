"""Benchmark names -> factories. A new benchmark is one module plus one entry here."""

from __future__ import annotations

from typing import Callable

from glotbench.benchmarks.base import Benchmark
from glotbench.errors import SpecError


def _vi_diacritics() -> Benchmark:
    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics

    return VietnameseDiacritics()


BENCHMARKS: dict[str, tuple[Callable[[], Benchmark], str]] = {
    "vi-diacritics": (_vi_diacritics, "Vietnamese diacritic restoration (Dấu or Die style)"),
}


def get_benchmark(name: str) -> Benchmark:
    if name not in BENCHMARKS:
        raise SpecError(f"unknown benchmark {name!r}; available: {', '.join(sorted(BENCHMARKS))}")
    return BENCHMARKS[name][0]()
