"""glotbench: evaluate large language models in low-resource languages.

The public API (imported lazily, so `import glotbench` stays light for the CLI's start-up):
evaluate / evaluate_async / RunOptions / RunResult; Benchmark, Dataset, Item, PublicItem, Sample,
Prompt, ItemScore, Extraction; the metric classes; Model, ModelBase, GenerateConfig, Response;
register_benchmark / register_model / get_benchmark / load_model; score_output.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

from glotbench.errors import DataError, GlotbenchError, SpecError
from glotbench.items import Item, PublicItem

_LAZY = {
    "evaluate": "glotbench.engine.evaluate",
    "evaluate_async": "glotbench.engine.evaluate",
    "RunOptions": "glotbench.engine.options",
    "RunResult": "glotbench.core",
    "Dataset": "glotbench.core",
    "Sample": "glotbench.core",
    "Benchmark": "glotbench.benchmarks.base",
    "Extraction": "glotbench.extract",
    "ItemScore": "glotbench.metrics",
    "Metric": "glotbench.metrics",
    "RatioMetric": "glotbench.metrics",
    "MacroMetric": "glotbench.metrics",
    "MissingStatistic": "glotbench.metrics",
    "CorpusMetric": "glotbench.metrics.corpus",
    "SacreMetric": "glotbench.metrics.corpus",
    "Model": "glotbench.models.base",
    "ModelBase": "glotbench.models.base",
    "GenerateConfig": "glotbench.models.base",
    "Prompt": "glotbench.models.base",
    "Response": "glotbench.models.base",
    "Usage": "glotbench.models.base",
    "register_benchmark": "glotbench.registry",
    "register_model": "glotbench.registry",
    "get_benchmark": "glotbench.registry",
    "load_model": "glotbench.registry",
    "score_output": "glotbench.scoring",
}

__all__ = sorted(["DataError", "GlotbenchError", "Item", "PublicItem", "SpecError", "__version__", *_LAZY])


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
