"""glotbench: evaluate large language models in low-resource languages."""

from __future__ import annotations

__version__ = "0.1.0"

from glotbench.errors import DataError, GlotbenchError, SpecError
from glotbench.items import Item, PublicItem

__all__ = [
    "DataError",
    "GlotbenchError",
    "Item",
    "PublicItem",
    "RunOptions",
    "SpecError",
    "__version__",
    "evaluate",
    "get_benchmark",
    "load_model",
]


def __getattr__(name: str):  # lazy: keep `import glotbench` light for the CLI's start-up time
    if name == "evaluate":
        from glotbench.engine.evaluate import evaluate

        return evaluate
    if name == "RunOptions":
        from glotbench.engine.evaluate import RunOptions

        return RunOptions
    if name == "get_benchmark":
        from glotbench.benchmarks.registry import get_benchmark

        return get_benchmark
    if name == "load_model":
        from glotbench.models.registry import load_model

        return load_model
    raise AttributeError(name)
