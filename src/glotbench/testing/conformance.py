"""The benchmark contract, checked over any benchmark (the registry's, or a plugin's).

For every item of a dataset: `render` gets a PublicItem (no gold attribute) and returns a Prompt with
messages; a real score and a failure score carry the same statistic keys; every metric finds every
statistic it needs in both. `check_benchmark` returns the problems found (empty: it conforms).
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from glotbench.core import Dataset
from glotbench.items import Item, PublicItem
from glotbench.metrics import MissingStatistic, check_statistics
from glotbench.core import Prompt

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark


def probe_answers(item: Item) -> list[Any]:
    """Answers of the common types to score an item with when no model reply is at hand: a letter,
    a number, free text, a pairwise verdict, 3C3H verdicts (one per turn)."""
    from glotbench.judges.rubric import DIMENSIONS, Verdict

    turns = item.public.get("turns")
    if turns:
        return [tuple(Verdict(dict.fromkeys(DIMENSIONS, 3), False) for _ in turns)]
    if "answer_a" in item.public:
        return [{"winner": "A", "notes": {}}]
    return ["A", Decimal("1"), "text"]


def _score_any(bench: Benchmark, item: Item, answers: Iterable[Any]) -> Any:
    errors = []
    for a in answers:
        try:
            return bench.score(a, item)
        except Exception as e:  # noqa: BLE001 - try the next answer type
            errors.append(f"{type(a).__name__}: {type(e).__name__}: {e}")
    raise ValueError("no probe answer could be scored: " + "; ".join(errors))


def check_benchmark(bench: Benchmark, dataset: Dataset, answers: Sequence[Any] | None = None) -> list[str]:
    from glotbench.core import Sample

    problems: list[str] = []
    metrics = bench.metrics_for(dataset)
    for item in dataset:
        public = item.to_public()
        if not isinstance(public, PublicItem) or hasattr(public, "gold"):
            problems.append(f"{item.id}: the renderer would receive gold")
        prompt = bench.render(public)
        if not isinstance(prompt, Prompt) or not prompt.messages:
            problems.append(f"{item.id}: render gave no chat messages")
        try:
            real = _score_any(bench, item, answers if answers is not None else probe_answers(item))
        except ValueError as e:
            problems.append(f"{item.id}: {e}")
            continue
        fail = bench.failure_score("format", item)
        if set(real.stats) != set(fail.stats):
            problems.append(f"{item.id}: failure score keys {sorted(fail.stats)} differ from a real "
                            f"score's {sorted(real.stats)}")
        for sc in (real, fail):
            try:
                check_statistics(metrics, [Sample(item.id, 0, item.meta, sc)])
            except MissingStatistic as e:
                problems.append(str(e))
    return problems
