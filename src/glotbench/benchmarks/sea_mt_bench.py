"""SEA-MT-Bench (aisingapore/MultiTurn-Chat-MT-Bench), judged pairwise as SEA-HELM judges it.

`glotbench run sea-mt-bench --model M --judge J --bench-opt config=th --data FILE`: the candidate
answers each question's turn 1, then turn 2 with the conversation so far (its own turn-1 answer);
the baseline's answers are the data's (`baselines[gpt-4.1-2025-04-14]`, as SEA-HELM's pairwise
dataloader reads them) or another model's (`--bench-opt baseline=SPEC`); every judge sees each turn
in both orders with SEA-HELM's prompts, and the score is SEA-HELM's weighted win rate
(judges/mt_bench.py; its judged declaration below, run by engine/judged.py).

The hub's schema, one row per question (SEA-HELM reads config LANG, split `eval`):
`question_id`, `prompts` [{"text"} per turn], `baselines` {MODEL: [answer per turn]}, `references`
[per turn; math and reasoning], `metadata` {"language", "category"}. No pinned revision of the
gated dataset could be read here: a run on the benchmark needs `--data FILE` (its rows as JSONL, JSON
or parquet). Without it, config th runs a bundled sample of 4 Thai questions written for glotbench in
that schema (not SEA-MT-Bench data; every view says so).
"""

from __future__ import annotations

from importlib import resources
from typing import Any, Iterable, Mapping

from glotbench.benchmarks.arena import choice
from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset, RunResult
from glotbench.data import raw_rows
from glotbench.datasheet import Datasheet
from glotbench.errors import DataError
from glotbench.extract import Extraction, free_text
from glotbench.items import Item, PublicItem
from glotbench.judges.mt_bench import (ANSWER_MAX_TOKENS, BASELINE_MODEL, CATEGORIES_WITH_REFERENCE, JUDGE_MAX_TOKENS,
                                       JUDGE_TEMPERATURE, ORDERS, REFERENCE_COMMIT, TURNS, Outcome, final_judgement,
                                       WEIGHTED_WIN_RATE, forfeits, judge_messages, outcome_counts, outcome_value,
                                       parse_judgement, scores_of)
from glotbench.judges.pipeline import AnswerPhase, Declared, JudgedContext, JudgedOutcome, JudgeSampling, merged_base
from glotbench.judges.stats import JudgedStats
from glotbench.rundir import slug
from glotbench.rundir.validity import combine
from glotbench.signature import Signature
from glotbench.loading import sha256_file
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.core import GenerateConfig, Prompt

HUB = "aisingapore/MultiTurn-Chat-MT-Bench"
# SEA-HELM's languages for mt-bench (config.yaml `languages`), each its hub config
LANGUAGES = ("en", "id", "jv", "km", "lo", "ms", "my", "su", "ta", "th", "tl", "vi", "zh")
SAMPLE, SAMPLE_LANGUAGE = "sea_mt_bench_th_sample.jsonl", "th"

DATASHEET = Datasheet(
    licence="CC-BY-4.0, Apache-2.0 (the card lists both)", commercial=True,
    origin="translated", origin_by_language={"en": "native"},
    source=f"https://huggingface.co/datasets/{HUB}",
    reference="aisingapore/SEA-HELM seahelm_tasks/multi_turn/mt_bench/config.yaml, "
              "src/dataloaders/judges/pairwise_dataloader.py, src/metrics/llm_judges/pairwise_llm_judge_metric.py",
    reference_commit=REFERENCE_COMMIT,
    citation="""@misc{susanto2025seahelmsoutheastasianholistic,
      title={SEA-HELM: Southeast Asian Holistic Evaluation of Language Models},
      author={Yosephine Susanto and Adithya Venkatadri Hulagadri and Jann Railey Montalan and Jian Gang Ngui and Xian Bin Yong and Weiqi Leong and Hamsawardhini Rengarajan and Peerat Limkonchotiwat and Yifan Mai and William Chandra Tjhi},
      year={2025}, eprint={2502.14301}, archivePrefix={arXiv}, primaryClass={cs.CL},
      url={https://arxiv.org/abs/2502.14301},
}
@inproceedings{zheng2023judging,
      title={Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena},
      author={Lianmin Zheng and Wei-Lin Chiang and Ying Sheng and Siyuan Zhuang and Zhanghao Wu and Yonghao Zhuang and Zi Lin and Zhuohan Li and Dacheng Li and Eric P. Xing and Hao Zhang and Joseph E. Gonzalez and Ion Stoica},
      booktitle={Advances in Neural Information Processing Systems}, year={2023}, eprint={2306.05685},
}""",
    languages={code: {"config": code} for code in LANGUAGES},
    data_only=list(LANGUAGES),  # gated, and no pinned revision could be read: --data FILE
)


