"""AraGen: generative Arabic QA judged with the 3C3H rubric.

Reads the public release's format as is: a JSON list of {"Meta": {"SN.", "Round", "Task", ...},
"Test": {"Question 1", "Answer 1", "Question 2", "Answer 2"}}. Generation follows the release:
round 0 answers Question 1; round 1 (conversational) answers Question 2 after Question 1 and the
*reference* Answer 1; round 2 (follow-up) answers Question 1, then Question 2 with the model's *own*
first answer in the history, and both answers are judged. Rules: docs/benchmarks/aragen.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Sequence

from pydantic import ConfigDict, Field, model_validator

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset
from glotbench.data import ItemId, NonEmptyStr, Row, read_rows
from glotbench.errors import DataError
from glotbench.extract import Extraction, free_text
from glotbench.items import Item, PublicItem
from glotbench.judges.rubric import DIMENSIONS, RubricError, item_dimensions, judge_prompt, parse_rubric, three_c_three_h
from glotbench.loading import sha256_file
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.models.base import GenerateConfig, Prompt
from glotbench.registry import register_benchmark

TASKS = ("Question Answering (QA)", "Reasoning", "Orthographic and Grammatical Analysis", "Safety")


@dataclass(frozen=True)
class Entry:
    sn: str
    round: int
    task: str
    language: str
    q1: str
    a1: str
    q2: str | None
    a2: str | None
    meta: Mapping[str, Any]


def load_entries(path: str | None) -> tuple[list[Entry], str, str]:
    """Validated entries, the source description and its sha256. Bad entries are named by SN."""
    if path is None:
        ref = resources.files("glotbench.benchmarks").joinpath("data/aragen_sample.json")
        with resources.as_file(ref) as p:
            return _parse(Path(p)), "bundled:aragen_sample.json (written by glotbench, not AraGen data)", sha256_file(p)
    p = Path(path)
    if not p.is_file():
        raise DataError(f"data file not found: {p}")
    return _parse(p), str(p), sha256_file(p)


class _Meta(Row):
    model_config = ConfigDict(frozen=True, strict=True, extra="allow")  # every Meta field is kept

    sn: ItemId = Field(alias="SN.")
    round: Literal[0, 1, 2] = Field(alias="Round")
    task: Literal[TASKS] = Field(alias="Task")  # type: ignore[valid-type]
    language: str | None = Field(None, alias="Language")


class _Test(Row):
    q1: NonEmptyStr = Field(alias="Question 1")
    a1: NonEmptyStr = Field(alias="Answer 1")
    q2: NonEmptyStr | None = Field(None, alias="Question 2")
    a2: NonEmptyStr | None = Field(None, alias="Answer 2")


class AraGenRow(Row):
    """One entry of the release: `{"Meta": {...}, "Test": {...}}`; Question/Answer 2 are null in
    round 0 and required in rounds 1 and 2."""

    meta: _Meta = Field(alias="Meta")
    test: _Test = Field(alias="Test")

    @model_validator(mode="after")
    def _round_rule(self) -> "AraGenRow":
        for name, v in (("Question 2", self.test.q2), ("Answer 2", self.test.a2)):
            if self.meta.round == 0 and v is not None:
                raise ValueError(f"Test.{name}: must be null in round 0")
            if self.meta.round != 0 and v is None:
                raise ValueError(f"Test.{name}: must be a non-empty string in round {self.meta.round}")
        return self


def _parse(p: Path) -> list[Entry]:
    out, seen = [], set()
    for line, row in read_rows(p, AraGenRow, fmt="json"):
        m, t = row.meta, row.test
        if m.sn in seen:
            raise DataError(f"{p}:{line}: Meta.SN.: duplicate {m.sn!r}")
        seen.add(m.sn)
        meta = {"SN.": m.sn, "Round": m.round, "Task": m.task, **(m.model_extra or {})}
        if m.language is not None:
            meta["Language"] = m.language
        out.append(Entry(m.sn, m.round, m.task, m.language or "Arabic", t.q1, t.a1, t.q2, t.a2, meta))
    if not out:
        raise DataError(f"{p}: no entries")
    return out


# -- generation ------------------------------------------------------------------------------

def answer_dataset(entries: Sequence[Entry], source: str, sha256: str | None,
                   own: Mapping[str, str] | None = None) -> Dataset:
    """One generation pass as a Dataset. Without `own` (the first pass): round 0 and 2 answer
    Question 1, round 1 answers Question 2 after the reference Answer 1. With `own` (the model's
    first answers): round 2 answers Question 2 after its own first answer."""
    items = []
    for e in entries:
        if own is None:
            if e.round == 1:
                msgs = [("user", e.q1), ("assistant", e.a1), ("user", e.q2)]  # reference Answer 1
            else:
                msgs = [("user", e.q1)]
        else:
            if e.round != 2 or e.sn not in own:
                continue
            msgs = [("user", e.q1), ("assistant", own[e.sn]), ("user", e.q2)]  # its own answer
        items.append(Item.create(e.sn, {"messages": [{"role": r, "content": c} for r, c in msgs]}, {},
                                 {"task": e.task, "round": str(e.round)}))
    return Dataset(tuple(items), source, sha256)


@register_benchmark("aragen-answers")
class AraGenAnswers(Benchmark):
    """One generation pass over a Dataset from `answer_dataset`; `load()` gives the first pass."""

    name = "aragen-answers"
    version = "1.0"
    description = "AraGen answer generation (the first pass; `glotbench aragen` runs both and judges)"
    metrics = (RatioMetric("answered", "answered", "items", "share of non-empty answers"),)
    group_by = ("task",)
    default_config = GenerateConfig(temperature=0.0, max_tokens=1024)

    def load(self, path: str | None = None) -> Dataset:
        entries, source, digest = load_entries(path)
        return answer_dataset(entries, source, digest)

    def render(self, item: PublicItem) -> Prompt:
        msgs = tuple(item["messages"])
        text = "\n\n".join(m["content"] for m in msgs) + "\n\n"
        return Prompt(messages=msgs, text=text, text_stop=("\n\n",), text_max_tokens=256)

    def extract(self, text: str, item: PublicItem) -> Extraction:
        return free_text(text)

    def score(self, answer: Any, item: Item) -> ItemScore:
        return ItemScore({"answered": 1.0, "items": 1.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"answered": 0.0, "items": 1.0}, failure=failure)


# -- judging ---------------------------------------------------------------------------------

def _metrics() -> tuple[RatioMetric, ...]:
    return (RatioMetric("3c3h", "3c3h", "scored", "mean of the six scaled dimensions", label="3C3H"),
            *(RatioMetric(d.lower(), d, "scored", f"scaled {d}", label=d) for d in DIMENSIONS),
            RatioMetric("coverage", "judged", "items", "share of samples with a valid verdict", show_ci=False))


def judging_dataset(entries: Sequence[Entry], answers: Mapping[str, list[str]], source: str,
                    sha256: str | None) -> Dataset:
    """One judge sample per entry with answers (a follow-up pair is one sample, judged in one call)."""
    items = []
    for e in entries:
        ans = answers.get(e.sn)
        if not ans:
            continue  # no answer: the generation failure is reported by the answer pass
        if e.round == 0:
            turns = [(e.q1, e.a1, ans[0])]
        elif e.round == 1:
            turns = [(e.q2, e.a2, ans[0])]
        else:
            if len(ans) < 2:
                continue
            turns = [(e.q1, e.a1, ans[0]), (e.q2, e.a2, ans[1])]
        items.append(Item.create(e.sn, {"turns": [list(t) for t in turns], "language": e.language}, {},
                                 {"task": e.task, "round": str(e.round)}))
    return Dataset(tuple(items), source, sha256)


class AraGenJudging(Benchmark):
    """The judge pass over a Dataset from `judging_dataset`. `policy` for samples without a valid
    verdict: "drop" (upstream: they leave every average) or "zero". The verdicts stay objects."""

    name = "aragen"
    version = "1.0"
    description = "AraGen 3C3H, judged"
    metrics = _metrics()
    group_by = ("task",)
    default_config = GenerateConfig(temperature=0.0, max_tokens=2048)

    def __init__(self, policy: str = "drop"):
        if policy not in ("drop", "zero"):
            raise DataError(f"judge failure policy must be drop or zero, got {policy!r}")
        self.policy = policy

    def load(self, path: str | None = None) -> Dataset:
        raise DataError("AraGen judge samples are built from a model's answers (judging_dataset), not loaded")

    def prompt_probe(self, dataset: Dataset) -> Iterable[PublicItem]:
        """The rubric prompt with placeholders for the dialogue, one and two turns, per language."""
        langs = sorted({it.public["language"] for it in dataset}) or ["Arabic"]
        turn = ["{question}", "{reference}", "{answer}"]
        return [PublicItem(f"probe-{lang}-{n}", {"turns": [turn] * n, "language": lang})
                for lang in langs for n in (1, 2)]

    def render(self, item: PublicItem) -> Prompt:
        text = judge_prompt([tuple(t) for t in item["turns"]], item["language"])
        return Prompt(messages=({"role": "user", "content": text},), text=text + "\n")

    def extract(self, text: str, item: PublicItem) -> Extraction:
        try:
            return Extraction(tuple(parse_rubric(text, len(item["turns"]))))
        except RubricError:
            return Extraction(None, "bad_verdict")

    def score(self, answer: Any, item: Item) -> ItemScore:
        verdicts = list(answer)
        if len(verdicts) != len(item.public["turns"]):
            return self.failure_score("bad_verdict", item)
        dims = item_dimensions(verdicts)
        stats = {**dims, "3c3h": three_c_three_h(dims), "scored": 1.0, "judged": 1.0, "items": 1.0,
                 "breaks_zeroing": float(any(v.breaks_zeroing for v in verdicts))}
        return ItemScore(stats, flags=("breaks_zeroing",) if stats["breaks_zeroing"] else ())

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        scored = 1.0 if self.policy == "zero" else 0.0
        return ItemScore({**dict.fromkeys(DIMENSIONS, 0.0), "3c3h": 0.0, "scored": scored, "judged": 0.0,
                          "items": 1.0, "breaks_zeroing": 0.0}, failure=failure)

    def answer_key(self, answer: Any) -> str | None:
        return None if answer is None else json.dumps([[dict(v.scores), v.breaks_zeroing] for v in answer])

    def signature_parts(self) -> dict[str, str]:
        return {"metric": "3c3h", "policy": self.policy, "followup": "2:1", "scale": "(v-1)/4"}


def validate_judgement(text: str, prompt: Prompt) -> None:
    """For the judge wrapper: a reply without valid result blocks is retried."""
    parse_rubric(text, 2 if "<results2>" in prompt.messages[-1]["content"] else 1)
