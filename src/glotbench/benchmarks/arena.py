"""Open-ended prompts for arena evaluation, and the judge task that the runner executes.

`ArenaPrompts` only generates answers (no gold). `JudgeGames` turns (prompt, candidate answer,
baseline answer) into games, both orders, rendered with the judge prompt; a verdict that does not
parse is a format failure. Both are ordinary benchmarks, so the runner gives them concurrency,
retries, the call cache and resumption for free.
"""

from __future__ import annotations

from collections import defaultdict
from importlib import resources
from typing import Any, Iterable, Mapping

from glotbench.benchmarks.base import Benchmark
from glotbench.benchmarks.laobench import laobench_datasheet
from glotbench.core import Dataset, RunResult
from glotbench.judges.pipeline import AnswerPhase, Declared, JudgedContext, JudgedOutcome, JudgeSampling
from glotbench.judges.stats import JudgedMetrics, JudgedStats, panel_scores
from glotbench.rundir import OLD_SUMMARIES
from glotbench.rundir.validity import combine
from glotbench.errors import DataError, GlotbenchError, SpecError
from glotbench.extract import Extraction, free_text
from glotbench.items import Item, PublicItem
from glotbench.judges.pairwise import (JUDGE_PROMPT, SINGLE_ORDER_POLICIES, UNANSWERED_POLICIES, VerdictError, account_prompts,
                                       game_value, parse_verdict)
from glotbench.languages import foreign_script, profile
from glotbench.loading import field, read_jsonl, sha256_file
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.core import GenerateConfig, Prompt


class ArenaPrompts(Benchmark):
    """Open-ended prompts: `{"id", "prompt", "category"?}` per line. The bundled set is a small Lao
    sample written by the glotbench authors (not the Lao-500 prompts)."""

    name = "laobench-arena-prompts"
    bundled_data = "sample"  # 8 Lao prompts written for glotbench, not Lao-500
    datasheet = laobench_datasheet(("lo",))  # LaoBench's Lao-500 open-ended prompts
    lang, output_language_rule = "lo", "Lao (answers to Lao prompts)"
    version = "1.0"
    description = "open-ended prompts (answers only; a phase of laobench-arena, which judges them)"
    metrics = (RatioMetric("answered", "answered", "prompts", "share of prompts with a non-empty answer"),)
    group_by = ("category",)
    default_config = GenerateConfig(temperature=0.0, max_tokens=1024)
    language = "lo"  # the judge prompt (judges/pairwise.py) asks about answers for Lao-speaking users

    def load(self, path: str | None = None) -> Dataset:
        if path is None:
            ref = resources.files("glotbench.benchmarks").joinpath("data/lao_arena_sample.jsonl")
            with resources.as_file(ref) as p:
                return self._load(str(p), "bundled:lao_arena_sample.jsonl (not Lao-500 data)")
        return self._load(path, path)

    def _load(self, path: str, source: str) -> Dataset:
        items, seen = [], set()
        for n, rec in read_jsonl(path):
            where = f"{path}:{n}"
            pid = str(field(rec, "id", (str, int), where))
            if pid in seen:
                raise DataError(f"{where}: duplicate id {pid!r}")
            seen.add(pid)
            prompt = field(rec, "prompt", str, where)
            script = foreign_script(prompt, self.language)
            if script:  # a prompt in another language would be judged as a Lao answer's
                name = profile(self.language).name  # type: ignore[union-attr]
                raise DataError(f"{where} (id {pid}): the prompt is written in {script} script, but the arena's "
                                f"prompts are in {name} (its judges are asked about {name}-speaking users)")
            items.append(Item.create(pid, {"prompt": prompt}, {},
                                     {"category": str(rec.get("category") or "general")}))
        if not items:
            raise DataError(f"{path}: no prompts")
        return self.dataset(items, source, sha256_file(path))

    def render(self, item: PublicItem) -> Prompt:
        return Prompt(messages=({"role": "user", "content": item["prompt"]},), text=f"{item['prompt']}\n",
                      text_stop=("\n\n",), text_max_tokens=256)

    def extract(self, text: str, item: PublicItem) -> Extraction:
        return free_text(text)

    def score(self, answer: str, item: Item) -> ItemScore:
        return ItemScore({"answered": 1.0, "prompts": 1.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"answered": 0.0, "prompts": 1.0}, failure=failure)




def choice(bench: str, key: str, value: str, allowed: tuple[str, ...]) -> str:
    """A setting that takes one of `allowed`, checked when the benchmark is built (before any call)."""
    if value not in allowed:
        raise SpecError(f"{bench}: {key} must be one of {', '.join(allowed)}, got {value!r}")
    return value