def _text(v: Any, where: str) -> str:
    if not isinstance(v, str):
        raise DataError(f"{where}: expected a string, got {type(v).__name__}")
    return v


def _turns(v: Any, where: str, of: str) -> list[str]:
    if not isinstance(v, list) or len(v) != TURNS:
        raise DataError(f"{where}: {of}: expected a list of {TURNS} (one per turn), got "
                        + (f"{len(v)}" if isinstance(v, list) else type(v).__name__))
    return [_text(x, f"{where}: {of}[{i}]") for i, x in enumerate(v)]


def _other_language(value: Any, config: str) -> str | None:
    """A row's `metadata.language` when it names a language other than the run's config (a file of
    several languages' rows), else None (the same language, or no language glotbench can read)."""
    from glotbench.languages import checked_group

    if not isinstance(value, str) or not value.strip():
        return None
    try:
        group = checked_group(value)
    except ValueError:
        return None
    return value if group != checked_group(config) else None


class SeaMtBench(Benchmark, Declared):
    """The judged benchmark: its items are questions (two turns each), its judged run declared here (engine/judged.py runs it)."""

    name = "sea-mt-bench"
    version = "1.0"
    description = ("SEA-MT-Bench (SEA-HELM's mt-bench): two turns, pairwise against a fixed baseline in both "
                   "orders, weighted win rate; --bench-opt config=LANG, --judge J, --data FILE")
    judged, judge_pipeline = True, "mt-bench"
    model_options = optional_model_options = ("baseline",)  # without it, the data's baseline answers
    datasheet = DATASHEET
    bundled_data = "sample"  # 4 Thai questions written for glotbench in the hub's schema, not SEA-MT-Bench
    output_language_rule = "the question's language (the run's config)"
    metrics = (RatioMetric("weighted_win_rate", "value", "judged", "SEA-HELM's weighted win rate (mean of judges)"),)
    group_by = ("category",)
    default_config = GenerateConfig(temperature=0.0, max_tokens=ANSWER_MAX_TOKENS)  # each turn's, as MtTurn
    uncounted_requests = ("the second turn of every question (as many requests again, each prompt also holding "
                          "the first turn's answer)",)

    def __init__(self, config: str = "th", baseline: str | None = None, baseline_model: str = BASELINE_MODEL,
                 unanswered: str = "loss") -> None:
        """`config`: the language (SEA-HELM's hub config: th, vi, id...; th has a bundled sample); `baseline`: a model spec whose
        answers replace the data's; `baseline_model`: the data's `baselines` key (SEA-HELM's
        baseline_model); `unanswered`: loss (a turn the candidate did not answer loses) or drop."""
        self.config = choice(self.name, "config", config, LANGUAGES)
        self.lang = self.config
        self.baseline = baseline
        self.baseline_model = baseline_model
        self.unanswered = choice(self.name, "unanswered", unanswered, ("loss", "drop"))

    def load(self, path: str | None = None) -> Dataset:
        if path is None and self.config == SAMPLE_LANGUAGE:
            ref = resources.files("glotbench.benchmarks").joinpath(f"data/{SAMPLE}")
            with resources.as_file(ref) as p:
                return self._load(str(p), f"bundled:{SAMPLE} (not SEA-MT-Bench data)")
        if path is None:
            raise DataError(f"{self.name}: give the rows with --data FILE ({HUB}, config {self.config}, split eval, "
                            "as JSONL, JSON or parquet): the dataset is gated, no pinned revision of it could be "
                            f"read to download from, and the bundled sample is {SAMPLE_LANGUAGE} only")
        return self._load(path, path)

    def _load(self, path: str, source: str) -> Dataset:
        items, seen = [], set()
        for line, rec in raw_rows(path):
            where = f"{path}:{line}"
            if not isinstance(rec, dict):
                raise DataError(f"{where}: expected an object, got {type(rec).__name__}")
            qid = rec.get("question_id")
            if not isinstance(qid, (int, str)) or isinstance(qid, bool) or str(qid).strip() == "":
                raise DataError(f"{where}: question_id: expected an integer or a string")
            qid = str(qid)
            if "_" in qid:  # SEA-HELM splits its custom ids (QID_turnN_ORDER) on "_"
                raise DataError(f"{where}: question_id {qid!r} holds '_', which SEA-HELM's ids cannot")
            if qid in seen:
                raise DataError(f"{where}: duplicate question_id {qid}")
            seen.add(qid)
            prompts = rec.get("prompts")
            if not isinstance(prompts, list) or len(prompts) != TURNS or not all(isinstance(p, dict) for p in prompts):
                raise DataError(f"{where}: prompts: expected {TURNS} objects {{\"text\": ...}}, one per turn")
            questions = [_text(p.get("text"), f"{where}: prompts[{i}].text") for i, p in enumerate(prompts)]
            if blank := [i for i, q in enumerate(questions) if not q.strip()]:
                raise DataError(f"{where}: prompts[{blank[0]}].text: empty (the question the candidate is asked)")
            meta = rec.get("metadata")
            category = meta.get("category") if isinstance(meta, dict) else None
            if not isinstance(category, str) or not category.strip():
                raise DataError(f"{where}: metadata.category: expected a string")
            if (other := _other_language(meta.get("language") if isinstance(meta, dict) else None, self.config)) is not None:
                raise DataError(f"{where}: metadata.language: {other!r}, but the run's config is {self.config} (one "
                                "language per run: give that language's rows)")
            gold: dict[str, Any] = {}
            if category in CATEGORIES_WITH_REFERENCE:
                gold["references"] = _turns(rec.get("references"), where, "references")
            if self.baseline is None:
                base = rec.get("baselines")
                if not isinstance(base, dict) or self.baseline_model not in base:
                    raise DataError(f"{where}: baselines.{self.baseline_model}: missing (the data's baseline answers; "
                                    "--bench-opt baseline_model=KEY names another, baseline=SPEC answers with a model)")
                gold["baseline"] = _turns(base[self.baseline_model], where, f"baselines.{self.baseline_model}")
            items.append(Item.create(qid, {"turns": questions}, gold, {"category": category}))
        if not items:
            raise DataError(f"{path}: no rows")
        return self.dataset(items, source, sha256_file(path))

    def render(self, item: PublicItem) -> Prompt:
        return MtTurn().render(PublicItem(item.id, {"turns": item["turns"], "answers": ()}, item.meta))

    def extract(self, text: str, item: PublicItem) -> Extraction:
        return free_text(text)

    def score(self, answer: Any, item: Item) -> ItemScore:
        return ItemScore({"value": 0.0, "judged": 0.0})  # judged (its declaration below), never scored here

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"value": 0.0, "judged": 0.0}, failure=failure)

    def signature_parts(self) -> dict[str, str]:
        return {"config": self.config, "baseline": self.baseline or f"data:{self.baseline_model}"}

    # -- its judged run (judges/pipeline.py JudgedDeclaration; engine/judged.py runs it) --
    out_root = "sea-mt-bench"
    answer_dirs = ("candidate-turn1", "candidate-turn2")
    older: tuple[str, ...] = ()
    sampling = JudgeSampling()
    own_selection = False
    judged_metrics = WEIGHTED_WIN_RATE  # SEA-HELM's weighted win rate, per turn and per category

    def judged_declaration(self) -> "SeaMtBench":
        return self

    @property
    def judge_games(self) -> "MtBenchGames":
        return MtBenchGames()

    def no_judge(self) -> str:
        return f"{self.name} is judged: name at least one judge with --judge SPEC"

    def next_phase(self, candidate: str, items: Dataset, done: Mapping[str, RunResult]) -> AnswerPhase | None:
        """Each side's turn 1, then its turn 2 (the conversation so far: its own turn-1 answer); the
        baseline's turns only where a baseline model answers (else the data's answers)."""
        roles: tuple[Any, ...] = ("candidate", "baseline") if self.baseline is not None else ("candidate",)
        for role in roles:
            for turn in range(1, TURNS + 1):
                name = f"{role} turn {turn}"
                if name not in done:
                    return AnswerPhase(name, f"{role}-turn{turn}", role, MtTurn(),
                                       MtTurn.build(items, _turn_answers(done, role), turn))
        return None

    def games(self, ctx: JudgedContext) -> Dataset:
        return MtBenchGames.build(ctx.items, *self._sides(ctx), [q.id for q in ctx.all_items])

    def _sides(self, ctx: JudgedContext) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        baseline = (_turn_answers(ctx.phases, "baseline") if self.baseline is not None else
                    {q.id: _answered_turns(q.gold["baseline"]) for q in ctx.items})
        return _turn_answers(ctx.phases, "candidate"), baseline

    def judged_score(self, ctx: JudgedContext, games: Dataset, runs: Mapping[str, RunResult]) -> JudgedOutcome:
        """Per judge, per question, the turns' values (SEA-HELM's outcome of both orders); the
        weighted win rate of each judge, their mean, per turn and per category (judges/mt_bench.py)."""
        questions = ctx.items
        candidate, baseline = self._sides(ctx)
        validity = dict(ctx.validity)
        categories = {q.id: str(q.meta["category"]) for q in questions}
        forfeit, dropped = forfeits(questions, candidate, baseline, self.unanswered)
        turn_values: dict[str, dict[str, list[float]]] = {}
        turn_outcomes: dict[str, dict[str, list[str]]] = {}
        counts: dict[str, dict[str, int]] = {}
        for spec, run in runs.items():
            got = {(s.meta["question_id"], s.meta["turn"], s.meta["order"]): Outcome[s.answer]
                   for s in run.samples if s.failure is None and isinstance(s.answer, str)}
            vals: dict[str, list[float]] = {}
            outs: dict[str, list[str]] = {}
            finals = []
            for q in questions:
                for turn in range(1, TURNS + 1):
                    key = (q.id, str(turn))
                    if key in dropped:
                        continue
                    if key in forfeit:
                        vals.setdefault(q.id, []).append(forfeit[key])
                        outs.setdefault(q.id, []).append("unanswered")
                        continue
                    first, second = (got.get((q.id, str(turn), o), Outcome.ERROR) for o in ORDERS)
                    final = final_judgement(first, second)
                    finals.append(final)
                    vals.setdefault(q.id, []).append(outcome_value(final))
                    outs.setdefault(q.id, []).append(final.name.lower())
            turn_values[spec], turn_outcomes[spec], counts[spec] = vals, outs, outcome_counts(finals)
            validity[f"judge {spec}"] = run.results.get("validity")
        scored = [q.id for q in questions if q.id in next(iter(turn_values.values()), {})]
        stats = JudgedStats.of(turn_values, scored, clusters={i: categories[i] for i in scored})
        metrics = ctx.measure(stats) if scored else {}
        found = scores_of(stats, metrics)
        signature = Signature.build(("glotbench", self.name), ("v", self.version), ("config", self.config),
                                    ("data", (ctx.all_items.sha256 or "none")[:12]),
                                    ("baseline", self.baseline or f"data:{self.baseline_model}"),
                                    ("answer_prompt", MtTurn().prompt_hash(questions)),
                                    ("judge_prompt", MtBenchGames().prompt_hash(games)),
                                    ("judges", ",".join(slug(j) for j in runs)),
                                    ("unanswered", self.unanswered)).format()
        summary = {
            "benchmark": self.name, "model": ctx.candidate, "language": self.config, "judges": list(ctx.judges),
            "skipped_judges": list(ctx.skipped), "baseline": self.baseline or f"data:{self.baseline_model}",
            "scores": found, "outcomes": counts, "signature": signature, "items": len(questions),
            "turn_values": turn_values, "turn_outcomes": turn_outcomes,
            "unanswered": {"policy": self.unanswered,
                           "turns": sorted(f"{q}_turn{t}" for q, t in (*forfeit, *dropped)),
                           "dropped": sorted(f"{q}_turn{t}" for q, t in dropped)},
            "rules": RULES, "data": questions.source, "data_sha256": ctx.all_items.sha256,
            "selection": ctx.selection.record(), "data_label": self.data_label(ctx.all_items),
            "validity": combine(validity, judged=found["final"].get("n"), of=len(questions)),
            "judge_validation": ctx.judge_validation,
        }
        cand = [ctx.phases[f"candidate turn {t}"] for t in range(1, TURNS + 1)]
        return JudgedOutcome(summary, merged_base(cand), cand[-1].samples, cand[-1].dataset, stats, metrics)


