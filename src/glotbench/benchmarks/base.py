"""The Benchmark interface: load items, render prompts from public fields, extract, score, aggregate."""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Mapping, Sequence

from glotbench.extract import Extraction
from glotbench.items import Item, PublicItem
from glotbench.metrics import ItemScore, Metric, ScoredSample, aggregate, repeat_stability
from glotbench.models.base import GenerateConfig, Prompt


class Benchmark(ABC):
    """One benchmark. Subclasses set the class attributes and implement the five stations.

    `templates` holds every prompt template; their hash goes into each result, so a changed prompt
    is a different number.
    """

    name: ClassVar[str]
    version: ClassVar[str]
    description: ClassVar[str]
    metrics: ClassVar[tuple[Metric, ...]]  # the first one is the headline
    group_by: ClassVar[tuple[str, ...]] = ()
    pooled_overall: ClassVar[bool] = True  # False: metrics are only meaningful within a group
    templates: ClassVar[Mapping[str, Any]] = {}
    default_config: ClassVar[GenerateConfig] = GenerateConfig()

    def __init__(self) -> None:
        self.data_source: str = "bundled"
        self.data_sha256: str | None = None

    @abstractmethod
    def load(self, path: str | None = None) -> list[Item]:
        """The bundled items, or those of a user's file in the documented format (validated)."""

    @abstractmethod
    def render(self, item: PublicItem) -> Prompt:
        """The prompt, built from the public part only: a PublicItem has no gold to leak."""

    @abstractmethod
    def extract(self, text: str) -> Extraction:
        """The answer in a model's reply, or None with the failure kind."""

    @abstractmethod
    def score(self, answer: str, item: Item) -> ItemScore:
        """Score one extracted answer against the item's gold."""

    @abstractmethod
    def failure_score(self, failure: str, item: Item) -> ItemScore:
        """The score of a sample with no answer (model error, format failure): usually zero."""

    def answer_key(self, answer: str | None) -> str | None:
        """A normalised answer, used to measure agreement across repeats."""
        return answer

    def prompt_hash(self) -> str:
        blob = json.dumps(self.templates, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]

    def signature(self) -> str:
        """Everything that changes the numbers, sacrebleu style."""
        parts = [f"glotbench:{self.name}", f"v:{self.version}", f"prompt:{self.prompt_hash()}",
                 f"data:{(self.data_sha256 or 'none')[:12]}"]
        parts += [f"{k}:{v}" for k, v in self.signature_parts().items()]
        return "|".join(parts)

    def signature_parts(self) -> Mapping[str, str]:
        return {}

    def extra_results(self) -> dict[str, Any]:
        """Benchmark-specific facts for results.json (e.g. a random baseline, per-language signatures)."""
        return {}

    @property
    def headline(self) -> Metric:
        return self.metrics[0]

    def aggregate(self, samples: Sequence[ScoredSample], **kw: Any) -> dict[str, Any]:
        out = aggregate(self.metrics, samples, self.group_by, **kw)
        if not self.pooled_overall:
            out["overall"] = {}
        stability = repeat_stability(self.headline, samples)
        if stability is not None:
            out["stability"] = stability
        return out
