"""SEA-MT-Bench's judged pipeline (`judge_pipeline` mt-bench), dispatched from `evaluate_async`.

Phases, each an ordinary run in its own directory under OUT (cached, resumable): the candidate's
turn 1 (`candidate-turn1`), its turn 2 with the conversation so far (`candidate-turn2`), the same two
for a baseline model when `--bench-opt baseline=SPEC` names one (else the data's baseline answers),
then every judge's games (`judge-SPEC`: each turn in both orders). OUT/results.json is the
candidate's judged run: SEA-HELM's weighted win rate (judges/mt_bench.py) as its headline, the mean
of judges; a judge is never a model of it.

| case                                   | what enters the score                                       |
|----------------------------------------|-------------------------------------------------------------|
| a verdict without exactly one label    | SEA-HELM's ERROR (an unreadable verdict: counted against    |
| (or a judge call that failed)          | --max-failure-rate too)                                     |
| a turn the candidate did not answer    | unanswered=loss: 0 for every judge, no judge asked (turn 2  |
| (failed or empty; turn 2 after one)    | of a question whose turn 1 failed is not asked either);     |
|                                        | unanswered=drop: the turn leaves the score, listed          |
| a turn the baseline model did not      | loss: 1 for the candidate (0.5 when neither answered); drop |
| answer (or the data's answer is empty; | as above                                                    |
| turn 2 after one)                      |                                                             |
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from glotbench.benchmarks.sea_mt_bench import TURNS, MtBenchGames, MtTurn, SeaMtBench
from glotbench.core import Dataset, RunResult
from glotbench.engine.evaluate import RunOptions, evaluate_async
from glotbench.engine.options import model_options
from glotbench.engine.panel import check_judged_options, phase_options, run_panel, write_judged
from glotbench.errors import GlotbenchError
from glotbench.judges.cards import validation
from glotbench.judges.mt_bench import ORDERS, Outcome, final_judgement, outcome_counts, outcome_value, weighted_win_rate
from glotbench.judges.panel import SelfJudging, judged_interval, select_judges
from glotbench.models.base import Model
from glotbench.registry import load_model
from glotbench.rundir import RESULTS, read_results, set_aside_invalid, slug
from glotbench.rundir.selection import select
from glotbench.rundir.validity import combine
from glotbench.signature import Signature
from glotbench.stats import DEFAULT_SEED, Estimate, bootstrap_many

RULES = ("SEA-HELM's PairwiseLLMJudgeMetric: per turn, baseline-before and baseline-after; a tie in the first "
         "or two different outcomes is a tie; win 1, tie 0.5, lose and unreadable 0; a category's win rate over "
         "its turns; the weighted win rate is the mean of the categories'; mean of judges; 95% percentile "
         "bootstrap over questions (Wilson where it collapses). A turn not answered: see `unanswered`")


class _KeptOpen:
    """A model object lent to a phase that must not close it (a later phase asks it again)."""

    def __init__(self, model: Model) -> None:
        self._model = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    async def aclose(self) -> None:
        return None


async def _answers(role: str, spec: str | Model, questions: Dataset, phase: RunOptions,
                   out: Path) -> tuple[dict[str, list[str]], dict[str, Any], list[RunResult]]:
    """One model's answers to both turns: {question id: [turn 1, turn 2]} (a question is there for
    each turn answered in order), each phase's validity, the phases' runs."""
    got: dict[str, list[str]] = {}
    validity: dict[str, Any] = {}
    runs = []
    for turn in range(1, TURNS + 1):
        items = MtTurn.build(questions, got, turn)
        model = spec if isinstance(spec, str) or turn == TURNS else _KeptOpen(spec)
        res = await evaluate_async(MtTurn(), model, replace(phase, out=str(out / f"{role}-turn{turn}"),  # type: ignore[arg-type]
                                                            phase=f"{role} turn {turn}"), dataset=items)
        for s in res.samples:
            if isinstance(s.answer, str) and s.answer.strip() and len(got.get(s.id, ())) == turn - 1:
                got.setdefault(s.id, []).append(s.answer)
        validity[f"{role} turn {turn}"] = res.results.get("validity")
        runs.append(res)
    return got, validity, runs


async def judged_result(bench: SeaMtBench, model: str | Model, options: RunOptions,
                        dataset: Dataset | None = None) -> RunResult:
    """The run; its record read as the candidate's run; the samples are the candidate's turn-2 answers."""
    judges = list(options.judges or bench.default_judges)
    if not judges:
        raise GlotbenchError(f"{bench.name} is judged: name at least one judge with --judge SPEC")
    check_judged_options(bench.name, options)
    phase = replace(phase_options(options), out=None, data=None, limit=None)
    cand_spec = model if isinstance(model, str) else model.spec
    out = Path(options.out or f"runs/{bench.name}/{datetime.now():%Y%m%d-%H%M%S}-{slug(cand_spec)}")
    set_aside_invalid(out, RESULTS, ("candidate-turn1", "candidate-turn2"))
    questions_all = bench.load(options.data) if dataset is None else dataset  # bad data: before any call
    cand = load_model(model, **model_options(options)) if isinstance(model, str) else model
    base_model = load_model(bench.baseline, **model_options(options)) if bench.baseline else None
    try:
        kept, skipped = await select_judges(judges, cand_spec, cand, options, SelfJudging(),
                                            contestants=(base_model,) if base_model is not None else ())
    finally:
        if base_model is not None:
            await base_model.aclose()
        if isinstance(model, str):
            await cand.aclose()
    if not kept:
        raise GlotbenchError(f"every judge was skipped as the candidate or the baseline ({', '.join(skipped)})")
    judge_validation = validation(kept, bench.lang, options.judge_cards)  # a bad cards directory fails here
    selection = select(questions_all, (), limit=options.limit)
    questions = selection.items
    candidate, validity, cand_runs = await _answers("candidate", model, questions, phase, out)
    if bench.baseline is not None:
        baseline, base_validity, _ = await _answers("baseline", bench.baseline, questions, phase, out)
        validity.update(base_validity)
    else:
        baseline = {q.id: _answered_turns(q.gold["baseline"]) for q in questions}
    games = MtBenchGames.build(questions, candidate, baseline, [q.id for q in questions_all])
    judging = MtBenchGames()
    runs = await run_panel(judging, games, kept, replace(phase, repeats=1, temperature=None, max_tokens=None, seed=None,
                                                         stop=(), structured_output=False, thinking=None), out)
    categories = {q.id: str(q.meta["category"]) for q in questions}
    forfeit, dropped = _forfeits(questions, candidate, baseline, bench.unanswered)
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
    scores = _scores(turn_values, scored, categories, resamples=options.bootstrap_resamples)
    signature = Signature.build(("glotbench", bench.name), ("v", bench.version), ("config", bench.config),
                                ("data", (questions_all.sha256 or "none")[:12]),
                                ("baseline", bench.baseline or f"data:{bench.baseline_model}"),
                                ("answer_prompt", MtTurn().prompt_hash(questions)),
                                ("judge_prompt", judging.prompt_hash(games)),
                                ("judges", ",".join(slug(j) for j in runs)),
                                ("unanswered", bench.unanswered)).format()
    summary = {
        "benchmark": bench.name, "model": cand_spec, "language": bench.config, "judges": judges,
        "skipped_judges": skipped, "baseline": bench.baseline or f"data:{bench.baseline_model}",
        "scores": scores, "outcomes": counts, "signature": signature, "items": len(questions),
        "turn_values": turn_values, "turn_outcomes": turn_outcomes,
        "unanswered": {"policy": bench.unanswered, "turns": sorted(f"{q}_turn{t}" for q, t in (*forfeit, *dropped)),
                       "dropped": sorted(f"{q}_turn{t}" for q, t in dropped)},
        "rules": RULES, "data": questions.source, "data_sha256": questions_all.sha256,
        "selection": selection.record(), "data_label": bench.data_label(questions_all),
        "validity": combine(validity, judged=scores["final"].get("n"), of=len(questions)),
        "judge_validation": judge_validation,
    }
    write_judged(out, "mt-bench", summary, _answers_base(cand_runs),
                 {"candidate turn 1": "candidate-turn1", "candidate turn 2": "candidate-turn2",
                  **({"baseline turn 1": "baseline-turn1", "baseline turn 2": "baseline-turn2"} if bench.baseline else {}),
                  **{f"judge {spec}": run.out_dir.name for spec, run in runs.items()}})
    last = cand_runs[-1]
    return RunResult(out, read_results(out), last.samples, last.dataset)


def _answered_turns(answers: Any) -> list[str]:
    """The data's baseline answers read as a model's are (`_answers`): the turns answered in order,
    up to the first empty one; an empty baseline answer is an unanswered baseline turn, not a game."""
    got: list[str] = []
    for a in answers:
        if not str(a).strip():
            break
        got.append(str(a))
    return got


def _forfeits(questions: Dataset, candidate: Mapping[str, list[str]], baseline: Mapping[str, list[str]],
              policy: str) -> tuple[dict[tuple[str, str], float], set[tuple[str, str]]]:
    """The turns not judged because a side has no answer: their values (policy loss), or the set left
    out (policy drop)."""
    forfeit: dict[tuple[str, str], float] = {}
    for q in questions:
        for turn in range(1, TURNS + 1):
            c, b = len(candidate.get(q.id, ())) >= turn, len(baseline.get(q.id, ())) >= turn
            if not (c and b):
                forfeit[(q.id, str(turn))] = 0.5 if not (c or b) else 0.0 if not c else 1.0
    if policy == "drop":
        return {}, set(forfeit)
    return forfeit, set()


def _answers_base(runs: list[RunResult]) -> dict[str, Any]:
    """The candidate's answers as one run's results for the judged view: turn 2's record, with both
    turns' counts and tokens added up (the candidate's own calls; the judges' are not its)."""
    base = dict(runs[-1].results)
    for key in ("counts", "tokens"):
        merged: dict[str, Any] = {}
        for r in runs:
            for k, v in (r.results.get(key) or {}).items():
                merged[k] = merged.get(k, 0) + v if isinstance(v, (int, float)) and not isinstance(v, bool) else v
        base[key] = merged
    return base