class LaoBenchArena(ArenaPrompts, Declared):
    """The arena as a judged benchmark (`glotbench run laobench-arena --judge J --bench-opt
    baseline=SPEC`): the candidate's answers and the baseline's, then every judge's games in both
    orders (its judged declaration below, run by engine/judged.py). Its settings are its own options."""

    name = "laobench-arena"
    description = ("LaoBench arena: the candidate against a fixed baseline (--bench-opt baseline=SPEC), "
                   "each pair judged twice (positions swapped) by every --judge")
    judged, judge_pipeline = True, "arena"
    model_options = ("baseline",)

    def __init__(self, baseline: str | None = None, unanswered: str = "loss", single_order: str = "fail",
                 skip_same_family: bool = False, families: str = "") -> None:
        """`baseline`: a model spec, or replay:FILE.jsonl of its answers; `unanswered`: loss (the side
        that did not answer loses) or drop; `single_order`: fail or accept (a prompt judged in one
        order only); `skip_same_family`: also skip a judge of the candidate's family; `families`:
        SPEC=FAMILY;SPEC=FAMILY (models/family.py)."""
        self.baseline = baseline
        self.unanswered = choice(self.name, "unanswered", unanswered, UNANSWERED_POLICIES)
        self.single_order = choice(self.name, "single_order", single_order, SINGLE_ORDER_POLICIES)
        self.skip_same_family, self.families = skip_same_family, families

    # -- its judged run (judges/pipeline.py JudgedDeclaration; engine/judged.py runs it) --
    out_root = "arena"
    answer_dirs = ("candidate", "baseline")
    older = (OLD_SUMMARIES["arena"],)
    sampling = JudgeSampling()
    own_selection = False
    judged_metrics = JudgedMetrics()  # the win value: each prompt's games averaged, the mean over prompts, of judges

    def judged_declaration(self) -> "LaoBenchArena":
        if self.baseline is None:
            raise GlotbenchError(f"{self.name} needs a baseline: --bench-opt baseline=SPEC (a model spec, or "
                                 "replay:FILE.jsonl of its answers)")
        return self

    @property
    def judge_games(self) -> "JudgeGames":
        return JudgeGames()

    def no_judge(self) -> str:
        return "name at least one judge with --judge SPEC"

    def next_phase(self, candidate: str, items: Dataset, done: Mapping[str, RunResult]) -> AnswerPhase | None:
        """The candidate's answers, then the baseline's (a model, or replay:FILE of its answers)."""
        for role in ("candidate", "baseline"):
            if role not in done:
                return AnswerPhase(role, role, role, ArenaPrompts(), items, validity_key=f"{role} answers")
        return None

    @staticmethod
    def _answers(ctx: JudgedContext) -> dict[str, dict[str, str]]:
        return {role: {k: v for k, v in ctx.phases[role].answers().items() if isinstance(v, str) and v.strip()}
                for role in ("candidate", "baseline")}

    def games(self, ctx: JudgedContext) -> Dataset:
        answers = self._answers(ctx)
        return JudgeGames.build(ctx.items, answers["candidate"], answers["baseline"], ctx.all_items)

    def judged_score(self, ctx: JudgedContext, games: Dataset, runs: Mapping[str, RunResult]) -> JudgedOutcome:
        """Per judge, per prompt, the games' values (both orders); the unanswered and single-order
        policies (`account_prompts`); each judge's mean, their mean, one bootstrap over prompts."""
        prompts, answers, validity = ctx.items, self._answers(ctx), dict(ctx.validity)
        failures, ties = {}, {}
        by_order: dict[str, dict[str, dict[str, float]]] = {}
        for spec, res in runs.items():
            orders: dict[str, dict[str, float]] = defaultdict(dict)
            for smp in res.samples:
                if smp.failure is None:
                    orders[smp.meta["prompt_id"]][smp.meta["order"]] = smp.stats["value"]
            by_order[spec] = orders
            failures[spec] = res.results["counts"]["failures"]
            validity[f"judge {spec}"] = res.results.get("validity")
            games_done = [x for v in orders.values() for x in v.values()]
            ties[spec] = sum(x == 0.5 for x in games_done) / len(games_done) if games_done else None
        acc = account_prompts([p.id for p in prompts], {r: set(a) for r, a in answers.items()}, by_order,
                              unanswered=self.unanswered, single_order=self.single_order)
        if acc.values and not acc.ids:
            raise GlotbenchError("no prompt is left to score: every prompt was unanswered and unanswered=drop")
        # no prompt judged (the candidate's, the baseline's, a judge's calls or verdicts failed): written as
        # AraGen and a rubric task are, every judge with no value, invalid with its reason (`combine`), so
        # that every view shows it; the command exits INVALID_RUN_EXIT naming the failed phase
        stats = JudgedStats.of(acc.values or {spec: {} for spec in runs}, acc.ids if acc.values else [p.id for p in prompts])
        found = ctx.measure(stats)
        scores = panel_scores(stats, found)
        summary = {
            "candidate": ctx.candidate, "baseline": self.baseline, "judges": list(ctx.judges),
            "skipped_judges": list(ctx.skipped), "scores": scores, "failures": failures,
            "position_consistency": {j: c["value"] for j, c in acc.consistency.items()},
            "position_consistency_prompts": {j: c["prompts"] for j, c in acc.consistency.items()},
            "tie_rate": ties,
            "prompts": {"total": len(prompts), "answered_by_both": len(prompts) - len(acc.unanswered["candidate"])
                        - len(acc.unanswered["baseline"]) - len(acc.unanswered["both"]),
                        "scored": len(acc.ids) if acc.values else 0},
            "unanswered": {**acc.unanswered, "policy": self.unanswered, "dropped": acc.dropped},
            "incomplete_prompts": {"policy": self.single_order, "failed": acc.failed, "single_order": acc.single_order},
            "rules": "win 1, tie 0.5, loss 0; two orders averaged per prompt (a prompt needs both unless "
                     "single_order=accept); an unanswered prompt is a loss for the side that did not answer "
                     "(tie if neither did) unless unanswered=drop; mean over prompts per judge; mean over judges; "
                     "95% percentile bootstrap over prompts (Wilson on the prompts where it collapses)",
            "per_prompt": {j: {pid: sum(v) / len(v) for pid, v in vals.items()} for j, vals in acc.values.items()},
            "judge_prompt_version": JudgeGames.version, "judge_prompt_hash": JudgeGames().prompt_hash(games),
            "data": prompts.source, "data_sha256": prompts.sha256, "selection": ctx.selection.record(),
            "validity": combine(validity, judged=scores["final"].get("n"), of=len(prompts)),
            "data_label": ArenaPrompts().data_label(ctx.all_items),
            "judge_validation": ctx.judge_validation,
        }
        answers_run = ctx.phases["candidate"]
        return JudgedOutcome(summary, answers_run.results, answers_run.samples, answers_run.dataset, stats, found)