RULES = ("SEA-HELM's PairwiseLLMJudgeMetric: per turn, baseline-before and baseline-after; a tie in the first "
         "or two different outcomes is a tie; win 1, tie 0.5, lose and unreadable 0; a category's win rate over "
         "its turns; the weighted win rate is the mean of the categories'; mean of judges; 95% percentile "
         "bootstrap over questions (Wilson where it collapses). A turn not answered: see `unanswered`")


def _turn_answers(done: Mapping[str, RunResult], role: str) -> dict[str, list[str]]:
    """One side's answers to the turns done: {question id: [turn 1, turn 2]} (a question is there for
    each turn answered in order)."""
    got: dict[str, list[str]] = {}
    for turn in range(1, TURNS + 1):
        res = done.get(f"{role} turn {turn}")
        for s in res.samples if res is not None else ():
            if isinstance(s.answer, str) and s.answer.strip() and len(got.get(s.id, ())) == turn - 1:
                got.setdefault(s.id, []).append(s.answer)
    return got


class MtTurn(Benchmark):
    """One turn's answers (a phase of sea-mt-bench): the conversation so far, then the turn's question.
    An item's public part: `turns` (the questions) and `answers` (this model's answers to the earlier
    turns); the turn asked is the one after the last answer."""

    name = "sea-mt-bench-turn"
    version = "1.0"
    description = "one turn of SEA-MT-Bench's conversations (answers only; a phase of sea-mt-bench)"
    metrics = (RatioMetric("answered", "answered", "questions", "share of turns with a non-empty answer"),)
    group_by = ("category",)
    default_config = GenerateConfig(temperature=0.0, max_tokens=ANSWER_MAX_TOKENS)
    output_language_rule = "the question's language"

    @classmethod
    def build(cls, questions: Dataset, answers: dict[str, list[str]], turn: int) -> Dataset:
        """Turn `turn` (1-based) of every question whose earlier turns `answers` holds."""
        items = [Item.create(q.id, {"turns": q.public["turns"], "answers": answers.get(q.id, [])[:turn - 1]}, {},
                             {**q.meta, "turn": str(turn)})
                 for q in questions if turn == 1 or len(answers.get(q.id, ())) >= turn - 1]
        return Dataset(tuple(items), f"turn {turn} of {questions.source}", questions.sha256,
                       known_ids=frozenset(q.id for q in questions))

    def load(self, path: str | None = None) -> Dataset:
        raise DataError("a turn's items are built from the questions and the earlier answers (MtTurn.build)")

    def prompt_probe(self, dataset: Dataset) -> Iterable[PublicItem]:
        return [PublicItem("probe", {"turns": ("{question_1}", "{question_2}"), "answers": ()}),
                PublicItem("probe", {"turns": ("{question_1}", "{question_2}"), "answers": ("{answer_1}",)})]

    def render(self, item: PublicItem) -> Prompt:
        """SEA-HELM's task template is `{text}` with no preamble: the questions as user turns, the
        model's own earlier answers as assistant turns."""
        turns, answers = list(item["turns"]), list(item["answers"])
        messages: list[dict[str, str]] = []
        for q, a in zip(turns, answers):
            messages += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
        messages.append({"role": "user", "content": turns[len(answers)]})
        return Prompt(messages=tuple(messages))

    def extract(self, text: str, item: PublicItem) -> Extraction:
        return free_text(text)

    def score(self, answer: str, item: Item) -> ItemScore:
        return ItemScore({"answered": 1.0, "questions": 1.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"answered": 0.0, "questions": 1.0}, failure=failure)