def _scores(turn_values: Mapping[str, Mapping[str, list[float]]], ids: list[str], categories: Mapping[str, str], *,
            resamples: int, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Each judge's weighted win rate (SEA-HELM's rule, judges/mt_bench.py), their mean (`final`),
    per turn and per category (mean of judges), each with the judged pipelines' interval
    (`judged_interval`): the bootstrap resamples questions, every judge and turn of a question together."""
    judges = list(turn_values)
    cats = sorted({categories[i] for i in ids})
    # a question's row: per judge, per turn slot (0: both turns, 1: turn 1, 2: turn 2), per category: (sum, count)
    width = len(cats) * 2
    rows = np.zeros((len(ids), len(judges) * (TURNS + 1) * width))

    def col(j: int, slot: int, c: int) -> int:
        return (j * (TURNS + 1) + slot) * width + 2 * c

    for r, qid in enumerate(ids):
        c = cats.index(categories[qid])
        for j, judge in enumerate(judges):
            for t, v in enumerate(turn_values[judge].get(qid, ())):
                for slot in (0, t + 1):
                    rows[r, col(j, slot, c)] += v
                    rows[r, col(j, slot, c) + 1] += 1

    def rate(j: int, slot: int, only: int | None = None) -> Callable[[np.ndarray], float]:
        def fn(row: np.ndarray) -> float:
            per = [row[col(j, slot, c)] / row[col(j, slot, c) + 1] for c in range(len(cats))
                   if (only is None or c == only) and row[col(j, slot, c) + 1] > 0]
            return float(np.mean(per)) if per else float("nan")
        return fn

    def mean_of(fns: list[Callable[[np.ndarray], float]]) -> Callable[[np.ndarray], float]:
        def fn(row: np.ndarray) -> float:
            vals = [v for v in (f(row) for f in fns) if v == v]
            return float(np.mean(vals)) if vals else float("nan")
        return fn

    fns: dict[str, Callable[[np.ndarray], float]] = {f"judge:{j}": rate(i, 0) for i, j in enumerate(judges)}
    fns["final"] = mean_of([rate(i, 0) for i in range(len(judges))])
    for t in range(1, TURNS + 1):
        fns[f"turn:{t}"] = mean_of([rate(i, t) for i in range(len(judges))])
    for c, cat in enumerate(cats):
        fns[f"category:{cat}"] = mean_of([rate(i, 0, c) for i in range(len(judges))])
    if not ids:
        return {"final": {"value": None, "ci_low": None, "ci_high": None, "n": 0, "ci_method": "none"},
                "judges": {j: {"value": None, "n": 0} for j in judges}, "turns": {}, "categories": {},
                "win_rate": {}, "questions": 0}
    est: dict[str, Estimate] = bootstrap_many(rows, fns, resamples=resamples, seed=seed)
    n = len(ids)
    # SEA-HELM's own numbers of each judge, from its formula over the same values (the point estimates above)
    seahelm = {j: weighted_win_rate({i: turn_values[j][i] for i in ids if i in turn_values[j]}, categories)
               for j in judges}
    return {"final": judged_interval(est["final"], n, resamples),
            "judges": {j: judged_interval(est[f"judge:{j}"], n, resamples) for j in judges},
            "turns": {str(t): judged_interval(est[f"turn:{t}"], n, resamples) for t in range(1, TURNS + 1)},
            "categories": {cat: judged_interval(est[f"category:{cat}"], sum(categories[i] == cat for i in ids), resamples)
                           for cat in cats},
            "win_rate": {j: s["win_rate"] for j, s in seahelm.items()},
            "category_win_rate": {j: s["categories"] for j, s in seahelm.items()},
            "questions": n}