class JudgeGames(Benchmark):
    """Games for one judge: each prompt twice, candidate first (order 0) and baseline first (order 1).
    The games are a Dataset built by `build`; the verdict stays an object through scoring."""

    name = "arena-judge"
    version = "1.0"
    description = "pairwise judging against a baseline, positions swapped"
    metrics = (RatioMetric("candidate_win_value", "value", "games", "mean game value (win 1, tie 0.5)"),)
    group_by = ("order",)
    default_config = GenerateConfig(temperature=0.0, max_tokens=1024)
    retry_failures = ("bad_verdict", "think_unclosed")  # a malformed verdict is asked again
    reply_name = "verdict"
    judge_task = True  # an unreadable verdict counts against --max-failure-rate (rundir/validity.py)

    @classmethod
    def build(cls, prompts: Dataset, candidate: dict[str, str], baseline: dict[str, str],
              data: Dataset | None = None) -> Dataset:
        """Two games (one per order) per prompt both sides answered; every prompt of `data` (the whole
        prompt set, beyond a `--limit`; default `prompts`) names known game ids (a verdict file's)."""
        games = []
        for it in prompts:
            if it.id not in candidate or it.id not in baseline:
                continue
            for order, (a, b, pos) in enumerate(((candidate[it.id], baseline[it.id], "A"),
                                                  (baseline[it.id], candidate[it.id], "B"))):
                games.append(Item.create(f"{it.id}#{order}", {"prompt": it.public["prompt"], "answer_a": a,
                                                               "answer_b": b},
                                         {"candidate_position": pos},
                                         {"prompt_id": it.id, "order": str(order)}))
        known = frozenset(f"{it.id}#{order}" for it in (data if data is not None else prompts) for order in (0, 1))
        return Dataset(tuple(games), f"games over {prompts.source}", prompts.sha256, known_ids=known)

    def load(self, path: str | None = None) -> Dataset:
        raise DataError("arena games are built from answers (JudgeGames.build), not loaded from a file")

    def prompt_probe(self, dataset: Dataset) -> Iterable[PublicItem]:
        """The judge prompt with placeholders for the prompt and the answers being judged."""
        return [PublicItem("probe", {"prompt": "{prompt}", "answer_a": "{answer_a}", "answer_b": "{answer_b}"})]

    def render(self, item: PublicItem) -> Prompt:
        text = JUDGE_PROMPT.format(prompt=item["prompt"], answer_a=item["answer_a"], answer_b=item["answer_b"])
        return Prompt(messages=({"role": "user", "content": text},), text=text + "\n")

    def extract(self, text: str, item: PublicItem) -> Extraction:
        try:
            return Extraction(parse_verdict(text))  # the verdict object, kept whole for the audit
        except VerdictError as e:
            return Extraction(None, "bad_verdict", str(e))

    def score(self, answer: Any, item: Item) -> ItemScore:
        return ItemScore({"value": game_value(answer["winner"], item.gold["candidate_position"]), "games": 1.0})

    def answer_key(self, answer: Any) -> str | None:
        return None if answer is None else str(answer["winner"])

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"value": 0.0, "games": 0.0}, failure=failure)
