"""The benchmark as the layers below benchmarks/ see it: a `Protocol` naming exactly what they use.

The contract itself is `glotbench.benchmarks.base.Benchmark`: its declared facts (typed attributes:
`answer_kind`, `output_language`, `judged`, `headline`, `rewrites`...) and its stations. The layers
above benchmarks/ (tasks, checks, registry, report, engine, service) type a benchmark with it. The
parts below it (scoring.py, judges/) cannot import it (imports point down: tests/test_layers.py), so
they type a benchmark with `ScoredBenchmark`: every `Benchmark` is one (mypy checks it where a
`Benchmark` is passed, and `benchmarks/base.py` states it once).

| member             | read by                                                            |
|--------------------|--------------------------------------------------------------------|
| `run_extract`      | scoring.extract_output: the answer in a reply, with the run settings |
| `run_score`        | scoring.score_output: an answer against the item's gold            |
| `run_failure_score`| scoring.score_output: an item with no answer                       |
| `answer_key`       | scoring.score_output: the answer's key (agreement across repeats)  |
| `retry_failures`   | scoring.check_reply: the extraction failures asked again           |
| `reply_name`       | scoring.check_reply: the reply's name in a retry's message         |
"""

from __future__ import annotations

from typing import Any, Protocol

from glotbench.extract import Extraction
from glotbench.items import Item, PublicItem
from glotbench.metrics import ItemScore

__all__ = ["ScoredBenchmark"]


class ScoredBenchmark(Protocol):
    """A benchmark as THE scoring path (scoring.py) reads it (module docstring)."""

    @property
    def retry_failures(self) -> tuple[str, ...]: ...

    @property
    def reply_name(self) -> str: ...

    def run_extract(self, text: str, item: PublicItem) -> Extraction: ...

    def run_score(self, answer: Any, item: Item) -> ItemScore: ...

    def run_failure_score(self, failure: str, item: Item) -> ItemScore: ...

    def answer_key(self, answer: Any) -> str | None: ...
