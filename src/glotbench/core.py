"""The core objects every station passes along: items, datasets, samples and a run's result.

`Item`/`PublicItem` live in `glotbench.items`, `Signature` in `glotbench.signature` (re-exported here).
`Prompt` (what a benchmark renders) and `GenerateConfig` (how a model generates) are here, below
the benchmarks and the models, so a benchmark renders without importing a model backend. A `Dataset` is what a benchmark's
`load()` returns: the items plus where they came from and the facts derived from them (e.g. the
subject list of a macro average), so a benchmark object itself holds no dataset state. A `Sample` is
one typed samples.jsonl row; a `RunResult` carries a run's samples in memory next to its results,
so multi-phase work chains without re-reading files.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator, Literal, Mapping, Sequence, overload

from glotbench.items import Item, PublicItem
from glotbench.signature import Signature

__all__ = ["Dataset", "GenerateConfig", "Item", "ItemScore", "LoglikEncoding", "Message", "Prompt", "PublicItem",
           "RunResult", "Sample", "Signature", "jsonable"]

Message = Mapping[str, str]  # {"role": "user" | "system" | "assistant", "content": "..."}

# How a log-likelihood request's (context, continuation) becomes tokens (glotbench.models.batching.encode_pair):
#   joint    the context alone and context + continuation tokenised; the continuation's tokens are those
#            after the prefix the two share (a context token the joint tokenisation re-splits is scored too)
#   lm-eval  lm-evaluation-harness's TemplateLM._encode_pair: the context's trailing whitespace moves into the
#            continuation; the input is encode(context) + encode(context + continuation)[len(encode(context)):]
LoglikEncoding = Literal["joint", "lm-eval"]


@dataclass(frozen=True, slots=True)
class Prompt:
    """A rendered prompt in both forms a benchmark provides.

    Chat models receive `messages`; base models (no chat template) receive `text`, a plain few-shot
    prompt, and stop at `text_stop`. `json_schema` asks for structured output where the backend can.
    """

    messages: tuple[Message, ...]
    text: str | None = None
    text_stop: tuple[str, ...] = ()
    json_schema: Mapping[str, Any] | None = None
    text_max_tokens: int | None = None  # a per-item reply cap for the `text` form (base models)
    choices: tuple[str, ...] | None = None  # continuations of `text` for log-likelihood scoring
    loglik_encoding: LoglikEncoding = "joint"  # how context and continuation are tokenised for it


@dataclass(frozen=True, slots=True)
class GenerateConfig:
    """Generation settings; all of them are passed through, recorded and part of the cache key."""

    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = None
    stop: tuple[str, ...] = ()
    structured_output: bool = False
    thinking: bool | None = None  # None: the model's default; True/False: ask for (non-)thinking mode

    def to_dict(self) -> dict[str, Any]:
        d = {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed,
             "stop": list(self.stop), "structured_output": self.structured_output}
        if self.thinking is not None:
            d["thinking"] = self.thinking
        return d


@dataclass(frozen=True, slots=True, repr=False)
class Dataset(Sequence[Item]):
    """A loaded dataset: items (in order), `source` (a path, or `bundled:...`), the file's SHA-256
    and `facts` derived from the data (e.g. `{"subjects": (...)}`). It is a sequence of items;
    slicing keeps source, hash and facts (a `--limit` run is a prefix of the same data).
    `known_ids`: the ids of the data these items were drawn from, where that is more than the items
    (a judge phase's games: only the answered entries of a `--limit` run are judged, yet a verdict
    file's line for another entry of the data is a known id, not a foreign one); None: the items'."""

    items: tuple[Item, ...]
    source: str = "memory"
    sha256: str | None = None
    facts: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    known_ids: frozenset[str] | None = None
    # the rows of the data a filter (a task's `data.where`) left out before these items were made;
    # None: no filter. Recorded with the run's selection, so its n says what it is of.
    rows_left_out: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))
        object.__setattr__(self, "facts", MappingProxyType(dict(self.facts)))
        if self.known_ids is not None:
            object.__setattr__(self, "known_ids", frozenset(self.known_ids) | {it.id for it in self.items})

    def data_ids(self) -> frozenset[str]:
        """Every id of the data the items come from (`known_ids`, else the items')."""
        return self.known_ids if self.known_ids is not None else frozenset(it.id for it in self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:  # not every item: see RunResult.__repr__
        return f"Dataset({len(self.items)} items, source={self.source!r}, sha256={self.sha256!r})"

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    @overload
    def __getitem__(self, i: int) -> Item: ...
    @overload
    def __getitem__(self, i: slice) -> "Dataset": ...

    def __getitem__(self, i: int | slice) -> "Item | Dataset":
        if isinstance(i, slice):
            return dataclasses.replace(self, items=self.items[i])
        return self.items[i]

    def public_items(self) -> Iterator[PublicItem]:
        return (it.to_public() for it in self.items)

    def by_id(self) -> dict[str, Item]:
        return {it.id: it for it in self.items}


@dataclass(frozen=True, slots=True)
class ItemScore:
    """The outcome of scoring one sample.

    `stats`: sufficient statistics. `flags`: notable facts that still got a score (e.g. rewritten).
    `failure`: why no answer could be scored (format, think_unclosed, or a model error kind).
    """

    stats: Mapping[str, float]
    flags: tuple[str, ...] = ()
    failure: str | None = None


_SCALARS = frozenset({str, int, float, bool, type(None)})  # exactly these types: `jsonable` returns them as they are


def jsonable(value: Any) -> Any:
    """An answer of any type (a letter, a Decimal, a verdict object) as plain JSON data. The checks'
    content key reads every sample's meta, input, answer and token counts this way: a scalar found by
    its exact type, a dict's scalars kept without a call each, and a dataclass's field names read
    once per class took it from 6.3 to 1.8 µs a sample (timeit, load 3) (docs/performance.md, issue 32)."""
    if type(value) in _SCALARS:
        return value
    if type(value) in (dict, MappingProxyType):
        return {str(k): v if type(v) in _SCALARS else jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: jsonable(getattr(value, name)) for name in _field_names(type(value))}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    return str(value)  # Decimal and friends: their exact text


@functools.lru_cache(maxsize=256)
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


@dataclass(frozen=True, slots=True, eq=False)
class TokenCounts(Mapping[str, int]):
    """A reply's token counts as the runner keeps them with its sample (`Sample.tokens`): a read-only
    mapping `{"prompt": n, "completion": m}`, equal to that dict, in 48 bytes where a dict took 184
    (every sample keeps it to the end of the run: 1.4 MB at 10,000; docs/performance.md)."""

    prompt: int
    completion: int

    def __getitem__(self, key: str) -> int:
        if key == "prompt":
            return self.prompt
        if key == "completion":
            return self.completion
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(("prompt", "completion"))

    def __len__(self) -> int:
        return 2


@dataclass(frozen=True, slots=True)
class Sample:
    """One scored sample: the item, the model's reply, the extracted answer (any type), its score
    and what happened on the way (failure kind, error message, retries, cache)."""

    id: str
    repeat: int
    meta: Mapping[str, Any]
    score: ItemScore
    answer: Any = None
    answer_key: str | None = None  # normalised answer, for agreement across repeats
    output: str | None = None
    input: Mapping[str, Any] | None = None
    error: str | None = None
    prompt: Mapping[str, Any] | None = None  # what was sent: engine/prompts.py (a fill, or the whole);
    # written to samples.jsonl, and None in a run's samples kept in memory (RunResult.samples)
    flags: tuple[str, ...] = ()
    prompt_form: str | None = None
    finish_reason: str | None = None
    latency_s: float | None = None
    tokens: Mapping[str, int] | None = None
    retries: int = 0
    cached: bool = False

    @property
    def item_id(self) -> str:
        return self.id

    @property
    def failure(self) -> str | None:
        return self.score.failure

    @property
    def stats(self) -> Mapping[str, float]:
        return self.score.stats

    def to_record(self) -> dict[str, Any]:
        """The samples.jsonl row."""
        return {
            "id": self.id, "repeat": self.repeat, "meta": dict(self.meta),
            "input": None if self.input is None else dict(self.input), "prompt_form": self.prompt_form,
            "prompt": None if self.prompt is None else dict(self.prompt),
            "output": self.output, "answer": jsonable(self.answer), "score": dict(self.score.stats),
            "failure": self.score.failure, "flags": list(self.flags), "error": self.error,
            "finish_reason": self.finish_reason,
            "latency_s": None if self.latency_s is None else round(self.latency_s, 4),
            "tokens": None if self.tokens is None else dict(self.tokens),
            "retries": self.retries, "cached": self.cached,
        }

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> "Sample":
        score = ItemScore(dict(rec.get("score") or {}), tuple(rec.get("flags") or ()), rec.get("failure"))
        return cls(id=str(rec["id"]), repeat=int(rec.get("repeat", 0)), meta=dict(rec.get("meta") or {}),
                   score=score, answer=rec.get("answer"), output=rec.get("output"), input=rec.get("input"),
                   error=rec.get("error"), flags=tuple(rec.get("flags") or ()), prompt=rec.get("prompt"),
                   prompt_form=rec.get("prompt_form"), finish_reason=rec.get("finish_reason"),
                   latency_s=rec.get("latency_s"), tokens=rec.get("tokens"), retries=int(rec.get("retries") or 0),
                   cached=bool(rec.get("cached")))


@dataclass(frozen=True, repr=False)
class RunResult:
    """A finished run: its directory, results.json's content, and the samples in item order (without
    their prompt records, which are in the directory's samples.jsonl)."""

    out_dir: Path
    results: dict[str, Any]
    samples: tuple[Sample, ...] = ()
    dataset: Dataset | None = None

    def __repr__(self) -> str:
        """Short on purpose: Python 3.11's asyncio formats the repr of a run's main task (its result
        included) when it checks the SIGINT handler, and a repr of every sample cost 35 MB and
        0.1 s at the end of a 10,000-item run; a notebook shows this line, not 10,000 samples."""
        return f"RunResult(out_dir={str(self.out_dir)!r}, samples={len(self.samples)})"

    def answers(self) -> dict[str, Any]:
        """item id -> answer, for samples that have one (first repeat that does)."""
        out: dict[str, Any] = {}
        for s in self.samples:
            if s.answer is not None and s.id not in out:
                out[s.id] = s.answer
        return out
