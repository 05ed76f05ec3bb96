"""Kept for old imports: the registry lives in `glotbench.registry`. Nothing in glotbench imports this
module (the one import that points up from benchmarks/: tests/test_layers.py names it)."""

from __future__ import annotations

from typing import Any

from glotbench.registry import benchmarks, get_benchmark, register_benchmark

__all__ = ["BENCHMARKS", "get_benchmark", "register_benchmark"]


def __getattr__(name: str) -> Any:
    if name == "BENCHMARKS":
        return {n: (None, d) for n, d in benchmarks().items()}
    raise AttributeError(name)
