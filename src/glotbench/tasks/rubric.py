"""A generic model-graded scorer: a rubric (criteria with their scales, reference-guided or not),
or a pairwise comparison with the reference answer, judged as an ordinary benchmark so the judge
panel (glotbench.judges.panel) gives it concurrency, the cache, malformed-verdict retries, the
self-judging skip and the mean of judges with a CI (`RubricRun`, run by engine/judged.py).

Pointwise: the judge scores each criterion with an integer on its scale and writes one JSON object
between <verdict> and </verdict>; a criterion's score counts as (v - low) / (high - low), the item's
value is the mean over criteria. The reader is strict (the last complete block; exactly the
criteria; integers in range); a verdict it rejects is asked again by the runner (`retry_failures`). Pairwise: the answer
and the reference are shown as A and B in both orders; the judge replies {"winner": "A"|"B"|"tie"};
a win is 1, a tie 0.5, a loss 0 (glotbench.judges.pairwise), the two orders averaged.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from typing import Any, Iterable, Mapping, Sequence

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset, RunResult
from glotbench.judges.stats import JudgedMetrics, JudgedStats, panel_scores
from glotbench.judges.pipeline import AnswerPhase, Declared, JudgedContext, JudgedOutcome, JudgeSampling
from glotbench.languages import profile
from glotbench.rundir import OLD_SUMMARIES, slug
from glotbench.rundir.schema import JudgedKind
from glotbench.rundir.validity import combine
from glotbench.signature import Signature
from glotbench.errors import DataError
from glotbench.extract import Extraction, strict_json_object, strip_think
from glotbench.items import Item, PublicItem
from glotbench.judges.pairwise import game_value
from glotbench.judges.rubric import blocks
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.core import GenerateConfig, Prompt

POINTWISE = """You are an expert evaluator of answers written in {language}. Score the answer to the question
below on each criterion.{reference_note}

[Question]
{question}
{reference}
[Answer]
{answer}

[Criteria]
{criteria}

First explain your reasoning briefly. Then give an integer score for each criterion as one JSON object
with exactly the keys {keys}, written between <verdict> and </verdict>."""

PAIRWISE = """You are an impartial judge of answers written in {language}. Compare the two answers to the
question below.{criteria_note} Do not let the order of the answers or their length sway you.

[Question]
{question}

[Answer A]
{answer_a}

[Answer B]
{answer_b}

