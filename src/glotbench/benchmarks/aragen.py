"""AraGen: generative Arabic QA judged with the 3C3H rubric.

Reads the public release's format as is: a JSON list of {"Meta": {"SN.", "Round", "Task", ...},
"Test": {"Question 1", "Answer 1", "Question 2", "Answer 2"}}. Generation follows the release:
round 0 answers Question 1; round 1 (conversational) answers Question 2 after Question 1 and the
*reference* Answer 1; round 2 (follow-up) answers Question 1, then Question 2 with the model's *own*
first answer in the history, and both answers are judged. Answers may also come from a file (upstream's
answer or judged files, or glotbench JSONL). Rules: docs/benchmarks/aragen.md.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Iterable, Literal, Mapping, Sequence

from pydantic import BeforeValidator, ConfigDict, Field, model_validator

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset, RunResult
from glotbench.judges.jury import Outcome
from glotbench.judges.pipeline import AnswerPhase, Declared, JudgedContext, JudgedOutcome, JudgeSampling
from glotbench.judges.stats import JudgedMetrics
from glotbench.rundir import OLD_SUMMARIES, slug
from glotbench.datasheet import Datasheet
from glotbench.data import ItemId, NonEmptyStr, Row, not_bool, read_rows
from glotbench.errors import DataError, GlotbenchError, SpecError
from glotbench.extract import Extraction, free_text
from glotbench.items import Item, PublicItem
from glotbench.judges.prompts import UpstreamPrompt
from glotbench.judges.rubric import DIMENSIONS, RubricError, item_dimensions, judge_prompt, parse_rubric, three_c_three_h
from glotbench.languages import PROFILES, foreign_script
from glotbench.loading import sha256_file
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.core import GenerateConfig, Prompt
from glotbench.plugins import register_benchmark

TASKS = ("Question Answering (QA)", "Reasoning", "Orthographic and Grammatical Analysis", "Safety")
ANSWER_MAX_TOKENS = 2048  # upstream's generation scripts: max_tokens / max_length 2048

# AraGen's datasheet. No BibTeX for AraGen was found: the entry below is assembled from the blog post
# that introduced it (huggingface.co/blog/leaderboard-3c3h-aragen, 4 December 2024, its title as
# published). The 3C3H code is Apache-2.0 (its README); the AraGen data's licence was not read. The
# bundled sample (aragen_sample.json) is glotbench's own text, not AraGen data.
ARAGEN_DATASHEET = Datasheet(
    licence="unknown (AraGen's data licence not read); 3C3H code: Apache-2.0; bundled sample: glotbench's own",
    commercial=None, licence_note="the AraGen data's licence was not checked; only the 3C3H code's (Apache-2.0) was",
    origin="native", source="https://huggingface.co/blog/leaderboard-3c3h-aragen",
    reference="inceptionai-abudhabi/3C3H", reference_commit="3edd33950c4c50678b57f5dfa71e5562957f8d2a",
    citation="""@misc{aragen2024blog,
  title = {Rethinking LLM Evaluation with 3C3H: AraGen Benchmark and Leaderboard},
  author = {{Inception and MBZUAI}},
  year = {2024},
  month = dec,
  howpublished = {\\url{https://huggingface.co/blog/leaderboard-3c3h-aragen}}
}""", languages={"ar": {}})


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

    @property
    def test(self) -> dict[str, str | None]:
        return {"Question 1": self.q1, "Answer 1": self.a1, "Question 2": self.q2, "Answer 2": self.a2}

    @property
    def turn2(self) -> tuple[str, str]:
        """Question 2 and its reference answer: present in rounds 1 and 2 (AraGenRow checks it)."""
        if self.q2 is None or self.a2 is None:
            raise DataError(f"SN {self.sn}: round {self.round} needs Question 2 and Answer 2")
        return self.q2, self.a2

    @property
    def answers_needed(self) -> int:
        return 2 if self.round == 2 else 1


def load_entries(path: str | None) -> tuple[list[Entry], str, str]:
    """Validated entries, the source description and its sha256. Bad entries are named by SN."""
    if path is None:
        ref = resources.files("glotbench.benchmarks").joinpath("data/aragen_sample.json")
        with resources.as_file(ref) as p:
            return _parse(Path(p)), "bundled:aragen_sample.json (written by glotbench, not AraGen data)", sha256_file(p)
    p = Path(path)
    return _parse(p), str(p), sha256_file(p)


class _Meta(Row):
    model_config = ConfigDict(frozen=True, strict=True, extra="allow")  # every Meta field is kept

    sn: ItemId = Field(alias="SN.")
    round: Annotated[Literal[0, 1, 2], BeforeValidator(not_bool)] = Field(alias="Round")
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


def _check_language(p: Path, line: int | str, sn: Any, language: str | None, questions: list[str]) -> None:
    """An entry's questions in its language's dominant script (languages.foreign_script): its
    `Meta.Language` (a profile's name: Arabic, English...), AraGen's Arabic when it has none. A
    language glotbench has no profile for is not checked."""
    name = language or "Arabic"
    code = next((q.code for q in PROFILES.values() if q.name.lower() == name.strip().lower()), None)
    script = foreign_script(" ".join(questions), code) if code else None
    if script:
        told = f"its Meta.Language is {name}" if language else "AraGen's entries are in Arabic (no Meta.Language)"
        raise DataError(f"{p}:{line}: SN. {sn}: the questions are written in {script} script, but {told}")


def _parse(p: Path) -> list[Entry]:
    out, seen = [], set()
    for line, row in read_rows(p, AraGenRow, fmt="json"):
        m, t = row.meta, row.test
        if m.sn in seen:
            raise DataError(f"{p}:{line}: Meta.SN.: duplicate {m.sn!r}")
        seen.add(m.sn)
        _check_language(p, line, m.sn, m.language, [t.q1, t.q2 or ""])
        meta = {"SN.": m.sn, "Round": m.round, "Task": m.task, **(m.model_extra or {})}
        if m.language is not None:
            meta["Language"] = m.language
        out.append(Entry(m.sn, m.round, m.task, m.language or "Arabic", t.q1, t.a1, t.q2, t.a2, meta))
    if not out:
        raise DataError(f"{p}: no entries")
    return out


class AnswerRow(Row):
    """A line of a glotbench answer file: `{"id": SN, "output": TEXT, "turn": 1|2, "repeat"?}`."""

    id: ItemId
    output: str
    turn: Annotated[Literal[1, 2], BeforeValidator(not_bool)] = 1
    repeat: int = 0


class UpstreamAnswerRow(Row):
    """One entry of upstream's answer file: `{"Meta": {"SN.": ...}, "Model": {"Answer 1": ...,
    "Answer 2": ...}}` (other fields ignored)."""

    sn: str | None
    answers: dict[str, str | None]

    @model_validator(mode="before")
    @classmethod
    def _entry(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            return v
        meta = v.get("Meta")
        sn = meta.get("SN.") if isinstance(meta, dict) else None
        sn = str(sn) if isinstance(sn, (int, str)) and not isinstance(sn, bool) else None
        name = f"entry SN. {sn}" if sn is not None else "entry without a usable Meta.SN."
        model = v.get("Model")
        if not isinstance(model, dict):
            raise ValueError(f"{name}: needs a 'Model' object with the answers")
        answers = {k: model.get(k) for k in ("Answer 1", "Answer 2")}
        for k, a in answers.items():
            if a is not None and not isinstance(a, str):
                raise ValueError(f"{name}: 'Model'.'{k}' must be a string")
        return {"sn": sn, "answers": answers}


def load_answer_file(path: str, entries: list[Entry]) -> tuple[dict[str, list[str | None]], str]:
    """Candidate answers from a file, sn -> [answer 1, answer 2 (follow-ups)], and the file's sha256.

    - upstream's answer file or judged file (a JSON list of entries with Meta."SN." and
      Model."Answer 1"/"Answer 2"; round 1's "Answer 1" answers Question 2, as upstream writes it);
    - glotbench JSONL: {"id": SN, "output": TEXT, "turn": 1|2} per line (turn 2: a follow-up's second
      answer; "turn" defaults to 1). Missing answers are None: the entry counts as unanswered."""
    p = Path(path)
    by_sn = {e.sn: e for e in entries}
    out: dict[str, list[str | None]] = {e.sn: [None] * e.answers_needed for e in entries}
    seen: set[tuple[str, int]] = set()  # (SN., turn) read: a second answer is an error, not a silent overwrite
    if p.suffix == ".jsonl":
        for n, row in read_rows(p, AnswerRow, fmt="jsonl"):
            if row.repeat != 0 or row.id not in by_sn:
                continue
            if row.turn == 2 and by_sn[row.id].round != 2:
                raise DataError(f"{p}:{n}: turn: entry SN. {row.id} is round {by_sn[row.id].round}: "
                                "only follow-ups have turn 2")
            if (row.id, row.turn) in seen:
                raise DataError(f"{p}:{n}: id: a second answer for SN. {row.id}{' (turn 2)' if row.turn == 2 else ''}")
            seen.add((row.id, row.turn))
            out[row.id][row.turn - 1] = row.output
        return _matched(p, out, seen), sha256_file(p)
    for n, e in read_rows(p, UpstreamAnswerRow, fmt="json",
                          shape="upstream's answer file (a JSON list) or glotbench JSONL (.jsonl)"):
        if e.sn not in by_sn:
            continue
        if (e.sn, 1) in seen:
            raise DataError(f"{p}:{n}: entry SN. {e.sn}: a second answer")
        seen.add((e.sn, 1))
        for k in range(by_sn[e.sn].answers_needed):
            out[e.sn][k] = e.answers.get(f"Answer {k + 1}")
    return _matched(p, out, seen), sha256_file(p)


def _matched(p: Path, out: dict[str, list[str | None]], seen: set[tuple[str, int]]) -> dict[str, list[str | None]]:
    """An answer file that answers no entry of the task file is the wrong file (or task file), not a run
    in which every entry went unanswered."""
    if not seen:
        raise DataError(f"{p}: no answer matches an entry of the task file (SN. values differ)")
    return out


# -- generation ------------------------------------------------------------------------------

def answer_dataset(entries: Sequence[Entry], source: str, sha256: str | None, own: Mapping[str, str] | None = None,
                   system: str | None = None) -> Dataset:
    """One generation pass as a Dataset. Without `own` (the first pass): round 0 and 2 answer
    Question 1, round 1 answers Question 2 after the reference Answer 1. With `own` (the model's
    first answers): round 2 answers Question 2 after its own first answer. `system`: an optional
    system message for the candidate (default none)."""
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
        if system:
            msgs.insert(0, ("system", system))
        items.append(Item.create(e.sn, {"messages": [{"role": r, "content": c} for r, c in msgs]}, {},
                                 {"task": e.task, "round": str(e.round)}))
    return Dataset(tuple(items), source, sha256)


ENTRY_FIELDS = ("sn", "round", "task", "language", "q1", "a1", "q2", "a2", "meta")


def entry_dataset(entries: Sequence[Entry], source: str, sha256: str | None) -> Dataset:
    """The first pass's items (`answer_dataset`), each carrying its entry in its gold (never sent:
    the entry holds the reference answers)."""
    by_sn = {e.sn: e for e in entries}
    first = answer_dataset(entries, source, sha256)
    items = [Item.create(it.id, it.public, {"entry": {k: getattr(by_sn[it.id], k) for k in ENTRY_FIELDS}}, it.meta)
             for it in first]
    return Dataset(tuple(items), source, sha256)


def entries_of(items: Iterable[Item]) -> list[Entry]:
    """The entries `entry_dataset`'s items carry (a set loaded from them, held in memory or in a
    service's database); an item without one is a DataError naming it."""
    out = []
    for it in items:
        raw = it.gold.get("entry")
        if not isinstance(raw, Mapping) or set(raw) != set(ENTRY_FIELDS) or not isinstance(raw["meta"], Mapping):
            raise DataError(f"item {it.id}: no AraGen entry in its gold (items from `aragen`'s load carry one; "
                            "load the set again from its AraGen file)")
        e = Entry(**{k: raw[k] for k in ENTRY_FIELDS})
        if e.round not in (0, 1, 2) or e.task not in TASKS or not (isinstance(e.q1, str) and isinstance(e.a1, str)):
            raise DataError(f"item {it.id}: its AraGen entry is malformed (round {e.round!r}, task {e.task!r})")
        if e.round:
            e.turn2  # noqa: B018 - rounds 1 and 2 need Question 2 and Answer 2 (a DataError naming the SN)
        out.append(Entry(**{**{k: raw[k] for k in ENTRY_FIELDS}, "sn": str(e.sn), "meta": dict(raw["meta"])}))
    if not out:
        raise DataError("no AraGen entries")
    return out


@register_benchmark("aragen-answers")
class AraGenAnswers(Benchmark):
    """One generation pass over a Dataset from `answer_dataset`; `load()` gives the first pass."""

    name = "aragen-answers"
    bundled_data = "sample"  # 12 entries written for glotbench, not AraGen data
    datasheet = ARAGEN_DATASHEET
    lang, output_language_rule = "ar", "Arabic (answers to Arabic prompts)"
    version = "1.1"
    description = "AraGen answer generation (the first pass; the aragen benchmark runs both and judges)"
    metrics = (RatioMetric("answered", "answered", "items", "share of non-empty answers"),)
    group_by = ("task",)
    default_config = GenerateConfig(temperature=0.0, max_tokens=ANSWER_MAX_TOKENS)

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


class AraGen(AraGenAnswers, Declared):
    """AraGen as a judged benchmark (`glotbench run aragen --judge J`): answers generated as the
    release does (rounds 0, 1, 2; or replayed from a file), judged with 3C3H by every judge, the
    judges combined (its judged declaration below, run by engine/judged.py). Rules: docs/benchmarks/aragen.md."""

    name = "aragen"
    description = "AraGen: generative Arabic QA, answers as the release makes them, judged with 3C3H by --judge"
    judged, judge_pipeline = True, "aragen"

    def load(self, path: str | None = None) -> Dataset:
        """The first pass's items (what `render` sends), each with its whole entry (questions,
        reference answers, Meta) as its gold: the run rebuilds the entries from them (`entries_of`),
        so a set held in memory (a service's) runs both passes and its judges as a file does."""
        entries, source, digest = load_entries(path)
        return entry_dataset(entries, source, digest)

    def expand(self, items: Dataset) -> Dataset:
        """The requests a run makes for these items (a dry run counts them): the first pass and each
        follow-up's second turn (round 2: Question 2 after the model's own first answer, for which
        an estimate puts the reference Answer 1), both with the candidate's system message."""
        entries = entries_of(items)
        first = answer_dataset(entries, items.source, items.sha256, system=self.system_prompt)
        second = answer_dataset(entries, items.source, items.sha256, system=self.system_prompt,
                                own={e.sn: e.a1 for e in entries if e.round == 2})
        return Dataset(first.items + second.items, items.source, items.sha256)

    def __init__(self, policy: str = "drop", parse: str = "strict", zeroing: str = "correct", jury: str = "mean",
                 judge_prompt: str | None = None, system_prompt: str | None = None, judge_repeats: int = 1,
                 judge_temperature: float = 0.0, judge_seed: int | None = None, skip_same_family: bool = False,
                 families: str = "") -> None:
        """`policy`: entries without an answer or a valid verdict: drop, zero or upstream; `parse`:
        strict or 3c3h (upstream's parser and rounding); `zeroing`: correct or correct-or-complete;
        `jury`: mean, average or vote; `judge_prompt`: upstream's judge messages from your copy of the
        3C3H repository (DIR or pipeline/jury.py); `system_prompt`: the candidate's system message
        (@FILE reads it); `judge_repeats`, `judge_temperature`, `judge_seed`: the judges' sampling;
        `skip_same_family`, `families` (SPEC=FAMILY;...): the self-judging policy."""
        import math

        from glotbench.benchmarks.arena import choice
        from glotbench.judges.jury import POLICIES, STRATEGIES
        from glotbench.judges.rubric import PARSE_MODES, ZEROING_RULES

        self.policy = choice(self.name, "policy", policy, POLICIES)
        self.parse = choice(self.name, "parse", parse, PARSE_MODES)
        self.zeroing = choice(self.name, "zeroing", zeroing, ZEROING_RULES)
        self.jury = choice(self.name, "jury", jury, STRATEGIES)
        if judge_repeats < 1:
            raise SpecError(f"{self.name}: judge_repeats must be at least 1, got {judge_repeats}")
        if not math.isfinite(judge_temperature) or judge_temperature < 0:
            raise SpecError(f"{self.name}: judge_temperature must be a finite number >= 0, got {judge_temperature}")
        if system_prompt is not None and system_prompt.startswith("@"):
            given = system_prompt
            try:
                system_prompt = Path(given[1:]).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise SpecError(f"{self.name}: system_prompt={given}: cannot be read ({e})") from None
            if not system_prompt.strip():  # an empty file would silently send no system message
                raise SpecError(f"{self.name}: system_prompt={given}: the file is empty (leave system_prompt out "
                                "for no system message)")
        self.judge_prompt, self.system_prompt = judge_prompt, system_prompt
        self.judge_repeats, self.judge_temperature, self.judge_seed = judge_repeats, judge_temperature, judge_seed
        self.skip_same_family, self.families = skip_same_family, families

    # -- its judged run (judges/pipeline.py JudgedDeclaration; engine/judged.py runs it) --
    out_root = "aragen"
    answer_dirs = ("answers-1", "answers-2")
    older = (OLD_SUMMARIES["aragen"],)
    baseline = None
    own_selection = False
    check_endpoints = True  # an HTTP judge's endpoint: cheap to check before any call

    def judged_declaration(self) -> "AraGen":
        return self

    @property
    def sampling(self) -> JudgeSampling:
        return JudgeSampling(self.judge_repeats, self.judge_temperature, self.judge_seed)

    def _upstream(self) -> UpstreamPrompt | None:
        from glotbench.judges.prompts import load_upstream_prompt

        return None if self.judge_prompt is None else load_upstream_prompt(self.judge_prompt)

    @property
    def judge_games(self) -> "AraGenJudging":
        return AraGenJudging(self._upstream(), self.parse, self.zeroing)

    def no_judge(self) -> str:
        return "name at least one judge with --judge SPEC"

    def no_panel(self, candidate: str, skipped: Sequence[str]) -> str:
        return f"every judge was skipped as the candidate or its family ({self.self_judging.family(candidate)})"

    @staticmethod
    def _replay(candidate: str) -> str | None:
        return candidate[len("replay:"):] if candidate.startswith("replay:") else None

    def answered_elsewhere(self, candidate: str) -> bool:
        """`replay:FILE`: the candidate's answers in AraGen's answer format, no model asked."""
        return self._replay(candidate) is not None

    def prepare(self, candidate: str, items: Dataset, options: Any) -> None:
        """Every setting checked before any model is called: --limit, --max-tokens, the judge prompt
        (upstream's files), the answer file of a replayed candidate."""
        if options.limit is not None and options.limit < 1:
            raise GlotbenchError(f"--limit must be at least 1, got {options.limit}")
        if options.max_tokens is not None and options.max_tokens < 1:
            raise GlotbenchError(f"--max-tokens must be at least 1, got {options.max_tokens}")
        self._upstream()
        if (replay := self._replay(candidate)) is not None:
            load_answer_file(replay, entries_of(items))

    def next_phase(self, candidate: str, items: Dataset, done: Mapping[str, RunResult]) -> AnswerPhase | None:
        """The release's passes: every entry's first answer, then Question 2 of the round-2 entries
        after the model's own first answer; none for answers replayed from a file."""
        if self._replay(candidate) is not None:
            return None
        entries, digest = entries_of(items), items.sha256 or "none"
        if "answers-1" not in done:
            return AnswerPhase("answers-1", "answers-1", "candidate", AraGenAnswers(),
                               answer_dataset(entries, items.source, digest, system=self.system_prompt),
                               validity_key="answers")
        ans1 = _first_answers(done["answers-1"])
        if "answers-2" not in done and any(e.round == 2 and e.sn in ans1 for e in entries):
            return AnswerPhase("answers-2", "answers-2", "candidate", AraGenAnswers(),
                               answer_dataset(entries, items.source, digest, own=ans1, system=self.system_prompt),
                               validity_key="second-turn answers")
        return None

    def _answers(self, ctx: JudgedContext) -> tuple[dict[str, list[str | None]], dict[str, int], str | None]:
        """The candidate's answers (sn -> [first, second]), the generation failures by kind, and the
        SHA-256 of a replayed answer file."""
        entries = entries_of(ctx.items)
        if (replay := self._replay(ctx.candidate)) is not None:
            replayed, sha = load_answer_file(replay, entries)
            return replayed, {}, sha
        failures: Counter[str] = Counter()
        first = ctx.phases["answers-1"]
        ans1 = _first_answers(first)
        for smp in first.samples:
            if not smp.answer:
                failures[smp.failure or "empty"] += 1
        answers: dict[str, list[str | None]] = {e.sn: [ans1.get(e.sn)] + [None] * (e.answers_needed - 1)
                                                for e in entries}
        for smp in ctx.phases["answers-2"].samples if "answers-2" in ctx.phases else ():
            if smp.answer:
                answers[smp.id][1] = smp.answer
            else:
                failures[f"second turn: {smp.failure or 'empty'}"] += 1
        return answers, dict(failures), None

    def games(self, ctx: JudgedContext) -> Dataset:
        answers, _, _ = self._answers(ctx)
        return judging_dataset(entries_of(ctx.items), answers, ctx.items.source, ctx.items.sha256 or "none",
                               [e.sn for e in entries_of(ctx.all_items)])

    @property
    def judged_metrics(self) -> JudgedMetrics:
        """Each judge's figure (every counted verdict once, under the failure policy) and the jury's
        strategy over the judges (judges/jury.py `rule`)."""
        from glotbench.judges.jury import rule

        return rule(self.policy, self.jury)

    def judged_score(self, ctx: JudgedContext, games: Dataset, runs: Mapping[str, RunResult]) -> JudgedOutcome:
        """Per judge, per entry, the verdicts of every repeat; each judge's figures under the failure
        policy (judges/jury.py); the jury's strategy over them, with its bootstrap."""
        from glotbench.judges.jury import jury_metrics, judge_summary, outcomes
        from glotbench.rundir.selection import first as selection_first, signed
        from glotbench.rundir.validity import combine, run_validity
        from glotbench.signature import Signature

        options, policy, parse, repeats = ctx.options, self.policy, self.parse, self.judge_repeats
        entries, source, digest = entries_of(ctx.items), ctx.items.source, ctx.items.sha256 or "none"
        all_entries = entries_of(ctx.all_items)
        model, replay = ctx.candidate, self._replay(ctx.candidate)
        answers, gen_failures, replay_sha = self._answers(ctx)
        validity: dict[str, Any] = {}
        if replay is not None:
            # An entry the file has no answer for is a replay's missing output, as for `glotbench run`:
            # counted against the threshold, not only left out by the policy.
            missing = sum(1 for e in entries if any(a is None for a in answers[e.sn]))
            validity["answers"] = run_validity({"missing": missing} if missing else {}, len(entries), 1,
                                               options.max_failure_rate)
        validity.update(ctx.validity)
        upstream, task = self._upstream(), self.judge_games
        judged_ids = {it.id for it in games}
        no_answer = [e.sn for e in entries if e.sn not in judged_ids]
        order = [(e.sn, e.task) for e in entries]
        per_judge: dict[str, Any] = {}
        by_judge: dict[str, Any] = {}
        self_judging = self.self_judging
        for spec, res in runs.items():
            validity[f"judge {spec}"] = res.results.get("validity")
            by_sn, rejected = outcomes(res.samples, repeats)
            for sn in no_answer:
                by_sn[sn] = [Outcome(failure="no_answer")] * repeats
            by_judge[spec] = by_sn
            summary = judge_summary(order, by_sn, policy=policy, mode=parse, resamples=ctx.resamples)
            valid = {sn: [o.dims["3c3h"] for o in outs if o.dims] for sn, outs in by_sn.items()}
            by_repeat = [judge_summary(order, {sn: [outs[r]] for sn, outs in by_sn.items()}, policy=policy, mode=parse,
                                       resamples=0)["scores"]["overall"]["3c3h"]["value"] for r in range(repeats)]
            first = {r.id: {k: r.stats.get(f"first_{k}") for k in ("Correct", "Complete")}
                     for r in res.samples if r.repeat == 0 and r.failure is None}
            per_judge[spec] = {
                **summary, "family": self_judging.family(spec), "rejected": dict(rejected),
                "item_scores": {sn: statistics.fmean(v) for sn, v in valid.items() if v},
                "item_repeats": {sn: v for sn, v in valid.items() if len(v) >= 2},
                "dataset_3c3h_by_repeat": by_repeat, "first_verdicts": first,
            }
        # one bootstrap for every figure: the jury's and each judge's, the points by upstream's rule
        combined, stats, metrics = jury_metrics(order, by_judge, per_judge, strategy=self.jury, policy=policy,
                                                mode=parse, resamples=ctx.resamples)
        for j, p in per_judge.items():
            if p["scores"]["overall"]["3c3h"]["value"] is not None:
                p["scores"]["overall"]["3c3h"] = metrics[f"judge:{j}"]
            for t, g in p["scores"]["groups"].get("task", {}).items():
                if g["3c3h"]["value"] is not None:
                    g["3c3h"] = metrics[f"judge:{j}/cluster:{t}"]
        selection = selection_first([e.sn for e in entries], len(all_entries), options.limit)
        prompt_sig = f"3c3h-{upstream.sha256[:12]}" if upstream else f"rubric-{task.prompt_hash(games)}"
        signature = signed(Signature.build(
            glotbench="aragen", v=AraGenJudging.version, judge_prompt=prompt_sig, parse=parse,
            zeroing=self.zeroing, policy=policy, jury=self.jury, followup="2:1", scale="(v-1)/4",
            cand_system=_sha(self.system_prompt), cand_max_tokens=options.max_tokens or 2048,
            judge_repeats=repeats, judge_temperature=self.judge_temperature, judge_seed=self.judge_seed,
            judge_retries=options.max_retries,
            judges=",".join(slug(j) for j in ctx.kept), data=digest[:12]).format(), selection)
        results = {
            "model": model, "family": self_judging.family(model), "judges": list(ctx.judges),
            "skipped_judges": list(ctx.skipped), "policy": policy, "parse": parse, "zeroing": self.zeroing,
            "jury_strategy": self.jury,
            "judge_prompt": {"kind": "3c3h", "source": upstream.source, "sha256": upstream.sha256} if upstream
            else {"kind": "glotbench-rubric", "hash": task.prompt_hash(games)},
            "candidate_system_prompt": self.system_prompt,
            "data": source, "data_sha256": digest, "entries": len(entries), "selection": selection,
            "validity": combine(validity, judged=combined["n"], of=len(entries)),
            # bundled sample data says so, read from the package or from a copy (benchmarks/base.py data_label)
            "data_label": AraGenAnswers().data_label(answer_dataset(all_entries, source, digest)),
            "answers_source": {"file": replay, "sha256": replay_sha} if replay else {"model": model},
            "answered": len(entries) - len(no_answer), "no_answer": no_answer, "generation_failures": gen_failures,
            "mean_of_judges": combined, "per_judge": per_judge,
            "item_scores": {j: p["item_scores"] for j, p in per_judge.items()},
            "signature": signature, "judge_validation": ctx.judge_validation, "version": AraGenJudging.version,
        }
        answers_run = ctx.phases.get("answers-1")  # the candidate's answers (none: replayed from a file)
        # the run's values (each judge's valid 3C3H and its six dimensions per entry and repeat) and its
        # metrics by name (judges/jury.py `rule`): the jury's headline (its strategy, under the policy),
        # each judge's own figure, and both per task
        return JudgedOutcome(results, answers_run.results if answers_run else {},
                             answers_run.samples if answers_run else (), answers_run.dataset if answers_run else None,
                             stats, metrics)


def _first_answers(run: RunResult) -> dict[str, str]:
    return {smp.id: smp.answer for smp in run.samples if smp.answer}


def _sha(text: str | None) -> str:
    return "none" if not text else hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


# -- judging ---------------------------------------------------------------------------------

def judging_dataset(entries: Sequence[Entry], answers: Mapping[str, Sequence[str | None]], source: str,
                    sha256: str | None, data_ids: Iterable[str] = ()) -> Dataset:
    """One judge sample per *answered* entry (a follow-up pair is one sample, judged in one call).
    Unanswered entries never reach a judge: the engine counts them (judges/jury.py). Round 1 carries
    Question 1 and its reference answer as context: the judge sees the whole conversation.
    `data_ids`: every serial number of the data (beyond a `--limit`), the games' `known_ids`: a
    judge's verdict file (`replay:`) may hold lines for entries this run does not judge."""
    items = []
    for e in entries:
        ans = list(answers.get(e.sn) or [])
        if len(ans) < e.answers_needed or not all(a and a.strip() for a in ans[: e.answers_needed]):
            continue
        if e.round == 0:
            turns, context = [(e.q1, e.a1, ans[0])], None
        elif e.round == 1:
            turns, context = [(*e.turn2, ans[0])], (e.q1, e.a1)
        else:
            turns, context = [(e.q1, e.a1, ans[0]), (*e.turn2, ans[1])], None
        public = {"round": e.round, "turns": [list(t) for t in turns], "context": list(context) if context else None,
                  "language": e.language, "test": e.test,
                  "model": {f"Answer {i + 1}": a for i, a in enumerate(ans[: e.answers_needed])}}
        items.append(Item.create(e.sn, public, {}, {"task": e.task, "round": str(e.round)}))
    return Dataset(tuple(items), source, sha256, known_ids=frozenset(data_ids) | {e.sn for e in entries})


class AraGenJudging(Benchmark):
    """The judge pass over a Dataset from `judging_dataset`. Settings: the judge prompt (ours, or
    upstream's read from the user's copy), the parse mode and the zeroing rule. The verdict is read
    once, by one rule (`parse_rubric` with the item's number of answers); a reply it rejects is asked
    again by the runner (`retry_failures`); verdicts stay objects."""

    name = "aragen"
    datasheet = ARAGEN_DATASHEET
    version = "2.0"
    description = "AraGen 3C3H, judged"
    metrics = (RatioMetric("3c3h", "3c3h", "judged", "mean of the six scaled dimensions", label="3C3H"),)
    group_by = ("task",)
    default_config = GenerateConfig(temperature=0.0, max_tokens=2048)
    retry_failures = ("bad_verdict", "think_unclosed")  # a malformed verdict is asked again
    reply_name = "3C3H verdict"
    judge_task = True  # an unreadable verdict counts against --max-failure-rate (rundir/validity.py)

    def __init__(self, prompt: UpstreamPrompt | None = None, parse: str = "strict", zeroing: str = "correct"):
        self.upstream, self.parse, self.zeroing = prompt, parse, zeroing

    def load(self, path: str | None = None) -> Dataset:
        raise DataError("AraGen judge samples are built from a model's answers (judging_dataset), not loaded")

    def prompt_probe(self, dataset: Dataset) -> Iterable[PublicItem]:
        """The judge prompt with placeholders for the entry and the answers, per round and language."""
        langs = sorted({it.public["language"] for it in dataset}) or ["Arabic"]
        turn = ["{question}", "{reference}", "{answer}"]
        test = {k: "{" + k + "}" for k in ("Question 1", "Answer 1", "Question 2", "Answer 2")}
        return [PublicItem(f"probe-{lang}-{r}", {"round": r, "turns": [turn] * (2 if r == 2 else 1),
                                                 "context": ["{q1}", "{a1}"] if r == 1 else None, "language": lang,
                                                 "test": test, "model": {"Answer 1": "{m1}", "Answer 2": "{m2}"}})
                for lang in langs for r in (0, 1, 2)]

    def render(self, item: PublicItem) -> Prompt:
        if self.upstream is not None:
            msgs = self.upstream.messages(item["round"], item["test"], item["model"])
        else:
            ctx = tuple(item["context"]) if item["context"] else None
            msgs = ({"role": "user", "content": judge_prompt([tuple(t) for t in item["turns"]], item["language"], ctx)},)
        return Prompt(messages=tuple(msgs), text="\n\n".join(m["content"] for m in msgs) + "\n")

    def extract(self, text: str, item: PublicItem) -> Extraction:
        try:
            return Extraction(tuple(parse_rubric(text, len(item["turns"]), self.parse)))
        except RubricError as e:
            return Extraction(None, f"bad_verdict:{e.kind}", str(e))

    def score(self, answer: Any, item: Item) -> ItemScore:
        verdicts = list(answer)
        dims = item_dimensions(verdicts, self.zeroing, self.parse)
        stats = {**dims, "3c3h": three_c_three_h(dims, self.parse), "judged": 1.0,
                 "breaks_zeroing": float(any(v.breaks_zeroing for v in verdicts)),
                 "first_Correct": float(verdicts[0].scores["Correct"]), "first_Complete": float(verdicts[0].scores["Complete"])}
        return ItemScore(stats, flags=("breaks_zeroing",) if stats["breaks_zeroing"] else ())

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({**dict.fromkeys(DIMENSIONS, 0.0), "3c3h": 0.0, "judged": 0.0, "breaks_zeroing": 0.0,
                          "first_Correct": 0.0, "first_Complete": 0.0}, failure=failure)

    def answer_key(self, answer: Any) -> str | None:
        return None if answer is None else json.dumps([[dict(v.scores), v.breaks_zeroing] for v in answer])

    def signature_parts(self) -> dict[str, str]:
        return {"parse": self.parse, "zeroing": self.zeroing}
