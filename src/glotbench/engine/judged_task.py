"""A task scored by a rubric (glotbench.tasks.rubric): the candidate's answers, then each judge's
pass through the judge panel, then the mean of judges with a CI; the phases pass samples in memory
and each writes its run directory (the call cache makes a re-run resume), as the arena and AraGen do.

Every item enters the score: an item the candidate did not answer scores 0 for every judge (the
lowest value: counted and listed in `unanswered`); a verdict that never parsed leaves the item out
of that judge's mean (its coverage is reported). A judge that is the candidate (or, with
`same_family: true`, of its family) is skipped and listed. Writes OUT/results.json (the candidate's
judged run, its summary in `judged`: rundir.schema.JudgedSection), with its validity
(invalid when a phase is: the answers' or a judge's calls failed above --max-failure-rate); an invalid or
unfinished run in OUT is set aside and run again, a finished valid one refused (rundir.set_aside_invalid).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from glotbench.core import Dataset, RunResult
from glotbench.engine.evaluate import RunOptions, evaluate_phase
from glotbench.engine.options import model_options
from glotbench.rundir import OLD_SUMMARIES, RESULTS, read_results, set_aside_invalid, slug
from glotbench.rundir.validity import combine
from glotbench.errors import GlotbenchError
from glotbench.engine.judged import run_panel, write_judged
from glotbench.judges.cards import validation
from glotbench.judges.panel import SelfJudging, mean_of_judges, select_judges
from glotbench.registry import get_benchmark, load_model
from glotbench.signature import Signature


async def judged_result(benchmark: Any, model: Any, options: RunOptions, dataset: Dataset | None = None) -> RunResult:
    """`evaluate_async`'s judged branch: the run, then its record read as the candidate's run
    (`report.rundata.judged_view`: the mean of judges as the headline; no judge is a model of it);
    the samples are the candidate's answers. `dataset`: the items, already loaded (a service set)."""
    res, answers = await _run(benchmark, model, list(options.judges), options, options.judge_cards, dataset)
    out = Path(res["out_dir"])
    return RunResult(out, read_results(out), answers.samples, answers.dataset)


async def run_judged(benchmark: Any, model: Any, judges: list[str], options: RunOptions,
                     judge_cards: str | None = None) -> dict[str, Any]:
    """The run; its summary (results.json's `judged.summary`, with `out_dir`)."""
    return (await _run(benchmark, model, judges, options, judge_cards))[0]


async def _run(benchmark: Any, model: Any, judges: list[str], options: RunOptions,
               judge_cards: str | None, dataset: Dataset | None = None) -> tuple[dict[str, Any], RunResult]:
    from glotbench.languages import profile
    from glotbench.tasks.rubric import RubricJudging

    bench = get_benchmark(benchmark, **dict(options.bench_options)) if isinstance(benchmark, str) else benchmark
    if not bench.judged:
        raise GlotbenchError(f"{bench.name} is not scored by a rubric: --judge is for tasks with scorer kind rubric")
    rubric = bench.spec.scorer
    judges = list(judges or rubric.judges)
    if not judges:
        raise GlotbenchError(f"{bench.name} is judged by a rubric: name a judge with --judge SPEC (or scorer.judges)")
    # evaluate_phase closes it; its identity still tells the candidate's judges apart
    cand = load_model(model, **model_options(options)) if isinstance(model, str) else model
    model = model if isinstance(model, str) else cand.spec
    out = Path(options.out or f"runs/{bench.name}/{datetime.now():%Y%m%d-%H%M%S}-{slug(model)}")
    # a finished valid run: an error; an invalid or unfinished one is kept aside and runs again
    set_aside_invalid(out, RESULTS, ("answers",), older=(OLD_SUMMARIES["rubric"],))
    kept, skipped = await select_judges(judges, model, cand, options, SelfJudging(same_family=rubric.same_family))
    if not kept:
        raise GlotbenchError(f"every judge was skipped as the candidate or its family ({', '.join(skipped)})")
    judge_validation = validation(kept, bench.lang, judge_cards)  # a bad cards directory fails here
    res = await evaluate_phase(benchmark, cand, replace(options, out=str(out / "answers"), phase="answers"), dataset=dataset)
    items = list(res.dataset or ())
    head = bench.headline_pipeline
    answers = {s.id: s.answer[head] for s in res.samples
               if isinstance(s.answer, dict) and isinstance(s.answer.get(head), str) and s.answer[head].strip()}
    questions = {it.id: bench.render(it.to_public()).messages[-1]["content"] for it in items}
    p = profile(bench.lang)
    judging = RubricJudging(rubric, bench.name, rubric.language or (p.name if p else bench.lang or "the question's language"))
    games = RubricJudging.games(rubric, items, answers, questions, res.dataset.source if res.dataset else "",
                                res.dataset.sha256 if res.dataset else None,
                                dataset if dataset is not None else
                                bench.load(options.data) if options.limit is not None or options.subset else ())
    ids = [it.id for it in items]
    unanswered = [i for i in ids if i not in answers]
    phase = replace(options, data=None, limit=None, repeats=1, bench_options=(), max_tokens=None, judges=(),
                    judge_cards=None)
    runs = await run_panel(judging, games, kept, phase, out)
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
        need = 2 if rubric.pairwise else 1
        vals = {i: [sum(o.values()) / len(o)] for i, o in per.items() if len(o) == need}
        incomplete[spec] = sorted(i for i in answers if i not in vals)
        vals.update({i: [0.0] for i in unanswered})
        values[spec] = vals
        criteria[spec] = {k: sum(v) / len(v) for k, v in crit.items()}
    # invalid when a phase is (the answers' calls, or a judge's calls and unreadable verdicts, above
    # --max-failure-rate), or when no item has a judged score
    phases = {"answers": res.results.get("validity"), **{f"judge {spec}": run.results.get("validity") for spec, run in runs.items()}}
    # no answered item judged: written (every view shows it invalid with its reason), not raised
    none_judged = bool(answers) and not any(i in v for v in values.values() for i in answers)
    scores = mean_of_judges(values, ids, resamples=options.bootstrap_resamples)
    signature = Signature.parse(res.results["signature"]).plus(
        ("judge_prompt", judging.prompt_hash(games)), judging.signature_parts(),
        ("judges", ",".join(slug(j) for j in runs)), ("unanswered", 0)).format()
    results = {"benchmark": bench.name, "model": model, "judges": judges, "skipped_judges": skipped,
               "mode": "pairwise" if rubric.pairwise else "pointwise", "scores": scores,
               "criteria": criteria, "items": len(ids), "answered": len(answers), "unanswered": unanswered,
               "incomplete": incomplete, "item_values": values, "rules": "pointwise: mean over criteria of (v - low) / (high - low); "
               "pairwise: win 1, tie 0.5, loss 0, both orders averaged; an unanswered item scores 0 for every "
               "judge; mean over items per judge, mean over judges, 95% percentile bootstrap over items",
               "signature": signature, "answers_run": "answers", "judge_validation": judge_validation,
               "validity": combine(phases, judged=0 if none_judged else scores["final"].get("n"), of=len(ids))}
    # One results.json: the candidate's run as every reader reads one (the mean of judges its headline),
    # with the judges, each phase's directory and this summary in its `judged` section (rundir.schema)
    write_judged(out, "rubric", results, res.results,
                 {"answers": "answers", **{f"judge {spec}": run.out_dir.name for spec, run in runs.items()}})
    return {**results, "out_dir": str(out)}, res