Reply with one JSON object and nothing else, in exactly this form: {{"winner": "A" or "B" or "tie"}}"""


class VerdictError(ValueError):
    def __init__(self, kind: str, detail: str):
        super().__init__(f"[{kind}] {detail}")
        self.kind = kind


def parse_pointwise(text: str, criteria: Sequence[Any]) -> dict[str, int]:
    body, ok = strip_think(text)
    if not ok:
        raise VerdictError("think_unclosed", "unclosed think block")
    found = blocks(body, "verdict")
    if not found:
        raise VerdictError("no_block", "no <verdict>...</verdict> block")
    try:
        obj = strict_json_object(found[-1])
    except ValueError as e:
        raise VerdictError("not_json", f"<verdict> does not hold JSON ({getattr(e, 'msg', e)})") from None
    names = [c.name for c in criteria]
    if not isinstance(obj, dict) or set(obj) != set(names):
        raise VerdictError("keys", f"the verdict must have exactly the keys {', '.join(names)}")
    for c in criteria:
        v = obj[c.name]
        if not isinstance(v, int) or isinstance(v, bool):
            raise VerdictError("not_integer", f"{c.name} must be an integer, got {v!r}")
        if not c.scale[0] <= v <= c.scale[1]:
            raise VerdictError("out_of_range", f"{c.name} must be {c.scale[0]}-{c.scale[1]}, got {v}")
    return {n: obj[n] for n in names}


def parse_pairwise(text: str) -> str:
    body, ok = strip_think(text)
    if not ok:
        raise VerdictError("think_unclosed", "unclosed think block")
    try:
        obj = strict_json_object(body)
    except ValueError:
        raise VerdictError("not_json", "the reply is not one JSON object") from None
    winner = obj.get("winner") if isinstance(obj, dict) else None
    if winner not in ("A", "B", "tie"):
        raise VerdictError("winner", f"winner must be A, B or tie, got {winner!r}")
    return winner


class RubricJudging(Benchmark):
    """One judge's pass over the judged answers (a Dataset built by `games`)."""

    version = "1.0"
    default_config = GenerateConfig(temperature=0.0, max_tokens=1024)
    retry_failures = ("bad_verdict", "think_unclosed")  # a malformed verdict is asked again (the runner)
    reply_name = "rubric verdict"
    judge_task = True  # an unreadable verdict counts against --max-failure-rate (rundir/validity.py)

    def __init__(self, rubric: Any, task_name: str, language: str):
        self.rubric, self.language = rubric, language
        self.name, self.description = f"{task_name}-judge", f"{task_name}, judged by rubric"
        self.group_by = ("order",) if rubric.pairwise else ()
        if rubric.pairwise:
            self.metrics = (RatioMetric("win_value", "value", "judged", "mean game value (win 1, tie 0.5)"),)
        else:
            self.metrics = (RatioMetric("rubric", "value", "judged", "mean over criteria of the scaled scores"),
                            *(RatioMetric(c.name, f"c:{c.name}", "judged", c.description) for c in rubric.criteria))

    @staticmethod
    def games(rubric: Any, items: Sequence[Item], answers: Mapping[str, str], questions: Mapping[str, str],
              source: str, sha256: str | None, data: Sequence[Item] = ()) -> Dataset:
        """The judge's items: one per answered item (pointwise), or two, one per order (pairwise).
        Every item of `data` (the whole data, beyond a `--limit`) and of `items` names known game
        ids: a verdict file (`replay:`) may hold lines for items this run does not judge."""
        out = []
        for it in items:
            if it.id not in answers:
                continue
            ref = it.gold.get("reference", it.gold.get("answer"))
            if rubric.reference and ref is None:
                raise DataError(f"item {it.id}: the rubric shows the reference: give fields.gold.reference")
            base = {"question": questions[it.id], "reference": None if ref is None else str(ref)}
            if not rubric.pairwise:
                out.append(Item.create(it.id, {**base, "answer": answers[it.id]}, {}, {**it.meta, "item_id": it.id}))
                continue
            for order, (a, b, pos) in enumerate(((answers[it.id], str(ref), "A"), (str(ref), answers[it.id], "B"))):
                out.append(Item.create(f"{it.id}#{order}", {**base, "answer_a": a, "answer_b": b},
                                       {"candidate_position": pos}, {**it.meta, "item_id": it.id, "order": str(order)}))
        known = frozenset(f"{it.id}#{order}" if rubric.pairwise else it.id
                          for it in (*items, *data) for order in ((0, 1) if rubric.pairwise else (0,)))
        return Dataset(tuple(out), f"answers to {source}", sha256, known_ids=known)

    def load(self, path: str | None = None) -> Dataset:
        raise DataError("rubric judging items are built from a model's answers, not loaded")

    def prompt_probe(self, dataset: Dataset) -> Iterable[PublicItem]:
        """The judge prompt with placeholders: one rubric, one hash."""
        keys = ("answer_a", "answer_b") if self.rubric.pairwise else ("answer",)
        return [PublicItem("probe", {"question": "{question}", "reference": "{reference}",
                                     **{k: "{" + k + "}" for k in keys}})]

    def render(self, item: PublicItem) -> Prompt:
        r = self.rubric
        if r.pairwise:
            note = (" Judge them on: " + "; ".join(f"{c.name}: {c.description}" for c in r.criteria) + "."
                    if r.criteria else "")
            text = PAIRWISE.format(language=self.language, criteria_note=note, question=item["question"],
                                   answer_a=item["answer_a"], answer_b=item["answer_b"])
        else:
            ref = f"\n[Reference answer]\n{item['reference']}\n" if r.reference else ""
            text = POINTWISE.format(
                language=self.language, question=item["question"], answer=item["answer"], reference=ref,
                reference_note=" Compare it with the reference answer." if r.reference else "",
                criteria="\n".join(f"- {c.name} ({c.scale[0]}-{c.scale[1]}): {c.description}" for c in r.criteria),
                keys=", ".join(c.name for c in r.criteria))
        return Prompt(messages=({"role": "user", "content": text},), text=text + "\n")

    def extract(self, text: str, item: PublicItem) -> Extraction:
        try:
            if self.rubric.pairwise:
                return Extraction(parse_pairwise(text))
            return Extraction(parse_pointwise(text, self.rubric.criteria))  # type: ignore[arg-type]
        except VerdictError as e:
            return Extraction(None, f"bad_verdict:{e.kind}", str(e))

    def score(self, answer: Any, item: Item) -> ItemScore:
        if self.rubric.pairwise:
            return ItemScore({"value": game_value(answer, item.gold["candidate_position"]), "judged": 1.0})
        scaled = {f"c:{c.name}": (answer[c.name] - c.scale[0]) / (c.scale[1] - c.scale[0]) for c in self.rubric.criteria}
        return ItemScore({**scaled, "value": sum(scaled.values()) / len(scaled), "judged": 1.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        zeros = {} if self.rubric.pairwise else {f"c:{c.name}": 0.0 for c in self.rubric.criteria}
        return ItemScore({**zeros, "value": 0.0, "judged": 0.0}, failure=failure)  # not judged: out of the mean

    def answer_key(self, answer: Any) -> str | None:
        return None if answer is None else json.dumps(answer, sort_keys=True)

    def signature_parts(self) -> dict[str, str]:
        body = self.rubric.model_dump(mode="json", exclude={"judges"})
        return {"rubric": hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12],
                "mode": "pairwise" if self.rubric.pairwise else "pointwise"}


RUBRIC_RULES = ("pointwise: mean over criteria of (v - low) / (high - low); pairwise: win 1, tie 0.5, loss 0, both "
                "orders averaged; an unanswered item scores 0 for every judge; mean over items per judge, mean "
                "over judges, 95% percentile bootstrap over items")


class RubricRun(Declared):
    """A rubric task's judged run (judges/pipeline.py JudgedDeclaration; engine/judged.py runs it): the
    candidate's answers (the task run as a plain run: its own --data, --limit, --subset), each
    judge's verdicts on them, the mean of judges with a CI. Every item enters the score: one the
    candidate did not answer scores 0 for every judge (the lowest value: counted and listed in
    `unanswered`); a verdict that never parsed leaves the item out of that judge's mean (its coverage
    is reported). A judge that is the candidate (or, with `same_family: true`, of its family) is
    skipped and listed."""

    judge_pipeline: JudgedKind = "rubric"
    answer_dirs = ("answers",)
    older = (OLD_SUMMARIES["rubric"],)
    baseline = None
    own_selection = True
    judged_metrics = JudgedMetrics()  # the rubric's mean: each item's value, the mean over items, of judges

    def __init__(self, task: Benchmark) -> None:
        self.task = task
        self.rubric = task.spec.scorer  # type: ignore[attr-defined]  # a task with a rubric scorer
        self.name, self.lang, self.out_root = task.name, task.lang, task.name
        self.default_judges = tuple(self.rubric.judges)
        self.skip_same_family = bool(self.rubric.same_family)
        self.sampling = JudgeSampling(own=False)
        p = profile(task.lang)
        self.judge_games = RubricJudging(self.rubric, task.name,
                                         self.rubric.language or (p.name if p else task.lang or "the question's language"))

    def load(self, path: str | None) -> Dataset:
        return self.task.load(path)

    def no_judge(self) -> str:
        return f"{self.name} is judged by a rubric: name a judge with --judge SPEC (or scorer.judges)"

    def no_panel(self, candidate: str, skipped: Sequence[str]) -> str:
        return f"every judge was skipped as the candidate or its family ({', '.join(skipped)})"

    def next_phase(self, candidate: str, items: Dataset, done: Mapping[str, RunResult]) -> AnswerPhase | None:
        return None if "answers" in done else AnswerPhase("answers", "answers", "candidate", None, None)

    def _answers(self, ctx: JudgedContext) -> dict[str, str]:
        head = self.task.headline_pipeline  # type: ignore[attr-defined]  # a task's headline pipeline
        return {s.id: s.answer[head] for s in ctx.phases["answers"].samples
                if isinstance(s.answer, dict) and isinstance(s.answer.get(head), str) and s.answer[head].strip()}

    def games(self, ctx: JudgedContext) -> Dataset:
        res = ctx.phases["answers"]
        items = list(res.dataset or ())
        questions = {it.id: self.task.render(it.to_public()).messages[-1]["content"] for it in items}
        return RubricJudging.games(self.rubric, items, self._answers(ctx), questions,
                                   res.dataset.source if res.dataset else "",
                                   res.dataset.sha256 if res.dataset else None, ctx.all_items)

    def judged_score(self, ctx: JudgedContext, games: Dataset, runs: Mapping[str, RunResult]) -> JudgedOutcome:
        res = ctx.phases["answers"]
        answers = self._answers(ctx)
        ids = [it.id for it in (res.dataset or ())]
        unanswered = [i for i in ids if i not in answers]
        values: dict[str, dict[str, list[float]]] = {}
        incomplete: dict[str, list[str]] = {}
        criteria: dict[str, dict[str, float]] = {}
        for spec, run in runs.items():
            per: dict[str, dict[str, float]] = defaultdict(dict)
            crit: dict[str, list[float]] = defaultdict(list)
            for smp in run.samples:
                if smp.failure is None:
                    per[smp.meta["item_id"]][smp.meta.get("order", "0")] = smp.stats["value"]
                    for k, v in smp.stats.items():
                        if k.startswith("c:"):
                            crit[k[2:]].append(v)
            need = 2 if self.rubric.pairwise else 1
            vals = {i: [sum(o.values()) / len(o)] for i, o in per.items() if len(o) == need}
            incomplete[spec] = sorted(i for i in answers if i not in vals)
            vals.update({i: [0.0] for i in unanswered})
            values[spec] = vals
            criteria[spec] = {k: sum(v) / len(v) for k, v in crit.items()}
        # invalid when a phase is (the answers' calls, or a judge's calls and unreadable verdicts, above
        # --max-failure-rate), or when no item has a judged score
        phases = {**ctx.validity, **{f"judge {spec}": run.results.get("validity") for spec, run in runs.items()}}
        # no answered item judged: written (every view shows it invalid with its reason), not raised
        none_judged = bool(answers) and not any(i in v for v in values.values() for i in answers)
        stats = JudgedStats.of(values, ids)  # an unanswered item: 0 from every judge
        found = ctx.measure(stats)
        scores = panel_scores(stats, found)
        signature = Signature.parse(res.results["signature"]).plus(
            ("judge_prompt", self.judge_games.prompt_hash(games)), self.judge_games.signature_parts(),
            ("judges", ",".join(slug(j) for j in runs)), ("unanswered", 0)).format()
        summary = {"benchmark": self.name, "model": ctx.candidate, "judges": list(ctx.judges),
                   "skipped_judges": list(ctx.skipped), "mode": "pairwise" if self.rubric.pairwise else "pointwise",
                   "scores": scores, "criteria": criteria, "items": len(ids), "answered": len(answers),
                   "unanswered": unanswered, "incomplete": incomplete, "item_values": values, "rules": RUBRIC_RULES,
                   "signature": signature, "answers_run": "answers", "judge_validation": ctx.judge_validation,
                   "validity": combine(phases, judged=0 if none_judged else scores["final"].get("n"), of=len(ids))}
        return JudgedOutcome(summary, res.results, res.samples, res.dataset, stats, found)
