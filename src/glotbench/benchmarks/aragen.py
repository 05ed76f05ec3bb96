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
from typing import Any, Mapping

from glotbench.benchmarks.base import Benchmark
from glotbench.errors import DataError
from glotbench.extract import Extraction, free_text
from glotbench.items import Item, PublicItem
from glotbench.judges.rubric import DIMENSIONS, RubricError, item_dimensions, judge_prompt, parse_rubric, three_c_three_h
from glotbench.loading import sha256_file
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.models.base import GenerateConfig, Prompt

TASKS = ("Question Answering (QA)", "Reasoning", "Orthographic and Grammatical Analysis", "Safety")
MAX_BYTES = 64 * 2**20


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
    if p.stat().st_size > MAX_BYTES:
        raise DataError(f"{p}: larger than {MAX_BYTES // 2**20} MiB")
    return _parse(p), str(p), sha256_file(p)


def _parse(p: Path) -> list[Entry]:
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise DataError(f"{p}: not a JSON file ({e})") from None
    if not isinstance(data, list):
        raise DataError(f"{p}: expected a JSON list of entries")
    out, seen = [], set()
    for i, e in enumerate(data):
        meta = e.get("Meta") if isinstance(e, dict) else None
        test = e.get("Test") if isinstance(e, dict) else None
        sn = str(meta.get("SN.")) if isinstance(meta, dict) and meta.get("SN.") is not None else f"#{i}"
        where = f"{p}: entry SN. {sn}"
        if not isinstance(meta, dict) or not isinstance(test, dict):
            raise DataError(f"{where}: needs a 'Meta' object and a 'Test' object")
        if sn in seen:
            raise DataError(f"{where}: duplicate SN.")
        seen.add(sn)
        rnd = meta.get("Round")
        if rnd not in (0, 1, 2):
            raise DataError(f"{where}: Round must be 0, 1 or 2, got {rnd!r}")
        task = meta.get("Task")
        if task not in TASKS:
            raise DataError(f"{where}: Task {task!r} is not one of {', '.join(TASKS)}")
        fields = {}
        for k in ("Question 1", "Answer 1", "Question 2", "Answer 2"):
            v = test.get(k)
            needed = k.endswith("1") or rnd != 0
            if needed and (not isinstance(v, str) or not v.strip()):
                raise DataError(f"{where}: 'Test'.'{k}' must be a non-empty string in round {rnd}")
            if not needed and v is not None:
                raise DataError(f"{where}: 'Test'.'{k}' must be null in round 0")
            fields[k] = v
        out.append(Entry(sn, rnd, task, str(meta.get("Language") or "Arabic"), fields["Question 1"],
                         fields["Answer 1"], fields["Question 2"], fields["Answer 2"], dict(meta)))
    if not out:
        raise DataError(f"{p}: no entries")
    return out


# -- generation ------------------------------------------------------------------------------

class AraGenAnswers(Benchmark):
    """One generation pass. phase "first": round 0 and 2 answer Question 1, round 1 answers Question 2
    after the reference Answer 1. phase "second": round 2 answers Question 2 after its own answer."""

    name = "aragen-answers"
    version = "1.0"
    description = "AraGen answer generation"
    metrics = (RatioMetric("answered", "answered", "items", "share of non-empty answers"),)
    group_by = ("task",)
    templates = {"generation": "rounds 0/1/2 as in the AraGen release"}
    default_config = GenerateConfig(temperature=0.0, max_tokens=1024)

    def __init__(self, entries: list[Entry], phase: str = "first", own: Mapping[str, str] | None = None):
        super().__init__()
        self.entries, self.phase, self.own = entries, phase, dict(own or {})

    def load(self, path: str | None = None) -> list[Item]:
        items = []
        for e in self.entries:
            if self.phase == "first":
                if e.round == 1:
                    msgs = [("user", e.q1), ("assistant", e.a1), ("user", e.q2)]  # reference Answer 1
                else:
                    msgs = [("user", e.q1)]
            else:
                if e.round != 2 or e.sn not in self.own:
                    continue
                msgs = [("user", e.q1), ("assistant", self.own[e.sn]), ("user", e.q2)]  # its own answer
            items.append(Item.create(e.sn, {"messages": [{"role": r, "content": c} for r, c in msgs]}, {},
                                     {"task": e.task, "round": str(e.round)}))
        return items

    def render(self, item: PublicItem) -> Prompt:
        msgs = tuple(item["messages"])
        text = "\n\n".join(m["content"] for m in msgs) + "\n\n"
        return Prompt(messages=msgs, text=text, text_stop=("\n\n",), text_max_tokens=256)

    def extract(self, text: str) -> Extraction:
        return free_text(text)

    def score(self, answer: str, item: Item) -> ItemScore:
        return ItemScore({"answered": 1.0, "items": 1.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"answered": 0.0, "items": 1.0}, failure=failure)


# -- judging ---------------------------------------------------------------------------------

def _metrics() -> tuple[RatioMetric, ...]:
    return (RatioMetric("3c3h", "3c3h", "scored", "mean of the six scaled dimensions", label="3C3H"),
            *(RatioMetric(d.lower(), d, "scored", f"scaled {d}", label=d) for d in DIMENSIONS),
            RatioMetric("coverage", "judged", "items", "share of samples with a valid verdict", show_ci=False))


class AraGenJudging(Benchmark):
    """The judge pass: one sample per entry (a follow-up pair is one sample, judged in one call).
    `policy` for samples without a valid verdict: "drop" (upstream: they leave every average) or "zero"."""

    name = "aragen"
    version = "1.0"
    description = "AraGen 3C3H, judged"
    metrics = _metrics()
    group_by = ("task",)
    default_config = GenerateConfig(temperature=0.0, max_tokens=2048)

    def __init__(self, entries: list[Entry], answers: Mapping[str, list[str]], policy: str = "drop"):
        super().__init__()
        if policy not in ("drop", "zero"):
            raise DataError(f"judge failure policy must be drop or zero, got {policy!r}")
        self.entries, self.answers, self.policy = entries, answers, policy
        from glotbench.judges.rubric import RUBRIC_PROMPT

        self.templates = {"rubric": RUBRIC_PROMPT}

    def load(self, path: str | None = None) -> list[Item]:
        items = []
        for e in self.entries:
            ans = self.answers.get(e.sn)
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
        return items

    def render(self, item: PublicItem) -> Prompt:
        text = judge_prompt([tuple(t) for t in item["turns"]], item["language"])
        return Prompt(messages=({"role": "user", "content": text},), text=text + "\n")

    def extract(self, text: str) -> Extraction:
        n = 2 if "<results2>" in text else 1
        try:
            verdicts = parse_rubric(text, n)
        except RubricError:
            return Extraction(None, "bad_verdict")
        return Extraction(json.dumps([[v.scores, v.breaks_zeroing] for v in verdicts]))

    def score(self, answer: str, item: Item) -> ItemScore:
        from glotbench.judges.rubric import Verdict

        verdicts = [Verdict(s, b) for s, b in json.loads(answer)]
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

    def signature_parts(self) -> dict[str, str]:
        return {"metric": "3c3h", "policy": self.policy, "followup": "2:1", "scale": "(v-1)/4"}


def validate_judgement(text: str, prompt: Prompt) -> None:
    """For the judge wrapper: a reply without valid result blocks is retried."""
    parse_rubric(text, 2 if "<results2>" in prompt.messages[-1]["content"] else 1)
