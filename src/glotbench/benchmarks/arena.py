"""Open-ended prompts for arena evaluation, and the judge task that the runner executes.

`ArenaPrompts` only generates answers (no gold). `JudgeGames` turns (prompt, candidate answer,
baseline answer) into games, both orders, rendered with the judge prompt; a verdict that does not
parse is a format failure. Both are ordinary benchmarks, so the runner gives them concurrency,
retries, the call cache and resumption for free.
"""

from __future__ import annotations

from importlib import resources
from typing import Any, Iterable

from glotbench.benchmarks.base import Benchmark
from glotbench.benchmarks.laobench import laobench_datasheet
from glotbench.core import Dataset
from glotbench.errors import DataError, SpecError
from glotbench.extract import Extraction, free_text
from glotbench.items import Item, PublicItem
from glotbench.judges.pairwise import JUDGE_PROMPT, VerdictError, game_value, parse_verdict
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


UNANSWERED_POLICIES = ("loss", "drop")
SINGLE_ORDER_POLICIES = ("fail", "accept")


def choice(bench: str, key: str, value: str, allowed: tuple[str, ...]) -> str:
    """A setting that takes one of `allowed`, checked when the benchmark is built (before any call)."""
    if value not in allowed:
        raise SpecError(f"{bench}: {key} must be one of {', '.join(allowed)}, got {value!r}")
    return value


class LaoBenchArena(ArenaPrompts):
    """The arena as a judged benchmark (`glotbench run laobench-arena --judge J --bench-opt
    baseline=SPEC`): the candidate's answers and the baseline's, then every judge's games in both
    orders (engine/arena.py, dispatched from `evaluate_async`). Its settings are its own options."""

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