class MtBenchGames(Benchmark):
    """A judge's games (a phase of sea-mt-bench): per question, per turn, both orders, rendered with
    SEA-HELM's prompts; the answer is the outcome from the candidate's side (judges/mt_bench.py)."""

    name = "sea-mt-bench-judge"
    version = "1.0"
    description = "SEA-MT-Bench's pairwise judging: each turn in both orders (SEA-HELM's prompts and labels)"
    metrics = (RatioMetric("readable", "readable", "games", "share of verdicts with exactly one label"),)
    group_by = ("turn", "order")
    default_config = GenerateConfig(temperature=JUDGE_TEMPERATURE, max_tokens=JUDGE_MAX_TOKENS)
    reply_name = "verdict"
    judge_task = True  # an unreadable verdict counts against --max-failure-rate (rundir/validity.py)

    @classmethod
    def build(cls, questions: Dataset, candidate: dict[str, list[str]], baseline: dict[str, list[str]],
              all_ids: Iterable[str]) -> Dataset:
        """Games `QID_turnN_ORDER` (SEA-HELM's custom ids) for each turn both sides answered."""
        games = []
        for q in questions:
            cand, base = candidate.get(q.id, []), baseline.get(q.id, [])
            refs = q.gold.get("references")
            for turn in range(1, TURNS + 1):
                if len(cand) < turn or len(base) < turn:
                    continue
                for order in ORDERS:
                    system, user = judge_messages(turn, order, list(q.public["turns"]), cand, base,
                                                  list(refs) if refs is not None else None)
                    games.append(Item.create(f"{q.id}_turn{turn}_{order}", {"system": system["content"],
                                                                            "user": user["content"]},
                                             {}, {"question_id": q.id, "turn": str(turn), "order": order,
                                                  "category": q.meta["category"]}))
        known = frozenset(f"{i}_turn{t}_{o}" for i in all_ids for t in range(1, TURNS + 1) for o in ORDERS)
        return Dataset(tuple(games), f"games over {questions.source}", questions.sha256, known_ids=known)

    def load(self, path: str | None = None) -> Dataset:
        raise DataError("SEA-MT-Bench's games are built from answers (MtBenchGames.build), not loaded from a file")

    def prompt_probe(self, dataset: Dataset) -> Iterable[PublicItem]:
        probes = []
        for turn in range(1, TURNS + 1):
            for refs in (None, ["{ref_answer_1}", "{ref_answer_2}"]):
                s, u = judge_messages(turn, "baseline-after", ["{question_1}", "{question_2}"],
                                      ["{answer_a_1}", "{answer_a_2}"], ["{answer_b_1}", "{answer_b_2}"], refs)
                probes.append(PublicItem("probe", {"system": s["content"], "user": u["content"]}))
        return probes

    def render(self, item: PublicItem) -> Prompt:
        return Prompt(messages=({"role": "system", "content": item["system"]}, {"role": "user", "content": item["user"]}))

    def extract(self, text: str, item: PublicItem) -> Extraction:
        body, ok = free_text(text).answer, True
        if body is None:
            body, ok = "", False
        outcome = parse_judgement(body, item.meta["order"] == "baseline-before")
        if not ok or outcome == Outcome.ERROR:  # SEA-HELM's ERROR: recorded as an unreadable verdict
            return Extraction(None, "bad_verdict", "not exactly one of [[A]], [[B]], [[C]] in the reply")
        return Extraction(outcome.name)

    def score(self, answer: str, item: Item) -> ItemScore:
        return ItemScore({"readable": 1.0, "games": 1.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"readable": 0.0, "games": 1.0}, failure=failure)


def _answered_turns(answers: Any) -> list[str]:
    """The data's baseline answers read as a model's are (`_turn_answers`): the turns answered in order,
    up to the first empty one; an empty baseline answer is an unanswered baseline turn, not a game."""
    got: list[str] = []
    for a in answers:
        if not str(a).strip():
            break
        got.append(str(a))
    return got
